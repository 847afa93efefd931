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
#include "linkwise/planner/serving.hpp"

namespace linkwise::planner {

enum class JobKind { pretrain, finetune, lora, inference };
// fp8 covers per-tensor (Transformer Engine delayed/current scaling) and MXFP8 block recipes; fp4
// covers NVFP4 and MXFP4 (4-bit elements with block scales: 4.5 bits per weight).
enum class Precision { bf16, fp16, fp8, fp4 };
enum class Recompute { none, selective, full };
enum class LoraBase { bf16, nf4, fp8 };
enum class Objective { cost, time, cost_within_deadline };

std::string_view to_string(JobKind kind) noexcept;
std::string_view to_string(Precision precision) noexcept;
std::string_view to_string(Recompute recompute) noexcept;
std::string_view to_string(Objective objective) noexcept;

// The ranges of the workload's numbers, checked when it is parsed (an error names the field and
// its range). They are far beyond any real job and keep every product the planner forms inside 64
// bits: at most 2^20 x 2^20 x 2^20 for layout sizes, 100,000 nodes x 4,096 GPUs.
namespace limits {
inline constexpr long long kLayoutSize = 1LL << 20;        // tp, pp, cp, dp, micro_batch, virtual_stages
inline constexpr long long kNodes = 100'000;               // hardware.nodes, constraints.max_nodes / min_nodes
inline constexpr long long kGpusPerNode = 4'096;           // hardware.custom.gpu_count
inline constexpr long long kGpus = kNodes * kGpusPerNode;  // constraints.max_gpus
inline constexpr long long kSequenceTokens = 1LL << 24;    // seq_len, prompt_len, output_len
inline constexpr long long kSequences = 1LL << 24;         // global_batch, concurrent
inline constexpr long long kStepTokens = 1LL << 40;        // seq_len x global_batch, prompt + output
inline constexpr double kJobTokens = 1e18;                 // job.tokens
inline constexpr double kUsd = 1e12;                       // constraints.budget_usd
inline constexpr double kHours = 1e6;                      // constraints.deadline_hours
inline constexpr double kLatencyMs = 1e9;                  // job.latency_target_ms
inline constexpr double kUsdPerHour = 1e6;                 // hardware.custom.price_usd_per_hour
inline constexpr double kMemoryGb = 1e5;                   // hardware.custom.gpu_memory_gb
inline constexpr double kNetworkGbitsPerS = 1e5;           // hardware.custom.network_gbits_per_s (per node)
inline constexpr double kNvlinkGbytesPerS = 1e5;           // hardware.custom.nvlink_gbytes_per_s (per GPU)
inline constexpr long long kVcpus = 1LL << 16;             // hardware.custom.vcpus (host hardware threads)
inline constexpr double kHostMemoryGib = 1e6;              // hardware.custom.memory_gib (host memory)
inline constexpr long long kLoraRank = 1LL << 16;
// Sanity bounds on custom hardware (hardware.custom.*): a figure above these is a typo, not a machine.
inline constexpr double kNicGbitsPerPort = 800;  // fastest NIC port shipping (InfiniBand XDR, ConnectX-8 / 800GbE)
inline constexpr int kNicPortsPerGpuMax = 2;     // ports per GPU on the densest rails (plus 2 front-end ports per node)
inline constexpr double kMemorySpecSlack = 1.02;  // gpu_memory_gb may not exceed the GPU's spec beyond rounding
// Below these a figure is a typo too (and would drive the step time to overflow): a card smaller
// than the 0.5 GB the planner holds back, an NVLink slower than a PCIe 1.0 x16 slot (4 GB/s per
// direction), a network slower than Gigabit Ethernet.
inline constexpr double kMemoryGbMin = 1;
inline constexpr double kNvlinkGbytesPerSMin = 8;
inline constexpr double kNetworkGbitsPerSMin = 1;
// Model shapes (model.*): beyond any published model, and small enough that the search's divisor
// loops (over heads, layers and experts) and every product of shapes stay cheap and inside 64 bits.
inline constexpr long long kLayers = 1LL << 14;            // model.layers, model.moe.dense_layers, model.moe.moe_every
inline constexpr long long kHidden = 1LL << 20;            // model.hidden
inline constexpr long long kHeads = 1LL << 16;             // model.heads, kv_heads
inline constexpr long long kFfn = 1LL << 22;               // model.ffn_hidden, model.moe.expert_ffn_hidden
inline constexpr long long kVocab = 1LL << 24;             // model.vocab
inline constexpr long long kHeadDim = 1LL << 14;           // model.attention.head_dim, rope_head_dim, v_head_dim
inline constexpr long long kLatentRank = 1LL << 20;        // model.attention.kv_lora_rank, q_lora_rank
inline constexpr long long kAttentionWindow = 1LL << 24;   // model.attention.window (tokens)
inline constexpr long long kExperts = 1LL << 16;           // model.moe.experts, top_k, shared_experts
inline constexpr double kCapacityFactor = 1024;            // model.moe.capacity_factor (at least 1)
inline constexpr long long kNvlinkDomainGpus = 1LL << 20;  // hardware.custom.nvlink_domain_gpus
}  // namespace limits

struct Job {
  JobKind kind = JobKind::pretrain;
  Precision precision = Precision::bf16;
  int seq_len = 2048;            // training sequence length (tokens)
  int global_batch = 0;          // sequences per optimizer step (training)
  std::optional<double> tokens;  // training tokens, or output tokens to generate (inference)
  bool flash_attention = true;   // attention without stored score matrices (FlashAttention)
  // PyTorch stacks (fsdp, torchtitan, hf-accelerate): blocks compiled with torch.compile, which
  // fuses the norm, rotary and gated-activation element-wise chains that eager mode runs op by op.
  bool torch_compile = false;
  // lora
  Precision kv_cache_precision = Precision::bf16;  // inference: bf16 (default), fp16 or fp8
  int lora_rank = 16;
  // "lora_base": the frozen base as stored: bf16, 4bit (QLoRA's NF4) or fp8 (TE's FP8 parameters)
  LoraBase lora_base = LoraBase::bf16;
  // "lora_targets": "attention": adapters on the attention's Q, K, V and output projections only (the
  // MLP frozen whole); "all" (default): on every linear layer.
  bool lora_attention_only = false;
  // inference
  int prompt_len = 0;
  int output_len = 0;
  int concurrent = 1;  // sequences decoded together (whole job; each replica gets concurrent / dp)
  // `"concurrent": "max"`: as many sequences as the engine's KV pool holds (max-throughput mode);
  // the plan reports the number as max_concurrent.
  bool concurrent_max = false;
  Engine engine = Engine::auto_;  // serving engine profile (serving.hpp)
  // The engine's cap on the sequences one instance (replica) runs together, where the job sets it
  // (vLLM --max-num-seqs, SGLang --max-running-requests, TensorRT-LLM --max_batch_size); none: the
  // profile's default (vLLM 256, TensorRT-LLM 2048, SGLang memory only).
  std::optional<int> engine_batch_limit;
  std::optional<double> latency_target_ms;  // per output token (time per output token)
  // training stack (framework.hpp): memory buffers and overlap profiles
  Framework framework = Framework::auto_;
  Optimizer optimizer = Optimizer::adamw;
  Offload offload = Offload::none;  // ZeRO-Offload: optimizer states (and parameters, ZeRO-3) in CPU memory
  // The gradients' buffer and data-parallel reduction in bf16 (`"grad_reduce_dtype": "bf16"`:
  // Megatron-LM's --grad-reduce-in-bf16, Megatron Bridge's and NeMo's grad_reduce_in_fp32 False,
  // FSDP's reduce_dtype bfloat16); fp32 by default, as Megatron-Core keeps bf16 and fp8 training.
  bool grad_reduce_bf16 = false;
  // The job states the dtype (either way): a stack whose own default differs (Accelerate's FSDP
  // reduces in the mixed-precision dtype) then follows the job.
  bool grad_reduce_stated = false;
  // `"loss": "fused"`: a fused cross-entropy kernel on the 16-bit logits (flash-attn's, as
  // llm-foundry runs by default; Transformer Engine's under Megatron-Core), not PyTorch's eager
  // loss on fp32 logits (memory_model.cpp states the bytes each keeps).
  bool fused_loss = false;
};

// QLoRA: a LoRA job on an NF4 (bitsandbytes 4-bit) base, which runs under PEFT/Transformers.
inline bool is_qlora(const Job& job) noexcept { return job.kind == JobKind::lora && job.lora_base == LoraBase::nf4; }

// The stack a job's layout at ZeRO stage `zero` is planned as (framework.hpp planned_framework):
// one rule for what a plan reports and for what workload.cpp refuses.
inline Framework planned_framework(const Job& job, int zero) noexcept {
  return planned_framework(job.framework, zero, is_qlora(job), job.offload == Offload::optimizer);
}

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

