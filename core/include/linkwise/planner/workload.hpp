// A workload: the model, the job, the hardware, the layout and the search constraints, parsed from
// the JSON contract and validated. Every error names the field at fault ("layout.tp").
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "linkwise/catalog.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/planner/framework.hpp"
#include "linkwise/planner/model.hpp"

namespace linkwise::planner {

enum class JobKind { pretrain, finetune, lora, inference };
enum class Precision { bf16, fp16, fp8 };
enum class Recompute { none, selective, full };
enum class Objective { cost, time, cost_within_deadline };

std::string_view to_string(JobKind kind) noexcept;
std::string_view to_string(Precision precision) noexcept;
std::string_view to_string(Recompute recompute) noexcept;
std::string_view to_string(Objective objective) noexcept;

// The ranges of the workload's numbers, checked when it is parsed (an error names the field and
// its range). They are far beyond any real job and keep every product the planner forms inside 64
// bits: at most 2^20 x 2^20 x 2^20 for layout sizes, 100,000 nodes x 4,096 GPUs.
namespace limits {
inline constexpr long long kLayoutSize = 1LL << 20;     // tp, pp, cp, dp, micro_batch, virtual_stages
inline constexpr long long kNodes = 100'000;            // hardware.nodes, constraints.max_nodes / min_nodes
inline constexpr long long kGpusPerNode = 4'096;        // hardware.custom.gpu_count
inline constexpr long long kGpus = kNodes * kGpusPerNode;  // constraints.max_gpus
inline constexpr long long kSequenceTokens = 1LL << 24;  // seq_len, prompt_len, output_len
inline constexpr long long kSequences = 1LL << 24;       // global_batch, concurrent
inline constexpr long long kStepTokens = 1LL << 40;      // seq_len x global_batch, prompt + output
inline constexpr double kJobTokens = 1e18;               // job.tokens
inline constexpr double kUsd = 1e12;                     // constraints.budget_usd
inline constexpr double kHours = 1e6;                    // constraints.deadline_hours
inline constexpr double kLatencyMs = 1e9;                // job.latency_target_ms
inline constexpr double kUsdPerHour = 1e6;               // hardware.custom.price_usd_per_hour
inline constexpr double kMemoryGb = 1e5;                 // hardware.custom.gpu_memory_gb
inline constexpr double kNetworkGbitsPerS = 1e5;         // hardware.custom.network_gbits_per_s (per node)
inline constexpr double kNvlinkGbytesPerS = 1e5;         // hardware.custom.nvlink_gbytes_per_s (per GPU)
inline constexpr long long kLoraRank = 1LL << 16;
// Sanity bounds on custom hardware (hardware.custom.*): a figure above these is a typo, not a machine.
inline constexpr double kNicGbitsPerPort = 800;   // fastest NIC port shipping (InfiniBand XDR, ConnectX-8 / 800GbE)
inline constexpr int kNicPortsPerGpuMax = 2;      // ports per GPU on the densest rails (plus 2 front-end ports per node)
inline constexpr double kMemorySpecSlack = 1.02;  // gpu_memory_gb may not exceed the GPU's spec beyond rounding
}  // namespace limits

struct Job {
  JobKind kind = JobKind::pretrain;
  Precision precision = Precision::bf16;
  int seq_len = 2048;        // training sequence length (tokens)
  int global_batch = 0;      // sequences per optimizer step (training)
  std::optional<double> tokens;  // training tokens, or output tokens to generate (inference)
  bool flash_attention = true;   // attention without stored score matrices (FlashAttention)
  // lora
  int lora_rank = 16;
  bool lora_base_4bit = false;   // QLoRA: base weights in 4-bit NF4
  // inference
  int prompt_len = 0;
  int output_len = 0;
  int concurrent = 1;            // sequences decoded together per model replica
  std::optional<double> latency_target_ms;  // per output token (time per output token)
  // training stack (framework.hpp): memory buffers and overlap profiles
  Framework framework = Framework::auto_;
  Optimizer optimizer = Optimizer::adamw;
  Offload offload = Offload::none;      // ZeRO-Offload: optimizer states (and parameters, ZeRO-3) in CPU memory
};

// The machine one node is: a catalog instance or a custom one, with its GPU.
struct Hardware {
  Instance instance;  // for custom hardware id "custom:<gpu_model>x<count>"
  Gpu gpu;
  bool custom = false;
};

// One machine seen without copying it: what the engine and describe() read. A Hardware converts to
// it implicitly; the search makes them over the catalog's own records, so a request copies no
// instance or GPU (their strings and source maps made each search allocate thousands of times).
struct HardwareRef {
  const Instance& instance;
  const Gpu& gpu;
  bool custom = false;

  HardwareRef(const Instance& instance_, const Gpu& gpu_, bool custom_) : instance(instance_), gpu(gpu_), custom(custom_) {}
  HardwareRef(const Hardware& hw) : instance(hw.instance), gpu(hw.gpu), custom(hw.custom) {}  // NOLINT: implicit by design
};

// A layout as given (fields may be absent: the search fills them).
struct LayoutSpec {
  std::optional<int> tp, pp, cp, dp, micro_batch, zero, virtual_stages;
  std::optional<Recompute> recompute;
  std::optional<bool> sequence_parallel;
};

// A complete layout.
struct Layout {
  int tp = 1, pp = 1, cp = 1, dp = 1;
  int micro_batch = 1;
  int zero = 0;  // 0: none, 1: optimizer states, 2: + gradients, 3: + weights sharded over DP (FSDP)
  Recompute recompute = Recompute::none;
  bool sequence_parallel = false;
  int virtual_stages = 1;  // interleaved pipeline chunks per GPU
  int gpus() const { return tp * pp * cp * dp; }
};

struct Constraints {
  std::vector<std::string> providers;   // empty: any
  std::vector<std::string> gpu_models;  // ids or families ("H100"); empty: any
  std::vector<std::string> instances;   // instance ids; empty: any
  std::optional<int> max_gpus, max_nodes, min_nodes;
  std::optional<double> budget_usd, deadline_hours;
  bool spot = false;
  bool tp_across_nodes = false;  // allow TP groups that leave a node's NVLink domain
  Objective objective = Objective::cost;
};

struct Workload {
  ModelShape model;
  Job job;
  std::optional<Hardware> hardware;  // required by plan(); recommend searches the catalog without it
  std::optional<int> nodes;          // hardware.nodes
  LayoutSpec layout;
  Constraints constraints;
};

Workload parse_workload(const nlohmann::json& doc, const Catalog& catalog);

// The layout plan() evaluates: the given fields, defaults for the rest (cp 1, dp = GPUs / (tp pp cp),
// micro_batch 1, zero 1, recompute none, sequence_parallel when tp > 1, virtual_stages 1).
// Throws invalid_input naming "layout.<field>" when the layout cannot run the workload.
Layout complete_layout(const Workload& w, int gpus);

// Checks one layout against the model and job; throws invalid_input naming the field.
void validate_layout(const Workload& w, const Layout& layout, int gpus_per_node, int nodes);

nlohmann::json to_json(const Layout& layout);

}  // namespace linkwise::planner
