// Answers that explain themselves: the rejected summary of an empty (or partial) recommend, its
// reason vocabulary shared with plan, the best plan per instance type or GPU model, and unknown
// references in a workload.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner.hpp"
#include "planner_test_util.hpp"

using namespace linkwise;
using nlohmann::json;

namespace {

Catalog small_catalog() {
  const Gpu a100 = planner_test::a100_80(), h100 = planner_test::h100_80();
  Instance unpriced = planner_test::node(h100, "azure", "h100-unpriced", Fabric::nvswitch, 3200, 1.0);
  unpriced.price_usd_per_hour = std::nullopt;
  return Catalog({a100, h100}, {planner_test::node(a100, "aws", "p4de.24xlarge", Fabric::nvswitch, 400, 40.97),
                                planner_test::node(h100, "aws", "p5.48xlarge", Fabric::nvswitch, 3200, 98.3),
                                planner_test::node(a100, "lambda", "gpu_1x_a100", Fabric::none, 0, 1.29), unpriced});
}

const json* entry(const json& rejected, const std::string& instance) {
  for (const auto& r : rejected)
    if (r["instance"] == instance) return &r;
  return nullptr;
}

const json* reason(const json& entry, const std::string& name) {
  for (const auto& r : entry["reasons"])
    if (r["reason"] == name) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("an empty recommend says why, per instance type") {
  const Catalog catalog = small_catalog();
  // 70B pre-training on 1e11 tokens in 10 hours: nothing is that fast.
  const json doc = json::parse(R"({"model": {"preset": "llama3.1-70b"},
     "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 256, "tokens": 1e11},
     "constraints": {"max_nodes": 4, "deadline_hours": 10}})");
  const json r = planner::recommend_json(doc, catalog, 5);
  CHECK(r["results"].empty());
  const json& rejected = r["rejected"];
  REQUIRE(rejected.size() == 4);  // every instance type, each with its reason

  const json* p5 = entry(rejected, "aws:p5.48xlarge");
  REQUIRE(p5);
  CHECK((*p5)["reason"] == "deadline");
  CHECK((*p5)["gpu_model"] == "H100-SXM5-80GB");
  const json* deadline = reason(*p5, "deadline");
  REQUIRE(deadline);
  CHECK((*deadline)["count"].get<long long>() > 0);
  // The best time found is over the deadline, and it is the fastest plan: the time objective with
  // no deadline finds exactly that time on the same instance.
  const double best_hours = (*deadline)["best_hours"].get<double>();
  CHECK(best_hours > 10);
  CHECK((*deadline)["detail"].get<std::string>().find("against the 10 h deadline") != std::string::npos);
  // A deadline is quoted as the user wrote it, not rounded into an exponent ("1.44e+03 h").
  json long_job = doc;
  long_job["job"]["tokens"] = 1e14;
  long_job["constraints"]["deadline_hours"] = 1440;
  const json long_answer = planner::recommend_json(long_job, catalog, 5);
  const json* slow = entry(long_answer["rejected"], "aws:p5.48xlarge");
  REQUIRE(slow);
  REQUIRE(reason(*slow, "deadline"));
  CHECK((*reason(*slow, "deadline"))["detail"].get<std::string>().find("against the 1440 h deadline") !=
        std::string::npos);
  json fastest = doc;
  fastest["constraints"].erase("deadline_hours");
  fastest["constraints"]["objective"] = "time";
  fastest["constraints"]["instances"] = {"aws:p5.48xlarge"};
  const json quickest = planner::recommend_json(fastest, catalog, 1);
  REQUIRE(quickest["results"].size() == 1);
  // recommend may trade some speed for a memory setting outside the error band ("tight"); the
  // best time found counts every setting, so it is at most the offered plan's and close to it (10%
  // here: the fastest layouts hold more than 1 / 1.28 of the card, inside the 28% band; the offered
  // one does not).
  const double offered_hours = quickest["results"][0]["job_hours"].get<double>();
  CHECK(best_hours <= offered_hours * (1 + 1e-9));
  CHECK(best_hours == Approx(offered_hours).epsilon(0.15));
  CHECK(quickest["results"][0]["memory_verdict"] == "fits");

  // One A100 without a stated network: memory on one node, and why only one node was tried.
  const json* single = entry(rejected, "lambda:gpu_1x_a100");
  REQUIRE(single);
  CHECK((*single)["reason"] == "memory");
  REQUIRE(reason(*single, "memory"));
  // In GB, as every memory field, with GiB (the cards' unit) beside it, and the shortfall.
  const std::string memory_detail = (*reason(*single, "memory"))["detail"].get<std::string>();
  CHECK(memory_detail.find("GiB) per GPU") != std::string::npos);
  CHECK(memory_detail.find("GiB) available") != std::string::npos);
  CHECK(memory_detail.find("short by") != std::string::npos);
  REQUIRE(reason(*single, "network_unknown"));

  const json* unpriced = entry(rejected, "azure:h100-unpriced");
  REQUIRE(unpriced);
  CHECK((*unpriced)["reason"] == "unpriced");
}

TEST_CASE("a budget, a latency target and the constraints are reasons too") {
  const Catalog catalog = small_catalog();
  json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
     "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e10},
     "constraints": {"max_nodes": 2, "budget_usd": 1, "instances": ["aws:p5.48xlarge"]}})");
  json r = planner::recommend_json(doc, catalog, 3);
  CHECK(r["results"].empty());
  REQUIRE(r["rejected"].size() == 1);
  CHECK(r["rejected"][0]["reason"] == "budget");
  CHECK(r["rejected"][0]["reasons"][0]["best_cost_usd"].get<double>() > 1);
  // Dollars in the words read as the web page and the tables print them: "$2,013", not "$2013".
  doc["job"]["tokens"] = 1e10 * 10;
  r = planner::recommend_json(doc, catalog, 3);
  REQUIRE(r["rejected"].size() == 1);
  const std::string detail = r["rejected"][0]["reasons"][0]["detail"];
  CHECK(detail.find("cheapest plan $") == 0);
  CHECK(detail.find(',') < detail.find(" against"));
  CHECK(detail.find("against the $1 budget") != std::string::npos);
  doc["job"]["tokens"] = 1e10;

  doc["constraints"].erase("budget_usd");
  doc["constraints"]["max_gpus"] = 4;  // below the 8 GPUs of one node
  r = planner::recommend_json(doc, catalog, 3);
  REQUIRE(r["rejected"].size() == 1);
  CHECK(r["rejected"][0]["reason"] == "constraint");

  const json serve = json::parse(R"({"model": {"preset": "llama3.1-70b"},
     "job": {"kind": "inference", "prompt_len": 2048, "output_len": 256, "concurrent": 8, "latency_target_ms": 0.01},
     "constraints": {"instances": ["aws:p5.48xlarge"], "max_nodes": 1}})");
  r = planner::recommend_json(serve, catalog, 3);
  CHECK(r["results"].empty());
  REQUIRE(r["rejected"].size() == 1);
  CHECK(r["rejected"][0]["reason"] == "latency_target");
  CHECK(r["rejected"][0]["reasons"][0]["best_tpot_ms"].get<double>() > 0.01);
}

