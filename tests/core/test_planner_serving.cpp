#include <algorithm>
// Serving realism (issue 11, part 6): engine profiles, max-throughput mode, TTFT under load, and
// QLoRA's dequantisation cost, through the JSON contract every front end uses.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner.hpp"
#include "planner_test_util.hpp"

using namespace linkwise;
using nlohmann::json;

namespace {

Catalog serving_catalog() {
  return planner_test::one_node_catalog(planner_test::h100_80(), "aws", "p5.48xlarge", 3200, 98.3);
}

json serve(const json& concurrent, const std::string& engine = "") {
  json doc = json::parse(R"({
    "model": {"preset": "llama3.1-8b"},
    "job": {"kind": "inference", "prompt_len": 1024, "output_len": 512, "precision": "bf16"},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1},
    "layout": {"tp": 1, "pp": 1, "dp": 8}})");
  doc["job"]["concurrent"] = concurrent;
  if (!engine.empty()) doc["job"]["engine"] = engine;
  return doc;
}

std::string failing_field(const json& doc) {
  try {
    planner::plan_json(doc, serving_catalog());
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    return e.field();
  }
  return "";
}

}  // namespace

TEST_CASE("serving engines: a lower decode bandwidth fraction makes decode slower by about its ratio",
          "[planner][serving]") {
  const Catalog catalog = serving_catalog();
  const json trt = planner::plan_json(serve(64, "tensorrt-llm"), catalog);
  const json vllm = planner::plan_json(serve(64, "vllm"), catalog);
  const json dflt = planner::plan_json(serve(64), catalog);
  CHECK(trt["engine"] == "tensorrt-llm");
  CHECK(vllm["engine"] == "vllm");
  CHECK(dflt["engine"] == "tensorrt-llm");  // the default: the best published profile
  CHECK(dflt["tpot_s"].get<double>() == Approx(trt["tpot_s"].get<double>()));
  const planner::EngineProfile& pt = planner::engine_profile(planner::Engine::tensorrt_llm);
  const planner::EngineProfile& pv = planner::engine_profile(planner::Engine::vllm);
  REQUIRE(pv.decode_hbm_fraction < pt.decode_hbm_fraction);
  // 8 sequences per GPU of an 8B model: decode streams weights and KV cache, so the step less each
  // engine's fixed time for its 32 layers scales with the inverse of the fraction (the GEMM FLOPs
  // at the same fraction of peak add a little).
  CHECK(vllm["tpot_s"].get<double>() > trt["tpot_s"].get<double>());
  const double streamed_vllm = vllm["tpot_s"].get<double>() - 32 * pv.layer_step_s,
               streamed_trt = trt["tpot_s"].get<double>() - 32 * pt.layer_step_s;
  CHECK(streamed_vllm / streamed_trt == Approx(pt.decode_hbm_fraction / pv.decode_hbm_fraction).epsilon(0.15));
  CHECK(vllm["tokens_per_s"].get<double>() < trt["tokens_per_s"].get<double>());
}

