// An evaluated plan: memory per GPU, time per step, throughput, cost and the bottleneck, for one
// workload on one hardware and layout. Field names follow the JSON contract (to_json).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "linkwise/links.hpp"
#include "linkwise/planner/engine.hpp"
#include "linkwise/planner/workload.hpp"

namespace linkwise::planner {

// Why a plan does not qualify: one vocabulary for plan (Plan::why_not_reasons) and recommend
// (SearchResult::rejected). JSON: the names below.
//   memory          needs more memory per GPU than there is
//   deadline        takes longer than constraints.deadline_hours
//   budget          costs more than constraints.budget_usd
//   network_unknown no stated network bandwidth between nodes: one node only
//   unpriced        no (spot) price: no cost to rank by, or a budget that cannot be checked
//   latency_target  time per output token over job.latency_target_ms
//   constraint      another of the workload's constraints rules it out (max_gpus, min_nodes, ...)
//   unsupported     the GPU cannot run the job as asked (no tensor cores at its precision, an
//                   unknown peak, an engine that does not run on it)
enum class Reason { memory, deadline, budget, network_unknown, unpriced, latency_target, constraint, unsupported };
std::string_view to_string(Reason r) noexcept;

struct MemoryGb {  // per GPU, GB = 10^9 bytes
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, kv_cache = 0, overhead = 0, total = 0,
         capacity = 0;
};

struct TimeS {  // seconds per step (training: optimizer step; inference: one decode step)
  double compute = 0, tp_comm = 0, cp_comm = 0, pp_comm = 0, pp_bubble = 0, dp_comm = 0, ep_comm = 0, exposed_comm = 0;
  // What of each communication compute does not hide: they add up to exposed_comm.
  double tp_exposed = 0, cp_exposed = 0, pp_exposed = 0, dp_exposed = 0, ep_exposed = 0;
  double dequant = 0;  // QLoRA: NF4 dequantisation, part of compute
  double offload = 0;  // CPU offload: PCIe transfers of gradients and weights, added to the step
};

struct BandwidthSource {
  std::string intra_node, inter_node, hbm;  // "claimed: catalog <url> ..." or "measured: <report>"
};

// What a plan's tokens/s and cost per million tokens count: every token trained on, or the output
// tokens a serving job generates (prompt tokens are work, not product).
constexpr std::string_view counted_tokens(JobKind kind) noexcept {
  return kind == JobKind::inference ? "output tokens" : "tokens";
}

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
  std::string memory_verdict;  // "fits", "tight" (inside the memory model's error band) or "no"
  // CPU offload only: whether the node's host memory and vCPUs are known, so the offloaded states
  // were checked against the host and its optimizer step timed for it (recommend ranks plans
  // with false after the others); null without offload.
  std::optional<bool> offload_host_checked;
  double memory_error_band = 0;         // that band, as a fraction of the predicted total
  double memory_margin_gb = 0;          // capacity - total (negative when it does not fit)
  std::vector<std::string> why_not;     // why it does not fit / meet the constraints
  std::vector<Reason> why_not_reasons;  // the class of each why_not entry, in the same order
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
  double intra_node_busbw_gbytes_per_s = 0;
  std::optional<double> inter_node_gbytes_per_s_per_gpu;  // null: the catalog states no network
  std::vector<std::string> warnings;
  // p10-p90 interval (uncertainty.hpp)
  struct Range {
    double p10 = 0, p90 = 0;
  };
  Range step_time_interval, tokens_per_s_interval;
  std::optional<Range> cost_usd_interval, usd_per_million_tokens_interval, job_hours_interval;
  std::string interval_basis;
  bool interval_widened = false;
  // inference
  std::optional<double> ttft_s, tpot_s, decode_tokens_per_s;
  std::optional<double> ttft_under_load_s;  // mean TTFT when `concurrent` requests arrive together
  std::optional<bool> meets_latency_target;
  std::string engine;  // the serving engine profile used ("tensorrt-llm", ...)
  // Training: the stack the step was planned as (job.framework; auto resolved by the ZeRO stage).
  std::string framework;
  std::optional<long long> concurrent;      // sequences decoded together, whole job
  std::optional<long long> max_concurrent;  // what the engines' KV pools hold, whole job
  // What sets max_concurrent: "kv_pool" (the engine's KV cache is full) or "engine_batch_limit"
  // (the engine's cap on sequences per step, with KV memory left over: vLLM's max_num_seqs 256,
  // TensorRT-LLM's max_batch_size 2048).
  std::optional<std::string> max_concurrent_limit;
  bool concurrent_is_max = false;  // job.concurrent "max": concurrent = max_concurrent
  // recommend
  std::string why;

  Estimate raw;  // the engine's numbers (bytes, seconds)
};

// Turns an engine estimate into a Plan (words, GB, cost); used by plan() and recommend().
Plan describe(const Workload& w, HardwareRef hw, int nodes, const Layout& layout, const Estimate& e,
              const PreparedHardware& prepared, const PreparedLinksInfo& links, const PlannerConstants& k);

// One workload on its hardware and layout. The workload was resolved against the catalog by
// parse_workload (its instance, GPU and preset are in it), so no catalog is needed here.
Plan plan(const Workload& w, const MeasuredLinks* measured = nullptr);
nlohmann::json to_json(const Plan& p);

}  // namespace linkwise::planner
