// plan on the real catalog and the examples in data/examples: the JSON contract's fields.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/planner.hpp"
#include "linkwise/planner/uncertainty.hpp"
#include "planner_test_util.hpp"

using namespace linkwise;
using nlohmann::json;

namespace {
json read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return json::parse(in);
}

// The engine's estimate of a workload's own layout under constants `k` (a constant changed against
// the shipped ones shows what it does).
planner::Estimate estimate_with(const planner::Workload& w, const planner::PlannerConstants& k) {
  const planner::Layout l = planner::complete_layout(w, *w.nodes * w.hardware->instance.gpu_count);
  return planner::estimate(planner::prepare_model(w.model, w.job),
                           planner::prepare_hardware(*w.hardware, w.job, k, nullptr, false), *w.nodes, l, k);
}
}  // namespace

TEST_CASE("every example in data/examples plans (or recommends) with the contract's fields") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  int examples = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(LINKWISE_TEST_DATA_DIR) / "examples")) {
    if (entry.path().extension() != ".json") continue;
    INFO(entry.path().string());
    ++examples;
    const json doc = read(entry.path());
    json p;
    if (doc.contains("layout")) {
      p = planner::plan_json(doc, catalog);
    } else {
      const json r = planner::recommend_json(doc, catalog, 3);
      REQUIRE_FALSE(r["results"].empty());
      p = r["results"][0];
    }
    for (const char* key : {"fits", "memory_gb", "step_time_s", "time_s", "tokens_per_s", "model_tflops_per_gpu",
                            "hardware_tflops_per_gpu", "mfu", "job_hours", "cost_usd", "usd_per_million_tokens",
                            "bottleneck", "bandwidth_source", "layout", "instance", "nodes", "gpus", "warnings"})
      CHECK(p.contains(key));
    for (const char* key :
         {"weights", "gradients", "optimizer", "activations", "kv_cache", "overhead", "total", "capacity"})
      CHECK(p["memory_gb"].contains(key));
    for (const char* key : {"compute", "tp_comm", "pp_comm", "pp_bubble", "dp_comm", "exposed_comm"})
      CHECK(p["time_s"].contains(key));
    // Each communication's exposed part: at most the communication, together exposed_comm.
    const json& t = p["time_s"];
    double exposed = 0;
    for (const char* part : {"tp", "cp", "pp", "dp", "ep"}) {
      const double comm = t[std::string(part) + "_comm"].get<double>(),
                   shown = t[std::string(part) + "_exposed"].get<double>();
      CHECK(shown >= 0);
      CHECK(shown <= comm * (1 + 1e-12));
      exposed += shown;
    }
    CHECK(exposed == Approx(t["exposed_comm"].get<double>()).epsilon(1e-9));
    CHECK(p["step_time_s"].get<double>() > 0);
    CHECK(p["mfu"].get<double>() > 0);
    CHECK(p["mfu"].get<double>() < 1);
    CHECK(p["bandwidth_source"]["intra_node"].get<std::string>().rfind("claimed: ", 0) == 0);
  }
  CHECK(examples >= 5);
}

TEST_CASE("Llama-3.1-70B on 16 p5.48xlarge: fits, near published MFU, bandwidth claims cited") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  const json doc = json::parse(R"({"model": {"preset": "llama3.1-70b"},
    "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512, "tokens": 2e12, "precision": "bf16"},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 16},
    "layout": {"tp": 8, "pp": 4, "dp": 4, "micro_batch": 1, "zero": 1, "recompute": "selective", "virtual_stages": 5}})");
  const json p = planner::plan_json(doc, catalog);
  CHECK(p["fits"] == true);
  CHECK(p["memory_gb"]["capacity"].get<double>() == Approx(80 * 1.073741824 - 0.5));
  CHECK(p["memory_verdict"] == "fits");
  CHECK(p["interval"]["tokens_per_s"]["p10"].get<double>() < p["tokens_per_s"].get<double>());
  CHECK(p["interval"]["tokens_per_s"]["p90"].get<double>() > p["tokens_per_s"].get<double>());
  CHECK(p["interval"]["step_time_s"]["p10"].get<double>() < p["step_time_s"].get<double>());
  CHECK(p["interval"]["cost_usd"]["p90"].get<double>() > p["cost_usd"].get<double>());
  // Published Megatron/NeMo Llama 70B bf16 runs on H100 reach 35-50% MFU.
  CHECK(p["mfu"].get<double>() > 0.25);
  CHECK(p["mfu"].get<double>() < 0.6);
  CHECK(p["cost_usd"].get<double>() > 0);
  CHECK(p["bandwidth_source"]["inter_node"].get<std::string>().find("efa") != std::string::npos);

  // Measured links replace the claims and the output says so.
  MeasuredLinks measured;
  measured.intra_node_allreduce_busbw_gbytes_per_s = 100;  // a degraded node
  measured.inter_node_allreduce_busbw_gbytes_per_s = 40;
  measured.source = "probe report test";
  const json slow = planner::plan_json(doc, catalog, &measured);
  CHECK(slow["bandwidth_source"]["intra_node"].get<std::string>().rfind("measured: probe report test", 0) == 0);
  CHECK(slow["step_time_s"].get<double>() > p["step_time_s"].get<double>());
}

TEST_CASE("impossible custom hardware is refused naming the field") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  auto with = [&](const char* key, double value) {
    json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64},
      "hardware": {"custom": {"gpu_model": "H100-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
                              "network_type": "infiniband", "network_gbits_per_s": 3200}, "nodes": 2},
      "layout": {"tp": 8, "pp": 1}})");
    doc["hardware"]["custom"][key] = value;
    try {
      planner::plan_json(doc, catalog);
    } catch (const linkwise::Error& e) {
      return e.field();
    }
    return std::string("<no error>");
  };
  CHECK(with("nvlink_gbytes_per_s", 5000) == "hardware.custom.nvlink_gbytes_per_s");
  CHECK(with("network_gbits_per_s", 1e7) == "hardware.custom.network_gbits_per_s");
  CHECK(with("gpu_memory_gb", 200) == "hardware.custom.gpu_memory_gb");
  CHECK(with("nvlink_gbytes_per_s", 900) == "<no error>");
}

