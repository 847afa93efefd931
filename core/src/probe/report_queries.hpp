// Small queries over a report's results, shared by measured_links and validate (not installed).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkwise/probe_report.hpp"

namespace linkwise::probe {

inline void for_each_result(const ProbeReport& report, const std::function<void(const Result&)>& visit) {
  for (const ProbeRun& run : report.probes) {
    if (run.status != ProbeStatus::ok) continue;
    for (const Result& result : run.results) visit(result);
  }
}

inline bool has_label(const Result& result, std::string_view key, std::string_view value) {
  const std::string* found = result.label(key);
  return found && *found == value;
}

inline int int_label(const Result& result, std::string_view key, int fallback) {
  const std::string* found = result.label(key);
  if (!found) return fallback;
  try {
    return std::stoi(*found);
  } catch (const std::exception&) {
    return fallback;
  }
}

// A figure picked from the report, with the words saying which result it came from.
struct Picked {
  std::optional<double> value;
  std::string what;
};

// The NCCL all-reduce busbw of the widest communicator in the report (single node: nodes == 1;
// multi-node: nodes >= 2), the best median over the size sweep: large messages, where the link
// and not the latency limits.
inline Picked allreduce_busbw(const ProbeReport& report, bool multi_node) {
  Picked best;
  int best_ranks = 0;
  for_each_result(report, [&](const Result& r) {
    if (r.metric != metric::nccl_busbw || !has_label(r, "collective", "all-reduce")) return;
    const int nodes = int_label(r, "nodes", 1);
    if ((nodes >= 2) != multi_node) return;
    const int ranks = int_label(r, "ranks", 0);
    if (ranks > best_ranks || (ranks == best_ranks && (!best.value || r.stats.median > *best.value))) {
      best_ranks = ranks;
      best.value = r.stats.median;
      best.what = "NCCL all-reduce busbw, " + std::to_string(ranks) + " ranks on " + std::to_string(nodes) +
                  (nodes == 1 ? " node" : " nodes") +
                  (r.bytes ? ", " + std::to_string(*r.bytes) + " bytes" : std::string()) + ", median";
    }
  });
  return best;
}

// The medians of the copy-engine peer copies, one direction, one per GPU pair, with peer access
// `p2p` ("on", or "off" for the staged path).
inline std::vector<double> peer_copy_medians(const ProbeReport& report, std::string_view p2p) {
  std::vector<double> medians;
  for_each_result(report, [&](const Result& r) {
    if (r.metric == metric::p2p_bandwidth && has_label(r, "method", "copy-engine") &&
        has_label(r, "direction", "unidirectional") && has_label(r, "p2p", p2p)) {
      medians.push_back(r.stats.median);
    }
  });
  return medians;
}

// For each GPU (labels.gpu), the best median among results of `metric_name` (e.g. the better of
// the copy-engine and SM copies).
inline std::map<int, double> best_median_per_gpu(const ProbeReport& report, std::string_view metric_name,
                                                 std::string_view label_key = {}, std::string_view label_value = {}) {
  std::map<int, double> best;
  for_each_result(report, [&](const Result& r) {
    if (r.metric != metric_name) return;
    if (!label_key.empty() && !has_label(r, label_key, label_value)) return;
    const int gpu = int_label(r, "gpu", -1);
    if (gpu < 0) return;
    auto it = best.find(gpu);
    if (it == best.end() || r.stats.median > it->second) best[gpu] = r.stats.median;
  });
  return best;
}

}  // namespace linkwise::probe
