// From a probe report to the figures the planner uses in place of the catalog's claims.
#include <algorithm>
#include <functional>
#include <map>

#include "linkwise/probe_report.hpp"
#include "report_queries.hpp"

namespace linkwise::probe {

namespace {

double median_of(std::vector<double> values) { return compute_stats(values).median; }

std::optional<double> device_copy_median_over_gpus(const ProbeReport& report) {
  const auto per_gpu = best_median_per_gpu(report, metric::device_copy);
  if (per_gpu.empty()) return std::nullopt;
  std::vector<double> values;
  for (const auto& [gpu, value] : per_gpu) values.push_back(value);
  return median_of(values);
}

}  // namespace

MeasuredLinks measured_links(const ProbeReport& report, const Catalog& catalog) {
  MeasuredLinks links;
  links.intra_node_allreduce_busbw_gbytes_per_s = allreduce_busbw(report, /*multi_node=*/false).value;
  links.inter_node_allreduce_busbw_gbytes_per_s = allreduce_busbw(report, /*multi_node=*/true).value;

  // Peer copies: with P2P where the report has it, otherwise what the staged path gave.
  for (const char* p2p : {"on", "off"}) {
    const std::vector<double> pairs = peer_copy_medians(report, p2p);
    if (!pairs.empty()) {
      links.p2p_unidirectional_gbytes_per_s = median_of(pairs);
      break;
    }
  }

  links.hbm_gbytes_per_s = device_copy_median_over_gpus(report);

  std::vector<double> h2d;
  for_each_result(report, [&](const Result& r) {
    if (r.metric == metric::h2d && has_label(r, "memory", "pinned") && has_label(r, "scope", "one-gpu")) {
      h2d.push_back(r.stats.median);
    }
  });
  if (!h2d.empty()) links.h2d_gbytes_per_s = median_of(h2d);

  const Environment& env = report.environment;
  links.source = "probe report " + env.created_at + " on " + env.hostname;
  if (!env.gpus.empty()) {
    links.source += " (" + std::to_string(env.gpus.size()) + " x " + env.gpus.front().name + ")";
  } else {
    links.source += " (no GPU)";
  }
  if (env.nodes > 1) links.source += ", " + std::to_string(env.nodes) + " nodes";

  if (!env.gpus.empty()) {
    links.gpu_name = env.gpus.front().name;
    links.gpu_model = gpu_model_from_name(env.gpus.front().name, env.gpus.front().memory_bytes, catalog);
  }
  if (env.cloud_provider && env.cloud_instance_type)
    links.instance = *env.cloud_provider + ":" + *env.cloud_instance_type;
  return links;
}

}  // namespace linkwise::probe