TEST_CASE("Llama-3.1-405B's 126 layers plan with PP 16 and interleaving (uneven split)") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  const json doc = json::parse(R"({"model": {"preset": "llama3.1-405b"},
    "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 1024, "precision": "bf16"},
    "hardware": {"custom": {"gpu_model": "H100-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
                            "network_type": "infiniband", "network_gbits_per_s": 3200}, "nodes": 128},
    "layout": {"tp": 8, "pp": 16, "cp": 1, "micro_batch": 1, "zero": 1, "recompute": "none", "virtual_stages": 8}})");
  const json p = planner::plan_json(doc, catalog);
  CHECK(p["tokens_per_s"].get<double>() > 0);
  bool warned = false;
  for (const auto& w : p["warnings"]) warned = warned || w.get<std::string>().find("uneven") != std::string::npos;
  CHECK(warned);
}

TEST_CASE(
    "recompute_layer_fraction: the share of layers recomputed sets the extra forward work, and needs recompute full") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  json doc = json::parse(R"({"model": {"preset": "llama2-13b"},
    "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 256, "precision": "bf16", "framework": "fsdp"},
    "hardware": {"instance": "aws:p4de.24xlarge", "nodes": 16},
    "layout": {"tp": 1, "pp": 1, "dp": 128, "micro_batch": 2, "zero": 3, "recompute": "full"}})");
  auto hardware_over_model = [&](const json& p) {
    return p["hardware_tflops_per_gpu"].get<double>() / p["model_tflops_per_gpu"].get<double>();
  };
  const json full = planner::plan_json(doc, catalog);
  doc["layout"]["recompute_layer_fraction"] = 0.5;
  const json half = planner::plan_json(doc, catalog);
  CHECK(half["layout"]["recompute_layer_fraction"] == 0.5);
  CHECK(full["layout"]["recompute_layer_fraction"] == 1.0);
  // Full recompute adds about a third of the work (one more forward); half of the layers, a sixth.
  CHECK(hardware_over_model(half) - 1 == Approx(0.5 * (hardware_over_model(full) - 1)).epsilon(0.01));
  CHECK(half["step_time_s"].get<double>() < full["step_time_s"].get<double>());
  CHECK(half["memory_gb"]["activations"].get<double>() > full["memory_gb"]["activations"].get<double>());
  doc["layout"]["recompute"] = "selective";
  try {
    planner::plan_json(doc, catalog);
    FAIL("a layer fraction without recompute full was accepted");
  } catch (const Error& e) {
    CHECK(e.field() == "layout.recompute_layer_fraction");
  }
  doc["layout"]["recompute"] = "full";
  doc["layout"]["recompute_layer_fraction"] = 1.5;
  CHECK_THROWS_AS(planner::plan_json(doc, catalog), Error);
}

TEST_CASE(
    "eager PyTorch stacks pay for RMSNorm, RoPE and SwiGLU op by op unless job.torch_compile, fused stacks do not") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
    "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 128, "precision": "bf16", "framework": "torchtitan"},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 8},
    "layout": {"tp": 1, "pp": 1, "dp": 64, "micro_batch": 2, "zero": 3, "recompute": "selective"}})");
  auto step = [&](const char* framework, bool compile) {
    doc["job"]["framework"] = framework;
    doc["job"]["torch_compile"] = compile;
    return planner::plan_json(doc, catalog)["step_time_s"].get<double>();
  };
  const double eager = step("torchtitan", false), compiled = step("torchtitan", true);
  // 32 bytes x 2 norms x 4096 + 20 x (4096 + 1024) + 6 x 14336 per token per layer forward, x3 with
  // backward, x1 more for op-SAC's recompute: ~1.8 MB at ~2.7 TB/s against ~4 us of compute.
  CHECK(eager > compiled * 1.05);
  CHECK(eager < compiled * 1.25);
  // Megatron-Core runs fused kernels either way: torch_compile there is refused, naming the field.
  try {
    step("megatron-core", true);
    FAIL("torch_compile accepted on megatron-core");
  } catch (const Error& e) {
    CHECK(e.field() == "job.torch_compile");
  }
  doc["model"] = json::parse(
      R"({"layers": 24, "hidden": 2048, "heads": 16, "ffn_hidden": 8192, "vocab": 50257, "gated_mlp": false})");
  CHECK(step("fsdp", false) == Approx(step("fsdp", true)).epsilon(1e-12));  // MPT-like blocks: what the fit's runs ran
}

TEST_CASE("a deadline met at the prediction but not at the interval's slow end is said, with the job's hours range") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  json doc = json::parse(R"({"model": {"preset": "llama3.1-70b"},
    "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512, "tokens": 2e12, "precision": "bf16"},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 16},
    "layout": {"tp": 8, "pp": 4, "dp": 4, "micro_batch": 1, "zero": 1, "recompute": "selective", "virtual_stages": 5}})");
  const json free = planner::plan_json(doc, catalog);
  const double hours = free["job_hours"].get<double>();
  const json& range = free["interval"]["job_hours"];
  CHECK(range["p10"].get<double>() < hours);
  CHECK(range["p90"].get<double>() > hours);
  auto at_risk = [](const json& p) {
    for (const json& w : p["warnings"])
      if (w.get<std::string>().find("slow end of its p10-p90 interval") != std::string::npos) return true;
    return false;
  };
  CHECK_FALSE(at_risk(free));
  // Between the prediction and the slow end: meets it, and says it may not.
  doc["constraints"]["deadline_hours"] = 0.5 * (hours + range["p90"].get<double>());
  const json risky = planner::plan_json(doc, catalog);
  CHECK(risky["meets_deadline"] == true);
  CHECK(at_risk(risky));
  // Past the slow end: no warning.
  doc["constraints"]["deadline_hours"] = 1.01 * range["p90"].get<double>();
  CHECK_FALSE(at_risk(planner::plan_json(doc, catalog)));
  // Without job.tokens there are no hours and no range.
  doc["job"].erase("tokens");
  doc["constraints"].erase("deadline_hours");
  CHECK(planner::plan_json(doc, catalog)["interval"]["job_hours"].is_null());
}

