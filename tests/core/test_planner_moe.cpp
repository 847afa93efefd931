// Mixture-of-experts, MLA, FP4 and NVLink domains beyond the node: parameter counts against the
// presets' published totals, the contract's errors, expert sharding, the all-to-all's volume and
// placement, the pruned search with ep, and DeepSeek-V3's pre-training against its report.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner.hpp"
#include "planner_test_util.hpp"

using namespace linkwise;
using nlohmann::json;

namespace {

const Catalog& real_catalog() {
  static const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  return catalog;
}

// Serving `preset` on one p5.48xlarge as 8 replicas (tp 1, dp 8, `ep` expert groups): 1k prompt,
// 1k output, fp8, `concurrent` sequences; and its estimate under constants `k`.
planner::Workload serve_on_p5(const std::string& preset, int concurrent, int ep = 1) {
  json doc = json::parse(R"({"job": {"kind": "inference", "prompt_len": 1024, "output_len": 1024,
      "tokens": 1e9, "precision": "fp8"}, "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1}})");
  doc["model"] = {{"preset", preset}};
  doc["job"]["concurrent"] = concurrent;
  doc["layout"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", ep}};
  return planner::parse_workload(doc, real_catalog());
}

planner::Estimate estimate(const planner::Workload& w, const planner::PlannerConstants& k) {
  const planner::Layout l = planner::complete_layout(w, 8);
  return planner::estimate(planner::prepare_model(w.model, w.job),
                           planner::prepare_hardware(*w.hardware, w.job, k, nullptr, false), 1, l, k);
}

std::string field_of(const json& doc) {
  try {
    (void)planner::plan(planner::parse_workload(doc, real_catalog()));
  } catch (const Error& e) {
    return e.field();
  }
  return "";
}

// A GB200-like tray (4 GPUs) whose NVLink domain spans `domain` GPUs; the price is the test's input.
Instance tray(const Gpu& gpu, const std::string& name, int domain, double price) {
  Instance in = planner_test::node(gpu, "custom", name, Fabric::nvswitch, 1600, price);
  in.gpu_count = 4;
  in.nvlink_domain_gpus = domain;
  return in;
}

}  // namespace

TEST_CASE("MoE presets: total and active parameters match the published figures") {
  struct Case {
    const char* name;
    double total_b, active_b, tolerance;
  };
  // Published: DeepSeek-V3 report (671B / 37B), Mixtral paper (46.7B / 12.9B), Mistral (141B / 39B),
  // Qwen3 report Table 2, Meta's Llama 4 cards (text weights), OpenAI's gpt-oss card (active
  // parameters there exclude the input embedding; ours count it: gpt-oss within 15%).
  const Case cases[] = {
      {"deepseek-v3", 671, 37, 0.02},     {"mixtral-8x7b", 46.7, 12.9, 0.01}, {"mixtral-8x22b", 141, 39, 0.01},
      {"qwen3-30b-a3b", 30.5, 3.3, 0.03}, {"qwen3-235b-a22b", 235, 22, 0.02}, {"llama4-scout", 109, 17, 0.02},
      {"llama4-maverick", 400, 17, 0.02},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const planner::ModelShape& m = planner::preset(c.name);
    CHECK(m.total_params() / 1e9 == Approx(c.total_b).epsilon(c.tolerance));
    CHECK(m.active_params() / 1e9 == Approx(c.active_b).epsilon(c.tolerance + 0.01));
  }
  CHECK(planner::preset("gpt-oss-120b").total_params() / 1e9 == Approx(116.8).epsilon(0.01));
  CHECK(planner::preset("gpt-oss-120b").active_params() / 1e9 == Approx(5.1).epsilon(0.15));
  CHECK(planner::preset("gpt-oss-20b").total_params() / 1e9 == Approx(20.9).epsilon(0.01));
  // Dense presets: active equals total.
  CHECK(planner::preset("llama3.3-70b").active_params() == planner::preset("llama3.3-70b").total_params());
  CHECK(planner::preset("Qwen3-32B").total_params() / 1e9 == Approx(32.8).epsilon(0.01));  // case-insensitive
  // MLA caches 512 + 64 elements per token per layer: 70 KB per token in bf16 over 61 layers.
  const auto& ds = planner::preset("deepseek-v3");
  CHECK(ds.kv_elements_per_token_layer() == 576);
  CHECK(ds.moe_layers() == 58);
  CHECK(planner::preset("llama4-maverick").moe_layers() == 24);
  // models_json lists every preset with its source.
  const json models = planner::models_json()["models"];
  CHECK(models.size() == planner::preset_names().size());
  for (const auto& m : models) CHECK_FALSE(m["source"].get<std::string>().empty());
}

TEST_CASE("the moe and attention objects: errors name the field") {
  const json base =
      json::parse(R"({"model": {"layers": 8, "hidden": 1024, "heads": 8, "vocab": 32000, "gated_mlp": true,
      "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 2048}},
      "job": {"kind": "pretrain", "seq_len": 2048, "global_batch": 16},
      "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 1, "pp": 1, "ep": 8}})");
  CHECK(field_of(base).empty());
  auto with = [&](const char* pointer, const json& value) {
    json d = base;
    d[json::json_pointer(pointer)] = value;
    return field_of(d);
  };
  CHECK(with("/model/moe/experts_per_token", 2) == "model.moe.experts_per_token");
  CHECK(with("/model/moe/top_k", 9) == "model.moe.top_k");
  CHECK(with("/model/moe/experts", 0) == "model.moe.experts");
  CHECK(with("/model/moe/experts", 1 << 20) == "model.moe.experts");
  CHECK(with("/model/moe/dense_layers", 8) == "model.moe.dense_layers");
  CHECK(with("/model/moe/router", "hash") == "model.moe.router");
  CHECK(with("/model/moe/capacity_factor", 0.5) == "model.moe.capacity_factor");
  CHECK(with("/model/attention", json{{"kind", "mla"}}) == "model.attention.kv_lora_rank");
  CHECK(with("/model/attention", json{{"kind", "gqa"}, {"kv_lora_rank", 512}}) == "model.attention.kv_lora_rank");
  CHECK(with("/model/attention", json{{"kind", "sliding"}}) == "model.attention.kind");
  CHECK(with("/model/attention", json{{"kind", "gqa"}, {"head_dim", 0}}) == "model.attention.head_dim");
  CHECK(with("/model/experts", 8) == "model.experts");
  CHECK(with("/layout/ep", 3) == "layout.ep");   // does not divide the experts
  CHECK(with("/layout/ep", 16) == "layout.ep");  // more than the experts
  CHECK(with("/layout/etp", 3) == "layout.etp");
  CHECK(with("/layout/ep", 0) == "layout.ep");
  CHECK(with("/job/kv_cache_precision", "fp8") == "job.kv_cache_precision");  // training job
  CHECK(with("/job/precision", "fp4") == "job.precision");                    // H100: no FP4 tensor cores
  // preset plus shapes, ep on a dense model
  CHECK(field_of(json::parse(R"({"model": {"preset": "deepseek-v3", "moe": {"experts": 8}}, "job": {"kind": "pretrain",
      "seq_len": 2048, "global_batch": 16}, "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 1, "pp": 1}})")) ==
        "model.moe");
  CHECK(field_of(json::parse(R"({"model": {"preset": "llama3.1-8b"}, "job": {"kind": "pretrain", "seq_len": 2048,
      "global_batch": 16}, "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 1, "pp": 1, "ep": 2}})")) ==
        "layout.ep");
  // ep x etp must divide tp x cp x dp
  CHECK(field_of(json::parse(R"({"model": {"preset": "mixtral-8x7b"}, "job": {"kind": "pretrain", "seq_len": 2048,
      "global_batch": 16}, "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 2, "pp": 4, "ep": 4}})")) ==
        "layout.ep");
  // nvlink_domain_gpus on custom hardware
  CHECK(field_of(json::parse(R"({"model": {"preset": "mixtral-8x7b"}, "job": {"kind": "pretrain", "seq_len": 2048,
      "global_batch": 16}, "hardware": {"custom": {"gpu_model": "GB200", "gpu_count": 4, "intra_node_fabric": "nvswitch",
      "nvlink_domain_gpus": 70}}, "layout": {"tp": 1, "pp": 1}})")) == "hardware.custom.nvlink_domain_gpus");
  // the catalog's own rules (check_instance_links): under the node's GPUs behind an NVSwitch, above 1
  // on PCIe
  CHECK(field_of(json::parse(R"({"model": {"preset": "mixtral-8x7b"}, "job": {"kind": "pretrain", "seq_len": 2048,
      "global_batch": 16}, "hardware": {"custom": {"gpu_model": "GB200", "gpu_count": 4, "intra_node_fabric": "nvswitch",
      "nvlink_domain_gpus": 2}}, "layout": {"tp": 1, "pp": 1}})")) == "hardware.custom.nvlink_domain_gpus");
  CHECK(field_of(json::parse(R"({"model": {"preset": "mixtral-8x7b"}, "job": {"kind": "pretrain", "seq_len": 2048,
      "global_batch": 16}, "hardware": {"custom": {"gpu_model": "H100-SXM5-80GB", "gpu_count": 8, "intra_node_fabric":
      "pcie", "nvlink_domain_gpus": 8}}, "layout": {"tp": 1, "pp": 1}})")) == "hardware.custom.nvlink_domain_gpus");
  // ... and what it accepts: NVLink bridges joining pairs (as the catalog's 4-GPU A100 bridged
  // instances), planned as one domain of the node (prepare.cpp), like such a catalog record.
  const planner::Plan bridged = planner::plan(planner::parse_workload(json::parse(R"({"model": {"preset":
      "mixtral-8x7b"}, "job": {"kind": "pretrain", "seq_len": 2048, "global_batch": 16}, "hardware": {"custom":
      {"gpu_model": "A100-SXM4-80GB", "gpu_count": 4, "intra_node_fabric": "nvlink", "nvlink_domain_gpus": 2}},
      "layout": {"tp": 4, "pp": 1}})"),
                                                                      real_catalog()));
  CHECK(bridged.nvlink_domain_gpus == 4);
}