TEST_CASE("max-throughput mode fills the engine's KV pool to within one request", "[planner][serving]") {
  const Catalog catalog = serving_catalog();
  json long_prompts = serve("max", "vllm");  // 8k prompts: the pool binds before max_num_seqs
  long_prompts["job"]["prompt_len"] = 8192;
  const json p = planner::plan_json(long_prompts, catalog);
  REQUIRE(p["fits"] == true);
  const long long concurrent = p["concurrent"].get<long long>();
  CHECK(concurrent == p["max_concurrent"].get<long long>());
  const double dp = 8;
  const double per_replica = static_cast<double>(concurrent) / dp;
  REQUIRE(per_replica >= 1);
  const json& mem = p["memory_gb"];
  const double per_request = mem["kv_cache"].get<double>() / per_replica;
  // vLLM counts weights, activations and KV cache against gpu_memory_utilization of the card; the
  // CUDA context and the allocator's reserve (the overhead line, at TP 1 nothing else) fall outside.
  const double vllm_limit =
      planner::engine_profile(planner::Engine::vllm).memory_fraction * mem["capacity"].get<double>();
  const double counted = mem["total"].get<double>() - mem["overhead"].get<double>();
  CHECK(counted <= vllm_limit * (1 + 1e-9));
  REQUIRE(per_replica < planner::engine_profile(planner::Engine::vllm).max_batch);
  CHECK(p["max_concurrent_limit"] == "kv_pool");
  CHECK(counted + 1.01 * per_request > vllm_limit);
  CHECK(mem["total"].get<double>() > vllm_limit);  // the context is outside its share
  // An explicit concurrency reports the same limit, and max mode serves more than one at a time does.
  json eight = long_prompts;
  eight["job"]["concurrent"] = 8;
  const json one = planner::plan_json(eight, catalog);
  CHECK(one["max_concurrent"].get<long long>() == concurrent);
  CHECK(p["tokens_per_s"].get<double>() > one["tokens_per_s"].get<double>());
  // Short requests: the pool would hold more than vLLM's max_num_seqs, so the batch limit sets it
  // (KV memory left over), and the plan says which limit applied.
  json short_requests = serve("max", "vllm");
  short_requests["job"]["prompt_len"] = 128;
  short_requests["job"]["output_len"] = 128;
  const json capped = planner::plan_json(short_requests, catalog);
  CHECK(capped["max_concurrent"].get<long long>() == 8 * planner::engine_profile(planner::Engine::vllm).max_batch);
  CHECK(capped["max_concurrent_limit"] == "engine_batch_limit");

  // SGLang (no batch cap): mem_fraction_static of what is free at start (the card less the CUDA
  // context; at TP 1 no communicator) holds the weights and the pool alone, activations outside it.
  json sglang_doc = long_prompts;
  sglang_doc["job"]["engine"] = "sglang";
  const json s = planner::plan_json(sglang_doc, catalog);
  const json& sm = s["memory_gb"];
  const double s_fraction = planner::engine_profile(planner::Engine::sglang).memory_fraction;
  const double s_static = sm["weights"].get<double>() + sm["kv_cache"].get<double>();
  const double s_per_request = sm["kv_cache"].get<double>() / (s["concurrent"].get<double>() / dp);
  const planner::Workload sglang_workload = planner::parse_workload(sglang_doc, catalog);
  const double context_gb = planner::prepare_hardware(*sglang_workload.hardware, sglang_workload.job,
                                                      planner::default_constants(), nullptr, false)
                                .context_bytes /
                            1e9;
  const double s_limit = s_fraction * (sm["capacity"].get<double>() - context_gb);
  CHECK(s_static <= s_limit * (1 + 1e-9));
  CHECK(s_static + 1.01 * s_per_request > s_limit);
}

