// Memory as the frameworks hold it, beyond the ZeRO paper's 16 bytes per parameter: which copies of
// weights, gradients and optimizer states each framework keeps (Megatron-Core's fp32 main
// gradients, DeepSpeed's bf16 optimizer with fp32 gradient accumulation, FSDP's sharded fp32
// states), the optimizer's own states, CPU offload, and what nvidia-smi shows on top of the
// tensors: the CUDA context and library workspaces, NCCL's buffers per communicator, the
// framework's communication buckets and gathered ZeRO-3 units, the transient of the gradient
// reduction (DeepSpeed's bf16 cast), and the caching allocator's reserved-but-unallocated memory. Constants:
// constants.cpp (memory section), fit and checked by tests/calibration/calibrate.cpp on
// tests/calibration/memory_runs.json.
#include <algorithm>
#include <cmath>

#include "linkwise/enum_names.hpp"
#include "linkwise/error.hpp"
#include "linkwise/planner/framework_memory.hpp"
#include "linkwise/units.hpp"

namespace linkwise::planner {

namespace {

constexpr EnumNames<Framework, 8> kFrameworkNames{{
    {Framework::auto_, "auto"},
    {Framework::megatron_core, "megatron-core"},
    {Framework::nemo, "nemo"},
    {Framework::torchtitan, "torchtitan"},
    {Framework::deepspeed, "deepspeed"},
    {Framework::fsdp, "fsdp"},
    {Framework::hf_accelerate, "hf-accelerate"},
    {Framework::hai_llm, "hai-llm"},
}};
// "adam" is read as adamw (an alias, never written).
constexpr EnumNames<Optimizer, 5> kOptimizerNames{{
    {Optimizer::adamw, "adamw"},
    {Optimizer::adam8bit, "adam8bit"},
    {Optimizer::adafactor, "adafactor"},
    {Optimizer::sgd, "sgd"},
    {Optimizer::adamw, "adam"},
}};
constexpr EnumNames<Offload, 3> kOffloadNames{{
    {Offload::none, "none"},
    {Offload::optimizer, "optimizer"},
    {Offload::optimizer_and_params, "optimizer_and_params"},
}};

}  // namespace

std::string_view to_string(Framework f) noexcept { return enum_name(kFrameworkNames, f); }
std::string_view to_string(Optimizer o) noexcept { return enum_name(kOptimizerNames, o); }
std::string_view to_string(Offload o) noexcept { return enum_name(kOffloadNames, o); }

Framework parse_framework(const std::string& text, const std::string& field) {
  return parse_enum(kFrameworkNames, text, field);
}
Optimizer parse_optimizer(const std::string& text, const std::string& field) {
  return parse_enum(kOptimizerNames, text, field);
}
Offload parse_offload(const std::string& text, const std::string& field) {
  return parse_enum(kOffloadNames, text, field);
}

double optimizer_state_bytes(Optimizer o, Framework f) noexcept {
  switch (o) {
    case Optimizer::adamw: return f == Framework::hai_llm ? 8.0 : 12.0;
    case Optimizer::adam8bit: return 6.0;
    case Optimizer::adafactor: return 4.0;
    case Optimizer::sgd: return 8.0;
  }
  return 12.0;
}

StateBytes model_state_bytes(const PreparedModel& m, const Layout& l, double zero_group) noexcept {
  const double sw = l.zero >= 3 ? zero_group : 1.0, sg = l.zero >= 2 ? zero_group : 1.0,
               so = l.zero >= 1 ? zero_group : 1.0;
  const double opt = optimizer_state_bytes(m.optimizer, m.framework);
  StateBytes b{2.0 / sw, 2.0 / sg, opt / so};
  const bool fp16 = m.precision == Precision::fp16;
  if (!fsdp_family(m, l)) {
    if (planned_framework(m, l) == Framework::deepspeed) {
      // DeepSpeed: bf16 runs its BF16_Optimizer, which accumulates gradients in an fp32 buffer of
      // the whole local model (4 bytes per parameter, not sharded by ZeRO-1: BigScience tr11
      // chronicles-prequel, "Rebalancing layers"); fp16 keeps fp32 gradients of its partition.
      if (fp16) b.optimizer += 4.0 / so;
      else b.gradients = 2.0 / sg + 4.0 / sg;
    } else {
      // Megatron-Core (docs: distributed optimizer): bf16/fp8 keep fp32 main gradients in the DDP
      // buffer (6 + 12/d bytes per parameter with the distributed optimizer); fp16 keeps 16-bit
      // gradients and shards fp32 copies with the optimizer (4 + 16/d). hai-llm also keeps fp32
      // gradients for batch accumulation (DeepSeek-V3 report section 3.3.3).
      // With job.grad_reduce_dtype bf16 the buffer is 16-bit (Megatron-LM --grad-reduce-in-bf16).
      if (fp16) b.optimizer += 4.0 / so;
      else b.gradients = reduced_gradient_bytes(m, l) / sg;
    }
  }
  if (m.offload != Offload::none) {
    // ZeRO-Offload: the fp32 states and the gradients live in CPU memory. Each backward's gradients
    // leave the GPU bucket by bucket (DeepSpeed copies every reduced bucket to the host and
    // accumulates there); the GPU keeps only the reduce buckets (memory_model.cpp).
    b.optimizer = 0;
    b.gradients = 0;
    if (m.offload == Offload::optimizer_and_params) b.weights = 0;  // gathered per unit (overhead)
  }
  return b;
}

MemoryOverhead framework_overhead(const PreparedModel& m, const PreparedHardware& hw, const Layout& l,
                                  const PlannerConstants& k, double layer_params_local, double stage_params_local,
                                  double grads_local_bytes, double static_bytes, double dynamic_bytes) noexcept {
  MemoryOverhead o;
  o.context = hw.context_bytes;
  // NCCL: each communicator holds per-channel buffers to its ring/tree peers (NCCL_BUFFSIZE 4 MiB
  // for the Simple protocol plus LL/LL128 buffers); channels grow with the generation's links
  // (hw.nccl_channel_factor) and trees add peers as the group spans more nodes.
  auto comm = [&](double n) {
    if (n <= 1) return 0.0;
    return units::gb_to_bytes(k.nccl_gb_per_communicator) * hw.nccl_channel_factor * (1.0 + 0.1 * std::log2(n));
  };
  const bool training = m.kind != JobKind::inference;
  // Serving replicas are separate engines with no communicator between them, unless their experts
  // span them (attention data parallelism with EP: one engine whose expert group reaches across
  // the replicas' ranks); TP and the pipeline's neighbours hold theirs either way.
  const double expert_group = double(l.ep) * l.etp;
  const double dp_comm_group = training ? double(l.dp) * l.cp : (expert_group > l.tp ? expert_group : 1.0);
  // Hybrid sharding holds two data-parallel communicators: its shard group's and its replicas'.
  const double replicas = training ? double(l.zero_replicas()) : 1.0;
  o.nccl = comm(l.tp) + comm(dp_comm_group / replicas) + comm(replicas) + comm(l.cp) +
           (l.pp > 1 ? 2.0 * comm(2) + comm(2) : 0.0);
  double held = 0;  // buffers that live through the step (the allocator's static share)
  if (training) {
    if (l.zero == 3 && l.pp > 1 && m.framework == Framework::torchtitan) {
      // torchtitan with pipeline parallelism does not reshard after forward ("to avoid
      // per-microbatch all-gathers", parallelize_llama.py apply_fsdp), and FSDP2 accumulates the
      // unsharded gradients of the non-last micro-batches in its reduce dtype (fp32 by default:
      // FSDPParam.to_accumulated_grad_if_needed): the whole stage's 16-bit weights and fp32
      // gradients stay on every GPU through the step.
      o.held_weights = stage_params_local * 2.0;
      o.held_gradients = stage_params_local * reduced_gradient_bytes(m, l);
      held = o.held_weights + o.held_gradients;
      o.buffers = held;
    } else if (l.zero == 3) {
      // Two units gathered at once (the current layer and the prefetched next) in 16-bit, and the
      // current unit's unsharded gradients before their reduce-scatter (fp32 with FSDP mixed precision,
      // its reduce_dtype: bf16 under job.grad_reduce_dtype bf16).
      o.buffers = layer_params_local * (2.0 * 2.0 + reduced_gradient_bytes(m, l));
    } else if (planned_framework(m, l) == Framework::deepspeed) {
      // DeepSpeed ZeRO-1/2 reduce and all-gather buckets (reduce_bucket_size, allgather_bucket_size
      // default 5e8 elements; 16-bit), never above the local gradients.
      o.buffers = std::min(2.0 * kOffloadReduceBucketBytes, grads_local_bytes);
    }
  }
  // The caching allocator: nvidia-smi shows reserved segments, which exceed the live tensors by the
  // fragmentation of the short-lived ones (activations, logits, gathered weights) and a little of
  // the long-lived ones.
  // Serving engines size their KV pool by the bytes the weights hold, not the allocator's reserve
  // (vLLM's worker: torch's allocated bytes after loading; TensorRT-LLM's free memory after its
  // engine), and load the weights once: no static slack is counted.
  const double static_slack = training ? k.allocator_static_fraction * (static_bytes + held) : 0.0;
  o.allocator = k.allocator_dynamic_fraction * (dynamic_bytes + o.buffers - held) + static_slack;
  o.total = o.context + o.nccl + o.buffers + o.allocator;
  return o;
}

double gradient_reduce_cast_bytes(const PreparedModel& m, const Layout& l, double stage_params_local) noexcept {
  // DeepSpeed 0.6 to 0.14 (2022-04 to 2024-04; BigScience ran the 2022-02 branch it came from,
  // olruwase/bf16-updates-2): PipelineEngine._bf16_reduce_grads all-reduces the BF16_Optimizer's
  // flat fp32 gradients (get_grads_for_reduction), one tensor per parameter group, each above the
  // 5e8-element bucket, and engine.allreduce_bucket casts it to communication_data_type, bf16 unless
  // the config names another: a bf16 copy of the whole stage, 2 bytes per local parameter.
  // DeepSpeed 0.14.1 (PR 5338) reduces the per-parameter gradients in buckets instead.
  const bool bf16_optimizer = m.framework == Framework::deepspeed && m.precision == Precision::bf16 && l.zero <= 1;
  if (!bf16_optimizer || l.pp <= 1 || (m.kind != JobKind::pretrain && m.kind != JobKind::finetune) ||
      m.offload != Offload::none)
    return 0.0;
  return 2.0 * stage_params_local;
}

}  // namespace linkwise::planner