TEST_CASE("FP4 runs on Blackwell at its FP4 peak and is refused elsewhere") {
  const char* text = R"({"model": {"preset": "deepseek-v3"},
      "job": {"kind": "inference", "precision": "fp4", "prompt_len": 2048, "output_len": 512, "concurrent": 64},
      "hardware": {"instance": "aws:p6-b200.48xlarge"}, "layout": {"tp": 8, "pp": 1, "ep": 8}})";
  const planner::Plan fp4 = planner::plan(planner::parse_workload(json::parse(text), real_catalog()));
  json fp8_doc = json::parse(text);
  fp8_doc["job"]["precision"] = "fp8";
  const planner::Plan fp8 = planner::plan(planner::parse_workload(fp8_doc, real_catalog()));
  // 671B at 4.5 bits = 377 GB over 8 GPUs: 47 GB each (fp8: 84 GB).
  CHECK(fp4.memory_gb.weights == Approx(671.0 * 4.5 / 8 / 8).epsilon(0.01));
  CHECK(fp8.memory_gb.weights == Approx(671.0 / 8).epsilon(0.01));
  CHECK(fp4.fits);
  CHECK(*fp4.tpot_s < *fp8.tpot_s);  // decode streams fewer bytes
  json h100 = json::parse(text);
  h100["hardware"]["instance"] = "aws:p5.48xlarge";
  try {
    (void)planner::parse_workload(h100, real_catalog());
    (void)planner::plan(planner::parse_workload(h100, real_catalog()));
    FAIL("fp4 on H100 accepted");
  } catch (const Error& e) {
    CHECK(e.field() == "job.precision");
    CHECK(std::string(e.what()).find("no fp4 tensor cores (hopper)") != std::string::npos);
  }
  // KV cache in bf16 by default even for fp8 weights; fp8 when asked.
  json kv = fp8_doc;
  kv["job"]["kv_cache_precision"] = "fp8";
  const planner::Plan kv8 = planner::plan(planner::parse_workload(kv, real_catalog()));
  CHECK(kv8.memory_gb.kv_cache == Approx(fp8.memory_gb.kv_cache / 2).epsilon(1e-9));
  // MLA: 61 layers x 576 elements x 2 bytes x 2560 tokens x 64 sequences, whole on every TP rank.
  CHECK(fp8.memory_gb.kv_cache == Approx(61.0 * 576 * 2 * 2560 * 64 / 1e9).epsilon(1e-9));
}

TEST_CASE("expert weights and their optimizer states are sharded over EP and the expert-DP group") {
  const planner::ModelShape& m = planner::preset("mixtral-8x7b");
  planner::Job job;
  job.kind = planner::JobKind::pretrain;
  job.seq_len = 4096;
  job.global_batch = 64;
  const planner::PreparedModel pm = planner::prepare_model(m, job);
  const planner::Hardware hw = planner_test::dgx(planner_test::h100_80());
  const planner::PreparedHardware ph = planner::prepare_hardware(hw, job, planner::default_constants(), nullptr, false);
  planner::Layout l1;
  l1.dp = 8;
  l1.zero = 1;
  planner::Layout l8 = l1;
  l8.ep = 8;
  planner::Estimate e1, e8;
  planner::estimate_memory(pm, ph, l1, planner::default_constants(), e1);
  planner::estimate_memory(pm, ph, l8, planner::default_constants(), e8);
  const double experts = m.moe_layers() * m.moe.experts * m.expert_params();
  const double dense = m.total_params() - experts - m.hidden;  // the final norm sits on no stage's count
  CHECK(e1.weights == Approx(2.0 * (dense + experts)).epsilon(1e-9));
  CHECK(e8.weights == Approx(2.0 * (dense + experts / 8)).epsilon(1e-9));
  // ZeRO-1: dense states over dp = 8; experts over edp = 8 / 8 = 1 at ep 8, over 8 at ep 1.
  CHECK(e8.optimizer == Approx(12.0 * (dense / 8 + experts / 8)).epsilon(1e-9));
  CHECK(e1.optimizer == Approx(12.0 * (dense + experts) / 8).epsilon(1e-9));
  CHECK(l8.edp() == 1);
}

TEST_CASE("serving places the experts as the engines do when the layout does not say") {
  // `vllm serve -tp 8` (and SGLang --tp 8, TensorRT-LLM --tp 8) split every expert over the 8 TP
  // GPUs; with expert parallelism inside the TP group the rest of it splits each expert
  // (TensorRT-LLM moe_tp_size = tp / moe_ep_size); EP wider than the TP group keeps experts whole.
  CHECK(planner::serving_default_etp(8, 1) == 8);
  CHECK(planner::serving_default_etp(8, 2) == 4);
  CHECK(planner::serving_default_etp(8, 8) == 1);
  CHECK(planner::serving_default_etp(1, 8) == 1);  // attention DP + EP: tp 1, experts whole
  CHECK(planner::serving_default_etp(4, 3) == 1);  // ep not a divisor of tp: no split
  auto plan_of = [](const json& layout) {
    json d = json::parse(R"({"model": {"preset": "deepseek-v3"},
        "job": {"kind": "inference", "precision": "fp8", "prompt_len": 1024, "output_len": 256, "concurrent": 32},
        "hardware": {"instance": "aws:p5en.48xlarge"}})");
    d["layout"] = layout;
    d["layout"]["pp"] = 1;
    return planner::plan(planner::parse_workload(d, real_catalog()));
  };
  // DeepSeek-V3 fp8 on 8 x H200 at tp 8: the standard deployment fits, experts an eighth per GPU.
  const auto tp8 = plan_of({{"tp", 8}});
  CHECK(tp8.layout.etp == 8);
  CHECK(tp8.fits);
  CHECK(tp8.memory_gb.weights < 100);
  // Stated placements are kept: etp 1 at tp 8 copies every expert onto every GPU and does not fit.
  const auto replicated = plan_of({{"tp", 8}, {"etp", 1}});
  CHECK(replicated.layout.etp == 1);
  CHECK_FALSE(replicated.fits);
  CHECK(plan_of({{"tp", 8}, {"ep", 8}}).layout.etp == 1);
  // Training keeps Megatron-Core's layout as written (etp 1 unless stated).
  json t = json::parse(R"({"model": {"preset": "mixtral-8x7b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e9},
      "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 8, "pp": 1}})");
  CHECK(planner::plan(planner::parse_workload(t, real_catalog())).layout.etp == 1);
}