TEST_CASE("max-throughput mode is tight only where the memory outside the engine's pool is", "[planner][serving]") {
  // TensorRT-LLM sizes its pool at start-up to 0.9 of what is free after the weights, so the plan's
  // total sits a few percent below the card by construction; a memory-model error in the other terms
  // only moves the pool (how many sequences it holds), not whether the engine runs.
  const Catalog catalog = serving_catalog();
  json doc = serve("max", "tensorrt-llm");
  const json p = planner::plan_json(doc, catalog);
  REQUIRE(p["fits"] == true);
  const json& mem = p["memory_gb"];
  const double band = p["memory_error_band"].get<double>();
  const double total = mem["total"].get<double>(), capacity = mem["capacity"].get<double>();
  REQUIRE(total * (1 + band) > capacity);  // the whole-total rule would call this tight
  CHECK(p["memory_verdict"] == "fits");
  // A stated concurrency holding the same memory gets the same verdict: the engine sizes its pool
  // at start-up either way.
  json stated = doc;
  stated["job"]["concurrent"] = p["concurrent"];
  const json q = planner::plan_json(stated, catalog);
  REQUIRE(q["fits"] == true);
  CHECK(q["memory_gb"]["total"].get<double>() * (1 + band) > capacity);
  CHECK(q["memory_verdict"] == "fits");
  // A pool that cannot hold one sequence serves nothing, whatever the concurrency asks, even where
  // the rest fits the card (70B in fp8 on one H100 each, with a 30.5k-token sequence): refused with
  // the pool as the one memory reason, in either mode, by plan and by recommend.
  json none = json::parse(R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "inference", "precision": "fp8", "prompt_len": 29500, "output_len": 1000, "concurrent": 8,
              "tokens": 1e8, "engine": "tensorrt-llm"},
      "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1}, "layout": {"tp": 1, "pp": 1, "dp": 8}})");
  for (const json& concurrent : {json("max"), json(8)}) {
    none["job"]["concurrent"] = concurrent;
    const json z = planner::plan_json(none, catalog);
    INFO(concurrent.dump());
    CHECK(z["memory_gb"]["total"].get<double>() < z["memory_gb"]["capacity"].get<double>());
    CHECK(z["fits"] == false);
    CHECK(z["memory_verdict"] == "no");
    CHECK(z["max_concurrent"] == 0);
    REQUIRE(z["why_not"].size() == 1);
    CHECK(z["why_not"][0].get<std::string>().find("cannot hold one sequence") != std::string::npos);
  }
  json search = none;
  search.erase("hardware");
  search["layout"] = {{"tp", 1}, {"pp", 1}};  // one H100 per replica, as above
  search["constraints"] = {{"max_nodes", 1}};
  const json r = planner::recommend_json(search, catalog, 3);
  REQUIRE(r["rejected"].size() == 1);
  const std::string detail = r["rejected"][0]["reasons"].dump();
  CHECK(detail.find("KV pool cannot hold one sequence") != std::string::npos);
  CHECK(detail.find("short by -") == std::string::npos);
  // Weights that leave the band no room stay tight in max mode: 76B parameters in fp8 on one H100
  // (60B parameters, 60 GB of fp8 weights, leave it room: fits).
  json big = doc;
  big["job"]["precision"] = "fp8";
  big["model"] = {{"params_b", 60}};
  CHECK(planner::plan_json(big, catalog)["memory_verdict"] == "fits");
  big["model"] = {{"params_b", 76}};
  const json b = planner::plan_json(big, catalog);
  REQUIRE(b["fits"] == true);
  const double outside_pool = b["memory_gb"]["total"].get<double>() - b["memory_gb"]["kv_cache"].get<double>();
  REQUIRE(outside_pool * (1 + band) > capacity);
  CHECK(b["memory_verdict"] == "tight");
  CHECK(b["warnings"].dump().find("the engine may not start") != std::string::npos);
}

TEST_CASE("SGLang's memory fraction falls with TP as its server defaults do; the others keep theirs",
          "[planner][serving]") {
  const planner::EngineProfile& sglang = planner::engine_profile(planner::Engine::sglang);
  CHECK(planner::memory_fraction(sglang, 1) == 0.88);
  CHECK(planner::memory_fraction(sglang, 2) == 0.87);
  CHECK(planner::memory_fraction(sglang, 4) == 0.85);
  CHECK(planner::memory_fraction(sglang, 8) == 0.81);
  CHECK(planner::memory_fraction(sglang, 16) == 0.79);
  CHECK(planner::memory_fraction(planner::engine_profile(planner::Engine::vllm), 8) == 0.90);
  CHECK(planner::memory_fraction(planner::engine_profile(planner::Engine::tensorrt_llm), 8) == 0.90);
  // A TP 8 SGLang plan holds weights and KV within 81% of the card, not 88%.
  json doc = serve("max", "sglang");
  doc["model"] = {{"preset", "llama3.1-70b"}};
  doc["layout"] = {{"tp", 8}, {"pp", 1}, {"dp", 1}};
  doc["job"]["prompt_len"] = 8192;
  const json p = planner::plan_json(doc, serving_catalog());
  REQUIRE(p["fits"] == true);
  const json& mem = p["memory_gb"];
  const double held = mem["weights"].get<double>() + mem["kv_cache"].get<double>();
  CHECK(held <= 0.81 * mem["capacity"].get<double>());
  CHECK(held > 0.80 * (mem["capacity"].get<double>() - mem["overhead"].get<double>()));
}

TEST_CASE("max-throughput mode refuses a model whose weights leave no KV pool", "[planner][serving]") {
  json doc = serve("max");
  doc["model"] = {{"preset", "llama3.1-405b"}};
  doc["layout"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}};
  const json p = planner::plan_json(doc, serving_catalog());
  CHECK(p["fits"] == false);
  CHECK(p["concurrent"] == 0);
  CHECK(p["why_not_reasons"].dump().find("memory") != std::string::npos);
}

