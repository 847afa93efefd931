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

// CPU offload keeps the gradients on the host; on the GPU stays the reduce bucket they pass through:
// DeepSpeed's zero_optimization.reduce_bucket_size, 5e8 elements by default (DeepSpeed config docs),
// in 16 bits.
inline constexpr double kOffloadReduceBucketBytes = 5e8 * 2.0;

}  // namespace linkwise::planner