  HardwareRef(const Instance& instance_, const Gpu& gpu_, bool custom_)
      : instance(instance_), gpu(gpu_), custom(custom_) {}
  HardwareRef(const Hardware& hw)
      : instance(hw.instance), gpu(hw.gpu), custom(hw.custom) {}  // NOLINT: implicit by design
};

// A layout as given (fields may be absent: the search fills them).
struct LayoutSpec {
  std::optional<int> tp, pp, cp, dp, micro_batch, zero, virtual_stages, ep, etp;
  // The data-parallel ranks the ZeRO states are sharded over (hybrid sharding); unstated: all of dp.
  std::optional<int> dp_shard;
  // Derived (tp cp dp / (ep etp)): read only to check it, so a plan's printed layout reads back.
  std::optional<int> edp;
  std::optional<bool> overlap_a2a;
  std::optional<bool> dualpipe;
  std::optional<bool> tp_comm_overlap;
  std::optional<bool> overlap_p2p_comm;
  std::optional<bool> overlap_grad_reduce;
  std::optional<Recompute> recompute;
  std::optional<double> recompute_layer_fraction;
  std::optional<bool> sequence_parallel;
};

// A complete layout.
struct Layout {
  int tp = 1, pp = 1, cp = 1, dp = 1;
  int micro_batch = 1;
  int zero = 0;  // 0: none, 1: optimizer states, 2: + gradients, 3: + weights sharded over DP (FSDP)
  // Hybrid sharding: the ZeRO states sharded over groups of dp_shard data-parallel ranks (the
  // innermost: a node's GPUs first) and replicated over the dp / dp_shard groups, whose gradients
  // are all-reduced across them. PyTorch FSDP's HYBRID_SHARD and torchtitan's dp_shard x
  // dp_replicate, DeepSpeed's MiCS (mics_shard_size), Megatron-Core's distributed optimizer with
  // num_distributed_optimizer_instances = dp / dp_shard. 0: all of dp (full sharding).
  int dp_shard = 0;
  Recompute recompute = Recompute::none;
  // With recompute full: the fraction of the layers checkpointed (the rest keep all activations),
  // as layer-selective checkpointing does it: fms-fsdp's selective_checkpointing p (policies/
  // ac_handler.py), torchtitan's selective_ac_option k (every k-th block, 1/k). 1: every layer.
  double recompute_layer_fraction = 1.0;
  bool sequence_parallel = false;
  int virtual_stages = 1;  // interleaved pipeline chunks per GPU
  // Mixture-of-experts (Megatron-Core's expert parallelism): each pipeline stage's tp x cp x dp GPUs
  // are regrouped for the experts as etp (expert tensor parallel, fastest) x ep (expert parallel:
  // the experts are split over ep) x edp (expert data parallel = tp cp dp / (ep etp)).
  int ep = 1, etp = 1;
  // The all-to-all of expert parallelism hidden behind another micro-batch's compute (DeepSeek's
  // DualPipe; Megatron-Core's --overlap-moe-expert-parallel-comm); off: on the critical path.
  bool overlap_a2a = false;
  // DeepSeek-V3's DualPipe (arXiv 2412.19437 section 3.2.1, Table 2): micro-batches fed from both
  // ends of the pipeline, each forward chunk overlapped with another's backward (all-to-all
  // hidden); bubble (pp/2 - 1)(F&B + B - 3W) instead of 1F1B's (pp - 1)(F + B); two copies of the
  // weights; pp + 1 micro-batches of activations. Implies overlap_a2a.
  bool dualpipe = false;
  // Transformer Engine's TP communication overlap (userbuffers; Megatron-Core's --tp-comm-overlap,
  // NeMo's and Megatron Bridge's tp_comm_overlap): each TP all-gather and reduce-scatter pipelined
  // with its GEMM in tp chunks. Megatron-Core's runtime only, with sequence parallelism (Megatron-LM's
  // arguments.py asserts it), the TP group inside the NVLink domain (tp_comm_overlap_problem).
  bool tp_comm_overlap = false;
  // The pipeline's sends and receives overlapped with the next chunk's compute: Megatron-Core's
  // overlap_p2p_comm in its interleaved schedule, or DualPipe's (overlap_p2p_comm_problem); off,
  // each send blocks, as in Megatron-LM before 2023-05-31 (commit f9283c5a8a added the option).
  bool overlap_p2p_comm = false;
  // Megatron-Core's overlap of the data-parallel gradient reduction with the backward
  // (overlap_grad_reduce; with the distributed optimizer also the parameters' all-gather with the
  // next forward, overlap_param_gather, which Megatron asserts needs it): grad_reduce_overlap. Off,
  // both run after the backward in the open: Megatron-LM's own default, and its local DDP's only
  // way before the overlapping one (28766b55fb, 2023-08-07; --overlap-grad-reduce, 2d5220a424,
  // merged 2023-09-07), which pipelined runs had to use. One field for both flags: a run that
  // overlapped the reduction but not the gather (before f048bf8c08, 2023-11-17) cannot be stated.
  bool overlap_grad_reduce = false;
  int gpus() const { return tp * pp * cp * dp; }
  int edp() const { return tp * cp * dp / (ep * etp); }
  // The data-parallel ranks one copy of the ZeRO states is sharded over, and the copies.
  int zero_shard() const { return dp_shard > 0 ? dp_shard : dp; }
  int zero_replicas() const { return dp / zero_shard(); }
};