TEST_CASE("time to first token under load grows with the requests in flight, up to a burst's", "[planner][serving]") {
  // A steady stream at a fixed concurrency (how serving benchmarks measure it): one request per
  // replica waits for nothing but its prefill and a decode step sharing it; more requests in flight
  // queue behind each other's prefills.
  const Catalog catalog = serving_catalog();
  double last = 0;
  for (int c : {8, 64, 512}) {
    const json p = planner::plan_json(serve(c), catalog);
    const double load = p["ttft_under_load_s"].get<double>();
    CHECK(load > last);
    CHECK(load >= p["ttft_s"].get<double>());
    if (c == 8) CHECK(load < 1.5 * p["ttft_s"].get<double>());
    last = load;
  }
  // Prefill-bound: 8k-token prompts, 16 tokens out, 64 per replica. The prefills nearly saturate
  // the engine and the queue ahead of a prompt grows towards the burst's (all 64 at once: the mean
  // request waits for ~32 prompts' prefill).
  json long_prompts = serve(512);
  long_prompts["job"]["prompt_len"] = 8192;
  long_prompts["job"]["output_len"] = 16;
  const json p = planner::plan_json(long_prompts, catalog);
  CHECK(p["ttft_under_load_s"].get<double>() > 5 * p["ttft_s"].get<double>());
  CHECK(p["ttft_under_load_s"].get<double>() < 40 * p["ttft_s"].get<double>());
}

TEST_CASE("time per output token counts the prefill chunks that share the decode steps", "[planner][serving]") {
  // Little's law on the steady stream: a stream's output_len tokens take the round (every request's
  // prefill and output) less its own first token. One request per replica decodes alone: its time
  // per output token is the decode step.
  const Catalog catalog = serving_catalog();
  const json one = planner::plan_json(serve(8), catalog);
  CHECK(one["tpot_s"].get<double>() == Approx(one["step_time_s"].get<double>()).epsilon(0.05));
  json long_prompts = serve(256);
  long_prompts["job"]["prompt_len"] = 8192;
  long_prompts["job"]["output_len"] = 256;
  const json p = planner::plan_json(long_prompts, catalog);
  // A stream's first token under load and its other 255 tokens add up to the round its replica
  // takes for all of its requests (what the throughput counts), nothing counted twice.
  const double per_replica = p["concurrent"].get<double>() / 8,
               round_s = per_replica * 256 / (p["tokens_per_s"].get<double>() / 8);
  CHECK(p["ttft_under_load_s"].get<double>() + 255 * p["tpot_s"].get<double>() == Approx(round_s).epsilon(1e-6));
  CHECK(p["tpot_s"].get<double>() > 1.5 * p["step_time_s"].get<double>());  // the prefills dominate the round
  // One output token has no time between tokens: the bare decode step, not the round's prefill.
  json one_token = long_prompts;
  one_token["job"]["output_len"] = 1;
  const json q = planner::plan_json(one_token, catalog);
  CHECK(q["tpot_s"].get<double>() == Approx(q["step_time_s"].get<double>()));
  // A latency target is judged on that figure.
  long_prompts["job"]["latency_target_ms"] = 1000 * (p["step_time_s"].get<double>() + p["tpot_s"].get<double>()) / 2;
  const json missed = planner::plan_json(long_prompts, catalog);
  CHECK(missed["meets_latency_target"] == false);
}

