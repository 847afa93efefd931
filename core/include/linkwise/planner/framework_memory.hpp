// Framework memory terms (framework_memory.cpp), used by estimate_memory(), and which runtime a layout
// runs under (fsdp_family, megatron_runtime; their job-level rules in framework.hpp), which estimate_time() asks too.
#pragma once

#include "linkwise/planner/engine.hpp"

namespace linkwise::planner {

struct StateBytes {  // bytes per local parameter after ZeRO sharding
  double weights = 0, gradients = 0, optimizer = 0;
};

// True where the layout runs under PyTorch FSDP-style sharding (ZeRO-3, or an FSDP framework).
// (inline: the search's memory estimate asks it for every layout)
inline bool fsdp_family(const PreparedModel& m, const Layout& l) noexcept {
  if (l.zero == 3) return true;
  return m.framework == Framework::fsdp || m.framework == Framework::torchtitan ||
         m.framework == Framework::hf_accelerate;
}

// The model's job at a ZeRO stage (the search asks per stage, before a layout exists).
inline bool megatron_runtime(const PreparedModel& m, int zero) noexcept {
  return megatron_runtime(m.framework, zero, m.dequant_4bit);
}
inline bool megatron_runtime(const PreparedModel& m, const Layout& l) noexcept { return megatron_runtime(m, l.zero); }

// DeepSpeed's pipeline engine (framework.hpp) for a model's job and layout.
inline bool deepspeed_pipeline(const PreparedModel& m, const Layout& l) noexcept {
  return deepspeed_pipeline(m.framework, l.pp);
}

// Whether a layout runs a Llama-family block op by op in eager PyTorch: a PyTorch stack without
// torch.compile, as the job states it or as `auto` plans it (QLoRA as PEFT below ZeRO-3; `auto`'s
// ZeRO-3 is FSDP with compiled blocks, below it Megatron-Core's fused kernels).
inline bool eager_llama_block(const PreparedModel& m, int zero) noexcept {
  if (!m.uncompiled_llama_block) return false;
  if (m.framework == Framework::auto_) return m.dequant_4bit && zero < 3;
  // Megatron-Core, NeMo, DeepSpeed's Megatron and HAI-LLM run fused kernels.
  return m.framework == Framework::fsdp || m.framework == Framework::torchtitan ||
         m.framework == Framework::hf_accelerate;
}

// The stack a layout is planned as (framework.hpp planned_framework) for a model's job.
inline Framework planned_framework(const PreparedModel& m, const Layout& l) noexcept {
  return planned_framework(m.framework, l.zero, m.dequant_4bit, m.offload == Offload::optimizer);
}

// Whether ZeRO-2 gathers the parameters for every micro-batch: PyTorch FSDP's SHARD_GRAD_OP under
// fsdp, torchtitan and Accelerate's FSDP plugin gathers them before each micro-batch's forward and
// frees them after its backward (FSDP's ShardingStrategy; FSDP2's reshard_after_forward=False).
// Not torchtitan's pipeline, whose stages keep them until the last micro-batch (PyTorch's
// PipelineStage turns off resharding after backward before it; the memory model's torchtitan rule),
// nor DeepSpeed's ZeRO-2 and Megatron, which gather the updated weights once a step.
inline bool fsdp_regathers_per_micro_batch(const PreparedModel& m, const Layout& l) noexcept {
  const Framework f = planned_framework(m, l);
  if (l.zero != 2) return false;
  if (f == Framework::torchtitan) return l.pp == 1;
  return f == Framework::fsdp || f == Framework::hf_accelerate;
}

// Hugging Face Accelerate at ZeRO-0 runs PyTorch DDP; at ZeRO 1-3 its FSDP plugin (what its
// gradient dtype and bucket follow).
inline bool accelerate_ddp(const PreparedModel& m, const Layout& l) noexcept {
  return planned_framework(m, l) == Framework::hf_accelerate && l.zero == 0;
}

// Bytes per parameter of the gradients as the data-parallel reduction carries them: one rule for
// the memory model's gradient buffers and the time model's reduce-scatter / all-reduce, by the stack
// the layout is planned as. 16-bit for fp16 training (fp16 gradients), a LoRA job's adapters,
// DeepSpeed (its bf16 optimizer casts the fp32 accumulation to bf16 before the all-reduce;
// communication_data_type defaults to the training dtype, DeepSpeed PR #3370) and Hugging Face
// Accelerate's FSDP unless the job states the dtype (FullyShardedDataParallelPlugin.set_mixed_precision
// sets param, reduce and buffer dtypes alike to the mixed-precision dtype); otherwise the gradient
// buffer's dtype,
// job.grad_reduce_dtype: fp32 by default (Megatron-Core's grad_reduce_in_fp32, which reduces the
// buffer in its own dtype; FSDP's reduce_dtype; Accelerate's DDP, whose gradients are the fp32
// parameters'; hai-llm's fp32 accumulation, DeepSeek-V3 report section 3.3.3).
inline double reduced_gradient_bytes(const PreparedModel& m, const Layout& l) noexcept {
  const Framework f = planned_framework(m, l);
  if (m.precision == Precision::fp16 || m.kind == JobKind::lora || f == Framework::deepspeed) return 2.0;
  if (f == Framework::hf_accelerate && !accelerate_ddp(m, l) && !m.grad_reduce_stated) return 2.0;
  return m.grad_reduce_bf16 ? 2.0 : 4.0;
}

// Model states per local parameter for the framework, optimizer, precision and offload of `m`.
StateBytes model_state_bytes(const PreparedModel& m, const Layout& l, double zero_group) noexcept;

struct MemoryOverhead {  // bytes per GPU beyond the model's tensors
  double context = 0, nccl = 0, buffers = 0, allocator = 0, total = 0;
  // Of `buffers`: unsharded copies of weights and gradients held through the whole step (torchtitan's
  // pipeline with FSDP2), which the plan reports under weights and gradients, not overhead.
  double held_weights = 0, held_gradients = 0;
};

// static_bytes: weights, gradients, optimizer states; dynamic_bytes: activations, logits, KV cache.
MemoryOverhead framework_overhead(const PreparedModel& m, const PreparedHardware& hw, const Layout& l,
                                  const PlannerConstants& k, double layer_params_local, double stage_params_local,
                                  double grads_local_bytes, double static_bytes, double dynamic_bytes) noexcept;

// Bytes of a transient the framework allocates at the gradient reduction, after the activations
// are freed (0 where none beyond framework_overhead's buckets): DeepSpeed's pipeline engine with
// its BF16_Optimizer casts the stage's whole flat fp32 gradient to bf16 before the all-reduce.
double gradient_reduce_cast_bytes(const PreparedModel& m, const Layout& l, double stage_params_local) noexcept;

}  // namespace linkwise::planner