TEST_CASE("a predicted MFU above every published run of its generation widens the interval downward only") {
  planner::Layout l;
  l.tp = 2;
  l.zero = 3;
  const double best = *planner::best_published_mfu(Architecture::ampere, planner::Precision::bf16);
  const planner::Interval within =
      planner::throughput_interval(Architecture::ampere, planner::Precision::bf16, planner::JobKind::pretrain, l, 128,
                                   4096, 0.40, false, planner::Engine::auto_);
  const double mfu = 0.70;
  const planner::Interval above =
      planner::throughput_interval(Architecture::ampere, planner::Precision::bf16, planner::JobKind::pretrain, l, 128,
                                   4096, mfu, false, planner::Engine::auto_);
  REQUIRE(mfu > best);
  CHECK_FALSE(within.widened);
  CHECK(above.widened);
  // p10 at or below the best published run's MFU (at the band's own p10 below it) ...
  CHECK(above.tokens_low * mfu <= best * within.tokens_low + 1e-12);
  // ... and p90 no higher than the least width above the prediction.
  CHECK(above.tokens_high <= 1.03 + 1e-12);
  CHECK(above.tokens_high >= 1.0);
  CHECK(above.reasons.back().find("above the best published ampere run") != std::string::npos);
  // A generation no published run measured (CDNA) is bounded by the best run of any generation, and
  // the words do not claim a run of its own.
  REQUIRE_FALSE(planner::best_published_mfu(Architecture::cdna4, planner::Precision::bf16));
  const planner::Interval amd =
      planner::throughput_interval(Architecture::cdna4, planner::Precision::bf16, planner::JobKind::pretrain, l, 128,
                                   4096, mfu, false, planner::Engine::auto_);
  CHECK(amd.reasons.back().find("the best published run of any generation (62%; none of cdna4)") != std::string::npos);
}

TEST_CASE("a generation with 5 published check runs takes its own band; one without is doubled") {
  planner::Layout l;
  l.zero = 1;
  // Blackwell: no constant is fit on it, but MLPerf's and Megatron-Bridge's runs measure its error.
  const planner::Interval blackwell =
      planner::throughput_interval(Architecture::blackwell, planner::Precision::fp8, planner::JobKind::pretrain, l, 64,
                                   8192, 0.30, false, planner::Engine::auto_);
  CHECK_FALSE(blackwell.widened);
  CHECK(blackwell.basis.find("(blackwell, fp8, 3d)") != std::string::npos);
  // Mixture-of-experts training takes the MoE runs' band, not the dense runs' (wider: DeepSeek-V3
  // and Qwen3 on H100 in fp8 span 0.50-1.26 of the prediction).
  const planner::Interval moe = planner::throughput_interval(Architecture::hopper, planner::Precision::fp8,
                                                             planner::JobKind::pretrain, l, 1024, 4096, 0.20, true);
  CHECK(moe.basis.find("(hopper, fp8, moe)") != std::string::npos);
  const planner::Interval dense = planner::throughput_interval(Architecture::hopper, planner::Precision::fp8,
                                                               planner::JobKind::pretrain, l, 1024, 4096, 0.20, false);
  CHECK(moe.tokens_high - moe.tokens_low > dense.tokens_high - dense.tokens_low);
  // An uncalibrated generation's MoE plan falls back to every MoE run, never to a dense band.
  const planner::Interval moe_amd = planner::throughput_interval(Architecture::cdna3, planner::Precision::fp8,
                                                                 planner::JobKind::pretrain, l, 64, 4096, 0.20, true);
  CHECK(moe_amd.basis.find("(*, *, moe)") != std::string::npos);
  // fp4 is its own precision class, not 16-bit.
  const planner::Interval fp4 = planner::throughput_interval(Architecture::blackwell, planner::Precision::fp4,
                                                             planner::JobKind::pretrain, l, 8, 8192, 0.20);
  CHECK(fp4.basis.find("(blackwell, fp4, 3d)") != std::string::npos);
  const planner::Interval ada = planner::throughput_interval(Architecture::ada, planner::Precision::bf16,
                                                             planner::JobKind::pretrain, l, 8, 4096, 0.30);
  CHECK(ada.widened);
  CHECK(ada.reasons.front().find("interval doubled") != std::string::npos);
  // Serving: the engine's band on its check rows is the interval, not a widening of one.
  const planner::Interval serving =
      planner::throughput_interval(Architecture::hopper, planner::Precision::fp8, planner::JobKind::inference, l, 8,
                                   4096, 0.30, false, planner::Engine::tensorrt_llm);
  CHECK_FALSE(serving.widened);
  CHECK(serving.reasons.empty());
  CHECK(serving.basis.find("tensorrt-llm serving runs") != std::string::npos);
  CHECK(serving.tokens_low < 1.0);
  CHECK(serving.tokens_high > 1.0);
}

TEST_CASE("the bottleneck is the largest term of the step, the largest link term after it") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  json doc = read_json_file(std::string(LINKWISE_TEST_DATA_DIR) + "/examples/pretrain-llama3.1-70b-p5.json", "example");
  // Without Transformer Engine's TP overlap (on by default), which hides most of the TP collectives.
  doc["layout"]["tp_comm_overlap"] = false;
  const json p = planner::plan_json(doc, catalog);
  const double step = p["step_time_s"].get<double>(), compute = p["time_s"]["compute"].get<double>();
  const double tp = p["time_s"]["tp_comm"].get<double>();
  REQUIRE(compute > 0.5 * step);  // compute-bound, with tensor-parallel collectives above a tenth
  REQUIRE(tp > 0.1 * step);
  const std::string words = p["bottleneck"];
  CHECK(words.rfind("compute: ", 0) == 0);
  CHECK(words.find("; then tensor-parallel collectives") != std::string::npos);
}

