// Hybrid sharding (Layout::dp_shard): the ZeRO states sharded over groups of dp_shard ranks and
// replicated across the groups, as PyTorch FSDP's HYBRID_SHARD, DeepSpeed's MiCS and Megatron-Core's
// distributed-optimizer instances run it.
#include <catch2/catch.hpp>

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner.hpp"
#include "linkwise/planner/framework_memory.hpp"
#include "planner_test_util.hpp"

using namespace linkwise;
using nlohmann::json;

namespace {

Catalog catalog() { return planner_test::one_node_catalog(planner_test::a100_80(), "test", "a100x8", 1600, 30.0); }

// Llama 2 7B on 16 nodes of 8 A100 over a slow network (50 Gbit/s per GPU), FSDP with bf16
// gradient reduction, no recompute: fms-fsdp's HSDP setting.
json fsdp_7b(std::optional<int> dp_shard, int zero = 3, double network_gbits = 400, const char* framework = "fsdp") {
  json w = json::parse(R"({
    "model": {"preset": "llama2-7b"},
    "job": {"kind": "pretrain", "precision": "bf16", "seq_len": 4096, "global_batch": 256, "framework": "fsdp",
            "grad_reduce_dtype": "bf16"},
    "hardware": {"custom": {"gpu_model": "A100-SXM4-80GB", "gpu_count": 8, "intra_node_fabric": "nvswitch",
                            "nvlink_gbytes_per_s": 600, "network_type": "roce"}, "nodes": 16},
    "layout": {"tp": 1, "pp": 1, "dp": 128, "micro_batch": 2, "recompute": "none"}})");
  w["hardware"]["custom"]["network_gbits_per_s"] = network_gbits;
  w["layout"]["zero"] = zero;
  w["job"]["framework"] = framework;
  if (std::string(framework) == "deepspeed") w["job"].erase("grad_reduce_dtype");  // DeepSpeed's own dtype
  if (dp_shard) w["layout"]["dp_shard"] = *dp_shard;
  return w;
}

// The field the error names, and its words after a bar: "layout.dp_shard|...".
std::string failing(const json& doc, bool recommend = false) {
  try {
    if (recommend) planner::recommend_json(doc, catalog(), 3);
    else planner::plan_json(doc, catalog());
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    return e.field() + "|" + e.what();
  }
  return "<no error>";
}
std::string failing_field(const json& doc, bool recommend = false) {
  const std::string f = failing(doc, recommend);
  return f.substr(0, f.find('|'));
}

// Mixtral 8x7B in the same setting: its experts' states shard over the expert-DP group, which
// hybrid sharding splits into copies as it does DP.
json fsdp_mixtral(std::optional<int> dp_shard, int ep = 1, double network_gbits = 100) {
  json w = fsdp_7b(dp_shard, 3, network_gbits);
  w["model"] = {{"preset", "mixtral-8x7b"}};
  if (ep > 1) w["layout"]["ep"] = ep;
  return w;
}

double dp_comm_s(const json& plan) { return plan["time_s"]["dp_comm"].get<double>(); }

}  // namespace

