// Memory per GPU. Model states follow the ZeRO paper's accounting (Rajbhandari et al. 2020,
// arXiv 1910.02054, section 3.1: 2 bytes of 16-bit weights, 2 of 16-bit gradients and K = 12 of
// fp32 master weights, momentum and variance per parameter), sharded over the data-parallel group
// by the ZeRO stage. Activations follow Korthikanti et al. 2022 (arXiv 2205.05198, section 4:
// sbh(34 + 5as/h) bytes per layer, its tensor-, sequence-parallel and recompute variants),
// generalised term by term to grouped-query attention, gated MLPs, FlashAttention and no dropout.
#include <algorithm>
#include <cmath>

#include "linkwise/planner/engine.hpp"
#include "linkwise/planner/framework_memory.hpp"
#include "linkwise/units.hpp"

namespace linkwise::planner {

namespace {

// Bytes of activations stored per token by one layer for the backward pass (16-bit tensors).
struct LayerActivationBytes {
  double replicated;    // outside the tensor-parallel regions (norm inputs, block inputs, dropout masks)
  double sharded;       // inside them (Q, K, V, core attention, MLP intermediates), divided by tp
  double core;          // the core-attention part of `sharded` (what selective recompute drops)
  double mlp;           // the dense MLP's part of `sharded`
  double per_ffn;       // bytes kept per intermediate element of an MLP (dense, shared or routed expert)
  double routed_input;  // bytes kept per element of a routed copy's input row
};

// Whether the job's Linear layers (and its fused loss) are Transformer Engine's: Megatron-Core and
// NeMo run them, and the default profile (`auto`) holds memory as Megatron-Core does below ZeRO-3.
// PyTorch FSDP and torchtitan use PyTorch's own (torchao for FP8).
bool transformer_engine_layers(const PreparedModel& m, const Layout& l) noexcept { return megatron_runtime(m, l); }

// Bytes per element of a Linear layer's input as kept for its weight-gradient GEMM. Transformer
// Engine keeps the quantized copy it fed the forward GEMM, column-wise data only (TransformerEngine
// transformer_engine/pytorch/module/linear.py at d0067d0d, `saved_inputmat = inputmat` after
// `update_usage(rowwise_usage=False, columnwise_usage=True)`; layernorm_linear.py likewise keeps
// `ln_out`): 1 byte per element in FP8 (MXFP8's one scale byte per 32 elements is left out), 4 bits
// and one scale byte per 16 in NVFP4. torchao's Float8Linear keeps the high-precision input: 2 bytes.
double linear_input_bytes(const PreparedModel& m, const Layout& l) noexcept {
  const bool quantized = m.precision == Precision::fp8 || m.precision == Precision::fp4;
  if (!quantized || !transformer_engine_layers(m, l) || m.kind == JobKind::inference) return 2.0;
  return m.precision == Precision::fp4 ? 0.5 + 1.0 / 16.0 : 1.0;
}

LayerActivationBytes layer_activation_bytes(const PreparedModel& m, const Layout& l) {
  const double h = m.hidden;
  LayerActivationBytes a;
  // Score matrices (softmax output, its dropout mask and output) unless FlashAttention, which keeps
  // only the fp32 log-sum-exp per head.
  a.core = m.flash ? 4 * m.heads : (m.dropout ? 5.0 : 2.0) * m.heads * m.seq_len;
  if (m.framework == Framework::hai_llm && m.kind != JobKind::inference) {
    // DeepSeek-V3 report (arXiv 2412.19437): RMSNorm outputs and MLA's up-projections (Q, K, V)
    // are recomputed in backward (section 3.2.3), so a layer keeps its two norm inputs, MLA's
    // latents and rotary key, the attention output (E5M6, 1.5 bytes, section 3.3.3) and only the
    // SwiGLU inputs (its output is recomputed); with fp8 GEMMs every cached Linear input is FP8.
    const bool fp8 = m.precision == Precision::fp8 || m.precision == Precision::fp4;
    const double linear_in = fp8 ? 1.0 : 2.0;
    a.replicated = 4 * h;
    const double qkv = m.mla ? linear_in * (m.q_lora + m.kv_lora) + 2 * m.rope_dim : 2 * m.q_width + 4 * m.kv_width;
    const double attention_out = (fp8 ? 1.5 : 2.0) * m.o_width;
    a.per_ffn = (m.gated ? 2.0 : 1.0) * linear_in;
    a.routed_input = linear_in;
    a.mlp = a.per_ffn * m.ffn;
    a.sharded = qkv + a.core + attention_out + a.mlp;
    return a;
  }
  // Two norm inputs (2h each), QKV input and MLP input (2h each, or as the quantized copy the
  // Linear layers keep: linear_input_bytes), two dropout masks (h each).
  const double linear_in = linear_input_bytes(m, l);
  // A frozen Linear keeps no input: its input is kept for the weight gradient only (autograd saves
  // a matmul's input when the weight requires grad; TE's `backward_needs_input`). LoRA on the
  // attention alone leaves the MLP's (and the experts') Linear layers frozen without adapters.
  const double mlp_linear_in = m.lora_frozen_mlp ? 0.0 : linear_in;
  a.replicated = 4 * h + (linear_in + mlp_linear_in) * h + (m.dropout ? 2 * h : 0);
  // Q, K, V outputs (MLA: after the up-projections, K and V per head, plus the latents' inputs
  // kept on every TP rank, counted here as sharded: a few percent of the layer).
  const double qkv = m.mla ? 2 * m.heads * m.qk_head_dim * 2 + 2 * m.o_width + 2 * (m.q_lora + m.kv_lora + m.rope_dim)
                           : 2 * m.q_width + 4 * m.kv_width;
  const double attention_out = linear_in * m.o_width;  // input of the output projection
  // gate, up (16-bit, the activation's backward reads them), product | fc1 out, activation out;
  // the product or activation output is the second Linear's input.
  a.per_ffn = (m.gated ? 4.0 : 2.0) + mlp_linear_in;
  if (eager_llama_block(m, l.zero) &&
      planned_framework(m.framework, l.zero, m.dequant_4bit) == Framework::hf_accelerate) {
    // The Hugging Face stack's eager Llama block (transformers' LlamaRMSNorm and LlamaMLP; litgpt's
    // RMSNorm and LLaMAMLP are the same ops): each RMSNorm upcasts its input and keeps the fp32
    // copy for pow and the rsqrt scaling (4 bytes, not the fused kernel's 2), and with a trained
    // norm weight the 16-bit normalized tensor for its gradient too; SwiGLU's product keeps
    // silu(gate) besides gate and up (fused kernels recompute it in backward). torchtitan and the
    // other FSDP stacks may run fused norms (torchtitan's fused_rmsnorm): not assumed of them.
    const bool norm_weight_trains = m.kind != JobKind::lora;
    a.replicated += 2 * (2 + (norm_weight_trains ? 2 : 0)) * h;
    if (m.gated) a.per_ffn += 2.0;
  }
  a.routed_input = mlp_linear_in;
  a.mlp = a.per_ffn * m.ffn;
  a.sharded = qkv + a.core + attention_out + a.mlp;
  return a;
}

}  // namespace

MoeRows moe_rows(const PreparedModel& m, double tokens, double tp, const Layout& l) noexcept {
  MoeRows r;
  const double ep = l.ep, etp = l.etp;
  // Each GPU dispatches its sequence-parallel share (tokens / tp) of the tokens, top_k copies each;
  // an etp group receives its ep-th of the group's copies and every member processes all of them.
  r.mean = tokens / tp * m.top_k * etp;
  r.busiest = r.mean * (l.ep > 1 ? m.load_imbalance : 1.0);
  r.local_experts = m.experts / ep;
  // Distinct local experts the step touches: the group's tokens each pick top_k of the experts
  // (uniform routing), so an expert is missed with probability (1 - top_k/E)^tokens, computed as
  // exp(tokens x log(1 - top_k/E)): the search calls this for every MoE layout, and exp is cheaper
  // than pow. Below e^-700 the odds are 0 in double precision; exp would take its slow underflow path.
  const double group_tokens = tokens / tp * ep * etp;
  const double log_miss = group_tokens * m.log_expert_miss;
  const double expected = r.local_experts * (1.0 - (log_miss < -700.0 ? 0.0 : std::exp(log_miss)));
  r.touched = std::min({r.local_experts, std::max(1.0, r.busiest), std::max(1.0, expected)});
  return r;
}

void estimate_memory(const PreparedModel& m, const PreparedHardware& hw, const Layout& l, const PlannerConstants& k,
                     Estimate& out) noexcept {
  const double tp = l.tp, pp = l.pp, cp = l.cp, dp = l.dp;
  const MoeStage st = moe_stage(m, l);
  const double layers_per_stage = st.layers;
  // The heaviest stage: a pipeline of one stage holds both embeddings (one when tied); otherwise
  // the first stage holds the input embedding and the last the output projection.
  const double embedding_matrices = l.pp == 1 ? (m.tied ? 1.0 : 2.0) : 1.0;
  // Uneven splits (layers not a multiple of pp): the middle stages hold ceil(layers / pp) layers and
  // the first and last share the deficit (Megatron-Core's first/last-stage layer counts, DeepSpeed's
  // 'type:transformer|embedding' partition), which makes room for the embedding and the loss.
  const double deficit = l.pp > 1 ? pp * layers_per_stage - m.layers : 0.0;
  const double first_layers = layers_per_stage - std::ceil(deficit / 2),
               last_layers = layers_per_stage - std::floor(deficit / 2);
  // Dense parts split over TP (a MoE layer's attention, shared experts and router among them), per
  // layer of the stage on average; the routed experts over the expert grid: E / ep experts per GPU,
  // each split etp ways.
  const double stage_layer_params = (st.dense * m.layer_params + st.moe * m.moe_base_params) / layers_per_stage;
  const double params_per_gpu = std::max(first_layers * stage_layer_params + embedding_matrices * m.embedding_params,
                                         l.pp > 2 ? layers_per_stage * stage_layer_params : 0.0) /
                                tp;
  const double expert_params_per_gpu = local_expert_params(m, l);
  // Megatron shards optimizer states over DP x CP, the experts' over the expert-DP group; with
  // hybrid sharding each copy of the states over its dp_shard ranks (x CP), the experts' likewise.
  const double zero_group = double(l.zero_shard()) * cp;
  const double expert_zero_group = m.moe ? double(l.edp()) / l.zero_replicas() : 1.0;

  out.weights = out.gradients = out.optimizer = out.activations = out.kv_cache = 0;
  double dynamic_bytes = 0;  // short-lived tensors the caching allocator fragments (not the engines' KV pool)
  if (m.kind == JobKind::inference) {
    out.weights = params_per_gpu * m.bytes_per_weight + expert_params_per_gpu * m.expert_bytes_per_weight;
    // K and V per layer per token; KV heads split over TP, replicated when tp exceeds them. MLA
    // caches one latent per token, whole on every TP rank.
    const double kv_elements = m.kv_split_by_tp ? 2.0 * std::ceil(m.kv_heads / tp) * m.head_dim : m.kv_elements;
    const double kv_bytes_per_token = layers_per_stage * kv_elements * m.kv_bytes;
    // (sliding-window layers keep their window only: kv_tokens)
    const double kv_full = kv_bytes_per_token * kv_tokens(m, m.prompt_len + m.output_len);  // one sequence at its end
    // What one running sequence holds in the engine's pool: its whole length where the engine
    // reserves it at admission, else (paged, on demand) the mean over its life in a steady stream.
    const double kv_held = hw.engine_profile.reserves_full_length
                               ? kv_full
                               : kv_bytes_per_token * kv_tokens(m, m.prompt_len + m.output_len / 2.0);
    const double logits_per_sequence = m.vocab / tp * 4.0;  // fp32 logits of the last position
    // One engine step's working set: the prefill tokens it carries (chunked to the engine's token
    // budget; several prompts share a step), one layer at a time, nothing kept across layers.
    const LayerActivationBytes a = layer_activation_bytes(m, l);
    const double core_scores = m.flash ? 0.0 : a.core;  // score matrices per token, when materialised
    const double step_tokens =
        m.concurrent_max ? hw.engine_profile.max_step_tokens
                         : std::min(hw.engine_profile.max_step_tokens, std::max(1.0, m.concurrent / dp) * m.prompt_len);
    double per_token = a.replicated + (a.sharded - a.core + core_scores) / tp;
    if (m.moe) {
      const MoeRows r = moe_rows(m, step_tokens, tp, l);
      const double routed = r.busiest / step_tokens * (2.0 * m.hidden + (m.gated ? 6.0 : 4.0) * m.expert_ffn / l.etp);
      per_token = std::max(per_token, per_token - (m.gated ? 6 : 4) * m.ffn / tp + routed);
    }
    const double step_activations = step_tokens * per_token;
    // The sequences one engine holds: its KV pool (the memory the engine may take, less weights,
    // activations and the framework's overhead) over one sequence's share, within its batch limit.
    const MemoryOverhead base = framework_overhead(m, hw, l, k, m.layer_params / tp, /*stage_params_local=*/0.0,
                                                   /*grads_local_bytes=*/0.0, out.weights, step_activations);
    const double f = memory_fraction(hw.engine_profile, l.tp), card = hw.capacity_bytes;
    double pool = 0;
    switch (hw.engine_profile.kv_pool_rule) {
      case KvPoolRule::card_less_weights_and_activations:
        pool = f * card - out.weights - step_activations - base.nccl;
        break;
      case KvPoolRule::free_at_start_less_weights: pool = f * (card - base.context - base.nccl) - out.weights; break;
      case KvPoolRule::free_after_load: pool = f * (card - out.weights - step_activations - base.total); break;
    }
    // (each sequence's logits are short-lived: the allocator's share of them counts too)
    const double per_sequence = kv_held + logits_per_sequence * (1.0 + k.allocator_dynamic_fraction);
    double max_sequences = pool > 0 ? std::floor(pool / per_sequence) : 0.0;
    out.max_sequences_at_batch_limit = hw.engine_profile.max_batch > 0 && max_sequences > hw.engine_profile.max_batch;
    if (out.max_sequences_at_batch_limit) max_sequences = hw.engine_profile.max_batch;
    out.max_sequences = max_sequences;
    out.sequences = m.concurrent_max ? max_sequences : m.concurrent / dp;
    // An explicit concurrency above the pool: the engine runs what its pool holds and queues the
    // rest (vLLM's and TensorRT-LLM's schedulers admit a request when its KV blocks are free), so
    // the memory is the pool's and the others wait.
    out.queued = 0;
    if (!m.concurrent_max && max_sequences >= 1 && out.sequences > max_sequences) {
      out.queued = out.sequences - max_sequences;
      out.sequences = max_sequences;
    }
    // Explicit concurrency: every sequence at its full length (the worst moment). Max mode: the
    // pool the sequences fill in the engine's own accounting.
    out.kv_cache = m.concurrent_max ? out.sequences * kv_held : kv_full * out.sequences;
    out.activations = step_activations + logits_per_sequence * out.sequences;
    dynamic_bytes = out.activations;
  } else {
    const bool lora = m.kind == JobKind::lora;
    if (lora) {
      const double adapters = layers_per_stage * m.lora_params_per_layer / tp;
      // QLoRA quantises the transformer blocks' linear weights; bitsandbytes under PEFT/Transformers
      // keeps embed_tokens and lm_head in 16 bits. The heaviest stage: the first (with the
      // embedding) or a middle one.
      double base = (params_per_gpu + expert_params_per_gpu) * m.bytes_per_weight;
      if (m.dequant_4bit) {
        const double blocks = first_layers * stage_layer_params / tp + expert_params_per_gpu;
        const double middle = l.pp > 2 ? layers_per_stage * stage_layer_params / tp + expert_params_per_gpu : 0.0;
        base = std::max(blocks * m.bytes_per_weight + 2.0 * embedding_matrices * m.embedding_params / tp,
                        middle * m.bytes_per_weight);
      }
      out.weights = (base + 2.0 * adapters) / (l.zero >= 3 ? zero_group : 1.0);
      out.gradients = 2.0 * adapters / (l.zero >= 2 ? zero_group : 1.0);
      out.optimizer = optimizer_state_bytes(m.optimizer, m.framework) * adapters / (l.zero >= 1 ? zero_group : 1.0);
    } else {
      // What the framework keeps per parameter (framework_memory.cpp): fp32 main gradients,
      // optimizer states of the chosen optimizer, offload; experts shard over their own
      // expert-data-parallel group. DualPipe keeps two copies of the weights (DeepSeek-V3 report Table 2).
      const StateBytes b = model_state_bytes(m, l, zero_group);
      const StateBytes be = model_state_bytes(m, l, expert_zero_group);
      out.weights = (l.dualpipe ? 2.0 : 1.0) * (b.weights * params_per_gpu + be.weights * expert_params_per_gpu);
      out.gradients = b.gradients * params_per_gpu + be.gradients * expert_params_per_gpu;
      out.optimizer = b.optimizer * params_per_gpu + be.optimizer * expert_params_per_gpu;
      // CPU offload: the gradients stream to the host through the reduce buckets, which stay on
      // the GPU (DeepSpeed's reduce_bucket_size, 5e8 elements by default: 1 GB in 16 bits), or the
      // whole 16-bit gradients where they are smaller.
      if (m.offload != Offload::none)
        out.gradients = std::min(2.0 * (params_per_gpu + expert_params_per_gpu), kOffloadReduceBucketBytes);
    }
    // Activations of one micro-batch through one layer.
    const double tokens = l.micro_batch * m.seq_len / cp;
    const LayerActivationBytes a = layer_activation_bytes(m, l);
    const double per_token_none = l.sequence_parallel ? (a.replicated + a.sharded) / tp : a.replicated + a.sharded / tp;
    double per_token_kept = per_token_none;
    // A MoE layer keeps, instead of the dense MLP's intermediates: the shared experts' (split over
    // TP), the router's fp32 logits, and for each routed copy its input row and the expert's
    // intermediates (split over etp), on the busiest rank.
    double moe_per_token_none = 0;
    if (m.moe) {
      const MoeRows r = moe_rows(m, tokens, tp, l);
      const double shared = a.per_ffn * m.shared_ffn;
      const double routed = r.busiest / tokens * (a.routed_input * m.hidden + a.per_ffn * m.expert_ffn / l.etp);
      moe_per_token_none =
          per_token_none + (shared - a.mlp) / tp + 4.0 * m.experts / (l.sequence_parallel ? tp : 1.0) + routed;
    }
    double moe_per_token_kept = moe_per_token_none;
    double working_set = 0;  // one layer recomputed during backward (full recompute)
    const double sp = l.sequence_parallel ? tp : 1.0;
    if (l.recompute == Recompute::selective && m.framework == Framework::torchtitan) {
      // torchtitan's op-level SAC (parallelize_llama.py): the block input, the outputs of every odd
      // matmul (Q, V, the MLP's first input projection, with a gate also the down projection's
      // full-width partial sum), SDPA's output and log-sum-exp, and under TP the reduce-scatter
      // outputs; the rest is recomputed one layer at a time during backward.
      const double saved = 2.0 * m.hidden / sp +
                           (2.0 * m.q_width + 2.0 * m.kv_width + 2.0 * m.o_width + 4.0 * m.heads + 2.0 * m.ffn) / tp +
                           (m.gated ? 2.0 * m.hidden : 0.0) + (l.tp > 1 ? 4.0 * m.hidden / tp : 0.0);
      per_token_kept = std::min(per_token_none, saved);
      moe_per_token_kept =
          std::min(moe_per_token_none, saved * moe_per_token_none / per_token_none);  // MoE: in proportion
      working_set = std::max(per_token_none - per_token_kept, moe_per_token_none - moe_per_token_kept) * tokens;
    } else if (l.recompute == Recompute::selective) {
      per_token_kept -= a.core / tp;
      moe_per_token_kept -= a.core / tp;
    }
    if (l.recompute == Recompute::full) {
      // The checkpointed share of the layers keeps its input only; the rest keep everything
      // (layer-selective checkpointing: fms-fsdp, torchtitan 'selective_ac_option: k').
      const double f = l.recompute_layer_fraction;
      const double input = 2.0 * m.hidden / sp;
      per_token_kept = f * input + (1.0 - f) * per_token_none;
      moe_per_token_kept = f * input + (1.0 - f) * moe_per_token_none;
      working_set = std::max(per_token_none, moe_per_token_none) * tokens;
    }
    const double stage_layers_bytes = (st.dense * per_token_kept + st.moe * moe_per_token_kept) * tokens;
    const double micro_batches = m.global_batch / (dp * l.micro_batch);
    // 1F1B: the first stage holds min(pp, m) micro-batches in flight; interleaving holds
    // (1 + (pp - 1) / (pp v)) times more (Korthikanti et al. 2022, section 4.2.3).
    double in_flight = l.pp == 1 ? 1.0 : std::min(l.dualpipe ? pp + 1.0 : pp, micro_batches);  // DualPipe: pp + 1
    if (l.virtual_stages > 1) in_flight *= 1.0 + (pp - 1.0) / (pp * l.virtual_stages);
    // Stages of an uneven split hold their own number of layers (dense and MoE in the stage's mix).
    const double per_layer_bytes = stage_layers_bytes / layers_per_stage;
    double first_stage = first_layers * per_layer_bytes * in_flight + working_set +
                         2.0 * m.hidden * tokens / (l.sequence_parallel ? tp : 1.0);  // embedding output
    if (deficit > 0 && l.pp > 2) {  // the second stage: a full share of layers, one micro-batch fewer in flight
      double in_flight_2 = std::min(pp - 1.0, micro_batches);
      if (l.virtual_stages > 1) in_flight_2 *= 1.0 + (pp - 1.0) / (pp * l.virtual_stages);
      first_stage = std::max(first_stage, stage_layers_bytes * in_flight_2 + working_set);
    }
    // Output layer: 16-bit logits, their fp32 softmax kept for the loss, and the fp32 gradient of
    // the logits at the loss's backward (the largest single op at large vocab), vocab split over TP.
    // torchtitan with TP computes the loss vocab-parallel (PyTorch's loss_parallel on DTensor logits,
    // torch/distributed/tensor/parallel/loss.py): its log-softmax holds the fp32 input, the shifted
    // logits, their exp and the result, and its fused nll + log-softmax backward builds zeros, exp
    // and their sum beside the saved log-probabilities: 16 bytes per vocab entry at the backward's
    // peak (the 16-bit logits freed by then).
    // A fused cross-entropy kernel (job.loss fused) keeps less: flash-attn's CrossEntropyLoss
    // (llm-foundry's default loss_fn, `fused_crossentropy`) saves the 16-bit logits and the per-row
    // log-sum-exp and writes a 16-bit gradient in backward (flash_attn/ops/triton/cross_entropy.py:
    // `torch.empty_like(logits)` unless inplace_backward): 4 bytes per entry. Transformer Engine's
    // parallel cross-entropy, Megatron-Core's fusion, computes the fp32 gradient in forward and saves
    // only it (transformer_engine/pytorch/triton/cross_entropy.py), beside the logits until the
    // kernel returns: 6.
    double logit_bytes = m.framework == Framework::torchtitan && l.tp > 1 ? 16.0 : 2.0 + 4.0 + 4.0;
    if (m.fused_loss) logit_bytes = transformer_engine_layers(m, l) ? 2.0 + 4.0 : 2.0 + 2.0;
    const double logits = tokens * m.vocab / tp * logit_bytes;
    const double last_stage = last_layers * per_layer_bytes + working_set + logits;
    out.activations = l.pp == 1 ? first_stage + logits : std::max(first_stage, last_stage);
    dynamic_bytes = out.activations;
  }
  const double states = out.weights + out.gradients + out.optimizer;
  // The serving engines allocate the KV pool once, as one tensor per layer: the caching allocator
  // adds no fragmentation to it.
  const MemoryOverhead o = framework_overhead(m, hw, l, k, m.layer_params / tp, params_per_gpu + expert_params_per_gpu,
                                              out.gradients, states, dynamic_bytes);
  out.overhead = o.total - o.held_weights - o.held_gradients;
  out.context_and_nccl = o.context + o.nccl;
  out.allocator_reserve = o.allocator;
  out.weights += o.held_weights;  // unsharded copies kept through the step are weights and gradients
  out.gradients += o.held_gradients;
  out.total = states + o.held_weights + o.held_gradients + out.activations + out.kv_cache + out.overhead;
  out.capacity = hw.capacity_bytes;
  if (const double cast = gradient_reduce_cast_bytes(m, l, params_per_gpu + expert_params_per_gpu); cast > 0) {
    // A transient of the gradient reduction, after the last backward: the caching allocator cannot
    // serve it from the freed activations' segments (smaller blocks), so it cudaMallocs it on top
    // of them and nvidia-smi shows both; where the card is too small for that, the allocator frees
    // its cached segments and retries (CUDACachingAllocator: free_cached_blocks) instead of failing.
    // The card needs max(activation phase, states + the transient); nvidia-smi reads up to capacity.
    const double activation_phase = out.total;
    const double reduce_phase = states + cast + o.context + o.nccl;
    const double required = std::max(activation_phase, reduce_phase);
    const double shown = std::max(required, std::min(out.capacity, activation_phase + cast));
    out.overhead += shown - activation_phase;
    out.total = shown;
  }
  // CPU offload (ZeRO-Offload, Ren et al. 2021 section 4.1): the host holds the 16-bit gradients and
  // the fp32 optimizer states (master weights among them) of the GPU's shard, and with the
  // parameters offloaded (ZeRO-Infinity) their 16-bit copy too; every GPU of the node offloads to
  // the same host memory.
  out.host_offload_bytes = 0;
  out.host_fits = true;
  out.host_memory_unknown = out.host_vcpus_unknown = false;
  if (m.kind != JobKind::inference && m.kind != JobKind::lora && m.offload != Offload::none) {
    const double shard = params_per_gpu / (l.zero >= 1 ? zero_group : 1.0) +
                         expert_params_per_gpu / (l.zero >= 1 ? expert_zero_group : 1.0);
    out.host_offload_bytes = shard * (optimizer_state_bytes(m.optimizer, m.framework) + 2.0 +
                                      (m.offload == Offload::optimizer_and_params ? 2.0 : 0.0));
    out.host_fits = hw.host_memory_bytes <= 0 || out.host_offload_bytes * hw.gpus_per_node <= hw.host_memory_bytes;
    out.host_memory_unknown = hw.host_memory_bytes <= 0;
    out.host_vcpus_unknown = hw.host_vcpus <= 0;
  }
  // A serving engine sizes its KV pool at start-up (vLLM's gpu_memory_utilization, SGLang's
  // mem_fraction_static, TensorRT-LLM's free_gpu_memory_fraction): a pool that cannot hold one
  // sequence means the engine serves nothing, whatever `concurrent` asks. (A stated concurrency
  // the pool cannot hold all at once is judged on its whole KV cache, as planned: the plan does
  // not deliver it, and says the requests would queue.)
  const bool pool_holds_none = m.kind == JobKind::inference && out.max_sequences < 1;
  out.fits = out.total <= out.capacity && !pool_holds_none && out.host_fits;
  const bool pool_sized_at_start = m.kind == JobKind::inference && !pool_holds_none && out.sequences >= 1;
  out.memory_at_risk = pool_sized_at_start ? out.total - out.kv_cache + out.kv_cache / out.sequences : out.total;
  out.tight = out.fits && out.memory_at_risk * (1.0 + k.memory_error_band) > out.capacity;
}

}  // namespace linkwise::planner