TEST_CASE("Megatron-Core hides ZeRO-1's parameter all-gather behind the next forward, not the backward") {
  // MLPerf's Llama 3.1 8B on 4 B200 nodes: one micro-batch a GPU, CP 2, the DP collectives longer
  // than the backward. With overlap_param_gather (NeMo's recipes) the all-gather runs during the
  // next step's first forward and only the reduce-scatter waits on the backward: at most half the DP
  // time stays exposed beyond what the backward hides. Putting both behind the backward (the old
  // rule) exposes dp_comm - 0.8 x backward, about 0.1 s here.
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  const json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
    "job": {"kind": "pretrain", "precision": "fp8", "seq_len": 8192, "global_batch": 16, "framework": "nemo"},
    "hardware": {"custom": {"gpu_model": "B200-SXM-180GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
                 "nvlink_gbytes_per_s": 1800, "network_type": "infiniband", "network_gbits_per_s": 3200}, "nodes": 4},
    "layout": {"tp": 1, "pp": 1, "cp": 2, "dp": 16, "micro_batch": 1, "zero": 1, "recompute": "none"}})");
  const json p = planner::plan_json(doc, catalog);
  INFO(p["time_s"].dump());
  const double dp = p["time_s"]["dp_comm"].get<double>(), compute = p["time_s"]["compute"].get<double>();
  const double exposed = p["time_s"]["exposed_comm"].get<double>();  // the DP share, and CP's (milliseconds)
  REQUIRE(dp > compute);                                             // communication-bound: the rule decides the step
  const double backward = 2.0 / 3.0 * compute;                       // no recompute: backward is twice the forward
  CHECK(exposed < dp - 0.8 * backward - 0.1 * compute);
  CHECK(exposed > 0.0);
}

TEST_CASE("a layout that fits only with a recipe's memory option says which, and by how much") {
  // Megatron Bridge's Llama 3 70B FP8 layout on 64 H100 (TP4 PP8 VP5): with Megatron-Core's default
  // fp32 gradient buffer it is over the card; the recipe reduces gradients in bf16, and the plan says so.
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  json doc = json::parse(R"({"model": {"preset": "llama3.1-70b"},
    "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 256, "precision": "fp8", "framework": "megatron-core"},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 8},
    "layout": {"tp": 4, "pp": 8, "dp": 2, "micro_batch": 1, "zero": 1, "virtual_stages": 5}})");
  const auto advice = [](const json& p) {
    for (const auto& w : p["warnings"])
      if (w.get<std::string>().rfind("memory: with ", 0) == 0) return w.get<std::string>();
    return std::string();
  };
  const json p = planner::plan_json(doc, catalog);
  REQUIRE(p["memory_verdict"] != "fits");
  const std::string said = advice(p);
  CHECK(said.find("job.grad_reduce_dtype bf16") != std::string::npos);
  CHECK(said.find("job.loss") == std::string::npos);  // the logits sit on the last stage, not the busiest
  doc["job"]["grad_reduce_dtype"] = "bf16";
  const json with = planner::plan_json(doc, catalog);
  CHECK(with["fits"] == true);
  char total[32];
  std::snprintf(total, sizeof total, "need %.1f GB", with["memory_gb"]["total"].get<double>());
  CHECK(said.find(total) != std::string::npos);
  CHECK(advice(with).empty());  // nothing left to suggest that would help
}

// A plan says which stack its step was planned as: the job's framework, and for auto Megatron-Core
// below ZeRO-3 and PyTorch FSDP at ZeRO-3 (one rule: megatron_runtime); a serving plan names its engine.
TEST_CASE("a training plan names the stack it was planned as, auto resolved by the ZeRO stage") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64},
      "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 1, "pp": 1, "dp": 8, "zero": 1}})");
  CHECK(planner::plan_json(doc, catalog)["framework"] == "megatron-core");
  doc["layout"]["zero"] = 3;
  CHECK(planner::plan_json(doc, catalog)["framework"] == "fsdp");
  doc["job"]["framework"] = "torchtitan";
  CHECK(planner::plan_json(doc, catalog)["framework"] == "torchtitan");
  const json serving = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "inference", "prompt_len": 1024, "output_len": 256, "concurrent": 8},
      "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 8, "pp": 1, "dp": 1}})");
  const json s = planner::plan_json(serving, catalog);
  CHECK_FALSE(s.contains("framework"));
  CHECK(s["engine"] == "tensorrt-llm");
}

// Groups are consecutive ranks: on 36-GPU NVLink domains (AWS's GB200 UltraServer of 36) groups of
// 8 do not tile a domain, so some straddle two and run on the network; groups of 4 tile it.
TEST_CASE("tensor parallelism that does not tile the NVLink domain runs on the network, and says so") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  json doc = json::parse(R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512},
      "hardware": {"instance": "aws:u-p6e-gb200x36", "nodes": 8}, "layout": {"tp": 4, "pp": 9}})");
  const json tiled = planner::plan_json(doc, catalog);
  doc["layout"]["tp"] = 8;
  const json straddling = planner::plan_json(doc, catalog);
  const auto warns = [](const json& p) {
    for (const json& w : p["warnings"])
      if (w.get<std::string>().rfind("tensor parallelism (tp=", 0) == 0) return true;
    return false;
  };
  CHECK_FALSE(warns(tiled));
  CHECK(warns(straddling));
  CHECK(straddling["bottleneck"].get<std::string>().find("tensor-parallel collectives (tp=8) over nvlink") ==
        std::string::npos);
  // Per TP collective, the network is far slower than the rack's NVLink: more time per byte.
  CHECK(straddling["time_s"]["tp_comm"].get<double>() > 2.0 * tiled["time_s"]["tp_comm"].get<double>());
  // recommend keeps TP inside the domain: it never offers tp 8 there.
  json rec = doc;
  rec.erase("layout");
  rec["hardware"].erase("nodes");
  rec["job"]["tokens"] = 1e11;
  rec["constraints"] = {{"instances", {"aws:u-p6e-gb200x36"}}, {"max_nodes", 8}, {"objective", "time"}};
  rec.erase("hardware");
  const json r = planner::recommend_json(rec, catalog, 20);
  REQUIRE_FALSE(r["results"].empty());
  for (const json& p : r["results"]) CHECK(36 % p["layout"]["tp"].get<int>() == 0);
}