TEST_CASE("instances that produced a result are not rejected") {
  const Catalog catalog = small_catalog();
  const json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
     "job": {"kind": "finetune", "seq_len": 4096, "global_batch": 32, "tokens": 1e9},
     "constraints": {"max_nodes": 2}})");
  const json r = planner::recommend_json(doc, catalog, 3);
  REQUIRE_FALSE(r["results"].empty());
  for (const auto& p : r["results"]) CHECK(entry(r["rejected"], p["instance"].get<std::string>()) == nullptr);
  CHECK(entry(r["rejected"], "azure:h100-unpriced"));  // no price: cost objective cannot rank it
}

TEST_CASE("plan and recommend share the reason vocabulary") {
  const Catalog catalog = small_catalog();
  const json doc = json::parse(R"({"model": {"preset": "llama3.1-70b"},
     "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e11},
     "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1},
     "layout": {"tp": 1, "pp": 1, "dp": 8, "zero": 0, "micro_batch": 1},
     "constraints": {"deadline_hours": 1}})");
  const json p = planner::plan_json(doc, catalog);
  CHECK(p["fits"] == false);
  REQUIRE(p["why_not"].size() == p["why_not_reasons"].size());
  CHECK(p["why_not_reasons"] == json({"memory", "deadline"}));
  const std::set<std::string> vocabulary = {"memory",   "deadline",       "budget",     "network_unknown",
                                            "unpriced", "latency_target", "constraint", "unsupported"};
  for (auto r : {planner::Reason::memory, planner::Reason::deadline, planner::Reason::budget,
                 planner::Reason::network_unknown, planner::Reason::unpriced, planner::Reason::latency_target,
                 planner::Reason::constraint, planner::Reason::unsupported})
    CHECK(vocabulary.count(std::string(planner::to_string(r))) == 1);
}

