#include "server/metrics.hpp"

#include <cstdio>

namespace linkwise::server {
namespace {

std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", value);
  return text;
}

// The method label: a method of HTTP/1.1, else "other". cpp-httplib logs a request whose method
// it refused (400) with the method as sent, so without this any client could add label values
// without bound (memory, and text of its choosing in /metrics).
std::string_view method_label(std::string_view method) {
  for (std::string_view known : {"GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT"}) {
    if (method == known) return known;
  }
  return "other";
}

}  // namespace

void Metrics::observe(const std::string& route, const std::string& method_sent, int status, double seconds) {
  std::lock_guard lock(mutex_);
  const std::string_view method = method_label(method_sent);
  const std::tuple<std::string_view, std::string_view, int> labels{route, method, status};
  auto counter = requests_.find(labels);
  if (counter == requests_.end()) counter = requests_.emplace(std::tuple{route, std::string(method), status}, 0).first;
  ++counter->second;
  auto& histogram = latency_[route];
  for (std::size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) {
      ++histogram.buckets[i];
      break;
    }
  }
  ++histogram.count;
  histogram.sum += seconds;
}

void Metrics::set_gauge(const std::string& name, const std::string& help, double value) {
  std::lock_guard lock(mutex_);
  auto& gauge = gauges_[name];
  gauge.help = help;
  gauge.value = value;
}

std::string Metrics::render() const {
  std::lock_guard lock(mutex_);
  std::string out;
  out += "# HELP linkwise_http_requests_total HTTP requests answered, by route template, method and status.\n";
  out += "# TYPE linkwise_http_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    const auto& [route, method, status] = key;
    out += "linkwise_http_requests_total{route=\"" + route + "\",method=\"" + method + "\",status=\"" +
           std::to_string(status) + "\"} " + std::to_string(count) + "\n";
  }
  out += "# HELP linkwise_http_request_duration_seconds Time from routing a request to writing its response.\n";
  out += "# TYPE linkwise_http_request_duration_seconds histogram\n";
  for (const auto& [route, histogram] : latency_) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += histogram.buckets[i];
      out += "linkwise_http_request_duration_seconds_bucket{route=\"" + route + "\",le=\"" + number(kBuckets[i]) +
             "\"} " + std::to_string(cumulative) + "\n";
    }
    out += "linkwise_http_request_duration_seconds_bucket{route=\"" + route + "\",le=\"+Inf\"} " +
           std::to_string(histogram.count) + "\n";
    out += "linkwise_http_request_duration_seconds_sum{route=\"" + route + "\"} " + number(histogram.sum) + "\n";
    out += "linkwise_http_request_duration_seconds_count{route=\"" + route + "\"} " + std::to_string(histogram.count) +
           "\n";
  }
  for (const auto& [name, gauge] : gauges_) {
    out += "# HELP " + name + " " + gauge.help + "\n";
    out += "# TYPE " + name + " gauge\n";
    out += name + " " + number(gauge.value) + "\n";
  }
  return out;
}

}  // namespace linkwise::server