TEST_CASE("hybrid sharding holds each copy of the states over its shard group") {
  const json full = planner::plan_json(fsdp_7b(std::nullopt), catalog());
  const json hybrid = planner::plan_json(fsdp_7b(8), catalog());
  // The layout says it, and a fully sharded plan says dp_shard = dp.
  CHECK(full["layout"]["dp_shard"] == 128);
  CHECK(hybrid["layout"]["dp_shard"] == 8);
  // ZeRO-3: weights, gradients and optimizer states over 8 ranks, not 128.
  for (const char* part : {"weights", "gradients", "optimizer"})
    CHECK(hybrid["memory_gb"][part].get<double>() == Approx(16 * full["memory_gb"][part].get<double>()).epsilon(1e-9));
  CHECK(hybrid["memory_gb"]["activations"] == full["memory_gb"]["activations"]);
  // A plan's layout reads back.
  json again = fsdp_7b(std::nullopt);
  again["layout"] = hybrid["layout"];
  CHECK(planner::plan_json(again, catalog())["step_time_s"] == hybrid["step_time_s"]);
  // dp_shard = dp is full sharding, to the last bit.
  CHECK(planner::plan_json(fsdp_7b(128), catalog())["step_time_s"] == full["step_time_s"]);
  // Mixture of experts: the experts' states too (all but ~2 of Mixtral's 47 B parameters).
  const json moe_full = planner::plan_json(fsdp_mixtral(std::nullopt), catalog());
  const json moe_hybrid = planner::plan_json(fsdp_mixtral(8), catalog());
  CHECK(moe_hybrid["memory_gb"]["optimizer"].get<double>() ==
        Approx(16 * moe_full["memory_gb"]["optimizer"].get<double>()).epsilon(1e-9));
  // Two data-parallel communicators (the shard group's of 8 and the copies' of 16) where full
  // sharding holds one of 128: each costs its buffers, growing with log2 of its ranks, so the two
  // hold more (framework_overhead, with the same tensors on both layouts).
  const Catalog c = catalog();
  const planner::Workload w = planner::parse_workload(fsdp_7b(8), c);
  const planner::PlannerConstants& k = planner::default_constants();
  const planner::PreparedModel m = planner::prepare_model(w.model, w.job);
  const planner::PreparedHardware hw = planner::prepare_hardware(*w.hardware, w.job, k, nullptr, false);
  planner::Layout l = planner::complete_layout(w, 128);
  const auto overhead = [&] { return planner::framework_overhead(m, hw, l, k, 2e8, 7e9, 1e9, 2e10, 3e10).nccl; };
  const double two_communicators = overhead();
  l.dp_shard = 0;
  CHECK(two_communicators > overhead());
}

TEST_CASE("hybrid sharding moves the gathers onto NVLink and all-reduces the shards across the copies") {
  // On a slow network the full-sharding gathers cross it twice a step; hybrid sharding's only
  // network traffic is the copies' all-reduce of each reduced bf16 shard.
  const json full = planner::plan_json(fsdp_7b(std::nullopt, 3, 100), catalog());
  const json hybrid = planner::plan_json(fsdp_7b(8, 3, 100), catalog());
  CHECK(hybrid["time_s"]["dp_comm"].get<double>() < 0.8 * full["time_s"]["dp_comm"].get<double>());
  CHECK(hybrid["step_time_s"].get<double>() < full["step_time_s"].get<double>());
  // The bottleneck names where each part runs: the group's collectives on NVSwitch, the copies'
  // all-reduce on the network.
  INFO(hybrid["bottleneck"].get<std::string>());
  CHECK(hybrid["bottleneck"].get<std::string>().find("inside each shard group of 8 ranks (over nvswitch") !=
        std::string::npos);
  CHECK(hybrid["bottleneck"].get<std::string>().find("16 copies' all-reduce over 100 Gbit/s") != std::string::npos);
  // The experts' gathers leave the network too (their group is the expert-DP group's copy).
  CHECK(dp_comm_s(planner::plan_json(fsdp_mixtral(8), catalog())) <
        0.8 * dp_comm_s(planner::plan_json(fsdp_mixtral(std::nullopt), catalog())));
  // The copies' all-reduce is priced: a slower network slows the hybrid plan's data parallelism.
  const json hybrid_fast = planner::plan_json(fsdp_7b(8, 3, 3200), catalog());
  CHECK(hybrid["time_s"]["dp_comm"].get<double>() > 2 * hybrid_fast["time_s"]["dp_comm"].get<double>());
  // One rank per shard group: every gradient is all-reduced across all of dp, as plain data
  // parallelism does, and nothing is sharded.
  const json replicated = planner::plan_json(fsdp_7b(1, 1, 100), catalog());
  const json ddp = planner::plan_json(fsdp_7b(std::nullopt, 0, 100), catalog());
  CHECK(replicated["memory_gb"]["optimizer"] == ddp["memory_gb"]["optimizer"]);
  CHECK(replicated["time_s"]["dp_comm"].get<double>() == Approx(ddp["time_s"]["dp_comm"].get<double>()).epsilon(0.15));
}