TEST_CASE("gpt-oss's MXFP4 experts: their stored size in serving memory, dequantised for training") {
  // The released checkpoint keeps the MoE weights in MXFP4 (4.25 bits), the rest in BF16: gpt-oss-120b
  // is served on one 80 GB H100 (vLLM's and OpenAI's recipes), not refused as an fp8/bf16 copy would be.
  CHECK(planner::preset("gpt-oss-120b").moe.expert_weights == "mxfp4");
  CHECK(planner::preset("qwen3-235b-a22b").moe.expert_weights.empty());
  auto plan_of = [](const char* kind_json, const char* layout) {
    json d = json::parse(R"({"model": {"preset": "gpt-oss-120b"}, "hardware": {"instance": "aws:p5.4xlarge"}})");
    d["job"] = json::parse(kind_json);
    d["layout"] = json::parse(layout);
    return planner::plan(planner::parse_workload(d, real_catalog()));
  };
  const char* serve =
      R"({"kind": "inference", "precision": "bf16", "prompt_len": 1024, "output_len": 512, "concurrent": 16})";
  const planner::Plan one_h100 = plan_of(serve, R"({"tp": 1, "pp": 1})");
  CHECK(one_h100.fits);
  const planner::ModelShape m = planner::preset("gpt-oss-120b");
  const double experts = m.moe_layers() * m.moe.experts * m.expert_params();
  const double rest = m.total_params() - experts - m.hidden;  // the final norm sits on no stage's count
  CHECK(one_h100.raw.weights == Approx(experts * 4.25 / 8 + rest * 2).epsilon(1e-6));
  // Training dequantises them: a 16-bit copy of every expert.
  const char* train = R"({"kind": "finetune", "seq_len": 4096, "global_batch": 8, "tokens": 1e8})";
  const planner::Plan tuned = plan_of(train, R"({"tp": 1, "pp": 1, "zero": 0})");
  CHECK(tuned.raw.weights == Approx((experts + rest) * 2).epsilon(1e-6));
  // The field is checked like any other.
  json bad = json::parse(R"({"model": {"layers": 4, "hidden": 512, "heads": 8,
      "moe": {"experts": 8, "top_k": 2, "expert_ffn_hidden": 256, "expert_weights": "int4"}},
      "job": {"kind": "inference", "prompt_len": 16, "output_len": 16, "concurrent": 1},
      "hardware": {"instance": "aws:p5.4xlarge"}, "layout": {"tp": 1, "pp": 1}})");
  try {
    planner::parse_workload(bad, real_catalog());
    FAIL("expected invalid_input");
  } catch (const Error& e) {
    CHECK(e.field() == "model.moe.expert_weights");
  }
  bad["model"]["moe"]["expert_weights"] = 4;  // a wrong type names the field too
  try {
    planner::parse_workload(bad, real_catalog());
    FAIL("expected invalid_input");
  } catch (const Error& e) {
    CHECK(e.field() == "model.moe.expert_weights");
  }
  bad["model"]["moe"]["expert_weights"] = nullptr;  // null: the job's precision
  CHECK(planner::parse_workload(bad, real_catalog()).model.moe.expert_weights.empty());
  bad["model"]["moe"]["expert_weights"] = "mxfp4";
  CHECK(planner::plan(planner::parse_workload(bad, real_catalog())).fits);
}

TEST_CASE("the all-to-all: volume, NVLink inside the domain, the network outside it") {
  const planner::ModelShape& m = planner::preset("mixtral-8x7b");
  planner::Job job;
  job.kind = planner::JobKind::pretrain;
  job.seq_len = 4096;
  job.global_batch = 64;
  const planner::PlannerConstants& k = planner::default_constants();
  const planner::PreparedModel pm = planner::prepare_model(m, job);
  const planner::Hardware hw = planner_test::dgx(planner_test::h100_80(), 3200);
  const planner::PreparedHardware ph = planner::prepare_hardware(hw, job, k, nullptr, false);
  planner::Layout l;
  l.dp = 16;
  l.ep = 8;
  planner::Estimate inside;
  planner::estimate_time(pm, ph, 2, l, k, inside);
  CHECK(inside.ep_inside_domain);
  // Per MoE layer per micro-batch: forward dispatch + combine, backward both, each of the busiest
  // rank's rows x hidden x 2 bytes, (n-1)/n of it at the NVSwitch busbw, plus its latency.
  const double rows = 4096.0 * 2 * k.moe_load_imbalance;
  const double one = 7.0 / 8 * rows * 4096 * 2 / ph.intra_busbw + ph.intra_latency_s;
  const double micro_batches = 64.0 / 16;
  CHECK(inside.ep_comm == Approx(micro_batches * 32 * 4 * one).epsilon(1e-9));
  CHECK(inside.ep_exposed == Approx(inside.ep_comm).epsilon(1e-12));  // Megatron default: not overlapped
  // ep 16 over two nodes: half of each all-to-all leaves the node on the NIC.
  l.ep = 16;
  l.dp = 16;
  planner::PreparedModel pm16 = pm;
  pm16.experts = 16;  // a 16-expert variant of the same shape
  planner::Estimate across;
  planner::estimate_time(pm16, ph, 2, l, k, across);
  CHECK_FALSE(across.ep_inside_domain);
  CHECK(across.ep_comm > 3 * inside.ep_comm);  // 45 GB/s of NIC per GPU against 360 of NVSwitch busbw
  // The same 16 GPUs as four 4-GPU trays in one 72-GPU NVLink domain: back on NVLink.
  Instance nvl = tray(planner_test::h100_80(), "tray", 72, 10);
  const planner::Hardware tray_hw{nvl, planner_test::h100_80(), true};
  const planner::PreparedHardware tray_p = planner::prepare_hardware(tray_hw, job, k, nullptr, false);
  planner::Estimate domain;
  planner::estimate_time(pm16, tray_p, 4, l, k, domain);
  CHECK(domain.ep_inside_domain);
  CHECK(domain.ep_comm < across.ep_comm / 3);
  // Overlap hides it behind the other micro-batch's compute.
  l.overlap_a2a = true;
  planner::Estimate hidden;
  planner::estimate_time(pm16, ph, 2, l, k, hidden);
  CHECK(hidden.ep_exposed < across.ep_exposed);
  CHECK(hidden.step < across.step);
}