TEST_CASE("QLoRA pays the NF4 dequantisation of every base weight per GEMM pass", "[planner][serving]") {
  const Catalog catalog = serving_catalog();
  json doc = json::parse(R"({
    "model": {"preset": "llama2-7b"},
    "job": {"kind": "lora", "seq_len": 2048, "global_batch": 16, "tokens": 1e8, "lora_rank": 16,
            "framework": "hf-accelerate"},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1},
    "layout": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1, "zero": 1, "recompute": "none"}})");
  // One stack for both (QLoRA runs under PEFT/Transformers): the difference is the dequantisation.
  const json lora = planner::plan_json(doc, catalog);
  doc["job"]["lora_base"] = "4bit";
  const json qlora = planner::plan_json(doc, catalog);
  CHECK(lora["time_s"]["dequant"].get<double>() == 0.0);
  const double dequant = qlora["time_s"]["dequant"].get<double>();
  REQUIRE(dequant > 0);
  CHECK(qlora["step_time_s"].get<double>() - lora["step_time_s"].get<double>() == Approx(dequant).epsilon(1e-6));
  // The modelled amount: 2 micro-batches x 2 passes (forward, backward's data gradient) x 32 layers
  // x the layer's weights (4h^2 attention + 3 h ffn SwiGLU + 2 norms) x (4.127/8 read + 2 written)
  // bytes at bitsandbytes' fraction of H100's 3350 GB/s.
  const double h = 4096, ffn = 11008;
  const double layer = 4 * h * h + 3 * h * ffn + 2 * h;
  const double expected =
      2 * 2 * 32 * layer * planner::kNf4DequantBytesPerWeight / (3350e9 * planner::kNf4DequantHbmFraction);
  CHECK(dequant == Approx(expected).epsilon(0.01));
  // Full recompute dequantises once more per micro-batch.
  doc["layout"]["recompute"] = "full";
  CHECK(planner::plan_json(doc, catalog)["time_s"]["dequant"].get<double>() == Approx(1.5 * dequant).epsilon(1e-6));
}

TEST_CASE("serving engines: auto runs what the GPU can run, and TensorRT-LLM is refused on AMD", "[planner][serving]") {
  // TensorRT-LLM is CUDA-only: on AMD Instinct `auto` is vLLM (the engine AMD ships for ROCm), an
  // explicit tensorrt-llm is an error naming job.engine, and a search leaves AMD machines out with
  // the reason, never planning an engine the machine cannot run.
  const Gpu h100 = planner_test::h100_80(), mi300x = planner_test::mi300x();
  const Catalog catalog(
      {h100, mi300x}, {planner_test::node(h100, "aws", "p5.48xlarge", Fabric::nvswitch, 3200, 98.3),
                       planner_test::node(mi300x, "azure", "ND96isr_MI300X_v5", Fabric::infinity_fabric, 3200, 48.0)});
  json amd = serve(64);
  amd["hardware"]["instance"] = "azure:ND96isr_MI300X_v5";
  CHECK(planner::plan_json(amd, catalog)["engine"] == "vllm");
  CHECK(planner::plan_json(serve(64), catalog)["engine"] == "tensorrt-llm");
  amd["job"]["engine"] = "tensorrt-llm";
  try {
    planner::plan_json(amd, catalog);
    FAIL("TensorRT-LLM planned on an AMD GPU");
  } catch (const Error& e) {
    CHECK(e.field() == "job.engine");
    CHECK_THAT(e.what(), Catch::Contains("NVIDIA GPUs only"));
  }
  json search = serve(64, "tensorrt-llm");
  search.erase("hardware");
  search.erase("layout");
  const json answer = planner::recommend_json(search, catalog, 5);
  REQUIRE(!answer["results"].empty());
  for (const json& p : answer["results"]) CHECK(p["gpu_model"] == "H100-SXM5-80GB");
  bool amd_rejected = false;
  for (const json& r : answer["rejected"])
    amd_rejected |= r["gpu_model"] == "MI300X" && r["reason"] == "unsupported" &&
                    r["reasons"].dump().find("NVIDIA GPUs only") != std::string::npos;
  CHECK(amd_rejected);
  // auto over the same catalog plans both, each with the engine its GPU runs.
  search["job"].erase("engine");
  const json both = planner::recommend_json(search, catalog, 50, nullptr, planner::Grouping::instance);
  REQUIRE(both["results"].size() == 2);
  for (const json& p : both["results"]) CHECK(p["engine"] == (p["gpu_model"] == "MI300X" ? "vllm" : "tensorrt-llm"));
}

TEST_CASE("bad serving fields name the field", "[planner][serving]") {
  CHECK(failing_field(serve(8, "triton")) == "job.engine");
  CHECK(failing_field(serve("many")) == "job.concurrent");
  CHECK(failing_field(serve(0)) == "job.concurrent");
  json train = json::parse(R"({"model": {"preset": "llama2-7b"},
    "job": {"kind": "pretrain", "seq_len": 2048, "global_batch": 16, "engine": "vllm"},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1}, "layout": {"tp": 1, "pp": 1}})");
  CHECK(failing_field(train) == "job.engine");
}