TEST_CASE("the copies all-reduce every micro-batch under FSDP, once a step under DeepSpeed's MiCS") {
  // 2 sequences per rank: micro-batch 1 runs two micro-batches, micro-batch 2 one. A micro-batch's
  // collectives do not depend on its size, so FSDP's data-parallel time doubles; MiCS's copies
  // all-reduce only at the accumulation boundary, so it grows by less.
  for (const char* framework : {"fsdp", "deepspeed"}) {
    INFO(framework);
    json one = fsdp_7b(8, 3, 100, framework), two = one;
    one["layout"]["micro_batch"] = 2;
    two["layout"]["micro_batch"] = 1;
    const double ratio = dp_comm_s(planner::plan_json(two, catalog())) / dp_comm_s(planner::plan_json(one, catalog()));
    if (std::string(framework) == "fsdp") CHECK(ratio == Approx(2.0).epsilon(1e-9));
    else CHECK(ratio < 1.9);
  }
}

TEST_CASE("hybrid sharding that cannot hold is refused naming layout.dp_shard") {
  CHECK(failing_field(fsdp_7b(3)) == "layout.dp_shard");  // does not divide dp
  json derived = fsdp_7b(3);                              // ... where dp is left to the GPUs
  derived["layout"].erase("dp");
  CHECK(failing(derived).find("must divide layout.dp (128)") != std::string::npos);
  // Mixtral at ep 8: 16 expert-DP ranks cannot hold 64 copies.
  CHECK(failing(fsdp_mixtral(2, 8)).find("expert-data-parallel") != std::string::npos);
  CHECK(failing_field(fsdp_mixtral(8, 8)) == "<no error>");
  CHECK(failing_field(fsdp_7b(8, 0)) == "layout.dp_shard");                    // nothing to shard at zero 0
  CHECK(failing_field(fsdp_7b(256)) == "layout.dp_shard");                     // more than dp
  CHECK(failing_field(fsdp_7b(8), /*recommend=*/true) == "layout.dp_shard");   // recommend chooses it itself
  CHECK(failing_field(fsdp_7b(8, 1, 400, "deepspeed")) == "layout.dp_shard");  // MiCS is ZeRO-3 only
  json serve = json::parse(R"({"model": {"preset": "llama2-7b"},
    "job": {"kind": "inference", "precision": "bf16", "prompt_len": 512, "output_len": 128, "concurrent": 16},
    "hardware": {"instance": "test:a100x8", "nodes": 1}, "layout": {"tp": 1, "pp": 1, "dp": 8, "dp_shard": 4}})");
  CHECK(failing(serve).find("training setting") != std::string::npos);  // not zero 0's words
  CHECK(failing_field(serve) == "layout.dp_shard");
  serve["layout"]["dp_shard"] = 8;  // what a serving plan prints reads back
  CHECK(failing_field(serve) == "<no error>");
}