// A plan that leaves the GPUs idle most of the step says so, and a plan far beyond the largest
// calibration run gets an interval that widens with every doubling of the GPUs.
TEST_CASE("a plan at very low MFU warns, and the interval widens with the scale beyond the calibration runs") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  const auto has = [](const json& p, const std::string& start) {
    for (const json& w : p["warnings"])
      if (w.get<std::string>().rfind(start, 0) == 0) return true;
    return false;
  };
  // An 8B model over 64 GPUs with two sequences a step: the pipeline is mostly bubble.
  json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 2},
      "hardware": {"instance": "aws:p5.48xlarge", "nodes": 8}, "layout": {"tp": 8, "pp": 8, "dp": 1}})");
  const json idle = planner::plan_json(doc, catalog);
  CHECK(idle["mfu"].get<double>() < 0.10);
  CHECK(has(idle, "MFU "));
  const auto says = planner_test::warns_with;
  CHECK(says(idle, "waits on communication"));
  // Busy GPUs far from their peak (256 micro-batches of one 16-token sequence per GPU: tiny GEMMs)
  // get the other reason: the warning names the cause the breakdown shows.
  json tiny = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "pretrain", "seq_len": 16, "global_batch": 2048},
      "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1}, "layout": {"tp": 1, "pp": 1, "dp": 8}})");
  const json small = planner::plan_json(tiny, catalog);
  INFO(small["time_s"].dump());
  CHECK(small["mfu"].get<double>() < 0.10);
  CHECK(small["time_s"]["compute"].get<double>() > 0.5 * small["step_time_s"].get<double>());
  CHECK(says(small, "runs far from the peak"));
  CHECK_FALSE(says(small, "waits on communication"));
  doc["hardware"]["nodes"] = 1;
  doc["job"]["global_batch"] = 64;
  doc["layout"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}};
  const json busy = planner::plan_json(doc, catalog);
  CHECK(busy["mfu"].get<double>() > 0.10);
  CHECK_FALSE(has(busy, "MFU "));

  const auto width = [&](int gpus) {
    const planner::Interval iv =
        planner::throughput_interval(Architecture::hopper, planner::Precision::bf16, planner::JobKind::pretrain,
                                     planner::Layout{}, gpus, 4096, 0.4, false, planner::Engine::auto_, 0.0);
    return iv.tokens_high / iv.tokens_low;
  };
  CHECK(width(6144) > width(3072));
  CHECK(width(3072 * 512) > width(6144));
}

// Found by a review of the changes above: hiding sends never costs more than not hiding them; DualPipe
// hides its sends as it hides the all-to-all; QLoRA is planned as the PEFT stack it runs on, which
// splits no sequence either; a floor of nodes alone is searched from it upwards and never answered
// with silence.
TEST_CASE("pipeline sends and QLoRA's stack and a node floor as reviewed") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  json few = json::parse(R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 2},
      "hardware": {"instance": "aws:p5.48xlarge", "nodes": 4},
      "layout": {"tp": 8, "pp": 4, "dp": 1, "virtual_stages": 2}})");
  const json p = planner::plan_json(few, catalog);
  CHECK(p["time_s"]["pp_exposed"].get<double>() <= p["time_s"]["pp_comm"].get<double>());

  std::ifstream in(std::filesystem::path(LINKWISE_TEST_DATA_DIR) / "examples" / "pretrain-deepseek-v3-h800.json");
  json dualpipe = json::parse(in);
  dualpipe["job"]["framework"] = "hai-llm";
  const json d = planner::plan_json(dualpipe, catalog);
  CHECK(d["time_s"]["pp_exposed"].get<double>() < 0.5 * d["time_s"]["pp_comm"].get<double>());
  CHECK(d["layout"]["overlap_p2p_comm"] == true);  // as it runs, and it reads back
  dualpipe["layout"]["overlap_p2p_comm"] = true;
  CHECK(planner::plan_json(dualpipe, catalog)["step_time_s"] == d["step_time_s"]);
  dualpipe["layout"]["overlap_p2p_comm"] = false;  // DualPipe overlaps its sends by design
  CHECK_THROWS_WITH(planner::plan_json(dualpipe, catalog), Catch::Contains("layout.overlap_p2p_comm"));

  json qlora = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "lora", "seq_len": 4096, "global_batch": 16, "lora_base": "4bit"},
      "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 1, "pp": 1, "dp": 8, "zero": 1}})");
  const json auto_peft = planner::plan_json(qlora, catalog);
  CHECK(auto_peft["framework"] == "hf-accelerate");
  // One stack per layout: planned as PEFT, it is timed and held as PEFT's eager block.
  json stated = qlora;
  stated["job"]["framework"] = "hf-accelerate";
  const json peft = planner::plan_json(stated, catalog);
  CHECK(auto_peft["step_time_s"] == peft["step_time_s"]);
  CHECK(auto_peft["memory_gb"] == peft["memory_gb"]);
  qlora["layout"]["zero"] = 3;
  CHECK(planner::plan_json(qlora, catalog)["framework"] == "fsdp");
  qlora["layout"] = {{"tp", 1}, {"pp", 1}, {"cp", 2}, {"dp", 4}};
  try {
    planner::plan_json(qlora, catalog);
    FAIL("QLoRA with cp 2 planned");
  } catch (const Error& e) {
    CHECK(e.field() == "layout.cp");
  }

  const json floor = json::parse(R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 2048, "tokens": 1e11},
      "constraints": {"min_nodes": 100, "instances": ["aws:p5.48xlarge"], "objective": "time"}})");
  const json r = planner::recommend_json(floor, catalog, 3);
  if (r["results"].empty()) {
    REQUIRE(r["rejected"].size() == 1);
    CHECK_FALSE(r["rejected"][0]["reasons"].empty());
  } else {
    for (const json& plan : r["results"]) CHECK(plan["nodes"].get<int>() >= 100);
  }
  // Exactly 100 nodes of 8 GPUs hold no layout of a 2048-sequence batch: the answer says so.
  json exact = floor;
  exact["constraints"]["max_nodes"] = 100;
  const json none = planner::recommend_json(exact, catalog, 3);
  REQUIRE(none["results"].empty());
  REQUIRE(none["rejected"].size() == 1);
  CHECK(none["rejected"][0]["reasons"][0]["detail"].get<std::string>().find("no layout of this job splits") == 0);
}

