// validate: each claim of the catalog against a probe report, with the efficiency a healthy
// system reaches. The thresholds and their sources are in README.md ("Probes").
#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../json_fields.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/enum_names.hpp"
#include "linkwise/error.hpp"
#include "linkwise/probe_report.hpp"
#include "linkwise/units.hpp"
#include "report_queries.hpp"

namespace linkwise::probe {

using nlohmann::json;

namespace {

constexpr EnumNames<Verdict, 3> kVerdictNames{{
    {Verdict::meets, "meets"},
    {Verdict::below, "below"},
    {Verdict::cannot_check, "cannot-check"},
}};

}  // namespace

std::string_view to_string(Verdict verdict) noexcept { return enum_name(kVerdictNames, verdict); }

bool is_synthetic(const ProbeReport& report) {
  if (!report.note) return false;
  std::string note = *report.note;
  for (char& c : note) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return note.find("synthetic") != std::string::npos || note.find("test") != std::string::npos;
}

bool Validation::any_below() const {
  return std::any_of(verdicts.begin(), verdicts.end(),
                     [](const ClaimVerdict& v) { return v.verdict == Verdict::below; });
}

namespace {

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// The name split at spaces and dashes: "NVIDIA A100-SXM4-80GB" -> NVIDIA, A100, SXM4, 80GB.
std::vector<std::string> tokens_of(std::string_view name) {
  std::vector<std::string> tokens;
  std::string current;
  for (char c : upper(name)) {
    if (c == ' ' || c == '-' || c == '_') {
      if (!current.empty()) tokens.push_back(current);
      current.clear();
    } else {
      current += c;
    }
  }
  if (!current.empty()) tokens.push_back(current);
  return tokens;
}

std::string family_of(const std::string& gpu_id) {  // "H100-SXM5-80GB" -> "H100"
  return upper(gpu_id.substr(0, gpu_id.find('-')));
}

std::string format(double value, int decimals = 1) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(decimals);
  out << value;
  return out.str();
}

// Compares measured against expected x threshold and fills the verdict and its reason.
void judge(ClaimVerdict& v, double expected, double measured, double threshold, std::string measurement) {
  v.expected = expected;
  v.measured = measured;
  v.min_efficiency = threshold;
  v.efficiency = measured / expected;
  v.measurement = std::move(measurement);
  v.verdict = *v.efficiency >= threshold ? Verdict::meets : Verdict::below;
  v.reason = "measured " + format(measured) + " " + v.unit + " = " + format(*v.efficiency * 100) + "% of " +
             format(expected) + " " + v.unit + "; a healthy system reaches at least " + format(threshold * 100, 0) +
             "%";
}

// A verdict not judged yet: the claim, how the catalog counts it, the measurement's unit and the
// efficiency a healthy system reaches.
ClaimVerdict unjudged(std::string claim, std::string claimed_unit, std::string convention, std::string unit,
                      double min_efficiency) {
  ClaimVerdict v;
  v.claim = std::move(claim);
  v.claimed_unit = std::move(claimed_unit);
  v.claim_convention = std::move(convention);
  v.unit = std::move(unit);
  v.min_efficiency = min_efficiency;
  return v;
}

// The GPU with the lowest figure of a per-GPU map (best_median_per_gpu); the map is not empty.
std::pair<int, double> weakest_gpu(const std::map<int, double>& per_gpu) {
  return *std::min_element(per_gpu.begin(), per_gpu.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
}

ClaimVerdict cannot(ClaimVerdict v, std::string reason) {
  v.verdict = Verdict::cannot_check;
  v.reason = std::move(reason);
  return v;
}

InstanceMatch match_instance(const ProbeReport& report, const Catalog& catalog,
                             const std::optional<std::string>& instance_id) {
  InstanceMatch match;
  const Environment& env = report.environment;
  std::optional<std::string> report_gpu_model;
  if (!env.gpus.empty()) {
    report_gpu_model = gpu_model_from_name(env.gpus.front().name, env.gpus.front().memory_bytes, catalog);
  }

  if (instance_id) {
    const Instance& instance = catalog.instance(*instance_id, ErrorKind::not_found, "instance");  // names the option
    match.instance_id = instance.id;
    match.gpu_model = instance.gpu_model;
    match.detected_by = "option";
    match.reason = "--instance " + instance.id;
    // A report measures only the machine it ran on (the planner's --report rule, measured_mismatch):
    // another GPU model, or more GPUs than the instance has, is another machine. Fewer GPUs is a
    // run on part of it (CUDA_VISIBLE_DEVICES), noted.
    // A GPU the catalog cannot name cannot be told to be the instance's either (the planner's
    // --report refuses it alike: measured_mismatch); counted, it would vouch for a machine it may
    // not have measured.
    if (!env.gpus.empty() && !report_gpu_model) {
      throw Error(ErrorKind::invalid_input,
                  "the report's GPU \"" + env.gpus.front().name + "\" is no single catalog GPU, so it cannot be told " +
                      "to be " + instance.gpu_model + " of " + instance.id +
                      "; a report measures only the machine it ran on",
                  "instance");
    }
    if (report_gpu_model && *report_gpu_model != instance.gpu_model) {
      throw Error(ErrorKind::invalid_input,
                  "the report measured " + *report_gpu_model + " (\"" + env.gpus.front().name + "\"), not " +
                      instance.gpu_model + " of " + instance.id + "; a report measures only the machine it ran on",
                  "instance");
    }
    if (static_cast<int>(env.gpus.size()) > instance.gpu_count) {
      throw Error(ErrorKind::invalid_input,
                  "the report measured " + std::to_string(env.gpus.size()) + " GPUs, more than the " +
                      std::to_string(instance.gpu_count) + " of " + instance.id +
                      "; a report measures only the machine it ran on",
                  "instance");
    }
    if (!env.gpus.empty() && static_cast<int>(env.gpus.size()) != instance.gpu_count) {
      match.reason += "; note: the report has " + std::to_string(env.gpus.size()) + " GPUs, the instance " +
                      std::to_string(instance.gpu_count);
    }
    return match;
  }

  if (env.cloud_provider && env.cloud_instance_type) {
    const std::string id = *env.cloud_provider + ":" + *env.cloud_instance_type;
    if (const Instance* instance = catalog.find_instance(id)) {
      match.instance_id = instance->id;
      match.gpu_model = instance->gpu_model;
      match.detected_by = "cloud-metadata";
      match.reason = "the report's cloud metadata names " + id;
      return match;
    }
  }

  if (env.gpus.empty()) {
    match.detected_by = "none";
    match.reason = "the report has no GPU and no cloud instance type; pass --instance";
    return match;
  }
  match.gpu_model = report_gpu_model;
  if (!report_gpu_model) {
    match.detected_by = "none";
    match.reason = "no catalog GPU matches \"" + env.gpus.front().name + "\"; pass --instance";
    return match;
  }
  std::vector<std::string> candidates;
  for (const Instance& instance : catalog.instances()) {
    if (instance.gpu_model == *report_gpu_model && instance.gpu_count == static_cast<int>(env.gpus.size())) {
      candidates.push_back(instance.id);
    }
  }
  const std::string what = std::to_string(env.gpus.size()) + " x " + *report_gpu_model;
  if (candidates.size() == 1) {
    match.instance_id = candidates.front();
    match.detected_by = "gpu-name-and-count";
    match.reason = "the only catalog instance with " + what;
    return match;
  }
  match.detected_by = candidates.empty() ? "none" : "gpu-name-and-count";
  match.candidates = candidates;
  if (candidates.empty()) {
    match.reason = "no catalog instance has " + what + "; GPU claims checked, pass --instance for the rest";
  } else {
    std::string list;
    for (const auto& id : candidates) list += (list.empty() ? "" : ", ") + id;
    match.reason = std::to_string(candidates.size()) + " catalog instances have " + what + " (" + list +
                   "); GPU claims checked, pass --instance for the rest";
  }
  return match;
}

ClaimVerdict check_nvlink(const ProbeReport& report, const Instance* instance, const Thresholds& t) {
  ClaimVerdict v = unjudged("nvlink", "GB/s", "per GPU, both directions added", "GB/s", t.nvlink_busbw);
  if (!instance) return cannot(v, "the instance is not identified");
  if (!instance->nvlink_gbytes_per_s) {
    return cannot(v, "the catalog claims no NVLink for " + instance->id);
  }
  v.claimed = instance->nvlink_gbytes_per_s;
  const double per_direction = *v.claimed / 2.0;

  const Picked busbw = allreduce_busbw(report, /*multi_node=*/false);
  int busbw_ranks = 0;
  for_each_result(report, [&](const Result& r) {
    if (r.metric == metric::nccl_busbw && has_label(r, "collective", "all-reduce") && int_label(r, "nodes", 1) == 1) {
      busbw_ranks = std::max(busbw_ranks, int_label(r, "ranks", 0));
    }
  });
  if (busbw.value && busbw_ranks == instance->gpu_count) {
    judge(v, per_direction, *busbw.value, t.nvlink_busbw, busbw.what);
    return v;
  }
  // Without NCCL: behind an NVSwitch any pair can use a GPU's full NVLink bandwidth, so a peer
  // copy is comparable. In a direct mesh a pair has only some of the links: not comparable.
  if (instance->intra_node_fabric == Fabric::nvswitch) {
    const std::vector<double> pairs = peer_copy_medians(report, "on");
    if (!pairs.empty()) {
      const double median = compute_stats(pairs).median;
      judge(v, per_direction, median, t.nvlink_copy,
            "copy-engine peer copy, one direction, P2P on, median over " + std::to_string(pairs.size()) + " GPU pairs");
      return v;
    }
  }
  if (busbw.value) {
    return cannot(v, "the report's all-reduce spans " + std::to_string(busbw_ranks) + " GPUs, the instance has " +
                         std::to_string(instance->gpu_count) + "; run the nccl probe on all GPUs");
  }
  return cannot(
      v, "the report has no single-node NCCL all-reduce" +
             std::string(instance->intra_node_fabric == Fabric::nvswitch ? " and no P2P copy-engine matrix" : "") +
             "; run `linkwise probe --only nccl`");
}

ClaimVerdict check_network(const ProbeReport& report, const Instance* instance, const Thresholds& t) {
  ClaimVerdict v = unjudged("network", "Gbit/s", "instance total, one direction", "Gbit/s", t.network_busbw);
  if (!instance) return cannot(v, "the instance is not identified");
  if (!instance->network_gbits_per_s) return cannot(v, "the catalog has no network figure for " + instance->id);
  v.claimed = instance->network_gbits_per_s;
  const double expected = *v.claimed;

  // Across nodes, a ring all-reduce's busbw is the bandwidth each node sends to the next: the
  // node's network bandwidth, one direction.
  const Picked busbw = allreduce_busbw(report, /*multi_node=*/true);
  if (busbw.value) {
    judge(v, expected, units::gbytes_to_gbits(*busbw.value), t.network_busbw, busbw.what);
    return v;
  }

  // Host-only MPI: the weakest pair of ranks on different hosts, each at its best message size.
  std::map<std::string, double> best_per_pair;
  bool any_mpi = false;
  for_each_result(report, [&](const Result& r) {
    if (r.metric != metric::mpi_bandwidth || !has_label(r, "direction", "unidirectional")) return;
    any_mpi = true;
    if (!has_label(r, "same_node", "false")) return;
    const std::string* pair = r.label("pair");
    const std::string key = pair ? *pair : "?";
    auto it = best_per_pair.find(key);
    if (it == best_per_pair.end() || r.stats.median > it->second) best_per_pair[key] = r.stats.median;
  });
  if (!best_per_pair.empty()) {
    auto weakest = std::min_element(best_per_pair.begin(), best_per_pair.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
    judge(v, expected, units::gbytes_to_gbits(weakest->second), t.network_mpi,
          "MPI host ping-pong bandwidth, one direction, rank pair " + weakest->first +
              " on different hosts, best median over the size sweep");
    // One process pair drives one interface: below the total of an instance with several (or an
    // unknown number of) network interfaces, it cannot tell a fault from the pair's own limit.
    if (v.verdict == Verdict::below && instance->network_nics.value_or(0) != 1) {
      const std::string nics = instance->network_nics ? std::to_string(*instance->network_nics) + " network interfaces"
                                                      : "network interfaces the catalog does not count";
      return cannot(v, v.reason + "; but one process pair cannot fill " + instance->id + "'s " + nics +
                           ": run the nccl-multi-node probe (GPUDirect traffic on every NIC) to check the claim");
    }
    return v;
  }
  if (any_mpi) {
    return cannot(v, "all MPI ranks ran on one host: the test measured shared memory, not the network; "
                     "run one rank per node");
  }
  return cannot(v, "the report has no measurement across nodes; run `mpirun -np 2 linkwise probe "
                   "--multi-node` with one rank per node");
}

ClaimVerdict check_hbm(const ProbeReport& report, const Gpu* gpu, const Thresholds& t) {
  ClaimVerdict v = unjudged("hbm", "GB/s", "peak device memory bandwidth, read+write", "GB/s", t.hbm_copy);
  if (!gpu) return cannot(v, "the GPU model is not identified");
  v.claimed = gpu->hbm_gbytes_per_s;
  const auto per_gpu = best_median_per_gpu(report, metric::device_copy);
  if (per_gpu.empty()) {
    return cannot(v, "the report has no device-memory copy; run `linkwise probe --only device-memory`");
  }
  const auto [weakest, weakest_value] = weakest_gpu(per_gpu);
  judge(v, gpu->hbm_gbytes_per_s, weakest_value, t.hbm_copy,
        "device copy (read+write counted), GPU " + std::to_string(weakest) + ", the weakest of " +
            std::to_string(per_gpu.size()) + ", best method, median");
  return v;
}

ClaimVerdict check_pcie(const ProbeReport& report, const Gpu* gpu, const Thresholds& t) {
  ClaimVerdict v =
      unjudged("pcie", "PCIe gen", "GPU's PCIe generation, x16 assumed, one direction", "GB/s", t.pcie_h2d);
  if (!gpu) return cannot(v, "the GPU model is not identified");
  if (!gpu->pcie_gen) return cannot(v, "the catalog has no PCIe generation for " + gpu->id);
  v.claimed = *gpu->pcie_gen;
  const double expected = pcie_gbytes_per_s(*gpu->pcie_gen, 16);
  const auto per_gpu = best_median_per_gpu(report, metric::h2d, "memory", "pinned");
  if (per_gpu.empty()) {
    return cannot(v, "the report has no pinned host-to-device copy; run `linkwise probe --only host-device`");
  }
  const auto [weakest, weakest_value] = weakest_gpu(per_gpu);
  judge(v, expected, weakest_value, t.pcie_h2d,
        "pinned host-to-device copy, GPU " + std::to_string(weakest) + ", the weakest of " +
            std::to_string(per_gpu.size()) + ", median");
  // Say why when the GPU's link cannot carry the claim: its maximum generation or width (the
  // current ones drop while a GPU idles, so they are not evidence).
  for (const GpuInfo& g : report.environment.gpus) {
    if (g.index != weakest) continue;
    if ((g.pcie_max_link_gen && *g.pcie_max_link_gen < *gpu->pcie_gen) ||
        (g.pcie_max_link_width && *g.pcie_max_link_width < 16)) {
      v.reason += "; its link can only reach gen " +
                  (g.pcie_max_link_gen ? std::to_string(*g.pcie_max_link_gen) : "?") + " x" +
                  (g.pcie_max_link_width ? std::to_string(*g.pcie_max_link_width) : "?");
    }
  }
  return v;
}

using json_fields::optional_json;

}  // namespace

std::optional<std::string> gpu_model_from_name(std::string_view cuda_name, std::optional<std::uint64_t> memory_bytes,
                                               const Catalog& catalog) {
  const auto tokens = tokens_of(cuda_name);
  auto has_token = [&](std::string_view token) {
    return std::find(tokens.begin(), tokens.end(), token) != tokens.end();
  };
  // The family is a whole token of the name: "L4" does not match "L40S".
  std::vector<const Gpu*> candidates;
  for (const Gpu& gpu : catalog.gpus()) {
    if (has_token(family_of(gpu.id))) candidates.push_back(&gpu);
  }
  if (candidates.size() <= 1) {
    return candidates.empty() ? std::nullopt : std::optional<std::string>(candidates.front()->id);
  }
  // Form factor: CUDA names say "PCIe" or "NVL" for those; SXM parts say SXM or nothing.
  auto keep = [&](auto predicate) {
    std::vector<const Gpu*> kept;
    for (const Gpu* gpu : candidates) {
      if (predicate(upper(gpu->id))) kept.push_back(gpu);
    }
    if (!kept.empty()) candidates = kept;
  };
  if (has_token("PCIE")) {
    keep([](const std::string& id) { return id.find("PCIE") != std::string::npos; });
  } else if (has_token("NVL")) {
    keep([](const std::string& id) { return id.find("NVL") != std::string::npos; });
  } else {
    keep([](const std::string& id) {
      return id.find("PCIE") == std::string::npos && id.find("NVL") == std::string::npos;
    });
  }
  // Memory: the nominal size nearest to what the device reports (an "80 GB" card shows ~79.2 GiB).
  if (candidates.size() > 1 && memory_bytes) {
    const double gib = units::bytes_to_gib(static_cast<double>(*memory_bytes));
    double best = 1e300;
    std::vector<const Gpu*> nearest;
    for (const Gpu* gpu : candidates) {
      const double distance = std::fabs(gpu->memory_gb - gib);
      if (distance < best - 1e-9) {
        best = distance;
        nearest = {gpu};
      } else if (std::fabs(distance - best) <= 1e-9) {
        nearest.push_back(gpu);
      }
    }
    candidates = nearest;
  }
  if (candidates.size() != 1) return std::nullopt;
  return candidates.front()->id;
}

Validation validate(const ProbeReport& report, const Catalog& catalog, std::optional<std::string> instance_id,
                    const Thresholds& thresholds) {
  Validation validation;
  validation.instance = match_instance(report, catalog, instance_id);
  const Instance* instance =
      validation.instance.instance_id ? catalog.find_instance(*validation.instance.instance_id) : nullptr;
  const Gpu* gpu = validation.instance.gpu_model ? catalog.find_gpu(*validation.instance.gpu_model) : nullptr;

  // A host-only report (MPI test on nodes without GPUs) measured no GPU: its GPU claims stay open.
  const bool host_only = report.environment.gpus.empty();
  auto gpu_claim = [&](ClaimVerdict v) {
    return host_only ? cannot(std::move(v), "host-only report: no GPU was measured") : v;
  };
  // Not identified among several candidates: a claim every candidate makes alike is still checked,
  // against the first of them (the reason says so).
  std::vector<const Instance*> candidates;
  if (!instance)
    for (const auto& id : validation.instance.candidates)
      if (const Instance* c = catalog.find_instance(id)) candidates.push_back(c);
  auto shared = [&](auto same) -> const Instance* {
    if (instance || candidates.size() < 2) return instance;
    for (const Instance* c : candidates)
      if (!same(*candidates.front(), *c)) return nullptr;
    return candidates.front();
  };
  auto noted = [&](ClaimVerdict v, const Instance* used) {
    if (!instance && used && v.verdict != Verdict::cannot_check)
      v.reason =
          "the claim is shared by all " + std::to_string(candidates.size()) + " candidate instances: " + v.reason;
    return v;
  };
  const Instance* nvlink_instance = shared([](const Instance& a, const Instance& b) {
    return a.nvlink_gbytes_per_s == b.nvlink_gbytes_per_s && a.intra_node_fabric == b.intra_node_fabric &&
           a.gpu_count == b.gpu_count;
  });
  const Instance* network_instance =
      shared([](const Instance& a, const Instance& b) { return a.network_gbits_per_s == b.network_gbits_per_s; });
  validation.verdicts.push_back(gpu_claim(noted(check_nvlink(report, nvlink_instance, thresholds), nvlink_instance)));
  validation.verdicts.push_back(noted(check_network(report, network_instance, thresholds), network_instance));
  validation.verdicts.push_back(gpu_claim(check_hbm(report, gpu, thresholds)));
  validation.verdicts.push_back(gpu_claim(check_pcie(report, gpu, thresholds)));
  return validation;
}

json to_json(const Validation& validation) {
  json verdicts = json::array();
  for (const ClaimVerdict& v : validation.verdicts) {
    verdicts.push_back({{"claim", v.claim},
                        {"verdict", std::string(to_string(v.verdict))},
                        {"claimed", optional_json(v.claimed)},
                        {"claimed_unit", v.claimed_unit},
                        {"claim_convention", v.claim_convention},
                        {"expected", optional_json(v.expected)},
                        {"measured", optional_json(v.measured)},
                        {"unit", v.unit},
                        {"efficiency", optional_json(v.efficiency)},
                        {"min_efficiency", v.min_efficiency},
                        {"measurement", v.measurement.empty() ? json(nullptr) : json(v.measurement)},
                        {"reason", v.reason}});
  }
  const InstanceMatch& m = validation.instance;
  return {{"instance",
           {{"id", optional_json(m.instance_id)},
            {"gpu_model", optional_json(m.gpu_model)},
            {"detected_by", m.detected_by},
            {"reason", m.reason},
            {"candidates", m.candidates}}},
          {"verdicts", verdicts},
          {"any_below", validation.any_below()}};
}

json validate_json(const ProbeReport& report, const Catalog& catalog, std::optional<std::string> instance_id) {
  return to_json(validate(report, catalog, std::move(instance_id)));
}

}  // namespace linkwise::probe
