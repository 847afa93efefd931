// Engine profiles (serving.hpp). The fractions and per-step overheads are fit by
// `linkwise_calibrate_inference --fit` on each engine's own published benchmarks (the fit rows of
// tests/calibration/inference_runs.json) and checked on rows never fit; the scheduler limits are
// the engines' documented defaults.
#include "linkwise/planner/serving.hpp"

#include "linkwise/enum_names.hpp"

namespace linkwise::planner {

namespace {
constexpr EnumNames<Engine, 4> kEngineNames{{
    {Engine::auto_, "auto"},
    {Engine::vllm, "vllm"},
    {Engine::sglang, "sglang"},
    {Engine::tensorrt_llm, "tensorrt-llm"},
}};
}  // namespace

std::string_view to_string(Engine e) noexcept { return enum_name(kEngineNames, e); }
Engine parse_engine(const std::string& text, const std::string& field) { return parse_enum(kEngineNames, text, field); }

std::string_view describe_kv_pool(KvPoolRule rule) noexcept {
  switch (rule) {
    case KvPoolRule::card_less_weights_and_activations:
      return "of the card, less weights, activations and communicators";
    case KvPoolRule::free_at_start_less_weights: return "of the card's free memory at start, less weights";
    case KvPoolRule::free_after_load: return "of the memory free after weights and activations";
  }
  return "";
}

Engine resolve(Engine e, const Gpu& gpu) noexcept {
  if (e != Engine::auto_) return e;
  return gpu.vendor == "nvidia" ? Engine::tensorrt_llm : Engine::vllm;
}

std::string engine_unavailable_reason(Engine e, const Gpu& gpu) {
  if (e == Engine::tensorrt_llm && gpu.vendor != "nvidia")
    return "job.engine tensorrt-llm runs on NVIDIA GPUs only, not on " + gpu.id + " (" + gpu.vendor +
           "): vllm, sglang or auto (vLLM on AMD) run there";
  return "";
}

namespace {

EngineProfile make_trtllm() {
  EngineProfile p;
  // Fractions fit on 50 rows of its performance overview (Llama 3.1 8B and 3.3 70B, FP8 on H100 and
  // H200, FP4 on B200); the fixed time per layer per step on all its 187 fit rows, where InferenceX's
  // gpt-oss-120b B200 sweep at 4-128 requests (31 rows) is what shows it; alternated with the MoE
  // constants to a fixed point: 37.5 us per layer per step and no further per-step overhead (at its
  // lower bound: CUDA graphs and the C++ runtime hide the host work), the decode fraction at its
  // upper bound, 0.95 of the HBM peak; Blackwell FP4 reaches 0.76 of the Hopper FP8 fractions.
  p.decode_hbm_fraction = 0.950;
  p.gemm_fraction = 0.705;
  p.step_overhead_s = 0;
  p.blackwell_scale = 0.760;
  p.layer_step_s = 37.5e-6;
  // TensorRT-LLM LLM API / trtllm-bench defaults: kv_cache_free_gpu_mem_fraction 0.90 of the
  // memory free after weights, max_batch_size 2048, max_num_tokens 8192, capacity scheduler
  // GUARANTEED_NO_EVICT (a request's whole length is reserved when it is admitted).
  p.memory_fraction = 0.90;
  p.kv_pool_rule = KvPoolRule::free_after_load;
  p.max_batch = 2048;
  p.max_step_tokens = 8192;
  p.reserves_full_length = true;
  return p;
}

// vLLM and SGLang publish too few tables to fit more than their decode fraction and a fixed time
// per layer per step: the GEMM fraction, per-step overhead and Blackwell scale are TensorRT-LLM's;
// both allocate KV blocks as sequences grow (paged, nothing reserved up front) under a token budget
// of 8192 per step. The decode fraction is fit on their dense high-concurrency rows, the per-layer
// step time on InferenceX's late-2025 sweeps at 4-128 concurrent requests, where it shows
// (docs/calibration.md "Per-layer step time of the serving engines").
EngineProfile paged_engine(double decode_hbm_fraction, double layer_step_s) {
  EngineProfile p = make_trtllm();
  p.decode_hbm_fraction = decode_hbm_fraction;
  p.layer_step_s = layer_step_s;
  p.reserves_full_length = false;
  return p;
}

EngineProfile make_vllm() {
  // Two published dense fit rows, vLLM 0.6.0's Llama 3.1 8B on ShareGPT (A100 in the SGLang team's
  // comparison, H100 in Lambda's report; the 70B and 405B rows of both are check rows), and
  // InferenceX's gpt-oss-120b rows on H100, H200 and B200 (vLLM 0.13.0), whose Hopper rows stream
  // the MXFP4 experts as stored. No ROCm rows: on AMD Instinct the CUDA figures.
  EngineProfile p = paged_engine(0.510, 37.5e-6);
  p.streams_stored_fp4_experts = true;
  // Defaults of vLLM 0.6 (the version of the published rows): gpu_memory_utilization 0.9 of the
  // card, max_num_seqs 256. The 8192-token step budget is V1's (max_num_batched_tokens for the API
  // server on large GPUs), a later default than the rows'; 0.6 ran them without chunked prefill.
  p.memory_fraction = 0.90;
  p.kv_pool_rule = KvPoolRule::card_less_weights_and_activations;
  p.max_batch = 256;
  return p;
}

EngineProfile make_sglang() {
  // One dense fit row (the decode fraction absorbs what an uncapped batch over-predicts) and
  // InferenceX's DeepSeek-R1 FP8 rows on H200, B200, MI300X, MI325X and MI355X (SGLang 0.5.5-0.5.6),
  // whose ROCm builds (AITER kernels, HIP graphs) have figures of their own per generation: a layer
  // step 10x (CDNA 3) and 5x (CDNA 4) the CUDA build's. CDNA 4's fraction factor sits at the fit's
  // bound, 0.95 of the HBM peak: MI355X gains more from 4 to 64 requests than the model's bytes say.
  EngineProfile p = paged_engine(0.400, 37.5e-6);
  constexpr std::string_view kInferenceX = "SGLang 0.5.5 serving DeepSeek-R1 FP8 at TP8 (InferenceX)";
  p.cdna3 = {1.545, 0.375e-3, true, kInferenceX};
  p.cdna4 = {2.375, 0.175e-3, true, kInferenceX};
  // SGLang server defaults (server_args.py): mem_fraction_static 0.88 at TP 1, 0.87 at 2-3, 0.85 at
  // 4-7, 0.81 at 8-15, 0.79 from 16 (larger groups keep more memory for communication buffers and
  // CUDA graphs); running requests bounded by the pool, chunked_prefill_size 8192.
  p.memory_fraction = 0.88;
  p.memory_fraction_from_tp = {{{16, 0.79}, {8, 0.81}, {4, 0.85}, {2, 0.87}}};
  p.kv_pool_rule = KvPoolRule::free_at_start_less_weights;
  p.max_batch = 0;
  return p;
}

}  // namespace

double memory_fraction(const EngineProfile& engine, int tp) noexcept {
  for (const auto& [min_tp, fraction] : engine.memory_fraction_from_tp)
    if (min_tp > 0 && tp >= min_tp) return fraction;
  return engine.memory_fraction;
}

int serving_default_etp(int tp, int ep) noexcept { return ep >= 1 && ep <= tp && tp % ep == 0 ? tp / ep : 1; }

const RocmTerms* rocm_terms(const EngineProfile& engine, Architecture architecture) noexcept {
  if (architecture != Architecture::cdna3 && architecture != Architecture::cdna4) return nullptr;
  const RocmTerms& own = architecture == Architecture::cdna3 ? engine.cdna3 : engine.cdna4;
  const RocmTerms& other = architecture == Architecture::cdna3 ? engine.cdna4 : engine.cdna3;
  return own.fit ? &own : other.fit ? &other : nullptr;
}

EngineGpuTerms engine_gpu_terms(const EngineProfile& engine, Architecture architecture) noexcept {
  if (const RocmTerms* rocm = rocm_terms(engine, architecture)) return {rocm->fraction_scale, rocm->layer_step_s};
  return {architecture == Architecture::blackwell ? engine.blackwell_scale : 1.0, engine.layer_step_s};
}

bool engine_fit_on(const EngineProfile& engine, Architecture architecture) noexcept {
  switch (architecture) {
    case Architecture::ampere:
    case Architecture::hopper:
    case Architecture::blackwell: return true;
    case Architecture::cdna3: return engine.cdna3.fit;
    case Architecture::cdna4: return engine.cdna4.fit;
    default: return false;
  }
}

EngineProfile with_batch_limit(EngineProfile profile, std::optional<int> batch_limit) noexcept {
  if (batch_limit) profile.max_batch = *batch_limit;
  return profile;
}

const EngineProfile& engine_profile(Engine e) noexcept {
  static const EngineProfile vllm = make_vllm(), sglang = make_sglang(), trtllm = make_trtllm();
  switch (e) {
    case Engine::vllm: return vllm;
    case Engine::sglang: return sglang;
    default: return trtllm;
  }
}

}  // namespace linkwise::planner
