// What the training framework holds beyond the model's tensors, and how it runs: the optional
// `job.framework`, `job.optimizer` and `job.offload` fields. Memory terms (framework_memory.cpp)
// follow each framework's documented buffers; time profiles (collectives.cpp) its documented
// overlap. The default (`auto`) is Megatron-Core's accounting for ZeRO 0-2 and PyTorch FSDP's for
// ZeRO-3: the best published stack for each.
#pragma once

#include <string>
#include <string_view>

namespace linkwise::planner {

// hai_llm: DeepSeek's in-house framework as the DeepSeek-V3 report (arXiv 2412.19437) describes it:
// RMSNorm and MLA up-projections recomputed in backward (section 3.2.3), Linear inputs cached in
// FP8 (E5M6 after attention), only SwiGLU's FP8 inputs kept, AdamW moments in BF16 (section 3.3.3).
enum class Framework { auto_, megatron_core, nemo, torchtitan, deepspeed, fsdp, hf_accelerate, hai_llm };
enum class Optimizer { adamw, adam8bit, adafactor, sgd };
enum class Offload { none, optimizer, optimizer_and_params };

std::string_view to_string(Framework f) noexcept;
std::string_view to_string(Optimizer o) noexcept;
std::string_view to_string(Offload o) noexcept;
// Parse the JSON spelling; throw invalid_input naming `field` with the accepted values.
Framework parse_framework(const std::string& text, const std::string& field = "job.framework");
Optimizer parse_optimizer(const std::string& text, const std::string& field = "job.optimizer");
Offload parse_offload(const std::string& text, const std::string& field = "job.offload");

// Bytes per local parameter (after TP/PP, before ZeRO sharding) of the optimizer states the
// optimizer keeps, fp32 master weights included: AdamW 12 (master, momentum, variance; ZeRO paper
// K = 12), 8-bit Adam 6 (master + two 8-bit moments, Dettmers et al. 2022), Adafactor 4 (master;
// factored second moments are O(rows + cols), Shazeer & Stern 2018), SGD with momentum 8.
// hai-llm keeps AdamW's moments in BF16 beside the fp32 master (4 + 2 + 2 = 8; report section 3.3.3).
double optimizer_state_bytes(Optimizer o, Framework f = Framework::auto_) noexcept;

// True where the layout runs under Megatron-Core's runtime (its schedules, buffers and Transformer
// Engine layers): megatron-core, nemo, and the default profile below ZeRO-3 (above). QLoRA's
// NF4 base runs under PEFT/Transformers whatever the profile (workload.cpp refuses Megatron for it).
inline bool megatron_runtime(Framework f, int zero, bool qlora = false) noexcept {
  if (qlora) return false;
  return f == Framework::megatron_core || f == Framework::nemo || (f == Framework::auto_ && zero < 3);
}
// The stack a layout is planned as: the job's framework, and for the default (auto) Megatron-Core
// below ZeRO-3, PyTorch FSDP (with compiled blocks) at ZeRO-3 (DeepSpeed where the job offloads the
// optimizer alone: ZeRO-Offload is the stack that does), and for QLoRA Hugging Face Accelerate below
// ZeRO-3 (what a plan reports as `framework`).
inline Framework planned_framework(Framework f, int zero, bool qlora = false, bool optimizer_offload = false) noexcept {
  if (f != Framework::auto_) return f;
  if (megatron_runtime(f, zero, qlora)) return Framework::megatron_core;
  if (qlora && zero < 3) return Framework::hf_accelerate;
  return optimizer_offload ? Framework::deepspeed : Framework::fsdp;
}

// True where the layout runs under DeepSpeed's pipeline engine (PipelineEngine, as Megatron-DeepSpeed
// drives it): job.framework deepspeed with pp > 1 (workload.cpp holds it to ZeRO 0-1 there).
inline bool deepspeed_pipeline(Framework f, int pp) noexcept { return f == Framework::deepspeed && pp > 1; }

// DeepSpeed's zero_optimization.reduce_bucket_size, 5e8 elements by default (DeepSpeed config docs):
// the bucket its ZeRO-1/2 gradient reduction runs in. CPU offload keeps the gradients on the host;
// on the GPU stays that bucket, in 16 bits.
inline constexpr double kDeepSpeedReduceBucketElements = 5e8;
inline constexpr double kOffloadReduceBucketBytes = kDeepSpeedReduceBucketElements * 2.0;
// PyTorch DDP's gradient bucket, bucket_cap_mb = 25 (torch.nn.parallel.DistributedDataParallel).
inline constexpr double kTorchDdpBucketBytes = 25.0 * 1024 * 1024;

}  // namespace linkwise::planner