TEST_CASE("QLoRA's dequantisation time lands on LitGPT's measured extra time per iteration", "[planner][serving]") {
  // LitGPT tutorials/resource-tables.md (commit 8641822, 2023-10-20): finetune/lora.py on one
  // A100-SXM4-40GB, micro-batch 1, bf16-true, bitsandbytes 0.41.1; minutes per 1k iterations
  // without quantization and with bnb.nf4. Llama 2 7B is the fit row; 13B is never fit.
  const Gpu a100 = [] {
    Gpu g = planner_test::a100_80();
    g.id = "A100-SXM4-40GB";
    g.memory_gb = 40;
    g.hbm_gbytes_per_s = 1555;  // NVIDIA A100 datasheet, 40 GB SXM
    return g;
  }();
  const Catalog catalog({a100}, {planner_test::node(a100, "lambda", "gpu_1x_a100", Fabric::none, 0, 1.3)});
  auto extra_s = [&](const std::string& preset) {
    const json doc = {
        {"model", {{"preset", preset}}},
        {"job", {{"kind", "lora"}, {"seq_len", 512}, {"global_batch", 1}, {"tokens", 1e6}, {"lora_base", "4bit"}}},
        {"hardware", {{"instance", "lambda:gpu_1x_a100"}, {"nodes", 1}}},
        {"layout", {{"tp", 1}, {"pp", 1}, {"micro_batch", 1}, {"recompute", "none"}}}};
    return planner::plan_json(doc, catalog)["time_s"]["dequant"].get<double>();
  };
  CHECK(extra_s("llama2-7b") == Approx((3.68 - 2.36) * 60 / 1000).epsilon(0.03));   // fit: 79 ms
  CHECK(extra_s("llama2-13b") == Approx((6.38 - 3.19) * 60 / 1000).epsilon(0.25));  // check: 191 ms, -19%
}

TEST_CASE("a serving plan carries the band of its engine's published runs of that model kind", "[planner][serving]") {
  // serving_bands.inc: TensorRT-LLM's MoE rows sit further from the prediction than its dense rows,
  // and vLLM's third-party rows further than TensorRT-LLM's; the basis names the engine and kind.
  const Catalog catalog = serving_catalog();
  const json dense = planner::plan_json(serve(64), catalog);
  json doc = serve(64);
  doc["model"]["preset"] = "mixtral-8x7b";
  doc["layout"] = {{"tp", 2}, {"pp", 1}, {"dp", 4}, {"etp", 2}};
  const json moe = planner::plan_json(doc, catalog);
  auto low = [](const json& p) {
    return p["interval"]["tokens_per_s"]["p10"].get<double>() / p["tokens_per_s"].get<double>();
  };
  auto high = [](const json& p) {
    return p["interval"]["tokens_per_s"]["p90"].get<double>() / p["tokens_per_s"].get<double>();
  };
  CHECK(low(dense) == Approx(0.839).margin(0.005));
  CHECK(high(dense) == Approx(1.084).margin(0.005));
  CHECK(low(moe) == Approx(0.697).margin(0.005));
  CHECK(high(moe) == Approx(1.208).margin(0.005));
  CHECK(low(moe) < low(dense));
  CHECK(moe["interval"]["basis"].get<std::string>().find("tensorrt-llm serving runs of mixture-of-experts") !=
        std::string::npos);

  // The training bands (by precision class and ZeRO family) play no part: fp8 Hopper training's
  // band is wider above (1.18) than TensorRT-LLM's dense serving rows.
  json fp8 = serve(64);
  fp8["job"]["precision"] = "fp8";
  const json fp8_plan = planner::plan_json(fp8, catalog);
  CHECK(low(fp8_plan) == Approx(0.839).margin(0.005));
  CHECK(high(fp8_plan) == Approx(1.084).margin(0.005));

  const json vllm = planner::plan_json(serve(64, "vllm"), catalog);
  CHECK(low(vllm) == Approx(0.566).margin(0.005));
  CHECK(high(vllm) == Approx(1.136).margin(0.005));
  CHECK(vllm["interval"]["basis"].get<std::string>().find("vllm serving runs of dense") != std::string::npos);
}