// Why hybrid sharding (l.dp_shard below l.dp, which divides it) cannot run on this layout under
// the job's stack, or nullptr where it can: FSDP's HYBRID_SHARD (ZeRO-3) and _HYBRID_SHARD_ZERO2,
// torchtitan's dp_replicate, Megatron-Core's num_distributed_optimizer_instances (its distributed
// optimizer, ZeRO-1) and DeepSpeed's MiCS (mics_shard_size, ZeRO-3 only in DeepSpeed's config
// docs). The one rule plan (validate_layout) and the search apply.
inline const char* hybrid_sharding_problem(const Job& job, const Layout& l, bool moe) noexcept {
  if (job.kind == JobKind::inference)
    return "it is a training setting: serving replicas shard no states (only layout.dp itself is accepted)";
  if (l.zero == 0)
    return "it shards the ZeRO states: it needs layout.zero 1, 2 or 3 (at zero 0 every rank holds them all)";
  if (job.framework == Framework::deepspeed && l.zero < 3)
    return "DeepSpeed shards over a group smaller than DP only at ZeRO-3 (MiCS, mics_shard_size)";
  // The experts' states shard over the expert-DP group, split into the same copies.
  if (moe && l.edp() % l.zero_replicas() != 0)
    return "the copies (layout.dp / layout.dp_shard) must divide the expert-data-parallel group "
           "(tp x cp x dp / (ep x etp))";
  return nullptr;
}