TEST_CASE("decode streams only the experts the batch touches") {
  const planner::ModelShape& m = planner::preset("deepseek-v3");
  const planner::Job one = planner_test::inference(1024, 256, 1), many = planner_test::inference(1024, 256, 256);
  const planner::PreparedModel p1 = planner::prepare_model(m, one), p256 = planner::prepare_model(m, many);
  planner::Layout l;
  l.tp = 8;
  l.ep = 8;
  const planner::MoeRows r1 = planner::moe_rows(p1, 1, 8, l), r256 = planner::moe_rows(p256, 256, 8, l);
  CHECK(r1.local_experts == 32);
  CHECK(r1.touched == Approx(8.0 * 8 / 256 * 32 / 8 + 0).margin(1.0));  // about 1 of 32 local experts per layer
  CHECK(r256.touched > 30);                                             // nearly all
  // The plan's decode bytes (and its bottleneck words) count the touched experts, not all it holds;
  // a dense model reads all of its weights.
  auto plan_of = [](const char* preset, int concurrent) {
    json d = json::parse(R"({"job": {"kind": "inference", "precision": "fp8", "prompt_len": 1024, "output_len": 256},
        "hardware": {"instance": "aws:p5en.48xlarge"}, "layout": {"tp": 8, "pp": 1}})");
    d["model"]["preset"] = preset;
    d["job"]["concurrent"] = concurrent;
    const planner::Workload w = planner::parse_workload(d, real_catalog());
    const planner::Plan p = planner::plan(w);
    return p;
  };
  const planner::Plan few = plan_of("deepseek-v3", 1), full = plan_of("deepseek-v3", 256);
  CHECK(few.raw.decode_weight_bytes < 0.2 * few.raw.weights);
  CHECK(full.raw.decode_weight_bytes > 0.9 * full.raw.weights);
  INFO(full.bottleneck);
  CHECK(full.bottleneck.find("the experts its tokens route to") != std::string::npos);
  const planner::Plan dense = plan_of("llama3.1-70b", 8);
  CHECK(dense.raw.decode_weight_bytes == Approx(dense.raw.weights));
  CHECK(dense.raw.decode_kv_bytes < dense.raw.kv_cache);  // the mean context, not every full length
}

TEST_CASE("MoE serving: the training fit's grouped-GEMM shape efficiency at the expert's width, no host term") {
  // Serving reuses moe_gemm_half_dim with n = min(expert width, hidden), in prefill and decode;
  // the rows per expert do not enter, and the training MoE layer's host time is not charged
  // (time_model.cpp serving_grouped_gemm_efficiency; docs/calibration.md).
  const planner::PlannerConstants& shipped = planner::default_constants();
  planner::PlannerConstants no_shape = shipped, more_host = shipped;
  no_shape.moe_gemm_half_dim = 0;
  more_host.moe_layer_overhead_s *= 10;
  more_host.moe_host_hide_s *= 10;

  // Qwen3-30B-A3B's 768-wide experts at a large batch: decode and prefill both pay the shape loss.
  const planner::Workload big = serve_on_p5("qwen3-30b-a3b", 2048);
  const planner::Estimate with = estimate(big, shipped), without = estimate(big, no_shape);
  CHECK(with.tpot > 1.02 * without.tpot);
  CHECK(with.ttft_under_load > 1.05 * without.ttft_under_load);
  CHECK(with.tokens_per_s < without.tokens_per_s);
  // One sequence: a few rows per expert. Were the rows part of n, the ~1100 phantom rows per expert
  // would dwarf the weight stream; at the expert's width the step barely moves.
  const planner::Workload one = serve_on_p5("qwen3-30b-a3b", 8);
  CHECK(estimate(one, shipped).tpot < 1.10 * estimate(one, no_shape).tpot);
  CHECK(estimate(one, shipped).ttft < 1.25 * estimate(one, no_shape).ttft);
  // No MoE host time in serving: its constants change nothing.
  CHECK(estimate(big, more_host).tpot == with.tpot);
  CHECK(estimate(big, more_host).ttft_under_load == with.ttft_under_load);
  // Expert TP splits each expert's GEMMs over ranks without narrowing n: at etp 2 each rank's
  // expert GEMMs take half the time and so half the shape loss (were n the split width, 384, the
  // loss per rank would stay about what it is at etp 1).
  auto prefill_shape_loss = [&](int tp) {
    planner::Workload w = big;
    w.layout.tp = w.layout.etp = tp;
    w.layout.dp = 8 / tp;
    return estimate(w, shipped).ttft - estimate(w, no_shape).ttft;
  };
  const double loss_etp1 = prefill_shape_loss(1), loss_etp2 = prefill_shape_loss(2);
  REQUIRE(loss_etp1 > 0);
  CHECK(loss_etp2 / loss_etp1 == Approx(0.5).margin(0.1));
  // Dense serving does not see the MoE constants.
  const planner::Workload dense = serve_on_p5("llama3.1-8b", 2048);
  CHECK(estimate(dense, no_shape).tpot == estimate(dense, shipped).tpot);
  CHECK(estimate(dense, no_shape).ttft == estimate(dense, shipped).ttft);
}

TEST_CASE("MoE serving: per routed row and, with experts over ranks, per layer and step, dense untouched") {
  // moe_serving_routed_row_s is paid on the busiest rank's routed rows of every step (top_k rows per
  // token), moe_serving_ep_layer_sync_s once per MoE layer per step only where ep > 1
  // (time_model.cpp inference branch; docs/calibration.md "MoE serving fit set").
  const planner::PlannerConstants& shipped = planner::default_constants();
  REQUIRE(shipped.moe_serving_routed_row_s > 0);
  REQUIRE(shipped.moe_serving_ep_layer_sync_s > 0);
  planner::PlannerConstants none = shipped, rows_only = shipped;
  none.moe_serving_routed_row_s = none.moe_serving_ep_layer_sync_s = 0;
  rows_only.moe_serving_ep_layer_sync_s = 0;

  // One GPU per replica (ep 1): only the routed rows pay, top_k (8) rows per decoded sequence on
  // each of the 48 MoE layers.
  const planner::Workload solo = serve_on_p5("qwen3-30b-a3b", 256, 1);
  const planner::Estimate base = estimate(solo, none), paid = estimate(solo, shipped);
  const double rows_per_step = base.sequences * 8;
  CHECK(paid.tpot - base.tpot == Approx(48 * rows_per_step * shipped.moe_serving_routed_row_s).epsilon(1e-6));
  CHECK(paid.ttft_under_load > base.ttft_under_load);  // prefill chunks pay per routed row too
  CHECK(estimate(solo, rows_only).tpot == paid.tpot);  // no sync without expert parallelism

  // Experts over 8 ranks: each decode step also pays the sync once per MoE layer, whatever the batch.
  const planner::Workload ep8 = serve_on_p5("qwen3-30b-a3b", 256, 8);
  const planner::Estimate sync = estimate(ep8, shipped), no_sync = estimate(ep8, rows_only);
  CHECK(sync.tpot - no_sync.tpot == Approx(48 * shipped.moe_serving_ep_layer_sync_s).epsilon(1e-6));
  CHECK(sync.tokens_per_s < no_sync.tokens_per_s);

  // Dense serving does not see either constant.
  const planner::Workload dense = serve_on_p5("llama3.1-8b", 256, 1);
  CHECK(estimate(dense, none).tpot == estimate(dense, shipped).tpot);
  CHECK(estimate(dense, none).ttft_under_load == estimate(dense, shipped).ttft_under_load);
}