// The engine's sequence cap as the job sets it (vLLM --max-num-seqs and its kin): max-throughput
// mode then stops at that cap, or at the KV pool where the pool holds fewer; without it, the profile's.
TEST_CASE("job.engine_batch_limit replaces the engine profile's sequence cap, within what the KV pool holds") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "inference", "prompt_len": 128, "output_len": 512, "concurrent": "max", "engine": "vllm"},
      "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 1, "pp": 1}})");
  const json by_profile = planner::plan_json(doc, catalog);
  CHECK(by_profile["max_concurrent_limit"] == "engine_batch_limit");
  CHECK(by_profile["max_concurrent"] == 256 * by_profile["layout"]["dp"].get<int>());  // vLLM's max_num_seqs
  doc["job"]["engine_batch_limit"] = 1024;
  const json raised = planner::plan_json(doc, catalog);
  CHECK(raised["max_concurrent"].get<int>() > by_profile["max_concurrent"].get<int>());
  CHECK(raised["max_concurrent"].get<int>() <= 1024 * raised["layout"]["dp"].get<int>());
  doc["job"]["engine_batch_limit"] = 16;
  const json lowered = planner::plan_json(doc, catalog);
  CHECK(lowered["max_concurrent"] == 16 * lowered["layout"]["dp"].get<int>());
  CHECK(lowered["max_concurrent_limit"] == "engine_batch_limit");
  CHECK(lowered["tokens_per_s"].get<double>() < by_profile["tokens_per_s"].get<double>());
  // A cap the KV pool cannot reach leaves the pool as the limit.
  doc["job"]["engine_batch_limit"] = 16777216;
  CHECK(planner::plan_json(doc, catalog)["max_concurrent_limit"] == "kv_pool");
}

// SGLang's ROCm build has figures of its own per CDNA generation, fit on InferenceX's MI300X, MI325X
// and MI355X rows: a fixed time per layer per step five to ten times the CUDA build's, which sets
// the pace at low concurrency. Fit on one model, so the plan says where it extrapolates. vLLM has
// no ROCm rows: it keeps its CUDA figures there and the plan says that.
TEST_CASE("serving on AMD Instinct: SGLang's per-layer step time is its ROCm figure; vLLM warns it has none",
          "[planner][serving]") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  const auto doc = [](const std::string& gpu, const std::string& engine) {
    json d = json::parse(R"({"model": {"preset": "llama3.1-8b"},
        "job": {"kind": "inference", "prompt_len": 128, "output_len": 128, "concurrent": 1, "precision": "bf16"},
        "layout": {"tp": 1, "pp": 1}})");
    d["job"]["engine"] = engine;
    d["hardware"] = {{"custom", {{"gpu_model", gpu}, {"gpu_count", 1}, {"intra_node_fabric", "none"}}}, {"nodes", 1}};
    return d;
  };
  const planner::EngineProfile& sglang = planner::engine_profile(planner::Engine::sglang);
  const planner::EngineGpuTerms cdna3 = planner::engine_gpu_terms(sglang, Architecture::cdna3);
  CHECK(cdna3.layer_step_s == sglang.cdna3.layer_step_s);
  CHECK(cdna3.fraction_scale == sglang.cdna3.fraction_scale);
  CHECK(planner::engine_gpu_terms(sglang, Architecture::cdna4).layer_step_s == sglang.cdna4.layer_step_s);
  CHECK(planner::engine_gpu_terms(sglang, Architecture::hopper).layer_step_s == sglang.layer_step_s);
  CHECK(planner::engine_gpu_terms(sglang, Architecture::blackwell).fraction_scale == sglang.blackwell_scale);
  // A generation without figures of its own borrows the other CDNA generation's, else the CUDA ones.
  planner::EngineProfile one_generation = sglang;
  one_generation.cdna4.fit = false;
  CHECK(planner::engine_gpu_terms(one_generation, Architecture::cdna4).layer_step_s == sglang.cdna3.layer_step_s);
  const planner::EngineProfile& vllm = planner::engine_profile(planner::Engine::vllm);
  CHECK(planner::engine_gpu_terms(vllm, Architecture::cdna3).layer_step_s == vllm.layer_step_s);
  CHECK(planner::engine_gpu_terms(vllm, Architecture::cdna3).fraction_scale == 1.0);
  REQUIRE(sglang.cdna3.layer_step_s > 4 * sglang.layer_step_s);

  // One sequence of Llama 3.1 8B (32 layers): MI300X streams its 16 GB of weights in about 4 ms
  // at SGLang's ROCm fraction, so a step above 32 layer steps is the ROCm step time at work.
  const json mi300x = planner::plan_json(doc("MI300X", "sglang"), catalog);
  CHECK(mi300x["tpot_s"].get<double>() > 32 * sglang.cdna3.layer_step_s);
  const json h100 = planner::plan_json(doc("H100-SXM5-80GB", "sglang"), catalog);
  CHECK(h100["tpot_s"].get<double>() < mi300x["tpot_s"].get<double>());
  // The answer names what sets the pace: the layers' fixed time on MI300X, the weights' bytes on H100.
  CHECK(mi300x["bottleneck"].get<std::string>().find("fixed time per layer per step (32 layers") != std::string::npos);
  CHECK(h100["bottleneck"].get<std::string>().rfind("GPU memory bandwidth", 0) == 0);

  using planner_test::warns_with;
  CHECK_FALSE(warns_with(mi300x, "no published serving benchmark of sglang"));
  CHECK(warns_with(planner::plan_json(doc("MI300X", "vllm"), catalog), "no published serving benchmark of vllm"));
  CHECK_FALSE(warns_with(h100, "no published serving benchmark"));
  // SGLang's ROCm figures come from one model: the plan of another says they are extrapolated.
  CHECK(warns_with(mi300x, "sglang's cdna3 figures"));
  CHECK(warns_with(mi300x, "DeepSeek-R1 FP8 at TP8 (InferenceX) only"));
  CHECK_FALSE(warns_with(h100, "figures ("));
}