// Why Transformer Engine's TP communication overlap (Layout::tp_comm_overlap) cannot run on a
// training layout, or nullptr where it can: it is Megatron-Core's (the stack the layout is planned
// as), needs tp > 1 with sequence parallelism, and a TP group inside the NVLink domain (userbuffers
// exchange over NVLink). tp_comm_overlap_default says when it runs unless the workload states it
// (docs/calibration.md "TP communication overlap").
inline const char* tp_comm_overlap_problem(const Job& job, const Layout& l, bool tp_inside_nvlink_domain) noexcept {
  if (job.kind == JobKind::inference)
    return "it is a training setting (the serving profiles time TP as the engines run it)";
  if (l.tp <= 1) return "it needs layout.tp > 1";
  if (!megatron_runtime(job.framework, l.zero, is_qlora(job)))
    return "it is Megatron-Core's (Transformer Engine userbuffers): the layout is not planned under Megatron-Core's "
           "runtime (job.framework megatron-core or nemo, or auto below layout.zero 3)";
  if (!l.sequence_parallel) return "it needs layout.sequence_parallel (Megatron-LM asserts it)";
  if (!tp_inside_nvlink_domain)
    return "the TP group is not inside one NVIDIA NVLink domain (userbuffers exchange over NVLink; not PCIe, "
           "not Infinity Fabric, not the network)";
  return nullptr;
}