TEST_CASE("recommend offers hybrid sharding where it is faster, and prunes it as the exhaustive search does") {
  // ZeRO-3 fixed on a 100 Gbit/s network: the shard group of one node keeps the gathers on NVLink.
  json w = fsdp_7b(std::nullopt, 3, 100);
  w["job"]["tokens"] = 1e10;
  w["layout"] = {{"tp", 1}, {"pp", 1}, {"zero", 3}};
  const Catalog c = catalog();
  const planner::Workload workload = planner::parse_workload(w, c);
  planner::SearchOptions exhaustive;
  exhaustive.exhaustive = true;
  for (int k : {1, 3}) {
    const auto full = planner::search(workload, c, k, nullptr, exhaustive);
    const auto pruned = planner::search(workload, c, k, nullptr);
    REQUIRE(full.plans.size() == pruned.plans.size());
    for (std::size_t i = 0; i < full.plans.size(); ++i) {
      CHECK(planner::to_json(full.plans[i].layout) == planner::to_json(pruned.plans[i].layout));
      CHECK(full.plans[i].step_time_s == pruned.plans[i].step_time_s);
    }
    REQUIRE_FALSE(pruned.plans.empty());
    const planner::Plan& best = pruned.plans[0];
    CHECK(best.layout.zero_shard() == 8);
    CHECK(best.why.find("hybrid sharding") != std::string::npos);
    // Faster than the same layout fully sharded, which plan gives.
    json fully = fsdp_7b(std::nullopt, 3, 100);
    fully["layout"]["micro_batch"] = best.layout.micro_batch;
    fully["layout"]["recompute"] = std::string(planner::to_string(best.layout.recompute));
    CHECK(best.step_time_s < planner::plan_json(fully, c)["step_time_s"].get<double>());
  }
  // dp_shard stated equal to dp: full sharding only.
  w["layout"]["dp"] = 128;
  w["layout"]["dp_shard"] = 128;
  const auto only_full = planner::search(planner::parse_workload(w, c), c, 3, nullptr);
  REQUIRE_FALSE(only_full.plans.empty());
  for (const auto& p : only_full.plans) CHECK(p.layout.zero_replicas() == 1);
}

// A soak's counter-example (7,200 searches, pruned against exhaustive): full sharding fits and is
// sure without recompute, hybrid sharding fits only with full recompute and wins there. The search
// had let full sharding's lighter mode rule out the heavier one for both.
TEST_CASE("hybrid sharding that fits only at a heavier recompute is still searched") {
  const Gpu h100 = planner_test::h100_80();
  const Catalog c({h100}, {planner_test::node(h100, "t", "h100-400", Fabric::nvswitch, 400, 60.0),
                           planner_test::node(h100, "t", "h100-3200", Fabric::nvswitch, 3200, 63.0)});
  const planner::Workload w = planner::parse_workload(json::parse(R"({"model": {"preset": "llama3.1-8b"},
    "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 256, "tokens": 1e10, "framework": "deepspeed"},
    "layout": {"tp": 1, "pp": 1}, "constraints": {"max_nodes": 16, "objective": "time"}})"),
                                                      c);
  planner::SearchOptions exhaustive;
  exhaustive.exhaustive = true;
  const auto full = planner::search(w, c, 5, nullptr, exhaustive);
  const auto pruned = planner::search(w, c, 5, nullptr);
  REQUIRE(full.plans.size() == pruned.plans.size());
  bool hybrid_with_recompute = false;
  for (std::size_t i = 0; i < full.plans.size(); ++i) {
    CHECK(planner::to_json(full.plans[i].layout) == planner::to_json(pruned.plans[i].layout));
    CHECK(full.plans[i].step_time_s == pruned.plans[i].step_time_s);
    const planner::Layout& l = full.plans[i].layout;
    hybrid_with_recompute = hybrid_with_recompute || (l.zero_replicas() > 1 && l.recompute == planner::Recompute::full);
  }
  CHECK(hybrid_with_recompute);  // the case this test is for
}

