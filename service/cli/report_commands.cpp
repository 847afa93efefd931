// `linkwise report show REPORT` (a probe report's measurements as tables, as nccl-tests prints them)
// and `linkwise report upload REPORT --url URL --key-file FILE` (POST it to a linkwise service).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/probe_report.hpp"

namespace linkwise::cli {
namespace {

using probe::ProbeReport;
using probe::Result;

std::string label_or(const Result& r, std::string_view key, std::string fallback = "-") {
  const std::string* v = r.label(key);
  return v ? *v : fallback;
}

std::string size_words(std::uint64_t bytes) {
  char buf[32];
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0)
    std::snprintf(buf, sizeof buf, "%llu GiB", (unsigned long long)(bytes >> 30));
  else if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0)
    std::snprintf(buf, sizeof buf, "%llu MiB", (unsigned long long)(bytes >> 20));
  else if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0)
    std::snprintf(buf, sizeof buf, "%llu KiB", (unsigned long long)(bytes >> 10));
  else std::snprintf(buf, sizeof buf, "%llu B", (unsigned long long)bytes);
  return buf;
}

// NCCL collectives, one table per collective, ranks and nodes: size, time, algbw, busbw (medians),
// the columns of nccl-tests. The time is the size over algbw.
void print_nccl(const ProbeReport& report, std::ostream& out) {
  using Key = std::tuple<std::string, int, int>;  // collective, ranks, nodes
  struct Row {
    std::optional<double> algbw, busbw;
  };
  std::map<Key, std::map<std::uint64_t, Row>> tables;
  for (const auto& run : report.probes)
    for (const Result& r : run.results) {
      if ((r.metric != probe::metric::nccl_algbw && r.metric != probe::metric::nccl_busbw) || !r.bytes) continue;
      const Key key{label_or(r, "collective"), std::stoi(label_or(r, "ranks", "0")),
                    std::stoi(label_or(r, "nodes", "1"))};
      Row& row = tables[key][*r.bytes];
      (r.metric == probe::metric::nccl_algbw ? row.algbw : row.busbw) = r.stats.median;
    }
  for (auto& [key, rows] : tables) {
    const auto& [collective, ranks, nodes] = key;
    // nccl-tests' bus factor (core's rule, link_physics.hpp): algbw from busbw where the report has
    // only busbw. A collective core does not name, or no rank count, leaves algbw unknown.
    std::optional<double> factor;
    try {
      if (ranks >= 1) factor = probe::busbw_factor(probe::parse_collective(collective), ranks);
    } catch (const Error&) {
    }
    for (auto& [bytes, row] : rows)
      if (!row.algbw && row.busbw && factor && *factor > 0) row.algbw = *row.busbw / *factor;
    out << "\nNCCL " << collective << ", " << ranks << " ranks on " << nodes << " node(s) (medians)\n";
    char line[160];
    std::snprintf(line, sizeof line, "%12s  %12s  %14s  %14s\n", "size", "time (us)", "algbw (GB/s)", "busbw (GB/s)");
    out << line;
    for (const auto& [bytes, row] : rows) {
      const std::string time = row.algbw && *row.algbw > 0
                                   ? std::to_string(int(static_cast<double>(bytes) / (*row.algbw * 1e9) * 1e6 + 0.5))
                                   : "-";
      auto num = [](const std::optional<double>& v) {
        if (!v) return std::string("-");
        char b[32];
        std::snprintf(b, sizeof b, "%.2f", *v);
        return std::string(b);
      };
      std::snprintf(line, sizeof line, "%12s  %12s  %14s  %14s\n", size_words(bytes).c_str(), time.c_str(),
                    num(row.algbw).c_str(), num(row.busbw).c_str());
      out << line;
    }
  }
}

