// Inference serving engines (the optional `job.engine`) and the profiles that turn the decode and
// prefill rooflines into what each engine measures on its own published benchmarks
// (tests/calibration/inference_runs.json, docs/calibration.md "Inference engines"), plus the cost
// of QLoRA's 4-bit base weights, which are dequantised before every GEMM.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "linkwise/catalog.hpp"

namespace linkwise::planner {

// auto_: the best published profile the GPU can run (TensorRT-LLM on NVIDIA: highest output tokens/s
// on the shared rows of vLLM's and SGLang's own comparisons, and the largest published table to fit
// on; vLLM on AMD Instinct, the engine AMD ships and benchmarks for ROCm).
enum class Engine { auto_, vllm, sglang, tensorrt_llm };

std::string_view to_string(Engine e) noexcept;
// Parse the JSON spelling; throw invalid_input naming `field` with the accepted values.
Engine parse_engine(const std::string& text, const std::string& field = "job.engine");
// The engine a job runs on `gpu`: auto_ -> the best published one its vendor's GPUs run.
Engine resolve(Engine e, const Gpu& gpu) noexcept;
// Why `gpu` cannot run engine `e` (TensorRT-LLM is CUDA-only); empty when it can.
std::string engine_unavailable_reason(Engine e, const Gpu& gpu);

// How an engine sizes its KV pool from its memory_fraction, each engine's own accounting at start-up.
enum class KvPoolRule {
  // vLLM V1 as of 0.10-0.11, the versions of the GPUStack rows (v1/worker/gpu_worker.py: init_device
  // takes its memory snapshot before the communicators start; determine_available_memory):
  // gpu_memory_utilization of the card, less the weights, the profiled peak of torch's allocated
  // activations and the memory outside torch that appeared after the snapshot (communicators). The
  // CUDA context predates the snapshot and is not counted; nor is the allocator's reserve.
  card_less_weights_and_activations,
  // SGLang (model_runner profile_max_num_token): mem_fraction_static of the memory free after its
  // communicators start (the card less the CUDA context and NCCL buffers) holds the weights and the
  // pool; activations and CUDA graphs live in the rest.
  free_at_start_less_weights,
  // TensorRT-LLM: kv_cache_free_gpu_mem_fraction of what is free once the weights, activations,
  // context and communicators hold theirs.
  free_after_load,
};

// The pool's rule in words, for answers that say why a sequence does not fit ("90% of the card ...").
std::string_view describe_kv_pool(KvPoolRule rule) noexcept;

// A ROCm build's figures on one AMD Instinct generation (AITER/hipBLASLt kernels, HIP graphs): a
// factor on the profile's fractions and its own fixed time per layer per step; fit on the engine's
// rows of that generation, where it has any (fit: false keeps the CUDA figures).
struct RocmTerms {
  double fraction_scale = 1.0;
  double layer_step_s = 0;
  bool fit = false;
  std::string_view basis;  // the runs it is fit on, for the plan's warning on other workloads
};

// What an engine achieves against the roofline, and the limits it schedules within.
struct EngineProfile {
  // Decode: fraction of the GPU's HBM peak achieved streaming weights and KV cache (fit).
  double decode_hbm_fraction = 0.8;
  // Prefill and decode GEMMs: fraction of the dense tensor peak at the job's precision (fit).
  double gemm_fraction = 0.7;
  // On Blackwell both fractions are multiplied by this (fit on the engine's B200 rows: its FP4
  // kernels and 8 TB/s HBM reach less of their peaks than Hopper's FP8 ones do).
  double blackwell_scale = 1.0;
  // Fixed time per engine step not hidden behind the GPU (scheduler, sampling, input preparation,
  // launches outside CUDA graphs), seconds (fit).
  double step_overhead_s = 0;
  // Fixed GPU time per transformer layer per engine step, whatever the batch: a layer runs tens of
  // small kernels (norms, attention, router, quantisation, all-reduce) whose launch and tail
  // latency a CUDA or HIP graph does not remove; it sets the pace of decode at low concurrency
  // (fit on each engine's runs at 4-128 concurrent requests; docs/calibration.md "Per-layer step
  // time of the serving engines").
  double layer_step_s = 0;
  // On AMD Instinct, per generation (engine_gpu_terms).
  RocmTerms cdna3, cdna4;
  // 4-bit experts on a GPU without FP4 tensor cores: decode streams their stored 4.25 bits (true;
  // vLLM's MXFP4 kernels on Hopper, InferenceX's gpt-oss rows), or an fp8 copy's byte per weight
  // (false; what TensorRT-LLM's published Hopper gpt-oss runs come to, kWeightOnlyFp4StreamBytes).
  bool streams_stored_fp4_experts = false;
  // The engine's memory setting (vLLM gpu_memory_utilization, SGLang mem_fraction_static,
  // TensorRT-LLM kv_cache_free_gpu_mem_fraction); kv_pool_rule says what the fraction applies to
  // and what the KV pool is left from.
  double memory_fraction = 0.9;
  KvPoolRule kv_pool_rule = KvPoolRule::card_less_weights_and_activations;
  // Lower memory_fraction from a tensor-parallel size on, largest first ({min_tp, fraction}; SGLang's
  // server defaults); entries with min_tp 0 are unused. Read through memory_fraction(profile, tp).
  std::array<std::pair<int, double>, 4> memory_fraction_from_tp{};
  // Scheduler limits: sequences decoded together (0: memory only) and tokens per engine step
  // (prefill chunks share steps with decodes).
  int max_batch = 0;
  double max_step_tokens = 8192;
  // KV blocks reserved for a request's full length at admission (TensorRT-LLM's
  // GUARANTEED_NO_EVICT) rather than allocated as it grows (vLLM, SGLang: paged on demand).
  bool reserves_full_length = false;
};

const EngineProfile& engine_profile(Engine e) noexcept;  // of a resolved engine (auto_: TensorRT-LLM's)

// What a profile's GPU-dependent terms come to on one GPU generation: the factor on its decode and
// GEMM fractions (Blackwell, AMD Instinct) and its fixed time per layer per engine step. A CDNA
// generation without figures of its own takes the other CDNA generation's, else the CUDA figures.
struct EngineGpuTerms {
  double fraction_scale = 1.0;
  double layer_step_s = 0;
};
EngineGpuTerms engine_gpu_terms(const EngineProfile& engine, Architecture architecture) noexcept;
// The ROCm figures that apply on a CDNA generation: its own where fit, else the other CDNA
// generation's where fit; null on other generations and where neither is.
const RocmTerms* rocm_terms(const EngineProfile& engine, Architecture architecture) noexcept;
// Whether the engine's figures on this generation come from its own published runs there
// (Ampere, Hopper, Blackwell: the profile's fit rows; CDNA: its RocmTerms).
bool engine_fit_on(const EngineProfile& engine, Architecture architecture) noexcept;

// A profile with the job's own sequence cap (job.engine_batch_limit: vLLM --max-num-seqs, SGLang
// --max-running-requests, TensorRT-LLM --max_batch_size) in place of its default, where the job sets one.
EngineProfile with_batch_limit(EngineProfile profile, std::optional<int> batch_limit) noexcept;

// The engine's memory_fraction at a tensor-parallel size (memory_fraction_from_tp).
double memory_fraction(const EngineProfile& engine, int tp) noexcept;

// Where the serving engines put the experts when the layout does not say (layout.etp omitted):
// each expert split over the TP GPUs that expert parallelism leaves it, etp = tp / ep. vLLM and
// SGLang shard every expert over the TP ranks unless expert parallelism is enabled (vLLM
// --enable-expert-parallel, SGLang --ep-size), TensorRT-LLM sets moe_tp_size = tp / moe_ep_size.
// Expert parallelism wider than the TP group (attention data parallelism) keeps experts whole.
int serving_default_etp(int tp, int ep) noexcept;

// OCP Microscaling (MX) FP4, the format of gpt-oss's released experts: 4-bit elements with one
// 8-bit scale per 32 (OCP Microscaling Formats specification v1.0): 4.25 bits per weight.
inline constexpr double kMxfp4BytesPerWeight = 4.25 / 8.0;
// Bytes per weight at which a decode step streams 4-bit experts through weight-only kernels (no FP4
// tensor cores): an fp8 copy's (time_model.cpp; docs/calibration.md "MXFP4 experts").
inline constexpr double kWeightOnlyFp4StreamBytes = 1.0;

// QLoRA (bitsandbytes NF4): bytes of HBM traffic per base weight each time it is dequantised
// before a GEMM: read the packed 4-bit weight with its block scales (4.127 bits, QLoRA section 3)
// and write the bf16 copy the GEMM then reads.
inline constexpr double kNf4DequantBytesPerWeight = 4.127 / 8.0 + 2.0;
// The fraction of the HBM peak that traffic moves at: bitsandbytes' dequantize kernels and the
// launches around them are far from the roofline. Fit on LitGPT's resource tables (commit 8641822,
// 2023-10-20; A100-SXM4-40GB, bitsandbytes 0.41.1, micro-batch 1): Llama 2 7B LoRA 2.36 min per 1k
// iterations, bnb.nf4 3.68 min, i.e. 79 ms more per iteration for 2 dequantisations of 6.48 B
// weights. Checked on the same table's 13B (-19%), StableLM 3B (+13%) and phi-1.5 (+64%) rows
// (tests/core/test_planner_serving.cpp).
inline constexpr double kNf4DequantHbmFraction = 0.265;

}  // namespace linkwise::planner