// GB300 lists GB200's FP8 and BF16 peaks but runs the same recipes faster (constants.cpp
// gemm_efficiency_ratio_gb300, fit on GB300/GB200 pairs): its tensor-core work, and only its, is
// scaled; GB200's is not, and a GB300 with the ratio at 1 is timed as GB200.
TEST_CASE("GB300's tensor-core work runs at its fitted ratio over GB200's, the same peaks otherwise") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  auto workload_on = [&](const char* gpu) {
    json doc = json::parse(R"({"model": {"preset": "llama3.1-70b"},
        "job": {"kind": "pretrain", "precision": "fp8", "seq_len": 8192, "global_batch": 64},
        "hardware": {"custom": {"gpu_model": "", "gpu_count": 4, "intra_node_fabric": "nvswitch",
                                "nvlink_domain_gpus": 72, "network_type": "infiniband",
                                "network_gbits_per_s": 1600}, "nodes": 16},
        "layout": {"tp": 4, "pp": 4, "dp": 4, "micro_batch": 1, "recompute": "selective"}})");
    doc["hardware"]["custom"]["gpu_model"] = gpu;
    return planner::parse_workload(doc, catalog);
  };
  const planner::PlannerConstants& shipped = planner::default_constants();
  REQUIRE(shipped.gemm_efficiency_ratio_gb300 > 1.1);
  planner::PlannerConstants neutral = shipped;
  neutral.gemm_efficiency_ratio_gb300 = 1.0;
  const planner::Workload on_gb200 = workload_on("GB200"), on_gb300 = workload_on("GB300");
  const planner::Estimate gb200 = estimate_with(on_gb200, shipped), gb300 = estimate_with(on_gb300, shipped);
  CHECK(estimate_with(on_gb300, neutral).compute == Approx(gb200.compute).epsilon(1e-9));
  CHECK(estimate_with(on_gb200, neutral).compute == Approx(gb200.compute).epsilon(1e-12));
  // Compute is tensor-core work plus memory-bound passes the ratio leaves alone: faster, by less than it.
  const double speedup = gb200.compute / gb300.compute;
  CHECK(speedup > 1.05);
  CHECK(speedup < shipped.gemm_efficiency_ratio_gb300);
  CHECK(gb300.step < gb200.step);
  // FP4 GEMMs keep Blackwell's efficiency: GB300's datasheet FP4 peak is already 1.5 x GB200's.
  const Gpu& gb300_gpu = on_gb300.hardware->gpu;
  CHECK(planner::gb300_tensor_ratio(gb300_gpu, planner::Precision::fp8, shipped) ==
        shipped.gemm_efficiency_ratio_gb300);
  CHECK(planner::gb300_tensor_ratio(gb300_gpu, planner::Precision::bf16, shipped) ==
        shipped.gemm_efficiency_ratio_gb300);
  CHECK(planner::gb300_tensor_ratio(gb300_gpu, planner::Precision::fp4, shipped) == 1.0);
  CHECK(planner::gb300_tensor_ratio(on_gb200.hardware->gpu, planner::Precision::fp8, shipped) == 1.0);
  // plan() times GB300 with the shipped ratio too, and says so.
  const planner::Plan planned = planner::plan(on_gb300);
  CHECK(planned.step_time_s == Approx(gb300.step).epsilon(1e-9));
  CHECK(std::any_of(planned.warnings.begin(), planned.warnings.end(), [](const std::string& w) {
    return w.rfind("GB300: its fp8 GEMMs and its attention run at", 0) == 0;
  }));
}