TEST_CASE("per instance and per GPU: the best plan of each group, ranked") {
  const Catalog catalog = small_catalog();
  const json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
     "job": {"kind": "finetune", "seq_len": 4096, "global_batch": 32, "tokens": 1e9},
     "constraints": {"max_nodes": 4, "objective": "time"}})");
  const json global = planner::recommend_json(doc, catalog, 10);
  std::set<std::string> global_instances;
  for (const auto& p : global["results"]) global_instances.insert(p["instance"].get<std::string>());
  REQUIRE(global_instances.size() < global["results"].size());  // the global top K repeats instances

  const json per = planner::recommend_json(doc, catalog, 10, nullptr, planner::Grouping::instance);
  CHECK(per["per"] == "instance");
  std::set<std::string> seen;
  double previous = 0;
  for (const auto& p : per["results"]) {
    CHECK(seen.insert(p["instance"].get<std::string>()).second);  // one plan per instance type
    CHECK(p["tokens_per_s"].get<double>() <= (previous == 0 ? 1e300 : previous));
    previous = p["tokens_per_s"].get<double>();
    // Each is its instance type's best: the same as the search restricted to it.
    json alone = doc;
    alone["constraints"]["instances"] = {p["instance"]};
    const json best = planner::recommend_json(alone, catalog, 1);
    CHECK(p["tokens_per_s"] == best["results"][0]["tokens_per_s"]);
    CHECK(p["nodes"] == best["results"][0]["nodes"]);
  }
  CHECK(per["results"].size() == 3);  // all but the single 80 GB A100 (time: the unpriced one ranks too)
  CHECK(entry(per["rejected"], "lambda:gpu_1x_a100"));
  CHECK(per["results"][0]["instance"] == global["results"][0]["instance"]);

  const json by_gpu = planner::recommend_json(doc, catalog, 10, nullptr, planner::Grouping::gpu);
  std::set<std::string> gpus;
  for (const auto& p : by_gpu["results"]) CHECK(gpus.insert(p["gpu_model"].get<std::string>()).second);
  CHECK(gpus.size() == 2);
  const json top1 = planner::recommend_json(doc, catalog, 1, nullptr, planner::Grouping::gpu);
  CHECK(top1["results"].size() == 1);

  CHECK_THROWS_AS(planner::parse_grouping("provider", "per"), Error);
}

TEST_CASE("top has one range: 1 to 100") {
  const Catalog catalog = small_catalog();
  const planner::Workload w = planner::parse_workload(json::parse(R"({"model": {"preset": "llama3.1-8b"},
     "job": {"kind": "finetune", "seq_len": 4096, "global_batch": 32, "tokens": 1e9}})"),
                                                      catalog);
  CHECK(planner::kDefaultTop == 5);
  CHECK_NOTHROW(planner::search(w, catalog, planner::kMaxTop));
  CHECK_THROWS_AS(planner::search(w, catalog, planner::kMaxTop + 1), Error);
  CHECK_THROWS_AS(planner::search(w, catalog, 0), Error);
}