TEST_CASE("pruned search equals exhaustive search on MoE workloads") {
  const Gpu h100 = planner_test::h100_80(), a100 = planner_test::a100_80();
  const Catalog catalog({a100, h100}, {planner_test::node(h100, "aws", "p5.48xlarge", Fabric::nvswitch, 3200, 98.3),
                                       planner_test::node(a100, "aws", "p4de.24xlarge", Fabric::nvswitch, 400, 40.97),
                                       tray(h100, "nvl-tray", 72, 50.0)});
  const char* workloads[] = {
      R"({"model": {"preset": "mixtral-8x7b"}, "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e10},
          "constraints": {"max_nodes": 4}})",
      R"({"model": {"preset": "qwen3-30b-a3b"}, "job": {"kind": "finetune", "seq_len": 4096, "global_batch": 32, "tokens": 1e9},
          "constraints": {"max_nodes": 4, "objective": "time"}})",
      R"({"model": {"preset": "mixtral-8x7b"}, "job": {"kind": "pretrain", "precision": "fp8", "seq_len": 4096, "global_batch": 32,
          "tokens": 1e10}, "layout": {"overlap_a2a": true}, "constraints": {"max_nodes": 3, "tp_across_nodes": true}})",
      R"({"model": {"preset": "mixtral-8x22b"}, "job": {"kind": "inference", "prompt_len": 2048, "output_len": 512, "concurrent": 64,
          "tokens": 1e9}, "constraints": {"max_nodes": 2}})",
      // Multi-node wide-EP serving: 671B in fp8 does not fit one 8 x 80 GB node, so the EP group
      // leaves the node over the network (and 61 layers split unevenly when pipelined).
      R"({"model": {"preset": "deepseek-v3"}, "job": {"kind": "inference", "precision": "fp8", "prompt_len": 2048, "output_len": 512,
          "concurrent": 64, "tokens": 1e9}, "constraints": {"instances": ["aws:p5.48xlarge"], "max_nodes": 4}})",
  };
  for (const char* text : workloads) {
    INFO(text);
    const planner::Workload w = planner::parse_workload(json::parse(text), catalog);
    for (int top : {1, 5}) {
      planner::SearchOptions exhaustive;
      exhaustive.exhaustive = true;
      const auto full = planner::search(w, catalog, top, nullptr, exhaustive);
      const auto pruned = planner::search(w, catalog, top, nullptr);
      REQUIRE_FALSE(full.plans.empty());
      REQUIRE(full.plans.size() == pruned.plans.size());
      for (size_t i = 0; i < full.plans.size(); ++i) {
        CHECK(full.plans[i].instance == pruned.plans[i].instance);
        CHECK(full.plans[i].nodes == pruned.plans[i].nodes);
        CHECK(planner::to_json(full.plans[i].layout) == planner::to_json(pruned.plans[i].layout));
        CHECK(full.plans[i].step_time_s == pruned.plans[i].step_time_s);
      }
      CHECK(pruned.evaluated <= full.evaluated);
    }
  }
}

TEST_CASE("an NVL72 domain wins an EP-heavy workload because of its NVLink, and the why says so") {
  const Gpu gb200 = real_catalog().gpu("GB200");
  // The same tray at the same price, once in a 72-GPU NVLink domain and once cut to its 4 GPUs.
  const Catalog catalog({gb200}, {tray(gb200, "nvl72-tray", 72, 40.0), tray(gb200, "isolated-tray", 4, 40.0)});
  const json doc = json::parse(R"({"model": {"preset": "deepseek-v3"},
      "job": {"kind": "inference", "precision": "fp4", "prompt_len": 1024, "output_len": 1024, "concurrent": "max", "tokens": 1e9},
      "constraints": {"min_nodes": 8, "max_nodes": 16}})");
  const json r = planner::recommend_json(doc, catalog, 3);
  REQUIRE_FALSE(r["results"].empty());
  const json& best = r["results"][0];
  CHECK(best["instance"] == "custom:nvl72-tray");
  CHECK(best["layout"]["ep"].get<int>() > 4);
  INFO(best.dump(1));
  CHECK(best["why"].get<std::string>().find("72-GPU NVLink domain") != std::string::npos);
}

TEST_CASE("DeepSeek-V3 pre-training on 2048 H800 with its published layout: GPU-hours and memory against the report") {
  // DeepSeek-V3 technical report (arXiv 2412.19437) section 3.1 and Table 1: 2,048 H800 in nodes of
  // 8 (NVLink 400 GB/s, 8 x 400 Gbit/s InfiniBand), PP16, EP64 over 8 nodes, ZeRO-1 DP, DualPipe,
  // FP8, sequence 4096, batch 15360 (after its ramp-up), 14.8T tokens in 2.664M GPU-hours of
  // pre-training (2.788M with context extension and post-training), no full recompute, in 80 GB.
  // Held out: nothing was fit to it.
  json doc = json::parse(R"({"model": {"preset": "deepseek-v3"},
      "job": {"kind": "pretrain", "precision": "fp8", "seq_len": 4096, "global_batch": 15360, "tokens": 14.8e12,
              "framework": "hai-llm"},
      "hardware": {"custom": {"gpu_model": "H800-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
        "nvlink_gbytes_per_s": 400, "network_type": "infiniband", "network_gbits_per_s": 3200}, "nodes": 256},
      "layout": {"tp": 1, "pp": 16, "ep": 64, "dp": 128, "micro_batch": 1, "zero": 1, "recompute": "none", "dualpipe": true}})");
  const planner::Plan p = planner::plan(planner::parse_workload(doc, real_catalog()));
  const double gpu_hours = *p.job_hours * p.gpus;
  const double published = 2.664e6;
  INFO("predicted " << gpu_hours / 1e6 << "M H800 GPU-hours vs 2.664M published (pre-training)");
  CHECK(std::abs(gpu_hours / published - 1) <= 0.20);
  CHECK(p.active_params_b == Approx(37).epsilon(0.02));
  // Memory: with the report's own savings (framework hai-llm: RMSNorm and MLA up-projections
  // recomputed, FP8 Linear inputs and SwiGLU inputs cached, BF16 AdamW moments) the layout fits the
  // 80 GB it ran on; held as Megatron-Core holds activations (all kept, 16-bit but for Transformer
  // Engine's FP8 copies of the Linear inputs) it does not.
  INFO("hai-llm: " << p.memory_gb.total << " GB of " << p.memory_gb.capacity);
  CHECK(p.fits);
  doc["job"].erase("framework");
  const planner::Plan megatron = planner::plan(planner::parse_workload(doc, real_catalog()));
  CHECK_FALSE(megatron.fits);
  CHECK(p.memory_gb.optimizer == Approx(megatron.memory_gb.optimizer * 8.0 / 12.0).epsilon(1e-9));  // BF16 moments
  CHECK(p.memory_gb.gradients == Approx(megatron.memory_gb.gradients).epsilon(1e-9));  // fp32 gradients kept
  CHECK(p.memory_gb.weights == Approx(megatron.memory_gb.weights).epsilon(1e-9));      // DualPipe's two copies
  CHECK(p.memory_gb.activations < 0.5 * megatron.memory_gb.activations);
  // The recomputation costs a little time, never saves any compute: compared with the grouped
  // GEMMs' shape loss off for both, since hai-llm's DeepGEMM grouped GEMMs have none (time_model.cpp),
  // and with one attention kernel for both (the default profile runs Transformer Engine's fused one).
  planner::PlannerConstants k = planner::default_constants();
  k.moe_gemm_half_dim = 0;
  k.te_attention_speedup = 1.0;
  const auto compute_s = [&](const json& d) {
    const planner::Workload w = planner::parse_workload(d, real_catalog());
    const planner::Layout l = planner::complete_layout(w, 2048);
    return planner::estimate(planner::prepare_model(w.model, w.job),
                             planner::prepare_hardware(*w.hardware, w.job, k, nullptr, false), 256, l, k)
        .compute;
  };
  json hai = doc;
  hai["job"]["framework"] = "hai-llm";
  CHECK(compute_s(hai) > compute_s(doc));
  CHECK(compute_s(hai) < 1.05 * compute_s(doc));
  // With the shipped grouped-GEMM constants Megatron-Core's grouped GEMMs at DeepSeek-V3's 2048-wide
  // experts lose to DeepGEMM's: with one attention kernel for both, the default framework's compute
  // is the longer one.
  planner::PlannerConstants shipped_gemms = planner::default_constants();
  shipped_gemms.te_attention_speedup = 1.0;
  const auto compute_shipped = [&](const json& d) {
    const planner::Workload w = planner::parse_workload(d, real_catalog());
    const planner::Layout l = planner::complete_layout(w, 2048);
    return planner::estimate(planner::prepare_model(w.model, w.job),
                             planner::prepare_hardware(*w.hardware, w.job, shipped_gemms, nullptr, false), 256, l,
                             shipped_gemms)
        .compute;
  };
  CHECK(compute_shipped(doc) > compute_shipped(hai));
}