// Whether a layout runs the TP overlap when the workload does not say: where it can run, for dense
// models in fp8 or 16 bits (recipes_overlap_tp), as NVIDIA's recipes run them (NeMo's performance recipes, Megatron
// Bridge's, the DGX Cloud benchmarks, MLPerf's TP_COMM_OVERLAP). Off for fp4, which those releases
// do not overlap (Megatron Bridge: tp_comm_overlap False for nvfp4; MLPerf v5.1's NVFP4 configs:
// "TP overlap not supported yet"), and for mixture-of-experts models, whose published recipes mostly
// leave it off. Megatron-LM's own flag defaults to off: a run on it states false.
inline bool recipes_overlap_tp(const Job& job, bool moe) noexcept { return !moe && job.precision != Precision::fp4; }
inline bool tp_comm_overlap_default(const Job& job, bool moe, const Layout& l, bool tp_inside_nvlink_domain) noexcept {
  return recipes_overlap_tp(job, moe) && tp_comm_overlap_problem(job, l, tp_inside_nvlink_domain) == nullptr;
}

// Why Megatron-Core's pipeline send/receive overlap (Layout::overlap_p2p_comm) cannot run on a
// training layout, or nullptr where it can: Megatron-Core's runtime, pp > 1, and its interleaved
// schedule (Megatron-LM sets the flag false without virtual stages: megatron/training/arguments.py,
// "non-interleaved schedule does not support overlapping p2p communication"), or DualPipe, which
// overlaps its sends by design (DeepSeek-V3 report 3.2.1). Where it can run it is on unless stated:
// Megatron-LM's default since commit 4eeff55d1f (2023-10-12, "Make overlap_p2p_comm the default"),
// and Megatron Bridge sets it for every interleaved layout (training/comm_overlap.py).
inline const char* overlap_p2p_comm_problem(const Job& job, const Layout& l) noexcept {
  if (job.kind == JobKind::inference) return "it is a training setting (serving runs no pipeline schedule)";
  if (l.pp <= 1) return "it needs layout.pp > 1";
  if (l.dualpipe) return nullptr;
  if (!megatron_runtime(job.framework, l.zero, is_qlora(job)))
    return "it is Megatron-Core's: the layout is not planned under Megatron-Core's runtime (job.framework "
           "megatron-core or nemo, or auto below layout.zero 3)";
  if (l.virtual_stages <= 1)
    return "Megatron-Core overlaps the pipeline's sends only in its interleaved schedule (layout.virtual_stages > 1)";
  return nullptr;
}

