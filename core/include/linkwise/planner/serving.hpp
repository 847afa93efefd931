// Inference serving engines (the optional `job.engine`) and the profiles that turn the decode and
// prefill rooflines into what each engine measures on its own published benchmarks
// (tests/calibration/inference_runs.json, docs/calibration.md "Inference engines"), plus the cost
// of QLoRA's 4-bit base weights, which are dequantised before every GEMM.
#pragma once

#include <string>
#include <string_view>

namespace linkwise::planner {

// auto_: the best published profile (TensorRT-LLM: highest output tokens/s on the shared rows of
// vLLM's and SGLang's own comparisons, and the largest published table to fit on).
enum class Engine { auto_, vllm, sglang, tensorrt_llm };

std::string_view to_string(Engine e) noexcept;
// Parse the JSON spelling; throw invalid_input naming `field` with the accepted values.
Engine parse_engine(const std::string& text, const std::string& field = "job.engine");
Engine resolve(Engine e) noexcept;  // auto_ -> the default engine

// What an engine achieves against the roofline, and the limits it schedules within.
struct EngineProfile {
  // Decode: fraction of the GPU's HBM peak achieved streaming weights and KV cache (fit).
  double decode_hbm_fraction = 0.8;
  // Prefill and decode GEMMs: fraction of the dense tensor peak at the job's precision (fit).
  double gemm_fraction = 0.7;
  // Fixed time per engine step not hidden behind the GPU (scheduler, sampling, input preparation,
  // launches outside CUDA graphs), seconds (fit).
  double step_overhead_s = 0;
  // Memory the engine may take for weights, activations and its KV pool. whole_card: a fraction
  // of the card (vLLM gpu_memory_utilization, SGLang mem_fraction_static); otherwise a fraction of
  // what is free after weights and activations (TensorRT-LLM kv_cache_free_gpu_mem_fraction).
  double memory_fraction = 0.9;
  bool memory_fraction_of_whole_card = true;
  // Scheduler limits: sequences decoded together (0: memory only) and tokens per engine step
  // (prefill chunks share steps with decodes).
  int max_batch = 0;
  double max_step_tokens = 8192;
  // KV blocks reserved for a request's full length at admission (TensorRT-LLM's
  // GUARANTEED_NO_EVICT) rather than allocated as it grows (vLLM, SGLang: paged on demand).
  bool reserves_full_length = false;
};

const EngineProfile& engine_profile(Engine e) noexcept;  // auto_ resolves to the default

// QLoRA (bitsandbytes NF4): bytes of HBM traffic per base weight each time it is dequantised
// before a GEMM: read the packed 4-bit weight with its block scales (4.127 bits, QLoRA section 3)
// and write the bf16 copy the GEMM then reads.
inline constexpr double kNf4DequantBytesPerWeight = 4.127 / 8.0 + 2.0;

}  // namespace linkwise::planner