TEST_CASE("hai-llm's dispatch crosses the network once per target node, at most 4 nodes (DeepSeek-V3 report 3.2.2)") {
  // DeepSeek-V3's layout (EP64 over 8 nodes of 8 H800, top-8 of 256 experts): NCCL's all-to-all
  // sends each of a token's 8 routed rows, 7/8 of them over the NIC; DeepSeek's kernels send the
  // token once to each of at most 4 target nodes (of which 7/8 are remote: 3.5 copies per token)
  // and forward it on NVLink. The NIC bytes, which bound the exchange, halve.
  json doc = json::parse(R"({"model": {"preset": "deepseek-v3"},
      "job": {"kind": "pretrain", "precision": "fp8", "seq_len": 4096, "global_batch": 15360, "tokens": 14.8e12},
      "hardware": {"custom": {"gpu_model": "H800-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
        "nvlink_gbytes_per_s": 400, "network_type": "infiniband", "network_gbits_per_s": 3200}, "nodes": 256},
      "layout": {"tp": 1, "pp": 16, "ep": 64, "dp": 128, "micro_batch": 1, "zero": 1, "recompute": "none"}})");
  const planner::Plan nccl = planner::plan(planner::parse_workload(doc, real_catalog()));
  doc["job"]["framework"] = "hai-llm";
  const planner::Plan hai = planner::plan(planner::parse_workload(doc, real_catalog()));
  INFO("all-to-all per step: NCCL " << nccl.time_s.ep_comm << " s, hai-llm " << hai.time_s.ep_comm << " s");
  REQUIRE(nccl.time_s.ep_comm > 0);
  CHECK(hai.time_s.ep_comm == Approx(0.5 * nccl.time_s.ep_comm).epsilon(0.03));
  // Inside one node (ep 8) nothing crosses the network: the same exchange for both.
  doc["layout"]["ep"] = 8;
  const planner::Plan hai8 = planner::plan(planner::parse_workload(doc, real_catalog()));
  doc["job"].erase("framework");
  const planner::Plan nccl8 = planner::plan(planner::parse_workload(doc, real_catalog()));
  CHECK(hai8.time_s.ep_comm == Approx(nccl8.time_s.ep_comm).epsilon(1e-9));
}

TEST_CASE("MoE plans from presets: three models x pre-training, fine-tuning, serving x H100, H200, B200, GB200 NVL72") {
  // The issue's done-when, on the real catalog: every combination gives a fitting plan with ep
  // placed by the search. GB200 comes from the catalog's NVL72 trays (4 GPUs, 72-GPU domain).
  const char* jobs[] = {
      R"({"kind": "pretrain", "precision": "fp8", "seq_len": 4096, "global_batch": 1024, "tokens": 1e12})",
      R"({"kind": "finetune", "seq_len": 4096, "global_batch": 256, "tokens": 1e9})",
      R"({"kind": "inference", "precision": "fp8", "prompt_len": 2048, "output_len": 512, "concurrent": 64, "tokens": 1e9})",
  };
  const char* models[] = {"deepseek-v3", "qwen3-235b-a22b", "mixtral-8x22b"};
  const char* gpus[] = {"H100", "H200", "B200", "GB200"};
  for (const char* model : models)
    for (const char* job : jobs)
      for (const char* gpu : gpus) {
        json doc;
        doc["model"]["preset"] = model;
        doc["job"] = json::parse(job);
        doc["constraints"]["gpu_models"] = {gpu};
        INFO(doc.dump());
        const json r = planner::recommend_json(doc, real_catalog(), 1);
        REQUIRE(r["results"].size() == 1);
        const json& best = r["results"][0];
        INFO(best["instance"] << " " << best["layout"].dump());
        CHECK(best["fits"].get<bool>());
        const std::string gpu_model = best["gpu_model"];
        CHECK(gpu_model.rfind(gpu, 0) == 0);
        if (std::string(gpu) == "GB200") CHECK(best["nvlink_domain_gpus"].get<int>() == 72);
        // Training: where EP pays the search takes it, DeepSeek-V3 everywhere, Qwen3-235B and
        // Mixtral-8x22B for fine-tuning. Their fp8 pre-training at this batch can be cheapest as ZeRO-3
        // with every expert local, so ep stays the search's free choice there: Qwen3-235B's EP
        // all-to-all would cross the network at 8 x 4096 x 2 bytes per token and layer (H100, 32
        // nodes: ep 1, ZeRO-3, micro-batch 4, $496k); Mixtral-8x22B on H100 plans at ep 1 (8 nodes, ZeRO-3,
        // micro-batch 4, full recompute, $381k) since the expert-DP group is priced on its NICs.
        // Mixtral-8x22B fine-tuning on H100: since the expert-DP group is priced on one NIC per hop
        // (ep 8 on 8-GPU nodes leaves one member of each group per node, time_model.cpp), ep 8 and
        // ep 1 move the same expert-gradient bytes per node, and ep 1 under ZeRO-3 (its 8 experts
        // local, no all-to-all) plans cheapest on 64 H100; ep stays the search's choice there too.
        // Serving at 64 sequences: the engines' own placement, each expert split over the TP GPUs
        // (etp = tp / ep, serving_default_etp), is a candidate beside EP and can win at this batch (no
        // exchange, no wait for the slowest rank); what must never happen is a copy of every expert
        // on every GPU of a TP group (tp > 1 with ep x etp 1).
        const bool pretrain = std::string(job).find("pretrain") != std::string::npos;
        const bool serving = std::string(job).find("inference") != std::string::npos;
        const bool mixtral_h100_finetune = std::string(job).find("finetune") != std::string::npos &&
                                           std::string(model) == "mixtral-8x22b" && std::string(gpu) == "H100";
        const int expert_shards = best["layout"]["ep"].get<int>() * best["layout"]["etp"].get<int>();
        if (serving) CHECK((best["layout"]["tp"].get<int>() == 1 || expert_shards > 1));
        else if (!(pretrain && std::string(model) != "deepseek-v3") && !mixtral_h100_finetune)
          CHECK(best["layout"]["ep"].get<int>() > 1);
      }
}

TEST_CASE("DeepSeek-V3 fp8 serving on H100 spans nodes with the EP group on the network") {
  // SGLang and vLLM serve DeepSeek-V3 fp8 on 2 x 8 H100 (TP16, or DP attention + EP16 across the
  // nodes); 671 GB of fp8 weights do not fit one node of 8 x 80 GB.
  const json doc = json::parse(R"({"model": {"preset": "deepseek-v3"},
      "job": {"kind": "inference", "prompt_len": 2048, "output_len": 512, "concurrent": 64, "tokens": 1e9, "precision": "fp8"},
      "constraints": {"gpu_models": ["H100"]}})");
  const json r = planner::recommend_json(doc, real_catalog(), 3);
  REQUIRE_FALSE(r["results"].empty());
  for (const json& p : r["results"]) {
    INFO(p["instance"] << " " << p["layout"].dump());
    CHECK(p["nodes"].get<int>() >= 2);
    CHECK(p["layout"]["tp"].get<int>() <= p["gpus_per_node"].get<int>());  // TP stays inside the node
    const int ep = p["layout"]["ep"];
    if (ep * p["layout"]["etp"].get<int>() > p["gpus_per_node"].get<int>()) {
      CHECK(p["why"].get<std::string>().find("over the network") != std::string::npos);
      CHECK(p["time_s"]["ep_comm"].get<double>() > 0);
    }
  }
  CHECK(r["results"][0]["layout"]["ep"].get<int>() > 8);  // wide EP beats a full replica per node
}