// Whether Megatron-Core's gradient-reduction overlap (Layout::overlap_grad_reduce) is the run's
// choice (its DDP and distributed optimizer: Megatron-Core's runtime at ZeRO 0 or 1), always on
// (Megatron-FSDP at ZeRO 2 or 3 asserts it: megatron_fsdp.py, "Ensure that overlap_grad_reduce=True
// for ZeRO-2 and ZeRO-3"), or not Megatron's (PyTorch FSDP, DeepSpeed and the other stacks schedule
// their own reductions; serving reduces none). A choice is on unless stated, as NVIDIA's recipes run
// it (Megatron Bridge's and NeMo's comm-overlap configs); Megatron-LM's own flags default off.
enum class GradReduceOverlap { choice, always, never };
inline GradReduceOverlap grad_reduce_overlap(const Job& job, const Layout& l) noexcept {
  if (job.kind == JobKind::inference || !megatron_runtime(job.framework, l.zero, is_qlora(job)))
    return GradReduceOverlap::never;
  return l.zero >= 2 ? GradReduceOverlap::always : GradReduceOverlap::choice;
}
inline bool overlap_grad_reduce_default(const Job& job, const Layout& l) noexcept {
  return grad_reduce_overlap(job, l) != GradReduceOverlap::never;
}
// Why a stated overlap_grad_reduce cannot hold on a layout, or nullptr where it can.
inline const char* overlap_grad_reduce_problem(const Job& job, const Layout& l, bool stated) noexcept {
  switch (grad_reduce_overlap(job, l)) {
    case GradReduceOverlap::choice: return nullptr;
    case GradReduceOverlap::always:
      return stated ? nullptr
                    : "Megatron-FSDP (layout.zero 2 or 3 under Megatron-Core's runtime) always overlaps its reductions";
    case GradReduceOverlap::never:
      if (!stated) return nullptr;
      return job.kind == JobKind::inference
                 ? "it is a training setting (serving reduces no gradients)"
                 : "it is Megatron-Core's (job.framework megatron-core or nemo, or auto below layout.zero 3); the "
                   "layout's stack schedules its own reductions";
  }
  return nullptr;
}

// Each overlap of a layout as the workload states it, where the layout can hold that, else its
// default there: the one rule plan (complete_layout) and the search apply per layout. plan refuses
// a stated value the layout cannot hold (validate_layout); the search plans such a layout with the
// default, and refuses a stated value no layout of the job can hold (training_choices).
inline void resolve_overlaps(const Job& job, const LayoutSpec& stated, bool moe, bool tp_inside_nvlink_domain,
                             Layout& l) noexcept {
  const bool tp_holds = tp_comm_overlap_problem(job, l, tp_inside_nvlink_domain) == nullptr;
  l.tp_comm_overlap = stated.tp_comm_overlap && (!*stated.tp_comm_overlap || tp_holds)
                          ? *stated.tp_comm_overlap
                          : recipes_overlap_tp(job, moe) && tp_holds;
  const bool p2p_holds = overlap_p2p_comm_problem(job, l) == nullptr;
  l.overlap_p2p_comm =
      stated.overlap_p2p_comm && (!*stated.overlap_p2p_comm || p2p_holds) ? *stated.overlap_p2p_comm : p2p_holds;
  l.overlap_grad_reduce =
      stated.overlap_grad_reduce && overlap_grad_reduce_problem(job, l, *stated.overlap_grad_reduce) == nullptr
          ? *stated.overlap_grad_reduce
          : overlap_grad_reduce_default(job, l);
}