// PyTorch FSDP's SHARD_GRAD_OP gathers the parameters for every micro-batch; DeepSpeed's ZeRO-2
// gathers the updated weights once a step (pith-train's FSDP2 runs, reshard_after_forward=False).
TEST_CASE("FSDP's ZeRO-2 gathers every micro-batch, DeepSpeed's once a step") {
  for (const char* framework : {"fsdp", "torchtitan", "hf-accelerate", "deepspeed"}) {
    INFO(framework);
    json one = fsdp_7b(std::nullopt, 2, 100, framework), two = one;
    one["layout"]["micro_batch"] = 2;  // one micro-batch of the rank's 2 sequences
    two["layout"]["micro_batch"] = 1;  // two
    const double ratio = dp_comm_s(planner::plan_json(two, catalog())) / dp_comm_s(planner::plan_json(one, catalog()));
    if (std::string(framework) != "deepspeed") CHECK(ratio == Approx(2.0).epsilon(1e-9));
    else CHECK(ratio < 1.9);
  }
}

TEST_CASE("FSDP's re-gathers hide behind the forward only as much as they add") {
  // Llama 3.1 70B fine-tuned under torchtitan at ZeRO-2 on 4 p5.48xlarge, 4 micro-batches (a cold
  // review's case). Gathering once a step, the plan exposed 0.1006 s of data parallelism: the last
  // bucket's reduce-scatter, which nothing hides. The re-gathers add work; the forward had been
  // credited with hiding the reduce-scatters too, and the step came out 0.06 s shorter.
  const Catalog embedded = Catalog::embedded();
  const json w = json::parse(R"({"model": {"preset": "llama3.1-70b"},
    "job": {"kind": "finetune", "seq_len": 2048, "global_batch": 128, "precision": "bf16", "tokens": 1e10,
            "framework": "torchtitan"},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 4},
    "layout": {"tp": 1, "pp": 1, "zero": 2, "micro_batch": 1, "recompute": "none"}})");
  CHECK(planner::plan_json(w, embedded)["time_s"]["dp_exposed"].get<double>() >= 0.1);
}

TEST_CASE("the shard group recommend offers is the data-parallel ranks one NVLink domain holds") {
  planner::PreparedHardware hw;
  hw.gpus_per_node = 4;
  hw.nvlink_domain_gpus = 72;  // GB200 NVL72: trays of 4 in a 72-GPU domain
  CHECK(planner::nvlink_shard_group(hw, 2, 1, 144, 288) == 36);
  CHECK(planner::nvlink_shard_group(hw, 2, 1, 36, 72) == 0);   // DP inside one domain: nothing to gain
  CHECK(planner::nvlink_shard_group(hw, 8, 1, 36, 288) == 9);  // 72 / 8
  CHECK(planner::nvlink_shard_group(hw, 5, 1, 40, 200) == 0);  // 5 does not tile the domain
  hw.nvlink_domain_gpus = 4;                                   // HGX-style: the node
  CHECK(planner::nvlink_shard_group(hw, 1, 1, 64, 64) == 4);
}

TEST_CASE("every layout recommend offers reads back through plan, MoE hybrid sharding included") {
  // A cold review's case: qwen3-30b-a3b at ep 16 on two nodes, where 2 copies cannot split the
  // expert-DP group of 1; the search had offered it.
  const Gpu h100 = planner_test::h100_80();
  const Catalog c = planner_test::one_node_catalog(h100, "t", "h100-100", 100, 60.0);
  const json w = json::parse(R"({"model": {"preset": "qwen3-30b-a3b"},
    "job": {"kind": "lora", "seq_len": 4096, "global_batch": 256, "tokens": 1e10, "framework": "deepspeed"},
    "layout": {"tp": 1, "pp": 1, "ep": 16, "zero": 3},
    "constraints": {"max_nodes": 2, "min_nodes": 2, "objective": "time"}})");
  const json r = planner::recommend_json(w, c, 5);
  REQUIRE_FALSE(r["results"].empty());
  for (const json& p : r["results"]) {
    json again = w;
    again.erase("constraints");
    again["hardware"] = {{"instance", p["instance"]}, {"nodes", p["nodes"]}};
    again["layout"] = p["layout"];
    INFO(p["layout"].dump());
    CHECK_NOTHROW(planner::plan_json(again, c));
  }
}