// GPU-to-GPU results with src and dst labels as matrices (rows: source GPU, columns: destination).
void print_matrices(const ProbeReport& report, std::ostream& out) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;  // metric, unit, direction, p2p
  std::map<Key, std::map<std::pair<int, int>, double>> matrices;
  for (const auto& run : report.probes)
    for (const Result& r : run.results) {
      if (!r.label("src") || !r.label("dst")) continue;
      const Key key{r.metric, std::string(probe::to_string(r.unit)), label_or(r, "direction", ""),
                    label_or(r, "p2p", "")};
      auto& cell = matrices[key][{std::stoi(*r.label("src")), std::stoi(*r.label("dst"))}];
      cell = std::max(cell, r.stats.median);  // the best size's median
    }
  for (const auto& [key, cells] : matrices) {
    const auto& [metric, unit, direction, p2p] = key;
    std::set<int> gpus;
    for (const auto& [pair, v] : cells) {
      gpus.insert(pair.first);
      gpus.insert(pair.second);
    }
    out << "\n"
        << metric << " (" << unit << (direction.empty() ? "" : ", " + direction) << (p2p.empty() ? "" : ", P2P " + p2p)
        << "; rows: source GPU, columns: destination)\n";
    char cell[32];
    out << "     ";
    for (int d : gpus) {
      std::snprintf(cell, sizeof cell, "%9d", d);
      out << cell;
    }
    out << "\n";
    for (int s : gpus) {
      std::snprintf(cell, sizeof cell, "%5d", s);
      out << cell;
      for (int d : gpus) {
        auto it = cells.find({s, d});
        if (it == cells.end()) std::snprintf(cell, sizeof cell, "%9s", "-");
        else std::snprintf(cell, sizeof cell, "%9.1f", it->second);
        out << cell;
      }
      out << "\n";
    }
  }
}

// Everything else: one row per result.
void print_other(const ProbeReport& report, std::ostream& out) {
  bool header = false;
  char line[256];
  for (const auto& run : report.probes) {
    for (const Result& r : run.results) {
      if (r.metric == probe::metric::nccl_algbw || r.metric == probe::metric::nccl_busbw) continue;
      if (r.label("src") && r.label("dst")) continue;
      if (!header) {
        out << "\nother results (medians)\n";
        std::snprintf(line, sizeof line, "%-14s %-20s %-36s %10s %12s %12s %12s\n", "probe", "metric", "labels", "size",
                      "median", "min", "max");
        out << line;
        header = true;
      }
      std::string labels;
      for (const auto& [k, v] : r.labels) labels += (labels.empty() ? "" : ",") + k + "=" + v;
      std::snprintf(line, sizeof line, "%-14s %-20s %-36s %10s %12.2f %12.2f %12.2f %s\n", run.name.c_str(),
                    r.metric.c_str(), labels.c_str(), r.bytes ? size_words(*r.bytes).c_str() : "-", r.stats.median,
                    r.stats.min, r.stats.max, std::string(probe::to_string(r.unit)).c_str());
      out << line;
    }
  }
}

void show(const std::string& path, bool json) {
  const ProbeReport report = probe::load_report(path);
  if (json) {
    std::cout << probe::to_json(report).dump(2) << "\n";
    return;
  }
  const auto& env = report.environment;
  std::cout << "report " << path << ": " << (env.hostname.empty() ? std::string("?") : env.hostname) << ", "
            << env.gpus.size() << " GPU(s)" << (env.gpus.empty() ? std::string() : " x " + env.gpus.front().name)
            << ", " << env.nodes << " node(s)\n";
  if (probe::is_synthetic(report))
    std::cout << "note: a synthetic / test report (" << *report.note << "), not a measurement\n";
  for (const auto& run : report.probes)
    if (run.status != probe::ProbeStatus::ok)
      std::cout << "probe " << run.name << ": " << probe::to_string(run.status) << " (" << run.reason.value_or("")
                << ")\n";
  print_nccl(report, std::cout);
  print_matrices(report, std::cout);
  print_other(report, std::cout);
}

// cpp-httplib names its errors in one word ("Connection"); a sentence says what went wrong.
std::string connection_words(httplib::Error error) {
  switch (error) {
    case httplib::Error::Connection:
      return "the connection failed (nothing listening there, or no route to it; is `linkwise serve` running?)";
    case httplib::Error::ConnectionTimeout: return "no answer to the connection within 10 s";
    case httplib::Error::Read: return "the connection closed before the answer was read";
    case httplib::Error::Write: return "the connection closed while the report was being sent";
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLServerVerification: return "the TLS handshake failed";
    default: return "the request failed (" + httplib::to_string(error) + ")";
  }
}