TEST_CASE("an unknown preset or instance inside a workload is an unknown reference naming the field") {
  const Catalog catalog = small_catalog();
  const std::pair<const char*, const char*> cases[] = {
      {R"({"model": {"preset": "no-such-model"}, "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 8}})",
       "model.preset"},
      {R"({"model": {"preset": "llama3.1-8b"}, "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 8},
          "hardware": {"instance": "aws:p9.nothing"}})",
       "hardware.instance"},
      {R"({"model": {"preset": "llama3.1-8b"}, "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 8},
          "constraints": {"instances": ["aws:p9.nothing"]}})",
       "constraints.instances"},
  };
  for (const auto& [text, field] : cases) {
    INFO(text);
    try {
      planner::parse_workload(json::parse(text), catalog);
      FAIL("expected unknown_reference");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::unknown_reference);
      CHECK(e.field() == field);
    }
  }
  // A typo gets the closest ids, inside the hardware, the constraints and a custom machine alike.
  for (const char* text : {
           R"({"model": {"preset": "llama3.1-8b"}, "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 8},
               "hardware": {"instance": "aws:p5.48xlarg"}})",
           R"({"model": {"preset": "llama3.1-8b"}, "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 8},
               "constraints": {"instances": ["aws:p5.48xlarg"]}})",
       }) {
    INFO(text);
    CHECK_THROWS_WITH(planner::parse_workload(json::parse(text), catalog),
                      Catch::Matchers::Contains("did you mean \"aws:p5.48xlarge\""));
  }
  CHECK_THROWS_WITH(planner::parse_workload(json::parse(R"({"model": {"preset": "llama3.1-8b"},
          "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 8},
          "hardware": {"custom": {"gpu_model": "A100-SXM-80GB", "gpu_count": 8}}})"),
                                            catalog),
                    Catch::Matchers::Contains("did you mean \"A100-SXM4-80GB\""));
  // Ids in any case name the catalog's record, as GPU families and providers do.
  const planner::Workload upper = planner::parse_workload(json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 8, "tokens": 1e9},
      "constraints": {"instances": ["AWS:P5.48XLARGE"], "max_nodes": 1}})"),
                                                          catalog);
  CHECK(upper.constraints.instances == std::vector<std::string>{"aws:p5.48xlarge"});
  CHECK(planner::search(upper, catalog, 1).plans.size() == 1);
  const planner::Workload custom = planner::parse_workload(json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 8},
      "hardware": {"custom": {"gpu_model": "a100-sxm4-80gb", "gpu_count": 8}}})"),
                                                           catalog);
  CHECK(custom.hardware->gpu.id == "A100-SXM4-80GB");
  // Looking a preset up by name (GET /v1/presets/{name}) still answers not_found.
  try {
    planner::preset_json("no-such-model");
    FAIL("expected not_found");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::not_found);
  }
}

TEST_CASE("a job longer than the model's stated context is planned with a warning naming it") {
  const Catalog catalog = small_catalog();
  auto context_warning = [](const json& plan) -> std::string {
    for (const json& w : plan["warnings"])
      if (w.get<std::string>().find("context window") != std::string::npos) return w.get<std::string>();
    return "";
  };
  // Llama 2 70B (4096 tokens, its model card) fine-tuned at 32k: planned, with the warning.
  json lora = json::parse(R"({"model": {"preset": "llama2-70b"},
      "job": {"kind": "lora", "seq_len": 32768, "global_batch": 8, "lora_rank": 16},
      "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1}, "layout": {"tp": 8, "pp": 1, "recompute": "full"}})");
  const std::string beyond = context_warning(planner::plan_json(lora, catalog));
  CHECK(beyond.find("job.seq_len 32768 exceeds llama2-70b's 4096-token context window") != std::string::npos);
  lora["job"]["seq_len"] = 4096;
  CHECK(context_warning(planner::plan_json(lora, catalog)).empty());
  // Qwen3: 32768 natively, 131072 with YaRN (its card): the warning says which applies.
  json serve = json::parse(R"({"model": {"preset": "qwen3-32b"},
      "job": {"kind": "inference", "prompt_len": 60000, "output_len": 1000, "concurrent": 4},
      "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1}, "layout": {"tp": 8, "pp": 1}})");
  CHECK(
      context_warning(planner::plan_json(serve, catalog)).find("131072-token one its card documents with YaRN needs") !=
      std::string::npos);
  serve["job"]["prompt_len"] = 200000;
  CHECK(context_warning(planner::plan_json(serve, catalog)).find("YaRN too") != std::string::npos);
  // A custom shape states its own; without it nothing is known and nothing is said.
  json custom = lora;
  custom["model"] = {{"params_b", 7}, {"context_tokens", 8192}};
  custom["job"]["seq_len"] = 16384;
  CHECK(context_warning(planner::plan_json(custom, catalog)).find("8192-token") != std::string::npos);
  custom["model"].erase("context_tokens");
  CHECK(context_warning(planner::plan_json(custom, catalog)).empty());
  // The presets carry it: linkwise models --json, GET /v1/models; every one has its publisher's.
  CHECK(planner::preset_json("llama3.1-8b")["context_tokens"] == 131072);
  CHECK(planner::preset_json("qwen3-32b")["context_tokens_extended"] == 131072);
  for (const planner::ModelShape& m : planner::presets()) {
    INFO(m.name);
    CHECK(m.context_tokens >= 2048);
  }
}

