// Time per step. Compute: every GEMM of a layer on its real (TP-sharded, micro-batch x sequence)
// shape under a roofline (FLOPs at the generation's achievable GEMM fraction of dense peak plus its
// operand traffic at achievable HBM bandwidth), FlashAttention at its own fraction, memory-bound
// element-wise work (norms, activations, residuals) and a fixed per-layer cost, so efficiency
// depends on hidden/tp, tokens per GEMM and the GPU's FLOP-to-byte ratio, not on one constant.
// Communication: the alpha-beta model with nccl-tests' bus-bandwidth factors (all-reduce
// 2(n-1)/n, all-gather and reduce-scatter (n-1)/n; NVIDIA nccl-tests doc/PERFORMANCE.md),
// hierarchical DP groups (inside a node on NVLink, across nodes on the NIC share of their GPUs),
// the pipeline bubble (p - 1)/v micro-batch times (Narayanan et al. 2021, arXiv 2104.04473,
// section 2.2) and the overlap the frameworks achieve (constants.hpp).
// Mixture-of-experts layers: the router, shared experts split over TP, and the routed experts as
// grouped GEMMs at their real shapes (the busiest rank's rows over the experts the batch touches,
// so decode streams only the touched experts' weights); dispatch and combine all-to-all per MoE
// layer with nccl-tests' all-to-all factor (n-1)/n, over NVLink when the EP group sits inside an
// NVLink domain and over the NIC for the part that leaves it. Model FLOPs count active parameters.
#include <algorithm>
#include <cmath>

#include "linkwise/link_physics.hpp"
#include "linkwise/planner/collectives.hpp"
#include "linkwise/planner/engine.hpp"
#include "linkwise/planner/framework_memory.hpp"
#include "linkwise/planner/search.hpp"