std::string read_key(const std::string& path) {
  // A missing or unreadable file is the user's input: exit 2, like every other bad option.
  std::string key = read_text_file(path, "--key-file", 64 * 1024);
  while (!key.empty() && std::isspace(static_cast<unsigned char>(key.back()))) key.pop_back();
  while (!key.empty() && std::isspace(static_cast<unsigned char>(key.front()))) key.erase(key.begin());
  if (key.empty())
    throw_invalid("--key-file", "--key-file: " + path + " is empty; put the key `linkwise keys create` printed in it");
  return key;
}

void upload(const std::string& path, const std::string& url, const std::string& key_file, const std::string& instance) {
  const ProbeReport report = probe::load_report(path);  // checked here first: a bad report never leaves
  const std::string key = read_key(key_file);
  std::string base = url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  if (base.rfind("http://", 0) != 0 && base.rfind("https://", 0) != 0)
    throw_invalid("--url", "--url: expected http://HOST:PORT (the linkwise service), got \"" + url + "\"");
  httplib::Client client(base);
  client.set_connection_timeout(10);
  client.set_read_timeout(120);
  std::string target = "/v1/probe-reports";
  if (!instance.empty()) target += "?instance=" + httplib::detail::encode_query_param(instance);
  const httplib::Headers headers = {{"Authorization", "Bearer " + key}};
  auto res = client.Post(target, headers, probe::to_json(report).dump(), "application/json");
  if (!res) throw Error(ErrorKind::io, "--url: cannot reach " + base + ": " + connection_words(res.error()), "--url");
  nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status != 201) {
    const std::string detail =
        body.is_object() && body.contains("detail") ? body["detail"].get<std::string>() : res->body;
    const std::string field = body.is_object() && body["field"].is_string() ? body["field"].get<std::string>() : "";
    const ErrorKind kind = res->status == 401   ? ErrorKind::unauthorized
                           : res->status == 403 ? ErrorKind::forbidden
                           : res->status >= 500 ? ErrorKind::io
                                                : ErrorKind::invalid_input;
    throw Error(kind, "the service answered " + std::to_string(res->status) + ": " + detail, field);
  }
  std::cout << "uploaded " << path << " as probe report " << body.value("id", 0) << " of " << body.value("instance", "")
            << (body.value("synthetic", false) ? " (synthetic: left out of fleet verdicts)" : "") << "\n"
            << base << res->get_header_value("Location") << "\n";
}

}  // namespace

void register_report_commands(CLI::App& app) {
  CLI::App* report =
      app.add_subcommand("report", "Show a probe report's measurements, or upload it to a linkwise service");
  report->require_subcommand(1);
  struct Args {
    std::string path, url, key_file, instance;
    bool json = false;
  };
  auto args = std::make_shared<Args>();
  CLI::App* show_cmd =
      report->add_subcommand("show", "The measurements as tables: NCCL size/time/algbw/busbw, GPU matrices, the rest");
  show_cmd->add_option("REPORT", args->path, "probe report (JSON) from `linkwise probe`")->required();
  show_cmd->add_flag("--json", args->json, "print the checked report as JSON");
  show_cmd->callback([args] { show(args->path, args->json); });
  CLI::App* upload_cmd = report->add_subcommand("upload", "POST the report to a linkwise service (/v1/probe-reports)");
  upload_cmd->add_option("REPORT", args->path, "probe report (JSON) from `linkwise probe`")->required();
  upload_cmd->add_option("--url", args->url, "the service, e.g. http://127.0.0.1:8080")->required();
  upload_cmd->add_option("--key-file", args->key_file, "a file holding the API key (`linkwise keys create`)")
      ->required();
  upload_cmd->add_option("--instance", args->instance, "the catalog instance id, when the report does not identify it");
  upload_cmd->callback([args] { upload(args->path, args->url, args->key_file, args->instance); });
}

}  // namespace linkwise::cli
