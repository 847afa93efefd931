// An evaluated plan: memory per GPU, time per step, throughput, cost and the bottleneck, for one
// workload on one hardware and layout. Field names follow the JSON contract (to_json).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "linkwise/links.hpp"
#include "linkwise/planner/engine.hpp"
#include "linkwise/planner/workload.hpp"

namespace linkwise::planner {

struct MemoryGb {  // per GPU, GB = 10^9 bytes
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, kv_cache = 0, overhead = 0, total = 0, capacity = 0;
};

struct TimeS {  // seconds per step (training: optimizer step; inference: one decode step)
  double compute = 0, tp_comm = 0, cp_comm = 0, pp_comm = 0, pp_bubble = 0, dp_comm = 0, ep_comm = 0, exposed_comm = 0;
};

struct BandwidthSource {
  std::string intra_node, inter_node, hbm;  // "claimed: catalog <url> ..." or "measured: <report>"
};

struct Plan {
  std::string model;
  double params_b = 0, active_params_b = 0;  // total and per token (MoE: top_k of the routed experts)
  JobKind kind = JobKind::pretrain;
  Precision precision = Precision::bf16;
  Precision kv_cache_precision = Precision::bf16;
  std::string instance;  // id; "custom:<name>" for custom hardware
  std::string gpu_model;
  bool custom_hardware = false;
  int nodes = 1, gpus_per_node = 1, gpus = 1;
  int nvlink_domain_gpus = 1;  // GPUs one GPU reaches over NVLink (beyond the node on NVL72)
  Layout layout;

  bool fits = false;
  double memory_margin_gb = 0;       // capacity - total (negative when it does not fit)
  std::vector<std::string> why_not;  // why it does not fit / meet the constraints
  MemoryGb memory_gb;
  double step_time_s = 0;
  TimeS time_s;
  double tokens_per_s = 0;
  double model_tflops_per_gpu = 0, hardware_tflops_per_gpu = 0, mfu = 0;
  std::optional<double> price_usd_per_hour;  // whole job (all nodes)
  std::optional<double> job_hours, cost_usd, usd_per_million_tokens;
  std::optional<bool> meets_deadline, within_budget;
  std::string bottleneck;
  BandwidthSource bandwidth_source;
  double intra_node_busbw_gbytes_per_s = 0, inter_node_gbytes_per_s_per_gpu = 0;
  std::vector<std::string> warnings;
  // inference
  std::optional<double> ttft_s, tpot_s, decode_tokens_per_s;
  std::optional<bool> meets_latency_target;
  // recommend
  std::string why;

  Estimate raw;  // the engine's numbers (bytes, seconds)
};

// Turns an engine estimate into a Plan (words, GB, cost); used by plan() and recommend().
Plan describe(const Workload& w, HardwareRef hw, int nodes, const Layout& layout, const Estimate& e,
              const PreparedHardware& prepared, const PreparedLinksInfo& links, const PlannerConstants& k);

Plan plan(const Workload& w, const Catalog& catalog, const MeasuredLinks* measured = nullptr);
nlohmann::json to_json(const Plan& p);

}  // namespace linkwise::planner