TEST_CASE("ZeRO-3 under the default framework says what Megatron-FSDP gives on the same layout") {
  const Catalog catalog = small_catalog();
  // One data-parallel layout, and one interleaved with TP, where Megatron-Core runs its TP and
  // pipeline-send overlaps by default: the warning's figure is Megatron-Core's own plan of the layout.
  const char* workload = GENERATE(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 64, "precision": "fp8"},
      "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1},
      "layout": {"tp": 1, "pp": 1, "dp": 8, "micro_batch": 1, "zero": 3, "recompute": "none"}})",
                                  R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 256, "precision": "bf16"},
      "hardware": {"instance": "aws:p5.48xlarge", "nodes": 8},
      "layout": {"tp": 4, "pp": 8, "virtual_stages": 10, "micro_batch": 1, "zero": 3, "recompute": "none"}})");
  json doc = json::parse(workload);
  auto fsdp_warning = [](const json& plan) -> std::string {
    for (const json& w : plan["warnings"])
      if (w.get<std::string>().find("Megatron-FSDP") != std::string::npos) return w.get<std::string>();
    return "";
  };
  const json dflt = planner::plan_json(doc, catalog);
  REQUIRE(dflt["framework"] == "fsdp");
  doc["job"]["framework"] = "megatron-core";
  const json megatron = planner::plan_json(doc, catalog);
  const double ratio = megatron["tokens_per_s"].get<double>() / dflt["tokens_per_s"].get<double>();
  REQUIRE(std::fabs(ratio - 1) > 0.10);
  const std::string words = fsdp_warning(dflt);
  char tokens[32];
  std::snprintf(tokens, sizeof tokens, "plans %.0f tokens/s", megatron["tokens_per_s"].get<double>());
  CHECK(words.find(tokens) != std::string::npos);
  CHECK(fsdp_warning(megatron).empty());  // the stack was chosen: nothing to add
  doc["job"]["framework"] = "fsdp";
  CHECK(fsdp_warning(planner::plan_json(doc, catalog)).empty());
}

// A deadline that even a machine's lower bound misses: the search skips its layouts once k plans
// are kept, so the time it quotes is that bound, and the words say so rather than call it a plan.
TEST_CASE("a deadline missed by a machine's lower bound is quoted as the bound, not as a plan") {
  const Catalog catalog = Catalog::embedded();
  json doc = json::parse(R"({"model": {"preset": "llama3.1-8b"},
     "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 256, "tokens": 1e11},
     "constraints": {"max_nodes": 4, "objective": "time"}})");
  const auto fastest_hours = [&](const char* instance) {
    json d = doc;
    d["constraints"]["instances"] = {instance};
    return planner::recommend_json(d, catalog, 1)["results"].at(0)["job_hours"].get<double>();
  };
  const double h100 = fastest_hours("aws:p5.48xlarge"), a100 = fastest_hours("aws:p4d.24xlarge");
  REQUIRE(a100 > 2 * h100);
  doc["constraints"]["instances"] = {"aws:p5.48xlarge", "aws:p4d.24xlarge"};
  doc["constraints"]["objective"] = "cost";
  doc["constraints"]["deadline_hours"] = 1.01 * h100;  // the H100s meet it; the A100s' bound does not
  const json r = planner::recommend_json(doc, catalog, 1);
  REQUIRE(r["results"].size() == 1);
  const json* a100_entry = entry(r["rejected"], "aws:p4d.24xlarge");
  REQUIRE(a100_entry);
  const json* deadline = reason(*a100_entry, "deadline");
  REQUIRE(deadline);
  const std::string detail = (*deadline)["detail"];
  CHECK(detail.rfind("no plan under ", 0) == 0);
  CHECK(detail.find("(the search's lower bound) against the") != std::string::npos);
  const double quoted = (*deadline)["best_hours"];
  CHECK(quoted > 1.01 * h100);         // it does break the deadline
  CHECK(quoted <= a100 * (1 + 1e-9));  // and no A100 plan is faster than it
}