namespace linkwise::planner {

namespace {

struct Rates {
  double flops;  // GEMM FLOP/s achievable
  double hbm;    // bytes/s
  double elem;   // bytes per GEMM operand element
};

// One GEMM (M x K) x (K x N): FLOPs at the GEMM ceiling plus operand traffic (roofline sum).
inline double gemm_s(double M, double K, double N, const Rates& r) {
  return 2.0 * M * K * N / r.flops + r.elem * (M * K + K * N + M * N) / r.hbm;
}

// Forward attention GEMMs of one layer for `tokens` rows on one TP rank. MLA's down-projections
// (to the q and kv latents) are replicated over TP, as in Megatron-Core's MLA.
inline double attention_gemms_s(const PreparedModel& m, double tokens, double tp, const Rates& r) {
  const double h = m.hidden;
  if (!m.mla)
    return gemm_s(tokens, h, (m.q_width + 2 * m.kv_width) / tp, r)  // QKV
           + gemm_s(tokens, m.o_width / tp, h, r);                  // attention output
  const double q_out = m.heads * m.qk_head_dim / tp;
  const double q =
      m.q_lora > 0 ? gemm_s(tokens, h, m.q_lora, r) + gemm_s(tokens, m.q_lora, q_out, r) : gemm_s(tokens, h, q_out, r);
  return q + gemm_s(tokens, h, m.kv_lora + m.rope_dim, r) +
         gemm_s(tokens, m.kv_lora, m.heads * (m.head_dim + m.v_head_dim) / tp, r) +
         gemm_s(tokens, m.o_width / tp, h, r);
}

// Forward GEMMs of one dense layer for `tokens` rows on one TP rank.
inline double layer_gemms_s(const PreparedModel& m, double tokens, double tp, const Rates& r) {
  const double h = m.hidden;
  return attention_gemms_s(m, tokens, tp, r) + gemm_s(tokens, h, m.mlp_in_width / tp, r)  // up (and gate)
         + gemm_s(tokens, m.ffn / tp, h, r);                                              // down
}

// Forward GEMMs of one MoE layer's MLP on one GPU: router, shared experts, the routed experts as a
// grouped GEMM over the touched local experts (the busiest rank's rows). `expert_efficiency` scales
// the routed experts' FLOP rate (grouped_gemm_efficiency; 1 where it is not applied).
// `expert_elem`: bytes per element of the routed experts' GEMM operands where they differ from the
// rest (decode streams experts in their stored format, ModelShape::MoeShape::expert_weights); 0: r.elem.
inline double moe_mlp_gemms_s(const PreparedModel& m, double tokens, double tp, const Layout& l, const MoeRows& rows,
                              const Rates& r, double expert_efficiency = 1.0, double expert_elem = 0.0) {
  const double h = m.hidden;
  double t = gemm_s(tokens / tp, h, m.experts, r);  // router on the sequence-parallel share
  if (m.shared_ffn > 0) t += gemm_s(tokens, h, m.shared_in_width / tp, r) + gemm_s(tokens, m.shared_ffn / tp, h, r);
  const double per_expert = rows.busiest / rows.touched;
  const Rates er{r.flops * expert_efficiency, r.hbm, expert_elem > 0 ? expert_elem : r.elem};
  return t + rows.touched * (gemm_s(per_expert, h, m.expert_in_width / l.etp, er) +
                             gemm_s(per_expert, m.expert_ffn / l.etp, h, er));
}

// Training's grouped expert GEMMs reach a smaller fraction of the dense GEMM ceiling the smaller
// their smallest dimension n (rows per local expert, expert width per etp rank, hidden): n / (n +
// moe_gemm_half_dim), fit on Megatron-Core runs (the MoE fit set, constants.cpp). Fine-grained
// experts (Qwen3-30B-A3B: 768 wide) lose tile occupancy and pay per-expert launches that wide dense
// GEMMs do not. DeepSeek's framework (hai-llm) runs DeepGEMM, whose published grouped GEMMs on
// DeepSeek-V3's expert shapes reach its dense GEMMs' throughput (deepseek-ai/DeepGEMM README: 1093-1297
// FP8 TFLOPS on H800, contiguous layout, against 1025-1358 dense at M 4096): no shape loss there.
inline double grouped_gemm_efficiency(const PreparedModel& m, double n, const PlannerConstants& k) {
  if (m.framework == Framework::hai_llm) return 1.0;
  return n / (n + k.moe_gemm_half_dim);
}
inline double grouped_gemm_efficiency(const PreparedModel& m, const Layout& l, const MoeRows& rows,
                                      const PlannerConstants& k) {
  return grouped_gemm_efficiency(
      m, std::min({rows.busiest / rows.touched, m.expert_ffn / double(l.etp), double(m.hidden)}), k);
}

// Serving's grouped expert GEMMs (prefill chunks and decode batches alike) at the same shape
// efficiency, with n the expert's own narrowest weight dimension only (its width or the hidden
// size, whatever etp): the training fit's constant (moe_gemm_half_dim, Megatron-Core's grouped GEMMs), no
// serving fit. A narrow expert (Qwen3's 768 or 1536, DeepSeek's 2048) gives any grouped GEMM
// kernel few tiles per expert and a short reduction loop, TensorRT-LLM's CUTLASS MoE GEMMs as
// much as Transformer Engine's. The rows per expert do not enter: in decode (tens of rows per
// expert) and short prefills the GEMM streams each expert's weights once, which the roofline's
// byte term already prices, and the fit never saw fewer than a few hundred rows per expert (its
// form would charge ~1100 phantom rows per expert, several times the weight stream).
// TensorRT-LLM's MoE GEMM is one CUTLASS grouped kernel over all experts, where Transformer
// Engine's grouped GEMM in training issues one cuBLAS GEMM per expert over several streams (a
// per-expert cost the rows term can stand for there). Not exempt under job.framework: a serving
// job's kernels are the engine's, the training framework plays no part.
// Expert TP (etp) does not narrow n: it splits each expert's GEMMs over ranks the way dense TP
// splits the MLP, which the dense path prices without a shape loss, and the engine's one grouped
// kernel still runs every local expert's tiles together. Charging the split width (192 for
// Qwen3-235B at etp 8) put GPUStack's vLLM TP rows of Qwen3-235B and DeepSeek-R1 at -35% median and
// SGLang's at -22%; docs/calibration.md "Expert TP in serving".
inline double serving_grouped_gemm_efficiency(const PreparedModel& m, const PlannerConstants& k) {
  const double n = std::min(double(m.expert_ffn), double(m.hidden));
  return n / (n + k.moe_gemm_half_dim);
}

// The host time of a MoE layer's pass (moe_layer_overhead_s: the router, permute and dispatcher
// kernels launched one by one, and the dropless dispatcher's device-to-host sync on the tokens per
// expert) shows on the GPU only where the pass's GPU work is too short to cover it: the sync
// empties the queue and the GPU waits for each launch. Exposed: overhead / (1 + gpu_s /
// moe_host_hide_s), all of it for a tiny micro-batch, little of it for a large one (Megatron-LM
// docs/discussions/deepseek-v3-gb200-optimization: "CPU overhead", and the sync that keeps the
// routed experts out of CUDA graphs). Megatron-Bridge's B200 Qwen3-30B-A3B at micro-batch 1 runs
// 18,066 tokens/s token-dropping and 9,299 dropless; at micro-batch 4 on GB200 the two agree.
// Token-dropping runs pay it too: charging it to dropless runs only fit the MoE fit set worse.
inline double moe_host_exposed_s(double gpu_s, const PlannerConstants& k) {
  return k.moe_host_hide_s > 0 ? k.moe_layer_overhead_s / (1.0 + gpu_s / k.moe_host_hide_s) : k.moe_layer_overhead_s;
}

// Memory-bound work of one MoE layer's MLP besides the attention block's: activations of the shared
// and routed experts, permutation of the routed rows.
inline double moe_elementwise_bytes(const PreparedModel& m, double tokens, double tp, const Layout& l,
                                    const MoeRows& rows, const PlannerConstants& k) {
  return k.elementwise_passes * 2.0 * (tokens * m.shared_ffn / tp + rows.busiest * m.expert_ffn / l.etp) +
         k.moe_permute_passes * 2.0 * rows.busiest * m.hidden;
}

// Ring collectives: time = factor x bytes / busbw + latency (bus_factor, link_physics.hpp).
inline double all_reduce_s(double bytes, double n, double busbw, double latency) {
  return n <= 1 ? 0.0 : bus_factor(Collective::all_reduce, n) * bytes / busbw + latency;
}
inline double all_gather_s(double bytes, double n, double busbw, double latency) {
  return n <= 1 ? 0.0 : bus_factor(Collective::all_gather, n) * bytes / busbw + latency;
}

// All-to-all of `bytes` per GPU in a group of n of which `local` share its NVLink domain: the
// nccl-tests factor (n-1)/n; the share bound for other domains leaves on the GPU's NIC while the
// rest moves on NVLink at the same time. A node-deduplicating dispatch (hai-llm's, below) sets its
// own shares of the bytes on each link instead.
struct A2aLinks {
  double n = 1, local = 1, intra = 0, inter = 0, latency_intra = 0, latency_inter = 0;
  double intra_share = -1, inter_share = -1;  // < 0: NCCL all-to-all, (local - 1)/n and (n - local)/n
};
inline double all_to_all_s(double bytes, const A2aLinks& a) {
  if (a.n <= 1) return 0.0;
  if (a.local >= a.n) return bus_factor(Collective::all_to_all, a.n) * bytes / a.intra + a.latency_intra;
  const double intra_share = a.intra_share >= 0 ? a.intra_share : (a.local - 1) / a.n;
  const double inter_share = a.inter_share >= 0 ? a.inter_share : (a.n - a.local) / a.n;
  return std::max(intra_share * bytes / a.intra, inter_share * bytes / a.inter) + a.latency_inter;
}

// DeepSeek's dispatch (hai-llm; DeepSeek-V3 report, arXiv 2412.19437, section 3.2.2): a token goes
// over IB once to each target node, to the GPU of its own in-node index, and is forwarded there on
// NVLink to the GPUs holding its experts; node-limited routing sends it to at most 4 nodes. So the
// NIC carries one copy per remote node the token reaches, not one per routed expert, and NVLink
// carries every copy whose expert sits on another GPU of its node. Under uniform routing a token's
// top_k experts reach D(1 - (1 - 1/D)^top_k) of the group's D domains, at most 4, of which the
// share (D - 1)/D are remote.
constexpr double kHaiLlmMaxNodesPerToken = 4;
inline void dedup_by_node(A2aLinks& a, double top_k, double max_nodes) {
  const double domains = a.n / a.local;
  const double reached = std::min(max_nodes, domains * (1.0 - std::pow(1.0 - 1.0 / domains, top_k)));
  a.inter_share = reached * (domains - 1.0) / domains / top_k;  // of the top_k rows per token
  a.intra_share = (a.local - 1.0) / a.local;
}

A2aLinks ep_links(const PreparedModel& m, const PreparedHardware& hw, const Layout& l, double total_gpus,
                  bool& inside) {
  A2aLinks a;
  a.n = l.ep;
  const double group = double(l.ep) * l.etp;
  inside = inside_nvlink_domain(hw, group, total_gpus);
  const double domain = std::min<double>(total_gpus, hw.nvlink_domain_gpus);
  a.local = inside ? a.n : std::max(1.0, std::min(a.n, std::floor(domain / l.etp)));
  a.intra = hw.intra_busbw;
  a.inter = hw.nic_per_gpu > 0 ? hw.nic_per_gpu : hw.intra_busbw * 1e-3;  // no network: a single node never gets here
  a.latency_intra = hw.intra_latency_s;
  a.latency_inter = hw.inter_latency_s;
  if (!inside && m.framework == Framework::hai_llm && m.top_k > 0) dedup_by_node(a, m.top_k, kHaiLlmMaxNodesPerToken);
  return a;
}

// Bytes per routed element: dispatch in fp8 where the job's GEMMs are fp8/fp4 (DeepSeek-V3 report
// section 3.3.2 dispatches fp8 activations), combine and every backward exchange in 16-bit.
inline double dispatch_bytes(const PreparedModel& m) { return m.gemm_element_bytes < 2.0 ? 1.0 : 2.0; }

// The gradient bucket a ZeRO-0/1/2 reduction runs in, by the stack the layout is planned as:
// Megatron-Core's (and hai-llm's, not stated: taken as Megatron-Core's) max(40M, 1M x DP x CP)
// parameters (collectives.hpp); DeepSpeed's reduce_bucket_size, 5e8 elements (DeepSpeed config
// docs); PyTorch DDP's bucket_cap_mb, 25 MiB (Accelerate's DDP at ZeRO-0); an FSDP unit, one layer,
// where FSDP shards (SHARD_GRAD_OP reduce-scatters each unit's gradients after its backward).
double gradient_bucket_bytes(const PreparedModel& m, const Layout& l, double dp_group, double bytes_per_grad,
                             double grad_bytes, double layers_per_stage, const PlannerConstants& k) noexcept {
  switch (planned_framework(m, l)) {
    case Framework::deepspeed: return kDeepSpeedReduceBucketElements * bytes_per_grad;
    case Framework::fsdp:
    case Framework::torchtitan: return grad_bytes / std::max(1.0, layers_per_stage);
    case Framework::hf_accelerate:
      return accelerate_ddp(m, l) ? kTorchDdpBucketBytes : grad_bytes / std::max(1.0, layers_per_stage);
    default: return megatron_grad_bucket_bytes(dp_group, bytes_per_grad, k);
  }
}

}  // namespace

void estimate_time(const PreparedModel& m, const PreparedHardware& hw, int nodes, const Layout& l,
                   const PlannerConstants& k, Estimate& out) noexcept {
  const double tp = l.tp, pp = l.pp, cp = l.cp, dp = l.dp, v = l.virtual_stages;
  const double gpn = hw.gpus_per_node;
  const double total_gpus = double(nodes) * gpn;
  const double h = m.hidden;
  const MoeStage st = moe_stage(m, l);
  const double layers_per_stage = st.layers;
  const Rates rates{hw.peak_flops * hw.gemm_efficiency, hw.hbm_bytes_per_s, m.gemm_element_bytes};
  const double attention_flops_per_s =
      hw.attention_peak_flops * (megatron_runtime(m, l) ? hw.fused_attention_efficiency : hw.attention_efficiency);
  const double sp_div = l.sequence_parallel ? tp : 1.0;

  // Link bandwidths for each parallel group (Megatron rank order: tp fastest, then cp, dp, pp); a
  // group inside the NVLink domain (the node, or a rack-scale domain across instances) runs on NVLink.
  const double domain = std::max<double>(gpn, hw.nvlink_domain_gpus);
  const bool tp_inside = inside_nvlink_domain(hw, tp, total_gpus);
  const double tp_busbw = tp_inside ? hw.intra_busbw : std::min(hw.intra_busbw, gpn * hw.nic_per_gpu);
  const double tp_latency = tp_inside ? hw.intra_latency_s : hw.inter_latency_s;
  const double cp_p2p = inside_nvlink_domain(hw, tp * cp, total_gpus) ? hw.intra_p2p : hw.nic_per_gpu;
  // Gradients are reduced over DP x CP; with hybrid sharding (Layout::dp_shard) the ZeRO
  // collectives run inside each copy's shard group, dp_shard x CP ranks (the innermost after TP),
  // and the copies all-reduce their reduced shards across the replica group, one rank per shard
  // group (strided by tp x dp_shard x cp). Without it the shard group is all of DP x CP.
  const double dp_group = double(l.zero_shard()) * cp;
  const double replicas = l.zero_replicas();
  const double dp_domain = domain > gpn ? std::min(total_gpus, domain) : gpn;  // GPUs the DP ring finds on NVLink
  const double dp_per_node = std::min(dp_group, std::max(1.0, dp_domain / tp));
  const bool dp_inside_node = dp_group <= dp_per_node && tp * dp_group <= dp_domain;
  const double dp_busbw = dp_inside_node ? hw.intra_busbw : std::min(hw.intra_busbw, dp_per_node * hw.nic_per_gpu);
  const double dp_latency = dp_inside_node ? hw.intra_latency_s : hw.inter_latency_s;
  const bool pp_crosses_nodes = nodes > 1 && total_gpus > domain;
  const double pp_p2p = pp_crosses_nodes ? hw.nic_per_gpu : hw.intra_p2p;
  const double pp_latency = pp_crosses_nodes ? hw.inter_latency_s : hw.intra_latency_s;
  bool ep_inside = true;
  const A2aLinks a2a = m.moe ? ep_links(m, hw, l, total_gpus, ep_inside) : A2aLinks{};
  out.ep_inside_domain = ep_inside;

  if (m.kind == JobKind::inference) {
    // The serving engine's profile (serving.hpp): GEMMs at its fraction of the dense peak, weights
    // and KV cache streamed at its fraction of the HBM peak (the planner's achievable bandwidth
    // over its STREAM efficiency: the catalog's peak, or a probe's measurement scaled alike), a
    // fixed cost per engine step, prefill chunked to its token budget per step.
    const EngineProfile& eng = hw.engine_profile;
    const EngineGpuTerms gpu_terms = engine_gpu_terms(eng, hw.architecture);
    const double scale = gpu_terms.fraction_scale;
    // Every layer's fixed kernel time, once per engine step (prefill chunks and decode steps alike).
    const double layer_step_s = k.layer_overhead_s + gpu_terms.layer_step_s;
    const double hbm = hw.hbm_bytes_per_s / k.hbm_efficiency * eng.decode_hbm_fraction * scale;
    const Rates engine_rates{hw.peak_flops * eng.gemm_fraction * scale, hbm, m.gemm_element_bytes};
    // Serving attention kernels (FlashInfer, FlashAttention-3, TensorRT-LLM's FMHA) at the same
    // fraction of the 16-bit peak as the engine's GEMMs.
    const double attention_flops_s = hw.attention_peak_flops * eng.gemm_fraction * scale;
    const double sequences = std::max(1.0, out.sequences);  // per replica, decoded together
    // Routed experts' GEMMs at the training fit's shape efficiency (serving_grouped_gemm_efficiency).
    // The training MoE layer's host time (moe_host_exposed_s) is not charged. Its mechanism is
    // Megatron's dropless device-to-host sync on the tokens per expert, which empties the queue;
    // TensorRT-LLM captures each decode step in a CUDA graph (its perf overview's llm_options.yml:
    // batch sizes 1-8192, padded), which can hold no such sync, so the fused MoE op it captures
    // has none in prefill either, where each chunk's GPU work per layer covers the op's few
    // launches. The engine's per-step host work is its step_overhead_s.
    // MXFP4 experts (gpt-oss) without FP4 tensor cores run weight-only kernels that dequantise the
    // 4-bit weights in registers and multiply them with 16-bit activations: TensorRT-LLM's gpt-oss
    // MoE support matrix lists BF16 activations with MXFP4 weights on H200 (Triton backend) and MXFP8
    // activations only on Blackwell (deployment guide for GPT-OSS, "MoE Backend Support Matrix"), so
    // those GEMMs run at the 16-bit peak whatever the job's precision.
    const bool weight_only = m.expert_bytes_per_weight < m.bytes_per_weight && !hw.fp4_tensor_cores;
    const double expert_efficiency = (m.moe ? serving_grouped_gemm_efficiency(m, k) : 1.0) *
                                     (weight_only ? hw.attention_peak_flops / hw.peak_flops : 1.0);
    // The engine's per-routed-row work of a MoE layer (moe_serving_routed_row_s, constants.cpp),
    // charged on the busiest rank's routed rows of each step, prefill chunks and decode batches, and
    // with experts over several ranks the wait of each MoE layer's exchange for the slowest rank
    // (moe_serving_ep_layer_sync_s), once per layer per step.
    auto routed_rows_s = [&](double routed_rows) { return routed_rows * k.moe_serving_routed_row_s; };
    const double ep_sync_s = l.ep > 1 ? k.moe_serving_ep_layer_sync_s : 0.0;
    const double prompt = m.prompt_len;
    const double kv_elements = m.kv_split_by_tp ? 2.0 * std::ceil(m.kv_heads / tp) * m.head_dim : m.kv_elements;
    const double kv_bytes_per_token_layer = kv_elements * m.kv_bytes;
    // Prefill of `prompts` prompts of prompt_len tokens, batched into engine steps of at most the
    // engine's token budget: each step's GEMMs stream the weights once for all its rows; attention
    // is per prompt (causal, FlashAttention).
    auto prefill_s = [&](double prompts, double& steps) {
      const double tokens = prompts * prompt;
      const double rows = std::min(eng.max_step_tokens, tokens);
      steps = std::ceil(tokens / rows);
      const double attention = prompts * 2.0 * prompt * attention_context(m, prompt) * m.attention_width / tp *
                               (m.flash ? 1.0 : 2.0) / attention_flops_s;
      const double elem = k.elementwise_passes * 2.0 * tokens * (h + m.ffn / tp) / hbm;
      const double dense_layer =
          tokens / rows * layer_gemms_s(m, rows, tp, engine_rates) + attention + elem + steps * layer_step_s;
      const double tp_comm = tp > 1 ? steps * 2.0 * all_reduce_s(rows * h * 2.0, tp, tp_busbw, tp_latency) : 0.0;
      const double pp_comm = pp > 1 ? steps * (pp - 1) * (rows * h * 2.0 / pp_p2p + pp_latency) : 0.0;
      double moe_layer = 0;
      if (m.moe) {
        const MoeRows r = moe_rows(m, rows, tp, l);
        moe_layer = tokens / rows *
                        (attention_gemms_s(m, rows, tp, engine_rates) +
                         moe_mlp_gemms_s(m, rows, tp, l, r, engine_rates, expert_efficiency) +
                         all_to_all_s(r.busiest * h * dispatch_bytes(m), a2a) + all_to_all_s(r.busiest * h * 2.0, a2a) +
                         (k.elementwise_passes * 2.0 * rows * h + moe_elementwise_bytes(m, rows, tp, l, r, k)) / hbm +
                         routed_rows_s(r.busiest)) +
                    attention + steps * (layer_step_s + ep_sync_s);
      }
      return m.dense_mlp_layers * (dense_layer + tp_comm) + m.moe_layers * (moe_layer + tp_comm) + pp_comm +
             steps * eng.step_overhead_s;
    };
    const double first_logits = gemm_s(1, h, m.vocab / tp, engine_rates);
    double steps_one = 0;
    out.ttft = prefill_s(1.0, steps_one) + first_logits;
    // Time to first token in a burst: the replica's `sequences` requests
    // arrive together and queue for prefill in arrival order; the mean request waits for the prefill
    // of (n + 1) / 2 prompts. Chunked prefill shares each engine step with the decode of the requests
    // already admitted (on average half of those ahead), whose KV cache that step also reads.
    const double ahead = (sequences + 1.0) / 2.0;
    double steps_load = 0;
    const double prefill_load = prefill_s(ahead, steps_load);
    const double running_kv = ahead / 2.0 * kv_tokens(m, prompt) * kv_bytes_per_token_layer * m.layers / hbm;
    const double ttft_burst = prefill_load + steps_load * running_kv + first_logits;

    // One decode step for `sequences` at the mean context length: weights and KV cache stream from HBM.
    const double context = m.prompt_len + m.output_len / 2.0;
    const double kv_read = sequences * kv_tokens(m, context) * kv_bytes_per_token_layer;
    const Rates decode_rates{engine_rates.flops, hbm, m.bytes_per_weight};
    const double decode_common = kv_read / hbm + layer_step_s;
    const double decode_layer = layer_gemms_s(m, sequences, tp, decode_rates) + decode_common +
                                k.elementwise_passes * 2.0 * sequences * (h + m.ffn / tp) / hbm;
    const double decode_tp = tp > 1 ? 2.0 * all_reduce_s(sequences * h * 2.0, tp, tp_busbw, tp_latency) : 0.0;
    const double decode_pp = pp > 1 ? (pp - 1) * (sequences * h * 2.0 / pp_p2p + pp_latency) : 0.0;
    double decode_moe_layer = 0, decode_a2a = 0;
    // MXFP4 experts (gpt-oss) take their stored 4.25 bits of memory everywhere, but without FP4
    // tensor cores the engines run them through weight-only kernels that dequantise in registers.
    // TensorRT-LLM's published Hopper runs are no faster than an fp8 copy's bytes would make them
    // (its 1.2-era gpt-oss rows, fit rows: far slower than 4.25-bit streaming; a fitted factor
    // wanted 4-5x the bytes, which no kernel mechanism explains: docs/calibration.md "MXFP4
    // experts"), so its decode streams them at fp8's width there; vLLM's (InferenceX's sweeps on
    // H100 and H200) stream the stored 4.25 bits (EngineProfile::streams_stored_fp4_experts).
    const double expert_stream_bytes = weight_only && !eng.streams_stored_fp4_experts
                                           ? std::min(m.bytes_per_weight, kWeightOnlyFp4StreamBytes)
                                           : m.expert_bytes_per_weight;
    out.decode_weight_bytes = out.weights;
    if (m.moe) {
      const MoeRows rows = moe_rows(m, sequences, tp, l);
      decode_moe_layer =
          attention_gemms_s(m, sequences, tp, decode_rates) +
          moe_mlp_gemms_s(m, sequences, tp, l, rows, decode_rates, expert_efficiency, expert_stream_bytes) +
          decode_common +
          (k.elementwise_passes * 2.0 * sequences * h + moe_elementwise_bytes(m, sequences, tp, l, rows, k)) / hbm +
          routed_rows_s(rows.busiest) + ep_sync_s;
      decode_a2a = all_to_all_s(rows.busiest * h * dispatch_bytes(m), a2a) + all_to_all_s(rows.busiest * h * 2.0, a2a);
      // The experts no token of the step routes to stay unread.
      out.decode_weight_bytes -=
          local_expert_params(m, l) * m.expert_bytes_per_weight * (1.0 - rows.touched / rows.local_experts);
    }
    out.decode_kv_bytes = m.layers * kv_read;
    out.decode_layer_fixed_s = m.layers * layer_step_s;
    const double logits = gemm_s(sequences, h, m.vocab / tp, decode_rates);
    out.compute = m.dense_mlp_layers * decode_layer + m.moe_layers * decode_moe_layer + logits + eng.step_overhead_s;
    out.tp_comm = m.layers * decode_tp;
    out.tp_exposed = out.tp_comm;
    out.ep_comm = out.ep_exposed = m.moe_layers * decode_a2a;
    out.pp_comm = out.pp_exposed = decode_pp;
    out.cp_comm = out.cp_exposed = out.dp_comm = out.dp_exposed = out.pp_bubble = 0;
    out.exposed_comm = out.tp_exposed + out.ep_exposed + out.pp_exposed;
    out.tpot = out.compute + out.exposed_comm;
    out.step = out.tpot;
    out.micro_batches = 1;
    out.decode_tokens_per_s = dp * sequences / out.tpot;
    // Whole job, in a steady stream: each replica prefills its sequences' prompts (batched into
    // engine steps) and decodes their output_len tokens.
    double steps_round = 0;
    const double per_round = prefill_s(sequences, steps_round) + m.output_len * out.tpot;
    out.tokens_per_step = dp * sequences;
    out.tokens_per_s = dp * sequences * m.output_len / per_round;
    // Latency as serving benchmarks measure it (genai-perf, vLLM's and SGLang's scripts: a fixed
    // number of requests in flight, a new one as one finishes). Time to first token: requests of
    // equal lengths started together stay in step, so each round begins with a wave of `sequences`
    // prompts (the burst above; on NIM 1.8.0's sweeps it misses by 36% at the median against 57%
    // for random arrivals, docs/calibration.md).
    const double ttft_wave = std::max(out.ttft, ttft_burst);
    // Time per output token: the stream's remaining output_len - 1 tokens come over the rest of the
    // round, the other streams' prefill chunks sharing its decode steps; so first token plus the
    // others add up to the round. One output token has no inter-token time: the bare decode step.
    out.itl = m.output_len > 1 ? std::max(out.tpot, (per_round - ttft_wave) / (m.output_len - 1.0)) : out.tpot;
    // Requests beyond the pool wait for slots: in a closed loop of sequences + queued requests
    // completing `sequences` per round (Little's law), queued / sequences rounds.
    out.ttft_under_load = ttft_wave + out.queued / sequences * per_round;
    const double flops_per_token =
        2.0 * m.active_linear_params + 4.0 * m.layers * kv_tokens(m, context) * m.attention_width;
    out.model_flops_per_step = out.hardware_flops_per_step = flops_per_token * dp * sequences;
    out.gemm_time_fraction = 0;
    return;
  }

  // --- training: one micro-batch through one layer on one GPU ---
  const double micro_batches = m.global_batch / (dp * l.micro_batch);
  const double tokens = l.micro_batch * m.seq_len / cp;  // rows of every GEMM
  const bool lora = m.kind == JobKind::lora;
  const bool low_precision = m.precision == Precision::fp8 || m.precision == Precision::fp4;
  const double gemm_fwd = layer_gemms_s(m, tokens, tp, rates);
  // Causal FlashAttention skips the masked half; without it the full score matrix is computed and
  // streamed through memory several times.
  // Sliding-window layers attend to their window only (attention_context).
  const double attention_flops_fwd =
      2.0 * l.micro_batch * (m.seq_len / cp) * attention_context(m, m.seq_len) * m.attention_width / tp;
  double attention_fwd = attention_flops_fwd / attention_flops_per_s;
  if (!m.flash)
    attention_fwd = 2.0 * attention_fwd +
                    4.0 * 2.0 * l.micro_batch * (m.heads / tp) * (m.seq_len / cp) * m.seq_len / hw.hbm_bytes_per_s;
  double elem_fwd = k.elementwise_passes * 2.0 * tokens * (h / sp_div + m.ffn / tp) / hw.hbm_bytes_per_s;
  // Eager PyTorch's RMSNorm (fp32 upcast, pow, mean, scale, downcast, weight), complex RoPE on Q and
  // K and SwiGLU's silu and product, op by op (constants.cpp).
  const double eager_norm_rope = eager_llama_block(m, l.zero)
                                     ? 2.0 * k.eager_rmsnorm_extra_bytes_per_element * h / sp_div +
                                           k.eager_rope_extra_bytes_per_element * (m.q_width + m.kv_width) / tp
                                     : 0.0;
  const double eager_swiglu = eager_llama_block(m, l.zero) ? k.eager_swiglu_extra_bytes_per_element * m.ffn / tp : 0.0;
  elem_fwd += tokens * (eager_norm_rope + eager_swiglu) / hw.hbm_bytes_per_s;
  // fp8 (and fp4): each GEMM input is cast (read 16-bit, write 8-bit) before the GEMM.
  if (low_precision)
    elem_fwd += k.fp8_cast_passes * 3.0 * tokens * (2.0 * h + h / tp + m.ffn / tp) / hw.hbm_bytes_per_s;
  // fp8 also pays a fixed cost per linear GEMM (amax reduction, scaling-factor update, cast kernel
  // launches) that does not shrink with the GEMM: it is what keeps small models from gaining.
  const double fp8_fixed = low_precision ? 4.0 * k.fp8_gemm_overhead_s : 0.0;
  // QLoRA: bitsandbytes dequantises each NF4 base weight to a bf16 copy before every GEMM that
  // uses it (forward, the backward's data gradient, and the recomputed forward): read the packed
  // weight and its scales, write the copy (the GEMM's own read of it is in gemm_fwd), at the
  // fraction of the HBM peak its kernels reach (serving.hpp; the output layer stays 16-bit, as
  // transformers' bitsandbytes integration skips lm_head).
  const double dequant_bytes_per_s = hw.hbm_bytes_per_s / k.hbm_efficiency * kNf4DequantHbmFraction;
  const double dequant_layer =
      m.dequant_4bit ? m.layer_params / tp * kNf4DequantBytesPerWeight / dequant_bytes_per_s : 0.0;
  // Under DeepSpeed's pipeline engine each layer pass also takes the time its 2021-2022 production
  // runs lost (constants.cpp deepspeed_pipeline_layer_overhead_s): added to every pass, dense or MoE.
  const double engine_pass_s = deepspeed_pipeline(m, l) ? k.deepspeed_pipeline_layer_overhead_s : 0.0;
  const double layer_fwd =
      gemm_fwd + attention_fwd + elem_fwd + k.layer_overhead_s + fp8_fixed + dequant_layer + engine_pass_s;
  // Backward: data and weight gradients (frozen LoRA bases skip the weight gradient), 2.5x the
  // attention forward (FlashAttention-2's backward), element-wise twice.
  const double layer_bwd = (lora ? 1.0 : 2.0) * (gemm_fwd + fp8_fixed) + 2.5 * attention_fwd + 2.0 * elem_fwd +
                           k.layer_overhead_s + dequant_layer + engine_pass_s;
  // hai-llm (DeepSeek-V3 report section 3.2.3) recomputes in backward what it does not cache: the
  // RMSNorm outputs, MLA's up-projections and the SwiGLU outputs (one element-wise pass each).
  double hai_recompute = 0, hai_recompute_flops_per_token = 0;
  if (m.framework == Framework::hai_llm && l.recompute != Recompute::full) {
    const double up_q = m.heads * m.qk_head_dim / tp, up_kv = m.heads * (m.head_dim + m.v_head_dim) / tp;
    if (m.mla) {
      hai_recompute =
          (m.q_lora > 0 ? gemm_s(tokens, m.q_lora, up_q, rates) : 0.0) + gemm_s(tokens, m.kv_lora, up_kv, rates);
      hai_recompute_flops_per_token = 2.0 * m.layers * (m.q_lora * up_q * tp + m.kv_lora * up_kv * tp);
    }
    hai_recompute += k.elementwise_passes * 2.0 * tokens * (2.0 * h / sp_div + m.ffn / tp) / hw.hbm_bytes_per_s;
  }
  // Recompute. full: the forward again, on the checkpointed share of the layers. selective: Megatron's
  // (Korthikanti et al. 2022) recomputes the core attention; torchtitan's op-level policy
  // (parallelize_llama.py, _save_list) keeps every matmul and SDPA output except every second
  // matmul, so it repeats the element-wise forward and the even matmuls (K and output projections,
  // and the MLP's second input projection, or its down projection without a gate).
  const double layer_fraction = l.recompute == Recompute::full ? l.recompute_layer_fraction : 0.0;
  const bool op_sac = l.recompute == Recompute::selective && m.framework == Framework::torchtitan;
  double layer_recompute = layer_fraction * layer_fwd + hai_recompute;
  if (op_sac) {
    const double even_gemms =
        m.mla ? 0.5 * gemm_fwd
              : gemm_s(tokens, h, m.kv_width / tp, rates) + gemm_s(tokens, m.o_width / tp, h, rates) +
                    (m.gated ? gemm_s(tokens, h, m.ffn / tp, rates) : gemm_s(tokens, m.ffn / tp, h, rates));
    layer_recompute += even_gemms + elem_fwd;
  } else if (l.recompute == Recompute::selective) {
    layer_recompute += attention_fwd;
  }
  const double layer_total = layer_fwd + layer_bwd + layer_recompute;

  // A MoE layer: the same attention block, the MoE MLP instead of the dense one.
  double moe_fwd = 0, moe_bwd = 0, moe_total = 0, moe_gemm_fwd = 0, a2a_layer = 0, moe_dequant = 0;
  if (m.moe) {
    const MoeRows rows = moe_rows(m, tokens, tp, l);
    moe_gemm_fwd = attention_gemms_s(m, tokens, tp, rates) +
                   moe_mlp_gemms_s(m, tokens, tp, l, rows, rates, grouped_gemm_efficiency(m, l, rows, k));
    // Eager PyTorch runs the experts' SwiGLU op by op too: the shared experts' rows and the busiest
    // rank's routed rows, each at its expert width.
    const double eager_moe_swiglu = eager_llama_block(m, l.zero)
                                        ? k.eager_swiglu_extra_bytes_per_element *
                                              (tokens * m.shared_ffn / tp + rows.busiest * m.expert_ffn / l.etp)
                                        : 0.0;
    double elem = (k.elementwise_passes * 2.0 * tokens * h / sp_div + moe_elementwise_bytes(m, tokens, tp, l, rows, k) +
                   tokens * eager_norm_rope + eager_moe_swiglu) /
                  hw.hbm_bytes_per_s;
    if (low_precision)
      elem += k.fp8_cast_passes * 3.0 *
              (tokens * (2.0 * h + h / tp + m.shared_ffn / tp) + rows.busiest * (h + m.expert_ffn / l.etp)) /
              hw.hbm_bytes_per_s;
    const double fixed = low_precision ? 8.0 * k.fp8_gemm_overhead_s : 0.0;  // + router, shared and grouped GEMMs
    // QLoRA: the layer's dense parts and the routed experts the micro-batch touches, dequantised per pass.
    moe_dequant = m.dequant_4bit ? (m.moe_base_params / tp + rows.touched * m.expert_params / l.etp) *
                                       kNf4DequantBytesPerWeight / dequant_bytes_per_s
                                 : 0.0;
    // Router top-k, permute/unpermute index kernels and the dispatcher (with its host sync on the
    // tokens per expert): host time per MoE layer per pass, exposed as far as the pass's GPU work
    // does not cover it (moe_host_exposed_s).
    const double fwd_gpu = moe_gemm_fwd + attention_fwd + elem + k.layer_overhead_s + fixed + moe_dequant;
    const double bwd_gpu = (lora ? 1.0 : 2.0) * (moe_gemm_fwd + fixed) + 2.5 * attention_fwd + 2.0 * elem +
                           k.layer_overhead_s + moe_dequant;
    moe_fwd = fwd_gpu + moe_host_exposed_s(fwd_gpu, k) + engine_pass_s;
    moe_bwd = bwd_gpu + moe_host_exposed_s(bwd_gpu, k) + engine_pass_s;
    double recompute = layer_fraction * moe_fwd;
    if (l.recompute == Recompute::selective) recompute = op_sac ? 0.5 * moe_gemm_fwd + elem : attention_fwd;
    if (l.recompute != Recompute::full && m.framework == Framework::hai_llm)  // norms, up-projections, SwiGLU outputs
      recompute += hai_recompute - k.elementwise_passes * 2.0 * tokens * m.ffn / tp / hw.hbm_bytes_per_s +
                   k.elementwise_passes * 2.0 * (tokens * m.shared_ffn / tp + rows.busiest * m.expert_ffn / l.etp) /
                       hw.hbm_bytes_per_s;
    moe_total = moe_fwd + moe_bwd + recompute;
    // Dispatch and combine forward, their gradients backward, the forward pair again under full recompute.
    const double forward_pair =
        all_to_all_s(rows.busiest * h * dispatch_bytes(m), a2a) + all_to_all_s(rows.busiest * h * 2.0, a2a);
    const double backward_pair = 2.0 * all_to_all_s(rows.busiest * h * 2.0, a2a);
    a2a_layer = forward_pair + backward_pair + layer_fraction * forward_pair;
  }
  // Output layer and loss on the last stage: forward and both gradients, fp32 softmax traffic.
  const Rates logits_rates{hw.logits_flops, hw.hbm_bytes_per_s, 2.0};
  const double logits =
      3.0 * gemm_s(tokens, h, m.vocab / tp, logits_rates) + 3.0 * tokens * m.vocab / tp * 6.0 / hw.hbm_bytes_per_s;
  // The slowest stage sets the pace: a full share of layers (dense and MoE as moe_stage cuts them),
  // or the last stage's (fewer, when the split is uneven: Megatron-Core's first/last-stage layer
  // counts) plus the output layer and loss.
  const double last_layers =
      l.pp > 1 ? layers_per_stage - std::floor((pp * layers_per_stage - m.layers) / 2) : layers_per_stage;
  const double full_stage_mb = st.dense * layer_total + st.moe * moe_total;
  const double stage_compute_mb =
      std::max(l.pp > 2 ? full_stage_mb : 0.0, last_layers / layers_per_stage * full_stage_mb + logits);
  const double stage_bwd_mb = st.dense * layer_bwd + st.moe * moe_bwd;
  const double stage_fwd_mb = st.dense * layer_fwd + st.moe * moe_fwd + logits / 3.0;

  // Tensor parallelism: two all-reduces (or reduce-scatter + all-gather pairs with sequence
  // parallelism, the same bytes) per layer forward, two backward, two more per full recompute.
  double tp_per_mb = 0, tp_exposed_mb = 0;
  if (l.tp > 1) {
    // Op-level SAC keeps the reduce-scatter outputs and repeats the all-gathers: one all-reduce's worth.
    const double collectives = 4.0 + 2.0 * layer_fraction + (op_sac ? 1.0 : 0.0);
    const double pair = all_reduce_s(tokens * h * 2.0, tp, tp_busbw, tp_latency);
    tp_per_mb = layers_per_stage * collectives * pair;
    tp_exposed_mb = tp_per_mb;
    if (l.tp_comm_overlap) {
      // Transformer Engine's userbuffers, its default method per GEMM (TransformerEngine
      // transformer_engine/pytorch/module/base.py, initialize_ub): the all-gathers before the
      // attention's input projections and the MLP's first GEMM, and backward before the output
      // projection's and the MLP's last data gradients, by ring exchange in tp chunks (the GEMM runs
      // on the chunk already there; one chunk's transfer is counted as showing, a conservative floor); the
      // reduce-scatters after the output projection and the MLP's last GEMM pipelined in 4 splits (the last split's
      // shows); the backward reduce-scatters of the input projections' data gradients in bulk behind their weight
      // gradients. Beyond that floor, what the GEMM cannot cover shows. Not modelled: the 16 SMs the
      // pipelined and bulk transfers take from their GEMMs. A MoE layer's expert GEMMs are not
      // userbuffers GEMMs: its MLP's collectives stay exposed.
      const double half = pair / 2.0;  // one all-gather or one reduce-scatter
      const auto ring = [&](double gemm) { return std::max(half / tp, half - gemm); };
      const auto pipelined = [&](double gemm) { return std::max(half / 4.0, half - gemm); };
      // LoRA's frozen base has no weight gradients: its input projections' data-gradient reduce-
      // scatters are pipelined behind the data gradient (Megatron Bridge's LoRA userbuffers configs).
      const auto bulk = [&](double gemm) { return lora ? pipelined(gemm) : std::max(0.0, half - gemm); };
      const double out_proj = gemm_s(tokens, m.o_width / tp, h, rates);
      const double in_proj = attention_gemms_s(m, tokens, tp, rates) - out_proj;
      const double mlp_in = gemm_s(tokens, h, m.mlp_in_width / tp, rates),
                   mlp_out = gemm_s(tokens, m.ffn / tp, h, rates);
      const double attention_block_fwd = ring(in_proj) + pipelined(out_proj);
      const double attention_block_bwd = ring(out_proj) + bulk(in_proj);
      const double mlp_fwd = ring(mlp_in) + pipelined(mlp_out);
      const double mlp_bwd = ring(mlp_out) + bulk(mlp_in);
      // Op-level SAC (torchtitan's) never runs under Megatron-Core's runtime, so its repeated
      // all-gathers, in the count above, never reach this branch.
      const double dense_layer =
          (1.0 + layer_fraction) * (attention_block_fwd + mlp_fwd) + attention_block_bwd + mlp_bwd;
      const double moe_layer =
          (1.0 + layer_fraction) * attention_block_fwd + attention_block_bwd + (2.0 + layer_fraction) * pair;
      tp_exposed_mb = st.dense * dense_layer + st.moe * moe_layer;
    }
  }
  // Context parallelism: K and V pass around the ring (cp - 1) times forward, twice that backward,
  // overlapped with the attention of the held chunk.
  double cp_per_mb = 0, cp_exposed_mb = 0;
  if (l.cp > 1) {
    const double kv_bytes = 2.0 * tokens * m.kv_width / tp * 2.0;
    const double per_layer = 3.0 * (cp - 1) * (kv_bytes / cp_p2p + hw.intra_latency_s);
    cp_per_mb = layers_per_stage * per_layer;
    cp_exposed_mb = layers_per_stage * std::max(0.0, per_layer - k.cp_overlap * 3.5 * attention_fwd);
  }
  // Expert parallelism: on the critical path (Megatron-Core's default), or hidden behind the
  // compute of another micro-batch's MoE layer with overlap_a2a (DualPipe, EP A2A overlap).
  const double ep_per_mb = st.moe * a2a_layer;
  const double ep_exposed_mb = l.overlap_a2a ? st.moe * std::max(0.0, a2a_layer - moe_total) : ep_per_mb;
  // Pipeline: activations (sharded by SP) sent forward and gradients backward per micro-batch per chunk.
  // Under the interleaved schedule Megatron-Core posts each chunk's send and the next chunk's receive
  // and waits for them only when that chunk's input is needed, so a transfer hides behind one chunk's
  // compute (Layout::overlap_p2p_comm, on there unless stated: Megatron-LM's default, and Megatron
  // Bridge's CommOverlapConfig and NeMo's comm-overlap callback turn it on whenever pp > 1 and virtual
  // stages > 1, and batch the sends otherwise). Only the pipeline's fill and drain wait on their
  // sends. Without it (Megatron-LM before mid-2023 blocked on every send), without interleaving, and
  // under the other stacks, every send is on the critical path.
  double pp_comm = 0, pp_exposed = 0;
  if (l.pp > 1) {
    const double send = tokens * h * 2.0 / sp_div / pp_p2p + pp_latency;
    pp_comm = 2.0 * micro_batches * v * send;
    pp_exposed = pp_comm;
    // DualPipe overlaps its sends as it does the all-to-all (DeepSeek-V3 report 3.2.1: "both
    // all-to-all and PP communication can be fully hidden").
    if (l.overlap_p2p_comm || l.dualpipe)
      pp_exposed =
          std::min(pp_comm, 2.0 * (pp - 1) * send + micro_batches * v *
                                                        (std::max(0.0, send - stage_fwd_mb / v) +
                                                         std::max(0.0, send - (stage_compute_mb - stage_fwd_mb) / v)));
  }

  // Data parallelism over DP x CP; the routed experts' gradients over the expert-DP group.
  const double params_per_gpu = (st.dense * m.layer_params + st.moe * m.moe_base_params +
                                 (l.pp == 1 ? (m.tied ? 1.0 : 2.0) : 1.0) * m.embedding_params) /
                                tp;
  const double expert_params_per_gpu = local_expert_params(m, l);
  const double expert_group = m.moe ? double(l.edp()) / replicas : 1.0;  // one copy's expert shard group
  const double adapters_per_gpu = layers_per_stage * m.lora_params_per_layer / tp;
  // In the reduction's dtype (framework_memory.hpp): fp32 for Megatron-Core's and FSDP's default buffers.
  const double bytes_per_grad = reduced_gradient_bytes(m, l);
  const double grad_bytes = bytes_per_grad * (lora ? adapters_per_gpu : params_per_gpu);
  const double weight_bytes =
      lora ? params_per_gpu * m.bytes_per_weight + 2.0 * adapters_per_gpu : 2.0 * params_per_gpu;
  const double expert_bytes = lora ? 0.0 : 2.0 * expert_params_per_gpu;
  const double expert_grad_bytes = lora ? 0.0 : bytes_per_grad * expert_params_per_gpu;
  double dp_comm = 0, dp_exposed = 0;
  // The DP (and expert-DP) communicators for the latency model: ranks and the nodes they span.
  const CommGroup dp_comm_group{dp_group, std::max(1.0, std::ceil(dp_group / dp_per_node)), dp_busbw};
  // The expert-DP group is strided by etp x ep (those ranks are innermost in Megatron-Core's expert
  // order), so a node holds only its stage ranks / (etp x ep) members of one group: with ep = 8 on
  // 8-GPU nodes, one per node, and the group's ring sends over one GPU's NIC per hop, not the node's.
  const double expert_per_node =
      std::min(expert_group, std::max(1.0, std::floor(dp_per_node * tp / (m.moe ? double(l.ep * l.etp) : 1.0))));
  const bool expert_inside_node = expert_group <= expert_per_node && dp_inside_node;
  const double expert_busbw =
      expert_inside_node ? hw.intra_busbw : std::min(hw.intra_busbw, expert_per_node * hw.nic_per_gpu);
  const double expert_latency = expert_inside_node ? hw.intra_latency_s : hw.inter_latency_s;
  const CommGroup expert_comm_group{expert_group, std::max(1.0, std::ceil(expert_group / expert_per_node)),
                                    expert_busbw};
  // Hybrid sharding's replica group: one rank of each copy's shard group, the copies side by side
  // on a node only where a shard group is smaller than the node (each GPU's all-reduce leaves on
  // its own share of the NIC). Each reduced shard is all-reduced across it (ring or tree).
  const double replica_per_node = std::min(replicas, std::max(1.0, std::floor(dp_domain / (tp * dp_group))));
  const bool replica_inside = replicas <= replica_per_node && tp * dp_group * replicas <= dp_domain;
  const CommGroup replica_comm_group{replicas, std::max(1.0, std::ceil(replicas / replica_per_node)),
                                     replica_inside ? hw.intra_busbw
                                                    : std::min(hw.intra_busbw, replica_per_node * hw.nic_per_gpu)};
  auto replica_reduce_s = [&](double shard_bytes) {
    return replicas > 1 ? all_reduce_best_s(shard_bytes, replica_comm_group, k) : 0.0;
  };
  if (dp_group > 1 || expert_group > 1 || replicas > 1) {
    if (l.zero == 3) {
      // FSDP / ZeRO-3: every layer gathered for forward and backward, its gradients reduce-scattered,
      // per micro-batch, with NCCL's ring latency and one-unit prefetch (collectives.cpp).
      // Hybrid sharding adds each unit's all-reduce of its reduced shards across the copies: every
      // micro-batch under PyTorch FSDP's HYBRID_SHARD (its reduction runs in each backward unless
      // no_sync), at the accumulation boundary only under DeepSpeed's MiCS
      // (allreduce_mics_shard_grads returns early elsewhere), there in the last micro-batch.
      const double units = std::max(1.0, layers_per_stage);
      const double replica_unit_s =
          replica_reduce_s(grad_bytes / units / dp_group) + replica_reduce_s(expert_grad_bytes / units / expert_group);
      const Zero3Units unit{layers_per_stage,
                            weight_bytes,
                            grad_bytes,
                            expert_bytes,
                            expert_grad_bytes,
                            stage_fwd_mb,
                            stage_compute_mb - stage_fwd_mb,
                            replica_unit_s};
      const Zero3Time z = zero3_micro_batch(unit, dp_comm_group, expert_comm_group, k);
      dp_comm = micro_batches * z.comm;
      dp_exposed = micro_batches * z.exposed;
      if (replica_unit_s > 0 && micro_batches > 1 && planned_framework(m, l) == Framework::deepspeed) {
        Zero3Units inside = unit;
        inside.replica_reduce_s = 0;
        const Zero3Time z_inside = zero3_micro_batch(inside, dp_comm_group, expert_comm_group, k);
        dp_comm = (micro_batches - 1) * z_inside.comm + z.comm;
        dp_exposed = (micro_batches - 1) * z_inside.exposed + z.exposed;
      }
    } else {
      // All-reduce (ZeRO-0: a reduce-scatter and an all-gather, both of the gradients), or a
      // reduce-scatter of the gradients and an all-gather of the updated 16-bit weights (ZeRO-1/2;
      // ZeRO-2 reduces per micro-batch): a LoRA job's adapters, its frozen base is not sharded.
      // Dense parameters over DP x CP, the routed experts' over the expert-DP group (their own buffer).
      const double updated_bytes = lora ? 2.0 * adapters_per_gpu : weight_bytes;
      // The stack's gradient buckets (one collective each; see the latency below).
      const double bucket_bytes =
          gradient_bucket_bytes(m, l, dp_group, bytes_per_grad, grad_bytes, layers_per_stage, k);
      const double expert_bucket_bytes =
          gradient_bucket_bytes(m, l, dp_group, bytes_per_grad, expert_grad_bytes, layers_per_stage, k);
      // Hybrid sharding: each bucket's reduced shard then all-reduced across the copies.
      auto replica_buckets_s = [&](double bytes, double group, double bucket) {
        if (replicas <= 1 || bytes <= 0) return 0.0;
        const double buckets = bucket_count(bytes, bucket);
        return buckets * replica_reduce_s(bytes / buckets / group);
      };
      const double dense_reduce = all_gather_s(grad_bytes, dp_group, dp_busbw, dp_latency) +
                                  replica_buckets_s(grad_bytes, dp_group, bucket_bytes);
      const double expert_reduce = all_gather_s(expert_grad_bytes, expert_group, expert_busbw, expert_latency) +
                                   replica_buckets_s(expert_grad_bytes, expert_group, expert_bucket_bytes);
      const double dense_gather =
          l.zero == 0 ? dense_reduce : all_gather_s(updated_bytes, dp_group, dp_busbw, dp_latency);
      const double expert_gather =
          l.zero == 0 ? expert_reduce : all_gather_s(expert_bytes, expert_group, expert_busbw, expert_latency);
      const double reduce_scatter = dense_reduce + expert_reduce, gather = dense_gather + expert_gather;
      // FSDP's SHARD_GRAD_OP gathers for every micro-batch (fsdp_regathers_per_micro_batch);
      // DeepSpeed's ZeRO-2 and Megatron gather the updated weights once a step.
      const double gathers = fsdp_regathers_per_micro_batch(m, l) ? micro_batches : 1.0;
      dp_comm = l.zero == 2 ? micro_batches * reduce_scatter + gathers * gather : reduce_scatter + gather;
      // One collective per gradient bucket, each with NCCL's latency at this group size (collectives.cpp),
      // in the bucket the stack uses: a reduce-scatter per bucket every reduction (each micro-batch
      // under ZeRO-2), an all-gather per bucket once a step (ZeRO-0's all-reduce is both, once).
      const double reduction_latency = bucket_latency_s(grad_bytes, dp_comm_group, l.zero == 0, k, bucket_bytes);
      const double reductions = l.zero == 2 ? micro_batches : 1.0;
      const double reduce_latency = l.zero == 0 ? reduction_latency : 0.5 * reduction_latency * reductions;
      const double gather_latency = l.zero == 0 ? 0.0 : 0.5 * reduction_latency * gathers;
      dp_comm += reduce_latency + gather_latency;
      // The bucket that holds the first layers (and the input embedding) is complete only when the
      // backward ends, so its reduction never hides, whatever the overlap (each micro-batch's under
      // ZeRO-2, which reduces every backward); with the parameters gathered during the forward, the
      // first bucket's gather waits before the first layer likewise. The experts' buffer has its own
      // last bucket, in the stack's bucket for their bytes.
      auto share = [](double bucket, double bytes) { return bytes > 0 ? std::min(1.0, bucket / bytes) : 0.0; };
      const double dense_share = share(bucket_bytes, grad_bytes),
                   expert_share = share(expert_bucket_bytes, expert_grad_bytes);
      const double last_reduce = dense_share * dense_reduce + expert_share * expert_reduce;
      const double first_gather = dense_share * dense_gather + expert_share * expert_gather;
      const double one_bucket_latency = reduction_latency / bucket_count(grad_bytes, bucket_bytes);
      // What the backward can hide: 80% of the last micro-batch's, or of every micro-batch's where
      // each reduces its own gradients (ZeRO-2); FSDP's re-gathers of the later micro-batches hide
      // behind their forward, as much of each as that forward covers and no more (the forward hides
      // nothing else).
      const double regather_hidden =
          (gathers - 1.0) * std::min(gather + 0.5 * reduction_latency, k.dp_overlap * stage_fwd_mb);
      const double hideable = reductions * k.dp_overlap * stage_bwd_mb + regather_hidden;
      const double reduce_side = reductions * reduce_scatter + reduce_latency;
      const double gather_side = gathers * gather + gather_latency;
      const double reduce_floor =
          reductions * (last_reduce + (l.zero == 0 ? one_bucket_latency : 0.5 * one_bucket_latency));
      // Megatron-Core's distributed optimizer gathers the updated parameters layer by layer during
      // the next step's first forward (overlap_param_gather, set by NeMo's and Megatron Bridge's
      // recipes; NeMo 25.09 docs, "Communication Overlap"), so only the gradients' reduce-scatter
      // waits on the last backward (Layout::overlap_grad_reduce). Without it (Megatron-LM's own
      // default, and its local DDP before mid-2023) the reduction and the gather run after the last
      // backward, in the open. DeepSpeed gathers after the optimizer step, in the open (ZeRO-1/2's
      // all_gather_dp_groups); the other stacks' all-reduce or gathers share the backward.
      if (megatron_runtime(m, l) && l.zero <= 1 && !l.overlap_grad_reduce) {
        dp_exposed = dp_comm;
      } else if (megatron_runtime(m, l) && l.zero == 1) {
        dp_exposed =
            std::max(std::max(0.0, reduce_side - hideable), reduce_floor) +
            std::max(std::max(0.0, gather_side - k.dp_overlap * stage_fwd_mb), first_gather + 0.5 * one_bucket_latency);
      } else if (planned_framework(m, l) == Framework::deepspeed && l.zero >= 1) {
        dp_exposed = std::max(std::max(0.0, reduce_side - hideable), reduce_floor) + gather_side;
      } else {
        dp_exposed = std::max(std::max(0.0, dp_comm - hideable), reduce_floor + (l.zero == 0 ? first_gather : 0.0));
      }
    }
  }

  // Optimizer step: read gradients and fp32 states, write states and weights (~32 bytes per local parameter).
  const double local_trained = (lora ? adapters_per_gpu : params_per_gpu) / (l.zero >= 1 ? dp_group : 1.0) +
                               (lora ? 0.0 : expert_params_per_gpu / (l.zero >= 1 ? expert_group : 1.0));
  // With CPU offload the step runs on the host (below).
  const bool offloaded = m.offload != Offload::none && !lora;
  const double optimizer_s = offloaded ? 0.0 : 32.0 * local_trained / hw.hbm_bytes_per_s;
  // CPU offload's PCIe traffic: each micro-batch's 16-bit gradients of the shard to the host
  // (DeepSpeed accumulates them there, copying every reduced bucket of every backward) and the
  // updated 16-bit weights back once a step; with the parameters offloaded, each forward and
  // backward of a micro-batch also fetches them. On the critical path (DeepSpeed's default has no
  // delayed update).
  const double offload_bytes =
      offloaded ? 2.0 * micro_batches * local_trained + 2.0 * local_trained +
                      (m.offload == Offload::optimizer_and_params ? micro_batches * 4.0 * local_trained : 0.0)
                : 0.0;
  // The host's optimizer step (DeepSpeed's CPU-Adam; constants.cpp): every GPU's process updates its
  // shard on the same host, between the last backward and the weights' upload (no delayed update
  // by default), so the node's shards take the host's rate in turn. Other optimizers in proportion
  // to the fp32 state bytes they stream (the step is bound by the host's DRAM, not its cores). A
  // host of unknown size is taken as the reference host (the plan says so).
  const double cpu_rate = k.cpu_adam_params_per_s * cpu_adam_host_share(hw, k) *
                          optimizer_state_bytes(Optimizer::adamw, m.framework) /
                          optimizer_state_bytes(m.optimizer, m.framework);
  out.cpu_optimizer = offloaded ? local_trained * hw.gpus_per_node / cpu_rate : 0.0;
  out.offload = (hw.pcie_bytes_per_s > 0 ? offload_bytes / hw.pcie_bytes_per_s : 0.0) + out.cpu_optimizer;

  out.micro_batches = micro_batches;
  out.compute = micro_batches * stage_compute_mb + optimizer_s;
  // The dequantisation inside compute: forward, backward, and the forward again on the layers full
  // recompute checkpoints (layer_fraction of them).
  out.dequant = micro_batches * (2.0 + layer_fraction) * (st.dense * dequant_layer + st.moe * moe_dequant);
  out.tp_comm = micro_batches * tp_per_mb;
  out.tp_exposed = micro_batches * tp_exposed_mb;
  out.cp_comm = micro_batches * cp_per_mb;
  out.cp_exposed = micro_batches * cp_exposed_mb;
  out.ep_comm = micro_batches * ep_per_mb;
  out.ep_exposed = micro_batches * ep_exposed_mb;
  out.pp_comm = pp_comm;
  out.pp_exposed = pp_exposed;
  out.pp_bubble = l.pp > 1 ? (pp - 1) / v * (stage_compute_mb + tp_exposed_mb + cp_exposed_mb + ep_exposed_mb) : 0.0;
  if (l.dualpipe && l.pp > 1) {
    // DualPipe (DeepSeek-V3 report Table 2): (pp/2 - 1)(F&B + B - 3W), F&B the overlapped forward and
    // backward chunk pair (F + B with the all-to-all hidden), W the weight-gradient GEMMs.
    const double comm = tp_exposed_mb + cp_exposed_mb + ep_exposed_mb;
    const double backward = stage_compute_mb - stage_fwd_mb;
    const double weight_grads = lora ? 0.0 : st.dense * gemm_fwd + st.moe * moe_gemm_fwd;
    out.pp_bubble = std::max(0.0, (pp / 2.0 - 1.0) * (stage_compute_mb + comm + backward - 3.0 * weight_grads));
  }
  out.dp_comm = dp_comm;
  out.dp_exposed = dp_exposed;
  out.exposed_comm = out.tp_exposed + out.cp_exposed + out.ep_exposed + out.pp_exposed + out.dp_exposed;
  out.step = out.compute + out.pp_bubble + out.exposed_comm + out.offload;
  out.tokens_per_step = m.global_batch * m.seq_len;
  out.tokens_per_s = out.tokens_per_step / out.step;
  out.gemm_time_fraction =
      (st.dense * (lora ? 2.0 : 3.0) * gemm_fwd + st.moe * (lora ? 2.0 : 3.0) * moe_gemm_fwd) / stage_compute_mb;

  // FLOPs (Narayanan et al. 2021 eq. 3 generalised: linear layers a token passes through (active
  // parameters), non-causal attention scores, output layer): forward 2 x active linear params +
  // 4 s x attention width per layer per token; training 3 passes (LoRA 2: no weight gradients for
  // the base); hardware FLOPs add what recompute repeats.
  const double fwd_per_token =
      2.0 * m.active_linear_params + 4.0 * m.layers * kv_tokens(m, m.seq_len) * m.attention_width;
  const double passes = lora ? 2.0 : 3.0;
  out.model_flops_per_step = passes * fwd_per_token * out.tokens_per_step;
  double recompute_per_token = layer_fraction * (fwd_per_token - 2.0 * h * m.vocab);
  if (l.recompute == Recompute::selective)
    recompute_per_token = op_sac ? 2.0 * m.layers * (h * m.kv_width + m.o_width * h + h * m.ffn)
                                 : 4.0 * m.layers * kv_tokens(m, m.seq_len) * m.attention_width;
  if (l.recompute != Recompute::full) recompute_per_token += hai_recompute_flops_per_token;
  out.hardware_flops_per_step = out.model_flops_per_step + recompute_per_token * out.tokens_per_step;
}

double a2a_lower_bound(const PreparedModel& m, const PreparedHardware& hw, int nodes, const Layout& l) noexcept {
  if (!m.moe || l.ep <= 1 || l.overlap_a2a) return 0.0;
  bool inside = true;
  const A2aLinks a2a = ep_links(m, hw, l, double(nodes) * hw.gpus_per_node, inside);
  // The step's routed rows on the busiest rank, summed over its micro-batches: the per-micro-batch
  // all-to-all is linear in its bytes plus a latency, so the sum is at least this with one latency.
  const double sequences = m.global_batch / double(l.dp);
  Layout one = l;
  one.micro_batch = 1;
  const MoeRows rows = moe_rows(m, sequences * m.seq_len / l.cp, l.tp, one);
  const double h = m.hidden;
  const double per_layer =
      all_to_all_s(rows.busiest * h * dispatch_bytes(m), a2a) + 3.0 * all_to_all_s(rows.busiest * h * 2.0, a2a);
  return moe_stage(m, l).moe * per_layer;
}

double step_lower_bound(const PreparedModel& m, const PreparedHardware& hw, int nodes, int tp_, int pp_, int cp_,
                        int dp_, int max_virtual_stages, bool sequence_parallel_possible, const PlannerConstants& k,
                        int min_micro_batch, std::optional<bool> megatron, bool tp_comm_overlap_possible) noexcept {
  // Every term below is a part of estimate_time()'s training step taken at its smallest over the
  // free choices (micro-batch, ZeRO, recompute, virtual stages, ep, etp, overlap); terms that can
  // vanish are left out (the all-to-all among them).
  const double tp = tp_, pp = pp_, cp = cp_, dp = dp_;
  const double gpn = hw.gpus_per_node;
  const double total_gpus = double(nodes) * gpn;
  const double h = m.hidden;
  Layout stage_layout;
  stage_layout.pp = pp_;
  const MoeStage st = moe_stage(m, stage_layout);
  const bool lora = m.kind == JobKind::lora;
  const double passes = lora ? 2.0 : 3.0;
  const Rates r{hw.peak_flops * hw.gemm_efficiency, hw.hbm_bytes_per_s, m.gemm_element_bytes};
  const double sequences = m.global_batch / dp;      // per pipeline per step (micro_batches x micro_batch)
  const double tokens = sequences * m.seq_len / cp;  // GEMM rows per step on one GPU
  const double max_micro_batches = sequences / std::max(1, min_micro_batch);  // the bubble's share of the step
  // GEMMs: FLOPs and the activation operands scale with tokens; weight reads are left out (MLA's
  // attention operands too). Routed experts at etp 1 with no imbalance: their FLOPs do not depend
  // on ep or etp, their operand rows only grow with etp.
  const double attention_rows = m.mla ? 0.0 : (h + (m.q_width + 2 * m.kv_width) / tp) + (m.o_width / tp + h);
  const double dense_gemm = 2.0 * tokens * (m.layer_params - 2 * h) / tp / r.flops +
                            r.elem * tokens * (attention_rows + (h + m.mlp_in_width / tp) + (m.ffn / tp + h)) / r.hbm;
  // Megatron-Core's runtime (fused attention, pipeline sends that can hide) where the bound is for
  // it, or for any layout and the framework may run it (auto below ZeRO-3: the bound takes that stage).
  const bool megatron_possible = megatron.value_or(megatron_runtime(m, /*zero=*/1));
  double attention =
      2.0 * sequences * (m.seq_len / cp) * attention_context(m, m.seq_len) * m.attention_width / tp /
      (hw.attention_peak_flops * (megatron_possible ? std::max(hw.fused_attention_efficiency, hw.attention_efficiency)
                                                    : hw.attention_efficiency));
  if (!m.flash)
    attention = 2.0 * attention + 4.0 * 2.0 * sequences * (m.heads / tp) * (m.seq_len / cp) * m.seq_len / r.hbm;
  const double sp_div = sequence_parallel_possible ? tp : 1.0;
  const double elem = k.elementwise_passes * 2.0 * tokens * (h / sp_div + m.ffn / tp) / r.hbm;
  const double per_layer = passes * dense_gemm + 3.5 * attention + 3.0 * elem + 2.0 * k.layer_overhead_s;
  double per_moe_layer = 0;
  if (m.moe) {
    const double rows = tokens / tp * m.top_k;
    // The grouped GEMMs' shape efficiency at its largest (rows per expert unbounded, etp 1).
    const double expert_efficiency = grouped_gemm_efficiency(m, std::min(m.expert_ffn, double(h)), k);
    const double moe_gemm =
        2.0 * tokens * (m.moe_base_params - 2 * h + m.top_k * m.expert_params / expert_efficiency) / tp / r.flops +
        r.elem * (tokens * attention_rows + rows * (h + m.expert_in_width + m.expert_ffn + h)) / r.hbm;
    const double moe_elem =
        (k.elementwise_passes * 2.0 * (tokens * (h / sp_div + m.shared_ffn / tp) + rows * m.expert_ffn) +
         k.moe_permute_passes * 2.0 * rows * h) /
        r.hbm;
    // The MoE layer's exposed host time is left out: it shrinks as the GPU work grows, which this
    // bound only bounds from below.
    per_moe_layer = passes * moe_gemm + 3.5 * attention + 3.0 * moe_elem + 2.0 * k.layer_overhead_s;
  }
  const double logits =
      3.0 * (2.0 * tokens * h * m.vocab / tp / r.flops + r.elem * tokens * (h + m.vocab / tp) / r.hbm) +
      3.0 * tokens * m.vocab / tp * 6.0 / r.hbm;
  const double layers_per_stage = st.layers;
  const double last_layers =
      pp_ > 1 ? layers_per_stage - std::floor((pp * layers_per_stage - m.layers) / 2) : layers_per_stage;
  const double full_stage = st.dense * per_layer + st.moe * per_moe_layer;
  const double compute = std::max(pp_ > 2 ? full_stage : 0.0, last_layers / layers_per_stage * full_stage + logits);
  double tp_comm = 0;
  if (tp_ > 1) {
    const bool inside = inside_nvlink_domain(hw, tp, total_gpus);
    const double busbw = inside ? hw.intra_busbw : std::min(hw.intra_busbw, gpn * hw.nic_per_gpu);
    const double latency = inside ? hw.intra_latency_s : hw.inter_latency_s;
    tp_comm = st.layers * 4.0 * (bus_factor(Collective::all_reduce, tp) * tokens * h * 2.0 / busbw + latency);
    // Transformer Engine's TP overlap (estimate_time): what its floors leave of each collective.
    // Per layer pass at least 4 ring-exchange halves at 1/tp and 2 pipelined ones at 1/4, of 4 pairs.
    if (tp_comm_overlap_possible && megatron_possible && sequence_parallel_possible && inside && hw.nvidia_nvlink)
      tp_comm *= 0.5 / tp + 1.0 / 16.0;
  }
  double pp_comm = 0, bubble = 0;
  if (pp_ > 1) {
    const double domain = std::max<double>(gpn, hw.nvlink_domain_gpus);
    const double p2p = nodes > 1 && total_gpus > domain ? hw.nic_per_gpu : hw.intra_p2p;
    // Interleaving under Megatron-Core's runtime can hide the sends (estimate_time), so the bound
    // counts them only where the framework cannot.
    const bool sends_can_hide = (max_virtual_stages > 1 && megatron_possible) || max_virtual_stages == 0;
    if (!sends_can_hide) pp_comm = 2.0 * tokens * h * 2.0 / sp_div / p2p;
    // max_virtual_stages 0: DualPipe, whose smaller bubble the bound leaves out.
    if (max_virtual_stages > 0) bubble = (pp - 1) / max_virtual_stages * compute / max_micro_batches;
  }
  return compute + tp_comm + pp_comm + bubble;
}

}  // namespace linkwise::planner