TEST_CASE("DeepSpeed's pipeline engine adds its fitted time to every layer pass, and only there") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  auto workload = [&](const char* framework, int pp, const char* preset = "llama3.1-70b") {
    json doc = json::parse(R"({"model": {"preset": ""},
        "job": {"kind": "pretrain", "precision": "bf16", "seq_len": 4096, "global_batch": 64, "framework": ""},
        "hardware": {"custom": {"gpu_model": "A100-SXM4-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
                                "network_type": "infiniband", "network_gbits_per_s": 1600}, "nodes": 8},
        "layout": {"tp": 8, "pp": 0, "micro_batch": 1, "recompute": "full", "zero": 1}})");
    doc["model"]["preset"] = preset;
    doc["job"]["framework"] = framework;
    doc["layout"]["pp"] = pp;
    return planner::parse_workload(doc, catalog);
  };
  const planner::PlannerConstants& shipped = planner::default_constants();
  REQUIRE(shipped.deepspeed_pipeline_layer_overhead_s > 1e-3);
  planner::PlannerConstants without = shipped;
  without.deepspeed_pipeline_layer_overhead_s = 0;

  // pp 4 on 64 GPUs: dp 2, 32 micro-batches, 20 of the 80 layers per stage, three passes each
  // (forward, backward, the recomputed forward). The stage's compute per micro-batch grows by
  // 20 x 3 x the constant: compute by that times the micro-batches, the bubble by pp - 1 times it.
  // The step grows by both, less what the longer backward now hides of the gradient reduction.
  const planner::Workload piped = workload("deepspeed", 4);
  const planner::Estimate with_it = estimate_with(piped, shipped), bare = estimate_with(piped, without);
  const double per_micro_batch = 20 * 3 * shipped.deepspeed_pipeline_layer_overhead_s;
  CHECK(with_it.micro_batches == 32);
  CHECK(with_it.compute - bare.compute == Approx(32 * per_micro_batch).epsilon(1e-9));
  CHECK(with_it.pp_bubble - bare.pp_bubble == Approx(3 * per_micro_batch).epsilon(1e-9));
  CHECK(with_it.step - bare.step > 32 * per_micro_batch);
  CHECK(with_it.step - bare.step <= (32 + 3) * per_micro_batch * (1 + 1e-9));

  // A MoE layer's pass takes the same time, beside (not hidden behind) its host-side router time:
  // Mixtral 8x7B, 8 of its 32 layers per stage.
  const planner::Workload moe = workload("deepspeed", 4, "mixtral-8x7b");
  const planner::Estimate moe_with = estimate_with(moe, shipped), moe_bare = estimate_with(moe, without);
  CHECK(moe_with.compute - moe_bare.compute ==
        Approx(moe_with.micro_batches * 8 * 3 * shipped.deepspeed_pipeline_layer_overhead_s).epsilon(1e-9));

  // Not without pipeline parallelism (DeepSpeed's ZeRO engine), nor under another stack.
  const planner::Workload flat = workload("deepspeed", 1);
  CHECK(estimate_with(flat, shipped).step == estimate_with(flat, without).step);
  const planner::Workload megatron = workload("megatron-core", 4);
  CHECK(estimate_with(megatron, shipped).step == estimate_with(megatron, without).step);

  // The plan says how much of its step the profile is, and the step without it (a later release
  // of the engine loses much less).
  auto profile_warning = [](const planner::Plan& p) {
    const auto it = std::find_if(p.warnings.begin(), p.warnings.end(), [](const std::string& w) {
      return w.rfind("job.framework deepspeed with pp > 1: ", 0) == 0;
    });
    return it == p.warnings.end() ? std::string() : *it;
  };
  const planner::Plan planned = planner::plan(piped);
  const std::string said = profile_warning(planned);
  CHECK(planned.step_time_s == Approx(with_it.step).epsilon(1e-9));
  char of_step[64], nearer[64];
  std::snprintf(of_step, sizeof of_step, "%.3g s of the %.3g s step", with_it.step - bare.step, with_it.step);
  std::snprintf(nearer, sizeof nearer, "nearer %.3g s", bare.step);
  CHECK(said.find(of_step) != std::string::npos);
  CHECK(said.find(nearer) != std::string::npos);
  CHECK(profile_warning(planner::plan(flat)).empty());
  CHECK(profile_warning(planner::plan(megatron)).empty());

  // recommend's plans say it too: every pipelined one, and none without a pipeline.
  const json found = planner::recommend_json(json::parse(R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "pretrain", "precision": "bf16", "seq_len": 4096, "global_batch": 64, "tokens": 1e9,
              "framework": "deepspeed"},
      "constraints": {"instances": ["aws:p4d.24xlarge"], "max_nodes": 8}})"),
                                             catalog, 10);
  int piped_plans = 0;
  for (const json& p : found["results"]) {
    const bool warned = std::any_of(p["warnings"].begin(), p["warnings"].end(), [](const json& w) {
      return w.get<std::string>().rfind("job.framework deepspeed with pp > 1: ", 0) == 0;
    });
    CHECK(warned == (p["layout"]["pp"].get<int>() > 1));
    piped_plans += p["layout"]["pp"].get<int>() > 1;
  }
  CHECK(piped_plans > 0);
}

TEST_CASE("the gradient reduction moves the buffer's dtype and its last bucket never hides") {
  // Nemotron-4 15B as its report ran it (TP 8, one GPU per node in each DP group): the same work per
  // rank at DP 96 and DP 288. Megatron-Core's bucket grows with the DP group (max(40M, 1M x dp)
  // parameters), and the bucket holding the first layers is reduced after the last backward and
  // gathered before the first forward, so the exposed time grows with DP although the overlap
  // would hide the whole reduction.
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  auto nemotron = [&](int nodes, const char* grad_reduce) {
    json doc = json::parse(R"({"model": {"layers": 32, "hidden": 6144, "heads": 48, "kv_heads": 8,
        "ffn_hidden": 24576, "vocab": 256000, "gated_mlp": false, "dropout": false},
      "job": {"kind": "pretrain", "seq_len": 4096, "precision": "bf16", "framework": "megatron-core"},
      "hardware": {"custom": {"gpu_model": "H100-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
        "nvlink_gbytes_per_s": 900, "network_type": "infiniband", "network_gbits_per_s": 3200}},
      "layout": {"tp": 8, "pp": 1, "micro_batch": 4, "zero": 1, "recompute": "none", "sequence_parallel": true}})");
    doc["hardware"]["nodes"] = nodes;
    doc["layout"]["dp"] = nodes;
    doc["job"]["global_batch"] = 4 * nodes;
    doc["job"]["grad_reduce_dtype"] = grad_reduce;
    return planner::plan(planner::parse_workload(doc, catalog));
  };
  const planner::Plan dp96 = nemotron(96, "fp32"), dp288 = nemotron(288, "fp32");
  INFO("exposed DP time: " << dp96.time_s.dp_exposed << " s at DP 96, " << dp288.time_s.dp_exposed << " s at DP 288");
  CHECK(dp288.time_s.compute == Approx(dp96.time_s.compute).epsilon(0.01));
  // At DP 288 the bucket is 288M fp32 gradients of the 1.95B a GPU holds: its reduce-scatter and the
  // first bucket's all-gather at 45 GB/s per GPU, ~0.026 + ~0.013 s; DP 96's bucket is a third of
  // that, and what the last backward leaves unhidden of the whole reduction is more there.
  CHECK(dp288.time_s.dp_exposed > 0.035);
  CHECK(dp288.time_s.dp_exposed > 1.3 * dp96.time_s.dp_exposed);
  CHECK(dp288.step_time_s > dp96.step_time_s);
  // job.grad_reduce_dtype moves the reduce-scatter's bytes, not only the buffer's memory: in bf16
  // the reduction takes about two thirds of fp32's time (the all-gather of the weights is 16-bit
  // either way).
  const planner::Plan bf16 = nemotron(288, "bf16");
  CHECK(bf16.time_s.dp_comm < 0.8 * dp288.time_s.dp_comm);
  CHECK(bf16.time_s.dp_comm > 0.55 * dp288.time_s.dp_comm);
  CHECK(bf16.memory_gb.gradients < dp288.memory_gb.gradients);
}