TEST_CASE("a catalog NVL72 offering wins wide-EP serving because of its NVLink domain") {
  // CoreWeave's GB200 NVL72 tray against an 8 x B200 HGX node, DeepSeek-V3 in fp4 at the concurrency
  // that fills the KV pools (the throughput regime wide EP is for) on at least 8 instances and at
  // most 64 GPUs, ranked by time (the tray costs more per GPU: by cost the B200 node wins): the tray wins with the EP
  // group inside its 72-GPU domain. The same tray cut to its own 4 GPUs (the domain is the only change) loses to the
  // B200 node: the domain is the reason.
  const Catalog& real = real_catalog();
  const Instance& tray72 = real.instance("coreweave:gb200-4x");
  const Instance& hgx = real.instance("nebius:gpu-b200-sxm_8gpu-160vcpu-1792gb");
  REQUIRE(tray72.nvlink_domain_gpus.value_or(0) == 72);
  Instance cut = tray72;
  cut.name = "gb200-4x-cut";
  cut.id = cut.provider + ":" + cut.name;
  cut.nvlink_domain_gpus = 4;
  const json doc = json::parse(R"({"model": {"preset": "deepseek-v3"},
      "job": {"kind": "inference", "precision": "fp4", "prompt_len": 1024, "output_len": 1024, "concurrent": "max", "tokens": 1e10},
      "constraints": {"min_nodes": 8, "max_gpus": 64, "objective": "time"}})");
  const Catalog with_domain({real.gpu("GB200"), real.gpu(hgx.gpu_model)}, {tray72, hgx});
  const json r = planner::recommend_json(doc, with_domain, 2, nullptr, planner::Grouping::instance);
  REQUIRE(r["results"].size() == 2);
  const json& best = r["results"][0];
  INFO(best.dump(1));
  CHECK(best["instance"] == "coreweave:gb200-4x");
  CHECK(best["layout"]["ep"].get<int>() > 4);
  CHECK(best["why"].get<std::string>().find("72-GPU NVLink domain") != std::string::npos);
  const Catalog without_domain({real.gpu("GB200"), real.gpu(hgx.gpu_model)}, {cut, hgx});
  const json r_cut = planner::recommend_json(doc, without_domain, 2, nullptr, planner::Grouping::instance);
  REQUIRE_FALSE(r_cut["results"].empty());
  CHECK(r_cut["results"][0]["instance"] == hgx.id);
  // The trays' NVLink between instances holds only in one rack: the winning plan says so, the
  // 8-GPU node's does not (its domain ends at the instance).
  auto rack_warning = [](const json& plan) {
    for (const json& w : plan["warnings"])
      if (w.get<std::string>().find("ask for rack placement") != std::string::npos) return true;
    return false;
  };
  CHECK(rack_warning(best));
  CHECK_FALSE(rack_warning(r_cut["results"][0]));
  // Independent serving replicas, one per tray, send nothing between trays: no warning; a TP group
  // across two trays does.
  json replicas = json::parse(R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "inference", "precision": "fp8", "prompt_len": 1000, "output_len": 1000, "concurrent": 64},
      "hardware": {"instance": "coreweave:gb200-4x", "nodes": 2}, "layout": {"tp": 4, "pp": 1}})");
  CHECK_FALSE(rack_warning(planner::plan_json(replicas, real)));
  replicas["layout"]["tp"] = 8;
  CHECK(rack_warning(planner::plan_json(replicas, real)));
}

TEST_CASE("hai-llm keeps what DeepSeek-V3's report says it keeps, term by term") {
  // A dense Llama-like layer (no MLA, no experts) so each saving is one term of the per-token
  // activation bytes, against the default profile's Transformer Engine in FP8 (Linear inputs kept
  // as their FP8 copies, 1 byte): the two RMSNorm outputs (1h each in FP8) are recomputed, the
  // attention output is cached in E5M6 (1.5 bytes, 0.5 more than FP8) and the MLP keeps only
  // SwiGLU's FP8 inputs (2 x ffn x 1 byte instead of gate and up in 16-bit and the FP8 product, 5 x ffn).
  const planner::ModelShape& m = planner::preset("llama3.1-8b");
  planner::Job job;
  job.kind = planner::JobKind::pretrain;
  job.precision = planner::Precision::fp8;
  job.seq_len = 4096;
  job.global_batch = 8;
  const planner::PlannerConstants& k = planner::default_constants();
  const planner::Hardware hw = planner_test::dgx(planner_test::h100_80());
  planner::Layout l;
  l.dp = 8;
  planner::Job hai = job;
  hai.framework = planner::Framework::hai_llm;
  const auto ph = planner::prepare_hardware(hw, job, k, nullptr, false);
  planner::Estimate standard, saved;
  planner::estimate_memory(planner::prepare_model(m, job), ph, l, k, standard);
  planner::estimate_memory(planner::prepare_model(m, hai), ph, l, k, saved);
  const double h = m.hidden, ffn = m.ffn_hidden, tokens = 4096;
  CHECK(standard.activations - saved.activations ==
        Approx(m.layers * tokens * (2 * h - 0.5 * h + 3 * ffn)).epsilon(1e-9));
  // BF16 AdamW moments: 8 bytes of optimizer state per parameter instead of 12, fp32 gradients kept.
  CHECK(saved.optimizer == Approx(standard.optimizer * 8.0 / 12.0).epsilon(1e-12));
  CHECK(saved.gradients == Approx(standard.gradients).epsilon(1e-12));
  // In bf16 the Linear inputs stay 16-bit: SwiGLU's inputs 2 x ffn x 2 bytes, the attention output 2.
  planner::Job hai16 = hai, job16 = job;
  hai16.precision = job16.precision = planner::Precision::bf16;
  planner::Estimate standard16, saved16;
  const auto ph16 = planner::prepare_hardware(hw, job16, k, nullptr, false);
  planner::estimate_memory(planner::prepare_model(m, job16), ph16, l, k, standard16);
  planner::estimate_memory(planner::prepare_model(m, hai16), ph16, l, k, saved16);
  CHECK(standard16.activations - saved16.activations == Approx(m.layers * tokens * (4 * h + 2 * ffn)).epsilon(1e-9));
  // The recomputation costs time, never saves it.
  planner::Estimate t_standard = standard, t_saved = saved;
  planner::estimate_time(planner::prepare_model(m, job), ph, 1, l, k, t_standard);
  planner::estimate_time(planner::prepare_model(m, hai), ph, 1, l, k, t_saved);
  CHECK(t_saved.compute > t_standard.compute);
}