struct Constraints {
  std::vector<std::string> providers;   // empty: any
  std::vector<std::string> gpu_models;  // ids or families ("H100"); empty: any
  std::vector<std::string> instances;   // instance ids; empty: any
  std::optional<int> max_gpus, max_nodes, min_nodes;
  std::optional<double> budget_usd, deadline_hours;
  bool spot = false;
  // Allow TP (and EP, CP) groups that leave the NVLink domain (run over the network). Inside a
  // domain that spans instances (GB200 NVL72 rented as trays) they may span instances without it.
  bool tp_across_nodes = false;
  Objective objective = Objective::cost;
  // Written in the workload (not the defaults): plan holds a stated tp_across_nodes false as a
  // constraint, and refuses an objective (it ranks recommend's plans; plan has one).
  bool tp_across_nodes_given = false, objective_given = false;
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

// The constraints a machine does not meet, one line each in words naming the field: providers,
// gpu_models and instances (the catalog search's filters, through provider_matches and
// gpu_id_matches) and, for nodes > 0, max_nodes, min_nodes and max_gpus. Empty: it meets them all.
// The catalog search leaves such machines out; a workload's own hardware is not left out silently:
// plan() lists these in why_not (reason "constraint"), recommend rejects it with reason "constraint".
std::vector<std::string> unmet_constraints(const Constraints& c, const Instance& instance, int nodes);

// The layout plan() evaluates: the given fields, defaults for the rest (cp 1, dp = GPUs / (tp pp cp),
// micro_batch 1, zero 1, recompute none, sequence_parallel when tp > 1, virtual_stages 1).
// Throws invalid_input naming "layout.<field>" when the layout cannot run the workload.
Layout complete_layout(const Workload& w, int gpus);

// Whether tensor parallelism of size tp can split the model's attention (the one rule, used by
// validation and by the search's tp candidates); empty when it can, else why not in words.
// Query heads: heads % tp == 0 (Megatron-Core and vLLM alike). KV heads (GQA/MHA):
//   training, Megatron-Core: num_query_groups_per_partition = divide(num_query_groups, tp)
//     (megatron/core/transformer/attention.py), an assert that kv_heads % tp == 0;
//   inference, vLLM: kv_heads % tp == 0, or tp % kv_heads == 0 with each KV head replicated on
//     tp / kv_heads ranks (vllm/model_executor/models/llama.py, LlamaAttention; SGLang alike).
// MLA keeps one latent per token, replicated on every TP rank: no KV-head constraint.
std::string tp_attention_problem(const ModelShape& model, JobKind kind, long long tp);

// Why job.grad_reduce_dtype does not apply to this job, in words ("" when it does): inference, LoRA,
// fp16, and the stacks that keep their own fp32 accumulation (deepspeed, hai-llm). parse_job refuses
// the field there; plans suggest it only where it applies.
std::string grad_reduce_dtype_refusal(const Job& job);

// Checks one layout against the model and job; throws invalid_input naming the field.
void validate_layout(const Workload& w, const Layout& layout, int gpus_per_node, int nodes);

// What the training stack the job names cannot run at this pipeline depth or ZeRO stage, in words
// ("" when it can): CPU offload needs ZeRO (optimizer_and_params ZeRO-3), DeepSpeed's pipeline engine
// takes ZeRO 0-1, Accelerate trains without a pipeline. validate_layout refuses such a layout naming
// `field`; the search never builds one.
struct StackProblem {
  std::string field, why;
};
StackProblem stack_problem(const Job& job, int pp, int zero);
// The same for how the model is split: QLoRA's NF4 base runs under PEFT/Transformers, which split
// no layer over GPUs (tp 1) and run no pipeline schedule (pp 1); DeepSpeed's pipeline engine has no
// interleaved schedule (virtual_stages 1). Each dimension can be asked alone (the others at 1).
StackProblem parallelism_problem(const Job& job, int tp, int pp, int virtual_stages, int cp = 1);

// Whether Megatron-Core can split `layers` over `pp` stages: evenly, or with the middle stages at
// ceil(layers / pp) and the first and last sharing the deficit, each keeping at least one layer
// (its first/last-stage layer counts; DeepSeek-V3 runs its 61 layers as PP16).
bool pipeline_split_possible(int layers, int pp) noexcept;

nlohmann::json to_json(const Layout& layout);

}  // namespace linkwise::planner