TEST_CASE("the gradient reduction follows the stack a layout is planned as") {
  // `auto` with the optimizer offloaded at ZeRO-3 is planned as DeepSpeed (ZeRO-Offload), whose
  // reduction is 16-bit: the same time and memory as the job that names DeepSpeed.
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  auto llama8b = [&](const char* framework, const char* offload, int zero, const char* grad_reduce = nullptr) {
    json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "precision": "bf16"},
      "hardware": {"custom": {"gpu_model": "H100-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
        "nvlink_gbytes_per_s": 900, "network_type": "infiniband", "network_gbits_per_s": 400}, "nodes": 2},
      "layout": {"tp": 1, "pp": 1, "dp": 16, "micro_batch": 1, "recompute": "full"}})");
    doc["job"]["framework"] = framework;
    doc["job"]["offload"] = offload;
    doc["layout"]["zero"] = zero;
    if (grad_reduce) doc["job"]["grad_reduce_dtype"] = grad_reduce;
    return planner::plan(planner::parse_workload(doc, catalog));
  };
  const planner::Plan planned = llama8b("auto", "optimizer", 3), named = llama8b("deepspeed", "optimizer", 3);
  CHECK(planned.framework == "deepspeed");
  // ... so a stated fp32 reduction, which it would not heed, is an error naming the field.
  try {
    llama8b("auto", "optimizer", 3, "fp32");
    FAIL("auto ZeRO-Offload with grad_reduce_dtype fp32 planned");
  } catch (const Error& e) {
    CHECK(e.field() == "job.grad_reduce_dtype");
  }
  CHECK(planned.time_s.dp_comm == Approx(named.time_s.dp_comm).epsilon(1e-9));
  CHECK(planned.memory_gb.total == Approx(named.memory_gb.total).epsilon(1e-9));
  // Hugging Face Accelerate's FSDP reduces in the mixed-precision dtype; PyTorch FSDP, as torchtitan
  // runs it, in fp32 by default.
  const planner::Plan accelerate = llama8b("hf-accelerate", "none", 3), fsdp = llama8b("fsdp", "none", 3);
  CHECK(accelerate.time_s.dp_comm < 0.85 * fsdp.time_s.dp_comm);
  // A dtype the job states is followed, the stack's default only where it states none.
  CHECK(llama8b("hf-accelerate", "none", 3, "fp32").time_s.dp_comm == Approx(fsdp.time_s.dp_comm).epsilon(1e-9));
  // Accelerate's FSDP plugin has no optimizer-only offload: its DeepSpeed plugin is job.framework deepspeed.
  try {
    llama8b("hf-accelerate", "optimizer", 3);
    FAIL("hf-accelerate with job.offload optimizer planned");
  } catch (const Error& e) {
    CHECK(e.field() == "job.offload");
  }
  // DeepSpeed's ZeRO-1 gathers the updated weights after the optimizer step, in the open: its
  // exposed reduction is more than Megatron-Core's, which hides the gather in the next forward (the
  // same 16-bit gradients for both).
  const planner::Plan deepspeed = llama8b("deepspeed", "none", 1),
                      megatron = llama8b("megatron-core", "none", 1, "bf16");
  CHECK(deepspeed.time_s.dp_comm == Approx(megatron.time_s.dp_comm).epsilon(0.1));  // buckets differ
  CHECK(deepspeed.time_s.dp_exposed > megatron.time_s.dp_exposed);
}

TEST_CASE("Transformer Engine's TP overlap hides what its GEMMs cover, never less than one chunk, by default where "
          "NVIDIA's recipes run it") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  json doc = read_json_file(std::string(LINKWISE_TEST_DATA_DIR) + "/examples/pretrain-llama3.1-70b-p5.json", "example");
  const json by_default = planner::plan_json(doc, catalog);
  doc["layout"]["tp_comm_overlap"] = false;
  const json off = planner::plan_json(doc, catalog);
  doc["layout"]["tp_comm_overlap"] = true;
  const json on = planner::plan_json(doc, catalog);
  // Dense bf16 under Megatron-Core's runtime with SP at TP 8 inside the node: on by default, and said so.
  CHECK(by_default["layout"]["tp_comm_overlap"] == true);
  CHECK(by_default["step_time_s"] == on["step_time_s"]);
  const auto warns = [](const json& p, const std::string& what) {
    for (const auto& w : p["warnings"])
      if (w.get<std::string>().find(what) != std::string::npos) return true;
    return false;
  };
  CHECK(warns(by_default, "layout.tp_comm_overlap not stated"));
  CHECK_FALSE(warns(on, "layout.tp_comm_overlap not stated"));
  // The same bytes move; less of them shows, but at least one chunk in tp (8) of each collective.
  const double tp_comm = off["time_s"]["tp_comm"], exposed_off = off["time_s"]["tp_exposed"];
  const double exposed_on = on["time_s"]["tp_exposed"];
  CHECK(on["time_s"]["tp_comm"].get<double>() == Approx(tp_comm));
  CHECK(exposed_off == Approx(tp_comm));
  CHECK(exposed_on < 0.5 * tp_comm);
  CHECK(exposed_on >= tp_comm / 8.0 * 0.999);
  CHECK(on["step_time_s"].get<double>() < off["step_time_s"].get<double>());
  CHECK(on["time_s"]["compute"] == off["time_s"]["compute"]);
  // fp4 and mixture-of-experts models: off by default (their published recipes leave it off).
  doc["layout"].erase("tp_comm_overlap");
  doc["job"]["precision"] = "fp4";
  doc["constraints"] = json::object();
  doc["hardware"] = {{"custom",
                      {{"gpu_model", "B200-SXM-180GB"},
                       {"gpu_count", 8},
                       {"intra_node_fabric", "nvswitch"},
                       {"nvlink_gbytes_per_s", 1800},
                       {"network_type", "infiniband"},
                       {"network_gbits_per_s", 3200}}},
                     {"nodes", 16}};
  CHECK(planner::plan_json(doc, catalog)["layout"]["tp_comm_overlap"] == false);
  doc["job"]["precision"] = "fp8";
  CHECK(planner::plan_json(doc, catalog)["layout"]["tp_comm_overlap"] == true);
}
