// The planner's numerical engine. A workload is first *prepared* (model and job constants, and the
// hardware's effective bandwidths and peaks, computed once); estimate() then evaluates one layout
// from these plain numbers: no allocation, no strings, no JSON, so the search can evaluate millions
// of layouts per second. plan() and recommend() decorate its result for people.
#pragma once

#include <algorithm>
#include <cmath>

#include <string>

#include "linkwise/links.hpp"
#include "linkwise/planner/constants.hpp"
#include "linkwise/planner/serving.hpp"
#include "linkwise/planner/workload.hpp"

namespace linkwise::planner {

// Model and job, reduced to the numbers the memory and time models use.
struct PreparedModel {
  JobKind kind = JobKind::pretrain;
  Precision precision = Precision::bf16;
  double layers = 0, hidden = 0, heads = 0, kv_heads = 0, head_dim = 0, ffn = 0, vocab = 0;
  double kv_width = 0;      // kv_heads x head_dim
  double mlp_in_width = 0;  // ffn (x2 with a gate)
  bool gated = false, tied = false, dropout = false, flash = true;
  double layer_params = 0;      // weights of one dense layer
  double embedding_params = 0;  // one vocab x hidden matrix
  double total_params = 0;
  // attention (see ModelShape): widths of Q and of the output projection's input, and the width
  // the core attention FLOPs scale with (heads x (qk + v head sizes) / 2: hidden for classic MHA)
  bool mla = false;
  double q_width = 0, o_width = 0, attention_width = 0;
  double qk_head_dim = 0, v_head_dim = 0, q_lora = 0, kv_lora = 0, rope_dim = 0;
  double kv_elements = 0;      // KV-cache elements per token per layer (whole model)
  bool kv_split_by_tp = true;  // GQA/MHA heads split over TP; MLA's latent is replicated on every TP rank
  double kv_bytes = 2;         // job.kv_cache_precision
  // sliding-window attention (ModelShape::attention_window): the window in tokens (0: none) and the
  // share of the layers that use it; attention_context() and kv_tokens() below apply them
  double window = 0, windowed_share = 0;
  // mixture-of-experts (moe false: a dense model, the fields below unused)
  bool moe = false;
  double experts = 0, top_k = 0, expert_ffn = 0, expert_in_width = 0, shared_ffn = 0, shared_in_width = 0;
  double moe_layers = 0, dense_mlp_layers = 0;
  double expert_params = 0, moe_base_params = 0;  // one routed expert; a MoE layer without its routed experts
  double log_expert_miss = 0;        // log(1 - top_k / experts): one token's odds of missing an expert (moe_rows)
  double load_imbalance = 1;         // the busiest expert-parallel rank's tokens over the mean
  double active_linear_params = 0;   // linear weights one token passes through (FLOPs), output layer included
  double lora_params_per_layer = 0;  // rank x (in + out) for Q, K, V, O, and the MLP matrices
  double seq_len = 0, global_batch = 0;
  double bytes_per_weight = 2;         // 16-bit; fp8 inference 1; 4-bit LoRA base ~0.52
  double expert_bytes_per_weight = 2;  // routed experts: bytes_per_weight, or their stored format in serving
  double gemm_element_bytes = 2;
  // inference
  double prompt_len = 0, output_len = 0, concurrent = 0;
  bool concurrent_max = false;  // "concurrent": "max": fill the engine's KV pool
  bool dequant_4bit = false;    // QLoRA: NF4 base weights dequantised to bf16 before every GEMM
  // training stack (framework.hpp)
  Framework framework = Framework::auto_;
  Optimizer optimizer = Optimizer::adamw;
  Offload offload = Offload::none;
  bool grad_reduce_bf16 = false;    // Job::grad_reduce_bf16
  bool grad_reduce_stated = false;  // Job::grad_reduce_stated
  bool fused_loss = false;          // Job::fused_loss
  bool lora_frozen_mlp = false;     // LoRA with adapters on the attention only (Job::lora_attention_only)
  // A Llama-family block without torch.compile, whichever stack runs it: whether it runs op by op
  // is the layout's stack's to say (eager_llama_block, framework_memory.hpp).
  bool uncompiled_llama_block = false;
};

// Sliding-window attention, averaged over the layers (gpt-oss alternates 128-token windows with
// full attention). attention_context: the key count that replaces `context` in the causal
// attention FLOPs 2 x rows x context x width: a windowed query attends to min(w, its position)
// keys, w (1 - w / 2c) on average over c positions, twice that against the causal c / 2.
inline double attention_context(const PreparedModel& m, double context) {
  if (m.window <= 0 || m.window >= context) return context;
  return (1.0 - m.windowed_share) * context + m.windowed_share * 2.0 * m.window * (1.0 - m.window / (2.0 * context));
}
// kv_tokens: the tokens a sequence of `context` tokens keeps in the KV cache per layer, and each
// new token's attention reads: the whole context for full layers, the window for windowed ones.
inline double kv_tokens(const PreparedModel& m, double context) {
  if (m.window <= 0) return context;
  return (1.0 - m.windowed_share) * context + m.windowed_share * std::min(m.window, context);
}

// One node's hardware, reduced to effective rates (bytes/s, FLOP/s) and the price.
struct PreparedHardware {
  int gpus_per_node = 1;
  // Serving: the job's engine as this GPU runs it (resolve: auto is TensorRT-LLM on NVIDIA, vLLM on
  // AMD) and its profile (serving.hpp).
  Engine engine = Engine::tensorrt_llm;
  EngineProfile engine_profile;
  double peak_flops = 0;            // dense tensor peak at the job's precision, FLOP/s
  double attention_peak_flops = 0;  // 16-bit peak: attention runs in bf16 even for fp8 jobs
  double logits_flops =
      0;  // achievable FLOP/s of the output layer: 16-bit even for fp8 jobs (TE, torchao keep it in bf16)
  double gemm_efficiency = 0;       // ceiling for large GEMMs at the job's precision on this generation
  double attention_efficiency = 0;  // FlashAttention on this generation (the PyTorch stacks)
  // Transformer Engine's cuDNN fused attention where the GPU has it (Hopper on), which a layout under
  // Megatron-Core's runtime runs (framework_memory.hpp megatron_runtime); elsewhere attention_efficiency.
  double fused_attention_efficiency = 0;
  double hbm_bytes_per_s = 0;      // achievable
  double capacity_bytes = 0;       // per GPU, after the reserve
  double host_memory_bytes = 0;    // the node's host memory (catalog memory_gib); 0: unknown
  int host_vcpus = 0;              // the node's host hardware threads (catalog vcpus); 0: unknown
  double pcie_bytes_per_s = 0;     // one GPU's PCIe x16 link, one direction (link_physics.hpp)
  int pcie_gen = 0;                // the catalog's PCIe generation of the GPU; 0: unstated (timed as Gen4)
  double context_bytes = 0;        // CUDA context and library workspaces of this generation
  double nccl_channel_factor = 1;  // NCCL channels relative to Ampere's (more NVLinks: more channels)
  double intra_busbw = 0;          // all-reduce bus bandwidth inside a node, bytes/s
  double intra_p2p = 0;            // GPU-to-GPU one direction inside a node
  double intra_latency_s = 0;
  double nic_per_gpu = 0;  // inter-node bandwidth per GPU (node network / GPUs), bytes/s; 0: none
  double inter_latency_s = 0;
  double price_per_node_hour = -1;  // USD; negative: unknown
  bool has_network = false;
  Architecture architecture = Architecture::hopper;  // the GPU's (serving profiles' terms: engine_gpu_terms)
  bool fp4_tensor_cores = false;  // FP4 GEMMs in hardware (else 4-bit weights run weight-only, dequantised)
  // GPUs one GPU reaches at NVLink speed: gpus_per_node, or more where the catalog says the NVLink
  // domain spans instances (GB200/GB300 NVL72 trays: 72); a group of consecutive ranks inside it
  // runs its collectives at intra_busbw.
  int nvlink_domain_gpus = 1;
  // NVIDIA's NVLink or NVSwitch links the GPUs (not PCIe, not AMD's Infinity Fabric): what
  // Transformer Engine's userbuffers exchange over.
  bool nvidia_nvlink = false;
};

// Whether a group of `group` consecutive ranks stays inside one NVLink domain (the node, or a
// rack-scale domain that whole groups tile) on a job of `total_gpus`.
inline bool inside_nvlink_domain(const PreparedHardware& hw, double group, double total_gpus) noexcept {
  // Groups are consecutive ranks: they stay inside a domain only where they tile it (36-GPU racks
  // hold no whole number of 8-GPU groups: some straddle two racks), or where one domain holds the job.
  const double d = std::max<double>(hw.gpus_per_node, hw.nvlink_domain_gpus);
  return group <= d && (total_gpus <= d || static_cast<long long>(d) % static_cast<long long>(group) == 0);
}

// The shard group recommend offers for hybrid sharding (Layout::dp_shard): the data-parallel ranks
// one node or rack-scale NVLink domain holds, so the ZeRO gathers stay inside it and only the
// copies' all-reduce crosses the network; 0 where there is none below dp (the DP group fits in one
// domain, or the domain holds fewer than two of its ranks, or they do not tile DP).
inline int nvlink_shard_group(const PreparedHardware& hw, int tp, int cp, int dp, double total_gpus) noexcept {
  const double domain = std::min(total_gpus, std::max<double>(hw.gpus_per_node, hw.nvlink_domain_gpus));
  const long long per_rank = static_cast<long long>(tp) * cp, domain_gpus = static_cast<long long>(domain);
  if (per_rank <= 0 || domain_gpus % per_rank != 0) return 0;
  const long long shard = domain_gpus / per_rank;
  return shard >= 2 && shard < dp && dp % shard == 0 ? static_cast<int>(shard) : 0;
}

// Whether a TP group of `tp` ranks can run Transformer Engine's TP overlap on this machine: NVIDIA
// NVLink links it, inside one domain (workload.hpp tp_comm_overlap_problem takes the answer).
inline bool tp_on_nvidia_nvlink(const PreparedHardware& hw, double tp, double total_gpus) noexcept {
  return hw.nvidia_nvlink && inside_nvlink_domain(hw, tp, total_gpus);
}

// Everything estimate() computes, in bytes and seconds.
struct Estimate {
  // memory per GPU, bytes
  double weights = 0, gradients = 0, optimizer = 0, activations = 0, kv_cache = 0, overhead = 0;
  double total = 0, capacity = 0;
  // Of overhead: what PyTorch's torch.cuda.max_memory_allocated leaves out of nvidia-smi's figure
  // (the CUDA context and NCCL's buffers outside the caching allocator, and the allocator's reserve
  // over live tensors), for comparing with published peaks measured either way.
  double context_and_nccl = 0, allocator_reserve = 0;
  bool fits = false;
  bool tight = false;  // fits, but inside the memory model's measured error band (memory_verdict "tight")
  // The memory that band applies to: all of it, except for a serving engine in max-throughput mode,
  // which sizes its KV pool at start-up from the memory it measures free. There an error in the
  // other terms changes how many sequences the pool holds (the throughput band), not whether the
  // job runs: what must fit is the rest with one sequence's KV cache.
  double memory_at_risk = 0;
  // time per step (training: optimizer step; inference: one decode step), seconds
  double compute = 0, tp_comm = 0, cp_comm = 0, pp_comm = 0, pp_bubble = 0, dp_comm = 0;
  double ep_comm = 0;  // expert-parallel all-to-all (dispatch and combine)
  double tp_exposed = 0, cp_exposed = 0, pp_exposed = 0, dp_exposed = 0, ep_exposed = 0, exposed_comm = 0;
  bool ep_inside_domain = true;  // the EP groups' all-to-all stays on NVLink
  double step = 0;
  double micro_batches = 0;  // per step per pipeline
  double tokens_per_step = 0;
  double tokens_per_s = 0;                                       // whole job
  double model_flops_per_step = 0, hardware_flops_per_step = 0;  // all GPUs
  double gemm_time_fraction = 0;  // share of compute spent in GEMMs (for the bottleneck words)
  // inference
  double ttft = 0, decode_tokens_per_s = 0;
  double tpot = 0;  // one decode step of the running batch (the time per output token where nothing shares it)
  double itl = 0;   // time per output token at the job's concurrency: other requests' prefill chunks share the steps
  double ttft_under_load = 0;  // mean time to first token at the job's concurrency (its wave and any queue)
  double queued = 0;           // per replica: requests beyond the engine's KV pool, waiting for a slot
  double sequences = 0;        // per replica, decoded together (set by estimate_memory)
  double max_sequences = 0;    // per replica: what the engine's KV pool holds at the job's lengths
  bool max_sequences_at_batch_limit = false;  // ... cut to the engine's batch limit (vLLM max_num_seqs), not the pool
  // Bytes one decode step reads per GPU: the weights (a MoE layer's experts only where its batch
  // routes tokens) and the KV cache of the running sequences at their mean context.
  double decode_weight_bytes = 0, decode_kv_bytes = 0;
  // Of a decode step, the layers' fixed time whatever the batch (the engine's per-layer step time).
  double decode_layer_fixed_s = 0;
  // QLoRA: the NF4 dequantisation inside `compute`, seconds per step
  double dequant = 0;
  // CPU offload: host memory the offloaded states take per GPU (bytes), whether the node holds them,
  // and what offload adds to the step, on its critical path (seconds): the PCIe transfers of
  // gradients and weights plus the host's optimizer step (cpu_optimizer, part of offload).
  double host_offload_bytes = 0;
  bool host_fits = true;
  // Offloaded onto a host whose memory (then the offloaded states are not checked against it) or
  // vCPUs (then the optimizer step is timed at the reference host's rate) the catalog does not
  // state: recommend ranks such plans after those it can check, as it does `tight` ones.
  bool host_memory_unknown = false, host_vcpus_unknown = false;
  bool host_unchecked() const { return host_memory_unknown || host_vcpus_unknown; }
  double offload = 0;
  double cpu_optimizer = 0;
};

PreparedModel prepare_model(const ModelShape& model, const Job& job);

// The share of the reference host's CPU-Adam rate a node's host reaches (constants.cpp): its vCPUs
// over the reference's, never above 1; a host of unknown size is taken as the reference.
inline double cpu_adam_host_share(const PreparedHardware& hw, const PlannerConstants& k) noexcept {
  return hw.host_vcpus > 0 && k.cpu_adam_reference_vcpus > 0 ? std::min(1.0, hw.host_vcpus / k.cpu_adam_reference_vcpus)
                                                             : 1.0;
}

struct PreparedLinksInfo {
  std::string intra_node;  // "claimed: catalog <url>" or "measured: <report>"
  std::string inter_node;
  std::string hbm;
};

// Why a probe report's figures do not describe this machine, in words naming the report, or ""
// when they do. They do when the report's GPU resolves to the machine's GPU id and, where the
// report's cloud metadata names an instance and the machine is a catalog instance, that instance is
// the machine's (case-insensitive both). Custom hardware is checked by its GPU only: it describes a
// machine of its own, which may well be the one the report ran on.
std::string measured_mismatch(HardwareRef hw, const MeasuredLinks& measured);

// Throws invalid_input naming "report" when a probe report is given for another machine
// (measured_mismatch); the search passes such a report only to the machines it describes.
// Throws invalid_input naming the field of job_mismatch when the GPU cannot run the job.
// The words of `info` (where each bandwidth comes from) are built only when info is given: the
// search prepares every machine without them and describes only the plans it returns.
PreparedHardware prepare_hardware(HardwareRef hw, const Job& job, const PlannerConstants& k,
                                  const MeasuredLinks* measured, bool spot, PreparedLinksInfo* info = nullptr);

// GB300 (Blackwell Ultra, 1,400 W; catalog id "GB300"): its datasheet gives GB200's 16-bit and FP8
// peaks, yet it runs the same jobs faster, so its tensor-core work at those precisions runs at
// gemm_efficiency_ratio_gb300 over the Blackwell fit (constants.cpp). 1 for every other GPU, and
// for FP4, whose GB300 peak the datasheet already raises (15 vs 10 PFLOPS). The one GB300 rule:
// prepare_hardware applies it, plan's words name it.
bool is_gb300(const Gpu& gpu) noexcept;
double gb300_tensor_ratio(const Gpu& gpu, Precision gemm_precision, const PlannerConstants& k) noexcept;

// The FP8 (and FP4) GEMM efficiency relative to the same GPU's 16-bit one: AMD's CDNA 3 and CDNA 4
// have their own fit ratios, every NVIDIA generation shares one.
double fp8_gemm_efficiency_ratio(Architecture architecture, const PlannerConstants& k) noexcept;

// A node-hour's price: the spot rate when `spot` (no fallback to on-demand), else on-demand; none
// when the catalog has no such price.
inline std::optional<double> node_price_usd_per_hour(const Instance& in, bool spot) noexcept {
  return spot ? in.spot_price_usd_per_hour : in.price_usd_per_hour;
}

// Whether the catalog gives the dense tensor-core peaks a job at `precision` needs. A null peak is
// `absent` where the architecture's tensor cores lack the precision (bf16 on Volta and Turing, fp8
// on Ampere) and `unknown` where they have it but no figure is published (the A10G). An fp8 job needs the 16-bit peak
// as well (attention).
enum class PeakAvailability { known, absent, unknown };
PeakAvailability tensor_peak_availability(const Gpu& gpu, Precision precision);
bool supports_precision(const Gpu& gpu, Precision precision);  // availability is known
// Why the time cannot be estimated, for messages: "no bf16 tensor cores (volta)", or "bf16
// tensor-core peak of A10G unknown in the catalog (...)"; empty when the peaks are known.
std::string missing_peak_reason(const Gpu& gpu, Precision precision);

// Why `gpu` cannot run `job` at all, and the field at fault: a precision it has no peak for
// (missing_peak_reason), or a serving engine it cannot run (engine_unavailable_reason). One rule
// for prepare_hardware, which throws it, and the search, which rejects the machine with it.
struct JobMismatch {
  std::string field, reason;
};
std::optional<JobMismatch> job_mismatch(const Gpu& gpu, const Job& job);

// Layers of the heaviest pipeline stage: all, MoE, dense (MoE layers placed first: the bound).
struct MoeStage {
  double layers = 0, moe = 0, dense = 0;
};
// (inline: the search calls it for every layout it evaluates)
inline MoeStage moe_stage(const PreparedModel& m, const Layout& l) noexcept {
  MoeStage st;
  st.layers = std::ceil(m.layers / double(l.pp));
  st.moe = m.moe ? std::min(st.layers, std::ceil(m.moe_layers / double(l.pp))) : 0.0;
  st.dense = st.layers - st.moe;
  return st;
}

// Routed rows on one GPU for one MoE layer when a TP group holds `tokens` tokens: the mean, the
// busiest rank's (load imbalance, with ep > 1), the local experts and how many of them the tokens
// touch (all of them in training; fewer at small decode batches).
struct MoeRows {
  double mean = 0, busiest = 0, local_experts = 0, touched = 0;
};
MoeRows moe_rows(const PreparedModel& m, double tokens, double tp, const Layout& l) noexcept;

// Routed-expert parameters one GPU of the heaviest stage holds: its MoE layers' E / ep experts, each
// split etp ways (0 for a dense model).
inline double local_expert_params(const PreparedModel& m, const Layout& l) noexcept {
  return m.moe ? moe_stage(m, l).moe * (m.experts / l.ep) * m.expert_params / l.etp : 0.0;
}

// Memory per GPU (fills the memory fields of `out`).
void estimate_memory(const PreparedModel& m, const PreparedHardware& hw, const Layout& l, const PlannerConstants& k,
                     Estimate& out) noexcept;
// Time per step (fills the time and throughput fields of `out`).
void estimate_time(const PreparedModel& m, const PreparedHardware& hw, int nodes, const Layout& l,
                   const PlannerConstants& k, Estimate& out) noexcept;

inline Estimate estimate(const PreparedModel& m, const PreparedHardware& hw, int nodes, const Layout& l,
                         const PlannerConstants& k) noexcept {
  Estimate e;
  estimate_memory(m, hw, l, k, e);
  estimate_time(m, hw, nodes, l, k, e);
  return e;
}

}  // namespace linkwise::planner