// gpt-oss's MXFP4 experts on a GPU without FP4 tensor cores run through weight-only kernels. vLLM's
// (InferenceX's H100/H200 rows) stream the stored 4.25 bits; TensorRT-LLM's published Hopper runs
// come to an fp8 copy's byte per weight. On Blackwell the FP4 tensor cores take them as stored.
TEST_CASE("vLLM streams gpt-oss's stored 4-bit experts on Hopper, TensorRT-LLM an fp8 copy's bytes",
          "[planner][serving]") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  CHECK(planner::engine_profile(planner::Engine::vllm).streams_stored_fp4_experts);
  CHECK_FALSE(planner::engine_profile(planner::Engine::tensorrt_llm).streams_stored_fp4_experts);
  const auto tpot = [&](const std::string& gpu, const std::string& precision, bool stored) {
    json doc = json::parse(R"({"model": {"preset": "gpt-oss-120b"},
        "job": {"kind": "inference", "prompt_len": 1024, "output_len": 1024, "concurrent": 16, "engine": "vllm"},
        "layout": {"tp": 1, "pp": 1}})");
    doc["job"]["precision"] = precision;
    doc["hardware"] = {{"custom", {{"gpu_model", gpu}, {"gpu_count", 1}, {"intra_node_fabric", "none"}}}, {"nodes", 1}};
    const planner::Workload w = planner::parse_workload(doc, catalog);
    const planner::PlannerConstants& k = planner::default_constants();
    planner::PreparedHardware hw = planner::prepare_hardware(*w.hardware, w.job, k, nullptr, false);
    hw.engine_profile.streams_stored_fp4_experts = stored;
    return planner::estimate(planner::prepare_model(w.model, w.job), hw, 1, planner::complete_layout(w, 1), k).tpot;
  };
  // H200: the experts, most of the weights a step reads, at 4.25 bits instead of 8.
  CHECK(tpot("H200-SXM-141GB", "fp8", true) < 0.8 * tpot("H200-SXM-141GB", "fp8", false));
  CHECK(tpot("B200-SXM-180GB", "fp4", true) == tpot("B200-SXM-180GB", "fp4", false));
}
