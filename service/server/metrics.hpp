// Prometheus metrics: requests by route, method and status, a latency histogram per route, and
// gauges the server sets (catalog size, stored reports). Text exposition format 0.0.4.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>

namespace linkwise::server {

class Metrics {
 public:
  // `route` is the path template ("/v1/instances/{id}"), or "unmatched" for unknown paths, and a
  // method other than HTTP/1.1's is counted as "other", so the label set stays bounded whatever
  // clients send.
  void observe(const std::string& route, const std::string& method, int status, double seconds);
  void set_gauge(const std::string& name, const std::string& help, double value);

  std::string render() const;  // the /metrics body

 private:
  // Upper bounds of the latency buckets, seconds.
  static constexpr std::array<double, 12> kBuckets{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
                                                   0.01,   0.025,   0.05,   0.1,   0.25,   1.0};
  struct Histogram {
    std::array<std::uint64_t, kBuckets.size()> buckets{};  // not cumulative; summed when rendered
    std::uint64_t count = 0;
    double sum = 0;
  };
  struct Gauge {
    std::string help;
    double value = 0;
  };

  // Transparent comparator: observe() looks the labels up by view, copying them only the first
  // time. Both sides are compared as views (clang 14 with libstdc++ 12 cannot compare tuples of
  // different element types in C++20).
  struct LabelsLess {
    using is_transparent = void;
    using View = std::tuple<std::string_view, std::string_view, int>;
    template <typename Tuple>
    static View view(const Tuple& t) {
      return {std::get<0>(t), std::get<1>(t), std::get<2>(t)};
    }
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return view(a) < view(b);
    }
  };

  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, std::string, int>, std::uint64_t, LabelsLess> requests_;
  std::map<std::string, Histogram> latency_;
  std::map<std::string, Gauge> gauges_;
};

}  // namespace linkwise::server