TEST_CASE("recommend ranks plans that clear the memory error band before tight ones") {
  // A 174B model in fp8 just fits one B200 (173.9 GB of weights, inside the 10% band of the 192.8
  // GB card before a single sequence's KV cache): the cheapest plan is `tight`. A plan that may
  // not start is not the better buy, so the 2-GPU plans rank first although they cost more, and
  // the tight one follows. (The serving engines size their KV pool at start-up, so what is at
  // risk is the weights, activations and one sequence: memory_model.cpp.)
  json doc = json::parse(R"({"model": {"params_b": 174},
      "job": {"kind": "inference", "precision": "fp8", "prompt_len": 256, "output_len": 256, "concurrent": 8, "tokens": 1e9},
      "constraints": {"instances": ["lambda:gpu_1x_b200_sxm6", "lambda:gpu_2x_b200_sxm6"]}})");
  const json r = planner::recommend_json(doc, real_catalog(), 10);
  REQUIRE(r["results"].size() >= 2);
  const json& best = r["results"][0];
  CHECK(best["memory_verdict"] == "fits");
  CHECK(best["instance"] == "lambda:gpu_2x_b200_sxm6");
  bool seen_tight = false;
  double cheapest_tight = 1e300;
  for (const json& p : r["results"]) {
    if (p["memory_verdict"] == "tight") {
      seen_tight = true;
      cheapest_tight = std::min(cheapest_tight, p["cost_usd"].get<double>());
    } else {
      CHECK_FALSE(seen_tight);  // no plan that clears the band after a tight one
    }
  }
  REQUIRE(seen_tight);
  CHECK(cheapest_tight < best["cost_usd"].get<double>());  // the order, not the cost, put it first

  // With only the one-GPU instance, the tight plan is the answer and `why` says nothing clears the band.
  doc["constraints"]["instances"] = {"lambda:gpu_1x_b200_sxm6"};
  const json only = planner::recommend_json(doc, real_catalog(), 1);
  REQUIRE(only["results"].size() == 1);
  CHECK(only["results"][0]["memory_verdict"] == "tight");
  CHECK(only["results"][0]["why"].get<std::string>().find("no plan the search found clears it") != std::string::npos);
}

TEST_CASE("sliding-window attention: the contract, gpt-oss's preset, attention time and KV cache") {
  const json base = json::parse(R"({"model": {"layers": 8, "hidden": 1024, "heads": 8, "vocab": 32000,
      "attention": {"kind": "gqa", "kv_heads": 2, "window": 128, "full_every": 2}},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 16},
      "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 1, "pp": 1}})");
  CHECK(field_of(base).empty());
  auto with = [&](const char* pointer, const json& value) {
    json d = base;
    d[json::json_pointer(pointer)] = value;
    return field_of(d);
  };
  CHECK(with("/model/attention/window", 0) == "model.attention.window");
  CHECK(with("/model/attention/window", "128") == "model.attention.window");
  CHECK(with("/model/attention/full_every", 0) == "model.attention.full_every");
  json no_window = base;
  no_window["model"]["attention"].erase("window");
  CHECK(field_of(no_window) == "model.attention.full_every");  // full_every needs a window

  const planner::ModelShape oss = planner::preset("gpt-oss-120b");
  CHECK(oss.attention_window == 128);
  CHECK(oss.windowed_layers() == 18);  // every other one of 36 layers (config.json layer_types)
  CHECK(planner::preset("gpt-oss-20b").windowed_layers() == 12);
  CHECK(planner::preset("qwen3-235b-a22b").windowed_layers() == 0);
  // Llama 4: chunked attention of 8192 tokens on the RoPE layers, full attention on every 4th.
  for (const char* name : {"llama4-scout", "llama4-maverick"}) {
    const planner::ModelShape l4 = planner::preset(name);
    CHECK(l4.attention_window == 8192);
    CHECK(l4.windowed_layers() == 36);  // 48 layers, NoPE (full) on layers 4, 8, ..., 48
  }

  // Keys per query: a 128-token window over 4096 tokens on half the layers.
  planner::Job job;
  job.seq_len = 4096;
  job.global_batch = 64;
  const auto m = planner::prepare_model(oss, job);
  CHECK(planner::attention_context(m, 4096) == Approx(0.5 * 4096 + 0.5 * 2 * 128 * (1 - 128.0 / 8192)));
  CHECK(planner::attention_context(m, 100) == Approx(100));  // the window covers the whole context
  CHECK(planner::kv_tokens(m, 4096) == Approx(0.5 * 4096 + 0.5 * 128));

  // Training: the same layout without the window spends more time in attention and counts more
  // model FLOPs per token.
  auto plan_of = [&](bool window, const char* job_json, const char* layout_json) {
    json d;
    if (window) d["model"] = {{"preset", "gpt-oss-120b"}};
    else  // the preset's shape, written out without the window
      d["model"] = json::parse(R"({"layers": 36, "hidden": 2880, "heads": 64, "ffn_hidden": 2880, "vocab": 201088,
          "gated_mlp": true, "attention": {"kind": "gqa", "kv_heads": 8, "head_dim": 64},
          "moe": {"experts": 128, "top_k": 4, "expert_ffn_hidden": 2880}})");
    d["job"] = json::parse(job_json);
    d["hardware"] = {{"instance", "aws:p5.48xlarge"}, {"nodes", 2}};
    if (layout_json) d["layout"] = json::parse(layout_json);
    return planner::plan(planner::parse_workload(d, real_catalog()));
  };
  const char* train = R"({"kind": "pretrain", "seq_len": 8192, "global_batch": 64, "tokens": 1e9})";
  const char* layout = R"({"tp": 1, "pp": 1, "dp": 16, "ep": 16, "micro_batch": 1, "zero": 1})";
  const auto windowed = plan_of(true, train, layout), full = plan_of(false, train, layout);
  REQUIRE(windowed.params_b == Approx(full.params_b).epsilon(1e-12));  // the same shape otherwise
  CHECK(windowed.time_s.compute < full.time_s.compute);
  CHECK(windowed.model_tflops_per_gpu * windowed.step_time_s < full.model_tflops_per_gpu * full.step_time_s);

  // Serving at a long context: the windowed half of the layers keeps 128 tokens per sequence.
  const char* serve =
      R"({"kind": "inference", "prompt_len": 8192, "output_len": 1024, "concurrent": 64, "tokens": 1e8})";
  const char* serve_layout = R"({"tp": 8, "pp": 1, "dp": 2, "ep": 8})";
  const auto kv_w = plan_of(true, serve, serve_layout), kv_f = plan_of(false, serve, serve_layout);
  CHECK(kv_w.memory_gb.kv_cache == Approx(kv_f.memory_gb.kv_cache * (0.5 * 9216 + 0.5 * 128) / 9216).epsilon(1e-9));
  CHECK(kv_w.time_s.compute < kv_f.time_s.compute);  // each decode step reads less KV cache
}

TEST_CASE("the expert-data-parallel group crosses nodes on one GPU's NIC per hop") {
  // Megatron-Core's expert rank order puts ep innermost: with ep 8 on 8-GPU nodes each node holds
  // one member of every expert-DP group, so the routed experts' gradient reduce-scatter and
  // parameter all-gather (distributed optimizer) run at one NIC's rate, not the node's eight.
  // Mixtral-8x7B: 45.1B expert parameters, 5.6B per GPU at ep 8, 11.3 GB in bf16, 22.6 GB as the
  // fp32 gradients Megatron-Core reduces by default; expert-DP 2 over 2 nodes of 8 x 400 Gbit/s
  // (50 GB/s per GPU, 0.9 achievable): reduce-scatter + all-gather (22.6 + 11.3) x 1/2 / 45 GB/s
  // = 0.38 s. Priced on the node's NICs it was an eighth of that.
  const json doc = json::parse(R"({"model": {"preset": "mixtral-8x7b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e9},
      "hardware": {"custom": {"gpu_model": "H100-SXM5-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
        "nvlink_gbytes_per_s": 900, "network_type": "infiniband", "network_gbits_per_s": 3200}, "nodes": 2},
      "layout": {"tp": 1, "pp": 1, "dp": 16, "ep": 8, "micro_batch": 1, "zero": 1, "recompute": "full"}})");
  const planner::Plan p = planner::plan(planner::parse_workload(doc, real_catalog()));
  CHECK(p.time_s.dp_comm > 0.34);
  CHECK(p.time_s.dp_comm < 0.50);
}
