// Bad input: every error names the field at fault.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>
#include <tuple>

#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/planner.hpp"
#include "planner_test_util.hpp"

using namespace linkwise;
using nlohmann::json;

namespace {

Catalog small_catalog() {
  const Gpu a100 = planner_test::a100_80(), h100 = planner_test::h100_80();
  return Catalog({a100, h100}, {planner_test::node(h100, "aws", "p5.48xlarge", Fabric::nvswitch, 3200, 98.3),
                                planner_test::node(a100, "lambda", "gpu_1x_a100", Fabric::none, 0, 1.3)});
}

json good() {
  return json::parse(R"({
    "model": {"preset": "llama3.1-70b"},
    "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512, "tokens": 2e12, "precision": "bf16"},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 16},
    "layout": {"tp": 8, "pp": 4, "cp": 1, "dp": 4, "micro_batch": 1, "zero": 1, "recompute": "selective",
               "sequence_parallel": true, "virtual_stages": 1}})");
}

// The field named by the error parse + plan raise for `doc`.
std::string failing_field(const json& doc, ErrorKind expected = ErrorKind::invalid_input) {
  const Catalog catalog = small_catalog();
  try {
    planner::plan_json(doc, catalog);
  } catch (const Error& e) {
    CHECK(e.kind() == expected);
    CHECK(std::string(e.what()).size() > 10);
    return e.field();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("the good workload plans") {
  const Catalog catalog = small_catalog();
  const json p = planner::plan_json(good(), catalog);
  CHECK(p["gpus"] == 128);
  CHECK(p["layout"]["tp"] == 8);
}

TEST_CASE("each bad input names its field") {
  json d;
  d = good();
  d["model"]["preset"] = "llama9-1t";
  CHECK(failing_field(d, ErrorKind::unknown_reference) == "model.preset");
  d = good();
  d["hardware"]["instance"] = "aws:nope";
  CHECK(failing_field(d, ErrorKind::unknown_reference) == "hardware.instance");
  d = good();
  d["model"] = {{"layers", 0}, {"hidden", 4096}, {"heads", 32}};
  CHECK(failing_field(d) == "model.layers");
  d = good();
  d["model"] = {{"layers", 32}, {"hidden", -4096}, {"heads", 32}};
  CHECK(failing_field(d) == "model.hidden");
  d = good();
  d["job"]["seq_len"] = -1;
  CHECK(failing_field(d) == "job.seq_len");
  d = good();
  d["job"]["global_batch"] = 0;
  CHECK(failing_field(d) == "job.global_batch");
  d = good();
  d["job"]["kind"] = "distill";
  CHECK(failing_field(d) == "job.kind");
  d = good();
  d["job"]["precision"] = "int3";
  CHECK(failing_field(d) == "job.precision");
  d = good();
  d["layout"]["tp"] = 3;  // 64 heads
  CHECK(failing_field(d) == "layout.tp");
  d = good();
  d["layout"]["dp"] = 8;  // 8 x 4 x 1 x 8 = 256 != 128
  CHECK(failing_field(d) == "layout.dp");
  d = good();
  d["layout"]["recompute"] = "some";
  CHECK(failing_field(d) == "layout.recompute");
  d = good();
  d["layout"]["zero"] = 4;
  CHECK(failing_field(d) == "layout.zero");
  d = good();
  d["layout"]["micro_batch"] = 3;  // 512 / 4 = 128 not divisible by 3
  CHECK(failing_field(d) == "layout.micro_batch");
  d = good();
  d["layout"]["virtual_stages"] = 21;  // 80 / 4 = 20 layers per stage: 21 chunks cannot each hold one
  CHECK(failing_field(d) == "layout.virtual_stages");
  d = good();
  d["job"]["framework"] = "jax";
  CHECK(failing_field(d) == "job.framework");
  d = good();
  d["job"]["optimizer"] = "lion";
  CHECK(failing_field(d) == "job.optimizer");
  d = good();
  d["job"]["offload"] = "optimizer_and_params";  // needs ZeRO-3
  CHECK(failing_field(d) == "job.offload");
  for (const char* fsdp : {"fsdp", "torchtitan"}) {  // PyTorch FSDP has no optimizer-only offload
    d = good();
    d["job"]["framework"] = fsdp;
    d["job"]["offload"] = "optimizer";
    d["layout"] = {{"tp", 1}, {"pp", 1}, {"zero", 3}};
    CHECK(failing_field(d) == "job.offload");
    d["job"]["framework"] = "deepspeed";  // ZeRO-Offload: the same layout plans
    CHECK(failing_field(d) == "<no error>");
    d["job"].erase("framework");  // the default plans it as the stack that offloads the optimizer alone
    CHECK(planner::plan_json(d, small_catalog())["framework"] == "deepspeed");
  }
  d = good();
  d["hardware"]["nodes"] = 0;
  CHECK(failing_field(d) == "hardware.nodes");
  d = good();
  d["layout"]["tpp"] = 2;
  CHECK(failing_field(d) == "layout.tpp");
  d = good();
  d["job"]["precision"] = "fp8";
  d["hardware"] = {{"instance", "lambda:gpu_1x_a100"}};
  d["layout"] = {{"tp", 1}, {"pp", 1}};
  CHECK(failing_field(d) == "job.precision");  // A100 has no fp8
  d = good();
  d["hardware"] = {{"instance", "lambda:gpu_1x_a100"}, {"nodes", 2}};
  d["layout"] = {{"tp", 1}, {"pp", 1}};
  CHECK(failing_field(d) == "hardware.nodes");  // no network between nodes
  d = good();
  d["hardware"] = {{"custom", {{"gpu_model", "B300"}, {"gpu_count", 8}}}, {"nodes", 1}};
  CHECK(failing_field(d, ErrorKind::unknown_reference) == "hardware.custom.gpu_model");
  d = good();
  d["hardware"] = {{"custom", {{"gpu_model", "H100-SXM5-80GB"}, {"gpu_count", 8}, {"intra_node_fabric", "warp"}}},
                   {"nodes", 16}};
  CHECK(failing_field(d) == "hardware.custom.intra_node_fabric");
  d = good();
  d["constraints"] = {{"objective", "fun"}};
  CHECK(failing_field(d) == "constraints.objective");
  d = good();
  d["job"].erase("tokens");
  d["constraints"] = {{"deadline_hours", 100}};
  CHECK(failing_field(d) == "job.tokens");  // a deadline needs the job's size
  d = good();
  d.erase("layout");
  CHECK(failing_field(d) == "layout.tp");  // plan needs a layout
  d = good();
  d["job"] = {{"kind", "inference"}, {"prompt_len", 100}};
  CHECK(failing_field(d) == "job.output_len");
}

// A required size written as null is missing, not zero and not whatever memory held (it was read
// through an empty optional before).
TEST_CASE("a required job size given as null is an error naming it") {
  for (const char* key : {"seq_len", "global_batch"}) {
    json d = good();
    d["job"][key] = nullptr;
    CHECK(failing_field(d) == std::string("job.") + key);
  }
  for (const char* key : {"prompt_len", "output_len"}) {
    json d = good();
    d["job"] = {{"kind", "inference"}, {"prompt_len", 1024}, {"output_len", 256}, {"concurrent", 8}};
    d["hardware"]["nodes"] = 1;
    d["layout"] = {{"tp", 8}, {"pp", 1}, {"dp", 1}};
    CHECK(failing_field(d) == "<no error>");
    d["job"][key] = nullptr;
    CHECK(failing_field(d) == std::string("job.") + key);
  }
}

TEST_CASE("a field of another kind of job, or one that would change nothing, is an error naming it") {
  const json inference = json::parse(R"({"kind": "inference", "prompt_len": 1024, "output_len": 256,
                                         "concurrent": 8, "tokens": 1e9})");
  json d = good();
  d["job"]["concurrent"] = "max";
  CHECK(failing_field(d) == "job.concurrent");
  d = good();
  d["job"]["output_len"] = 256;
  CHECK(failing_field(d) == "job.output_len");
  d = good();
  d["job"]["lora_rank"] = 16;  // a pretrain job
  CHECK(failing_field(d) == "job.lora_rank");
  d = good();
  d["job"]["torch_compile"] = true;  // Megatron-Core by default: nothing to compile
  CHECK(failing_field(d) == "job.torch_compile");
  d = good();
  d["job"]["framework"] = "torchtitan";
  d["job"]["torch_compile"] = true;
  CHECK(failing_field(d) == "<no error>");
  d = good();
  d["job"] = inference;
  d["job"]["seq_len"] = 4096;
  CHECK(failing_field(d) == "job.seq_len");
  d = good();
  d["job"] = inference;
  d["layout"] = {{"tp", 8}, {"pp", 1}, {"recompute", "full"}};
  CHECK(failing_field(d) == "layout.recompute");
  // A pipeline split Megatron-Core cannot make: 80 layers over 79 stages leaves the first or last
  // stage without a layer (the search never offers it; a fixed layout is refused the same way).
  d = good();
  d["layout"]["pp"] = 79;
  d["layout"]["dp"] = 1;
  d["layout"]["tp"] = 1;
  d["layout"].erase("sequence_parallel");  // nothing to split at tp 1
  CHECK(failing_field(d) == "layout.pp");
  // A sliding window needs windowed layers: full_every 1 would leave none.
  d = good();
  d["model"] = {{"layers", 32},        {"hidden", 4096}, {"heads", 32},
                {"ffn_hidden", 14336}, {"vocab", 32000}, {"attention", {{"window", 4096}, {"full_every", 1}}}};
  d["layout"]["tp"] = 8;
  CHECK(failing_field(d) == "model.attention.full_every");
}

TEST_CASE("a layout the job's training stack cannot run is refused, and recommend never builds one") {
  // CPU offload needs ZeRO; DeepSpeed's pipeline engine takes ZeRO 0-1; Accelerate has no pipeline.
  json d = good();
  d["job"]["offload"] = "optimizer";
  d["layout"]["zero"] = 0;
  CHECK(failing_field(d) == "job.offload");
  d["layout"]["zero"] = 1;
  CHECK(failing_field(d) == "<no error>");
  d = good();
  d["job"]["framework"] = "deepspeed";
  d["layout"]["zero"] = 3;  // pp 4
  CHECK(failing_field(d) == "layout.zero");
  d["layout"]["zero"] = 1;
  CHECK(failing_field(d) == "<no error>");
  // auto offloading the optimizer alone at ZeRO-3 is planned as DeepSpeed: the same rule holds.
  d = good();
  d["job"]["offload"] = "optimizer";
  d["layout"]["zero"] = 3;  // pp 4
  CHECK(failing_field(d) == "layout.zero");
  d["layout"]["pp"] = 1;
  d["layout"].erase("dp");
  CHECK(failing_field(d) == "<no error>");
  d = good();
  d["job"]["framework"] = "hf-accelerate";
  d["layout"]["zero"] = 3;
  CHECK(failing_field(d) == "layout.pp");
  // LoRA: offload is refused; QLoRA's NF4 path has no fp8 GEMM and no Megatron stack.
  const json lora = json::parse(R"({"kind": "lora", "seq_len": 4096, "global_batch": 64, "tokens": 1e8})");
  d = good();
  d["job"] = lora;
  d["job"]["offload"] = "optimizer";
  CHECK(failing_field(d) == "job.offload");
  d["job"] = lora;
  d["job"]["lora_base"] = "4bit";
  d["job"]["precision"] = "fp8";
  CHECK(failing_field(d) == "job.precision");
  d["job"] = lora;
  d["job"]["lora_base"] = "4bit";
  d["job"]["framework"] = "megatron-core";
  CHECK(failing_field(d) == "job.framework");
  // LoRA's adapters keep the chosen optimizer's states (SGD 8 bytes per parameter, AdamW 12); QLoRA
  // keeps the embedding and the output head in 16 bits.
  auto lora_plan = [&](const char* optimizer, const char* base) {
    json w = json::parse(R"({"model": {"preset": "llama3.1-8b"}, "hardware": {"instance": "aws:p5.48xlarge"},
        "layout": {"tp": 1, "pp": 1, "zero": 0}})");
    w["job"] = lora;
    w["job"]["optimizer"] = optimizer;
    w["job"]["lora_base"] = base;
    return planner::plan(planner::parse_workload(w, Catalog::embedded()));
  };
  CHECK(lora_plan("sgd", "bf16").raw.optimizer == Approx(lora_plan("adamw", "bf16").raw.optimizer * 8.0 / 12.0));
  const planner::ModelShape l8 = planner::preset("llama3.1-8b");
  const double embeddings = 2.0 * l8.embedding_params();  // untied: embed_tokens and lm_head
  const double quantised = l8.total_params() - embeddings - l8.hidden;
  const planner::Plan q = lora_plan("adamw", "4bit");
  const double adapters = q.raw.weights - quantised * 4.127 / 8 - embeddings * 2;
  CHECK(adapters > 0);
  CHECK(adapters < 0.2e9);  // the rest is the adapters' bf16 copy (42M parameters at rank 16)
  // MoE: overlap_a2a with nothing to overlap.
  d = good();
  d["model"] = {{"preset", "mixtral-8x7b"}};
  d["layout"] = {{"tp", 8}, {"pp", 1}, {"ep", 1}, {"overlap_a2a", true}};
  CHECK(failing_field(d) == "layout.overlap_a2a");
  // A serving plan does not overlap it (the engine profiles time each step as it runs): true would
  // change nothing, so it is refused; false reads back.
  d["job"] = json::parse(R"({"kind": "inference", "prompt_len": 1024, "output_len": 256, "concurrent": 8})");
  d["hardware"]["nodes"] = 1;
  d["layout"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 8}, {"overlap_a2a", true}};
  CHECK(failing_field(d) == "layout.overlap_a2a");
  d["layout"]["overlap_a2a"] = false;
  CHECK(failing_field(d) == "<no error>");
  d["layout"] = {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"ep", 8}, {"dualpipe", true}};
  CHECK(failing_field(d) == "layout.dualpipe");          // its own field, not the overlap it implies
  for (const char* key : {"overlap_a2a", "dualpipe"}) {  // recommend refuses them alike
    json search = d;
    search.erase("hardware");
    search["layout"] = {{key, true}};
    try {
      planner::recommend_json(search, small_catalog(), 3);
      FAIL("recommend took a serving layout." << key);
    } catch (const Error& e) {
      CHECK(e.field() == std::string("layout.") + key);
    }
  }

  // CPU offload costs PCIe time and host memory: 70B with its parameters offloaded on one 8 x A100-40GB
  // node needs about a terabyte of host memory, which a2-highgpu-8g's 680 GiB cannot hold.
  json off = json::parse(R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "finetune", "seq_len": 4096, "global_batch": 64, "tokens": 1e9, "offload": "optimizer_and_params"},
      "hardware": {"instance": "gcp:a2-highgpu-8g"}, "layout": {"tp": 1, "pp": 1, "zero": 3, "recompute": "full"}})");
  const planner::Plan host_short = planner::plan(planner::parse_workload(off, Catalog::embedded()));
  CHECK_FALSE(host_short.fits);
  REQUIRE_FALSE(host_short.why_not.empty());
  CHECK(host_short.why_not.front().rfind("host memory: ", 0) == 0);
  CHECK(host_short.why_not.size() == host_short.why_not_reasons.size());
  CHECK(host_short.time_s.offload > 0);
  json on_gpu = off;
  on_gpu["job"].erase("offload");
  on_gpu["hardware"] = {{"instance", "aws:p5.48xlarge"}, {"nodes", 2}};
  json moved = on_gpu;
  moved["job"]["offload"] = "optimizer";
  const planner::Plan kept = planner::plan(planner::parse_workload(on_gpu, Catalog::embedded()));
  const planner::Plan offloaded = planner::plan(planner::parse_workload(moved, Catalog::embedded()));
  CHECK(kept.time_s.offload == 0);
  CHECK(offloaded.time_s.offload > 0);
  CHECK(offloaded.step_time_s > kept.step_time_s - kept.time_s.compute * 0.01);  // no free speed-up
  CHECK(offloaded.warnings.size() > kept.warnings.size());
  // The host's CPU-Adam step is timed at ZeRO-Offload's published rate (10 billion updates in 2.57 s
  // on a 96-thread host; p5's 192 vCPUs are not assumed faster): the node's eight shards of 70B / 16.
  const double node_updates = 70.55e9 / 16 * 8;
  CHECK(offloaded.time_s.offload > node_updates / (10e9 / 2.57) * 0.95);
  CHECK(offloaded.time_s.offload < node_updates / (10e9 / 2.57) * 1.25);  // plus the PCIe transfers
  const auto cpu_words = std::find_if(offloaded.warnings.begin(), offloaded.warnings.end(),
                                      [](const std::string& w) { return w.find("CPU-Adam") != std::string::npos; });
  CHECK(cpu_words != offloaded.warnings.end());

  // Custom hardware states its host as the catalog does (vcpus, memory_gib): half the reference
  // host's threads take twice as long; a host too small for the states is refused on host memory.
  json custom = moved;
  custom["hardware"] = json::parse(R"({"custom": {"gpu_model": "H100-SXM5-80GB", "gpu_count": 8,
      "intra_node_fabric": "nvswitch", "network_type": "infiniband", "network_gbits_per_s": 3200,
      "vcpus": 96, "memory_gib": 2048}, "nodes": 2})");
  const planner::Plan full_host = planner::plan(planner::parse_workload(custom, Catalog::embedded()));
  custom["hardware"]["custom"]["vcpus"] = 48;
  const planner::Plan half_host = planner::plan(planner::parse_workload(custom, Catalog::embedded()));
  CHECK(full_host.fits);
  const double full_cpu = full_host.time_s.offload, half_cpu = half_host.time_s.offload;
  CHECK(half_cpu - full_cpu == Approx(node_updates / (10e9 / 2.57)).epsilon(0.05));
  custom["hardware"]["custom"]["memory_gib"] = 64;
  const planner::Plan small_host = planner::plan(planner::parse_workload(custom, Catalog::embedded()));
  CHECK_FALSE(small_host.fits);
  CHECK(small_host.why_not.front().rfind("host memory: ", 0) == 0);
  // A host too small is named in recommend's rejections too, not only the GPUs' shortfall.
  const json host_short_search = json::parse(R"({"model": {"preset": "llama2-70b"},
      "job": {"kind": "finetune", "seq_len": 4096, "global_batch": 64, "tokens": 1e9, "offload": "optimizer"},
      "constraints": {"instances": ["gcp:a2-highgpu-8g"], "max_nodes": 1}})");
  const json hs = planner::recommend_json(host_short_search, Catalog::embedded(), 5);
  REQUIRE(hs["rejected"].size() == 1);
  CHECK(hs["rejected"][0]["reasons"][0]["detail"].get<std::string>().find(
            "host memory: the offloaded states need at least 899 GiB per node, the instance has 680 GiB") !=
        std::string::npos);
  // Offload only buys memory: a layout that fits without it says so.
  const json small = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "finetune", "seq_len": 4096, "global_batch": 64, "tokens": 1e9, "offload": "optimizer"},
      "hardware": {"instance": "aws:p5.48xlarge"}, "layout": {"tp": 1, "pp": 1, "zero": 3}})");
  const planner::Plan needless = planner::plan(planner::parse_workload(small, Catalog::embedded()));
  CHECK(std::any_of(needless.warnings.begin(), needless.warnings.end(),
                    [](const std::string& w) { return w.rfind("this layout fits without CPU offload", 0) == 0; }));
  // Each micro-batch's gradients go to the host: 8 more micro-batches move 8 x 2 bytes x the GPU's
  // eighth of 8.03 B parameters more, ~16 GB over H100's PCIe Gen5 x16 (~63 GB/s): ~0.25 s.
  json more_micro = small;
  more_micro["job"]["global_batch"] = 128;
  const planner::Plan doubled = planner::plan(planner::parse_workload(more_micro, Catalog::embedded()));
  CHECK(doubled.time_s.offload - needless.time_s.offload > 0.2);
  CHECK(doubled.time_s.offload - needless.time_s.offload < 0.3);

  custom["hardware"]["custom"]["vcpus"] = 0;
  CHECK(failing_field(custom) == "hardware.custom.vcpus");
  custom["hardware"]["custom"]["vcpus"] = 48;
  custom["hardware"]["custom"]["memory_gib"] = -1;
  CHECK(failing_field(custom) == "hardware.custom.memory_gib");

  // recommend: a DeepSpeed job is never offered a pipeline with ZeRO-2/3.
  json rec = json::parse(R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 1024, "tokens": 1e11, "framework": "deepspeed"},
      "constraints": {"gpu_models": ["H100"], "max_nodes": 8}})");
  const json r = planner::recommend_json(rec, Catalog::embedded(), 20);
  REQUIRE_FALSE(r["results"].empty());
  for (const json& p : r["results"]) CHECK((p["layout"]["pp"].get<int>() == 1 || p["layout"]["zero"].get<int>() <= 1));
}

// DeepSpeed's pipeline engine has no interleaved schedule, and QLoRA's PEFT stack splits no layer and
// runs no pipeline: refused when written (plan, and the fixed parts of a recommend), never searched.
TEST_CASE("virtual stages under DeepSpeed and tp or pp under QLoRA are refused, and never recommended") {
  json d = good();  // tp 8, pp 4
  d["job"]["framework"] = "deepspeed";
  d["layout"]["virtual_stages"] = 5;
  CHECK(failing_field(d) == "layout.virtual_stages");
  d["layout"]["virtual_stages"] = 1;
  CHECK(failing_field(d) == "<no error>");
  d["job"]["framework"] = "megatron-core";
  d["layout"]["virtual_stages"] = 5;
  CHECK(failing_field(d) == "<no error>");

  const json qlora = json::parse(R"({"kind": "lora", "seq_len": 4096, "global_batch": 64, "tokens": 1e8,
                                     "lora_base": "4bit"})");
  d = good();
  d["job"] = qlora;
  CHECK(failing_field(d) == "layout.tp");  // tp 8
  d["layout"]["tp"] = 1;
  d["layout"]["sequence_parallel"] = false;
  CHECK(failing_field(d) == "layout.pp");  // pp 4
  d["job"]["framework"] = "torchtitan";    // not a PEFT stack
  CHECK(failing_field(d) == "job.framework");

  json rec = json::parse(R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 1024, "tokens": 1e11, "framework": "deepspeed"},
      "constraints": {"gpu_models": ["H100"], "max_nodes": 8}})");
  json r = planner::recommend_json(rec, Catalog::embedded(), 20);
  REQUIRE_FALSE(r["results"].empty());
  for (const json& p : r["results"]) CHECK(p["layout"]["virtual_stages"] == 1);
  rec["layout"] = {{"pp", 4}, {"virtual_stages", 2}};
  CHECK(failing_field(rec) == "layout.virtual_stages");

  rec = json::parse(R"({"model": {"preset": "llama3.1-70b"},
      "job": {"kind": "lora", "seq_len": 4096, "global_batch": 64, "tokens": 1e8, "lora_base": "4bit"},
      "constraints": {"max_nodes": 1}})");
  r = planner::recommend_json(rec, Catalog::embedded(), 20);
  REQUIRE_FALSE(r["results"].empty());
  for (const json& p : r["results"]) {
    CHECK(p["layout"]["tp"] == 1);
    CHECK(p["layout"]["pp"] == 1);
  }
}

TEST_CASE("job.torch_compile false, the default, is accepted on every stack; true only where it changes the plan") {
  json d = good();
  d["job"]["framework"] = "megatron-core";
  d["job"]["torch_compile"] = false;
  CHECK(failing_field(d) == "<no error>");
  d["job"]["torch_compile"] = true;
  CHECK(failing_field(d) == "job.torch_compile");
  d["job"]["framework"] = "torchtitan";
  CHECK(failing_field(d) == "<no error>");
}

TEST_CASE("a params_b model uses the documented shape rule") {
  const auto m = planner::shape_from_params(70);
  CHECK(m.hidden % 128 == 0);
  CHECK(m.kv_heads == 8);
  CHECK(m.total_params() / 1e9 == Approx(70).epsilon(0.05));
  const auto small = planner::shape_from_params(7);
  CHECK(small.hidden == 4096);  // Llama 2 7B's width
  CHECK(small.total_params() / 1e9 == Approx(7).epsilon(0.05));
  for (double b : {0.125, 1.0, 13.0, 175.0, 405.0, 1000.0})
    CHECK(planner::shape_from_params(b).total_params() / 1e9 == Approx(b).epsilon(0.12));
  // Below the smallest shape the rule builds (one layer of width 128 and the embeddings), an error
  // naming the field, not a model several times the size asked for.
  json d = good();
  d["model"] = {{"params_b", 1e-9}};
  CHECK(failing_field(d) == "model.params_b");
  d["model"] = {{"params_b", 0.01}};
  CHECK(failing_field(d) == "model.params_b");
}

TEST_CASE("presets carry their published shapes and sources") {
  CHECK(planner::preset_names().size() >= 9);
  for (const auto& name : planner::preset_names()) {
    const json p = planner::preset_json(name);
    CHECK_FALSE(p["source"].get<std::string>().empty());
  }
  CHECK(planner::preset("llama3.1-405b").total_params() / 1e9 == Approx(405.9).epsilon(0.01));
  CHECK(planner::preset("llama3.1-70b").total_params() / 1e9 == Approx(70.6).epsilon(0.01));
  CHECK(planner::preset("llama3.1-8b").total_params() / 1e9 == Approx(8.03).epsilon(0.01));
  CHECK(planner::preset("gpt3-175b").total_params() / 1e9 == Approx(174.6).epsilon(0.01));
  CHECK(planner::preset("mistral-7b").total_params() / 1e9 == Approx(7.24).epsilon(0.01));
  CHECK(planner::preset("qwen2.5-72b").total_params() / 1e9 == Approx(72.7).epsilon(0.01));
}

// A null tensor-core peak means two things the planner must not confuse: the T4 (Turing) has no
// bf16 tensor cores; an Ampere card whose figure the catalog lacks has them (the fixture is the
// A10G as the catalog held it before its AWS-hosted datasheet was sourced: every peak null).
// Figures: NVIDIA T4 datasheet (65 TFLOPS FP16, 320 GB/s); Baseten A10 vs A10G (24 GB, 600 GB/s).
TEST_CASE("an unknown tensor-core peak is reported as unknown and not as missing tensor cores") {
  const auto gpu = [](std::string id, Architecture architecture, double memory_gb, double hbm_gbytes_per_s) {
    Gpu g;
    g.id = std::move(id);
    g.vendor = "nvidia";
    g.architecture = architecture;
    g.memory_gb = memory_gb;
    g.hbm_gbytes_per_s = hbm_gbytes_per_s;
    return g;
  };
  Gpu t4 = gpu("T4", Architecture::turing, 16, 320);
  t4.fp16_dense_tflops = 65;
  const Gpu a10g = gpu("A10G", Architecture::ampere, 24, 600);  // every tensor peak null
  const Gpu a100 = planner_test::a100_80();

  using planner::PeakAvailability;
  CHECK(planner::tensor_peak_availability(a10g, planner::Precision::bf16) == PeakAvailability::unknown);
  CHECK(planner::tensor_peak_availability(a10g, planner::Precision::fp16) == PeakAvailability::unknown);
  CHECK(planner::tensor_peak_availability(a10g, planner::Precision::fp8) == PeakAvailability::absent);
  CHECK(planner::tensor_peak_availability(t4, planner::Precision::bf16) == PeakAvailability::absent);
  CHECK(planner::tensor_peak_availability(t4, planner::Precision::fp16) == PeakAvailability::known);
  CHECK(planner::tensor_peak_availability(a100, planner::Precision::fp8) == PeakAvailability::absent);
  CHECK(planner::tensor_peak_availability(a100, planner::Precision::bf16) == PeakAvailability::known);
  CHECK(planner::missing_peak_reason(a100, planner::Precision::bf16).empty());

  const Catalog catalog({t4, a10g, a100}, {planner_test::node(t4, "azure", "t4-node", Fabric::none, 0, 0.5),
                                           planner_test::node(a10g, "aws", "g5.xlarge", Fabric::none, 0, 1.0),
                                           planner_test::node(a100, "lambda", "gpu_1x_a100", Fabric::none, 0, 1.3)});
  const json workload = json::parse(R"({
    "model": {"preset": "llama2-7b"},
    "job": {"kind": "lora", "seq_len": 2048, "global_batch": 8, "tokens": 1e7, "precision": "bf16", "lora_base": "4bit"},
    "constraints": {"max_nodes": 1}})");

  // recommend: the skip reasons tell the two apart.
  const json found = planner::recommend_json(workload, catalog, 3);
  const std::vector<std::string> skipped = found["skipped"];
  CHECK(std::find(skipped.begin(), skipped.end(), "azure:t4-node: no bf16 tensor cores (turing)") != skipped.end());
  CHECK(std::find(skipped.begin(), skipped.end(),
                  "aws:g5.xlarge: bf16 tensor-core peak of A10G unknown in the catalog (no published figure): "
                  "time cannot be estimated") != skipped.end());

  // plan: the error names job.precision and says which it is.
  const auto plan_error = [&](const char* instance) -> std::string {
    json doc = workload;
    doc["hardware"] = {{"instance", instance}, {"nodes", 1}};
    doc["layout"] = {{"tp", 1}, {"pp", 1}};
    try {
      planner::plan_json(doc, catalog);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::invalid_input);
      CHECK(e.field() == "job.precision");
      return e.what();
    }
    return "<no error>";
  };
  CHECK_THAT(plan_error("aws:g5.xlarge"), Catch::Matchers::Contains("peak of A10G unknown in the catalog"));
  CHECK_THAT(plan_error("azure:t4-node"), Catch::Matchers::Contains("no bf16 tensor cores"));
}

namespace {

const Catalog& repo_catalog() {
  static const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  return catalog;
}

// The field the repository catalog's parse + plan raise for `doc`; "<no error>" when it plans.
std::string repo_failing_field(const json& doc) {
  try {
    planner::plan_json(doc, repo_catalog());
  } catch (const Error& e) {
    return e.field();
  }
  return "<no error>";
}

}  // namespace

TEST_CASE("tp must split the KV heads: Megatron-Core divides them, vLLM divides or replicates them") {
  // mixtral-8x22b: 48 query heads, 8 KV heads, on the 72-GPU NVLink domain of the UltraServer.
  json d = json::parse(R"({"model": {"preset": "mixtral-8x22b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 72},
      "hardware": {"instance": "aws:u-p6e-gb200x72", "nodes": 1}, "layout": {"tp": 3, "pp": 3}})");
  CHECK(repo_failing_field(d) == "layout.tp");  // 48 % 3 == 0, but 8 % 3 != 0
  d["layout"] = {{"tp", 8}, {"pp", 3}};
  CHECK(repo_failing_field(d) == "<no error>");
  d["layout"] = {{"tp", 24}, {"pp", 1}};  // Megatron-Core: divide(num_query_groups, tp) asserts
  CHECK(repo_failing_field(d) == "layout.tp");
  // Serving: vLLM replicates each KV head when tp is a multiple of the KV heads.
  d["job"] = {{"kind", "inference"}, {"prompt_len", 1024}, {"output_len", 256}, {"concurrent", 3}};
  d["layout"] = {{"tp", 24}, {"pp", 1}, {"ep", 8}, {"etp", 1}};
  CHECK(repo_failing_field(d) == "<no error>");
  // Without ep or etp the engines split each expert over the 24 TP GPUs (etp = tp / ep), which
  // Mixtral's 16384-wide experts do not allow.
  d["layout"] = {{"tp", 24}, {"pp", 1}};
  CHECK(repo_failing_field(d) == "layout.etp");
  d["layout"] = {{"tp", 6}, {"pp", 1}};  // 8 % 6 and 6 % 8 both non-zero
  CHECK(repo_failing_field(d) == "layout.tp");

  planner::ModelShape mla;
  mla.heads = 16;
  mla.kv_heads = 1;
  mla.attention = planner::AttentionKind::mla;
  CHECK(planner::tp_attention_problem(mla, planner::JobKind::pretrain, 8).empty());  // one latent, replicated
  mla.attention = planner::AttentionKind::gqa;
  CHECK_FALSE(planner::tp_attention_problem(mla, planner::JobKind::pretrain, 8).empty());
  CHECK(planner::tp_attention_problem(mla, planner::JobKind::inference, 8).empty());
}

TEST_CASE("recommend offers only tp sizes that split the KV heads") {
  for (const char* kind : {"pretrain", "inference"}) {
    json d = json::parse(R"({"model": {"preset": "mixtral-8x22b"},
        "constraints": {"instances": ["aws:u-p6e-gb200x72"], "objective": "time"}})");
    d["job"] = std::string(kind) == "pretrain"
                   ? json{{"kind", "pretrain"}, {"seq_len", 4096}, {"global_batch", 144}}
                   : json{{"kind", "inference"}, {"prompt_len", 1024}, {"output_len", 256}, {"concurrent", 144}};
    planner::SearchOptions exhaustive;
    exhaustive.exhaustive = true;
    const auto r = planner::search(planner::parse_workload(d, repo_catalog()), repo_catalog(), 50, nullptr, exhaustive);
    REQUIRE_FALSE(r.plans.empty());
    for (const auto& p : r.plans) {
      INFO(kind << " tp " << p.layout.tp);
      CHECK((8 % p.layout.tp == 0 || (std::string(kind) == "inference" && p.layout.tp % 8 == 0)));
    }
  }
}

TEST_CASE("a serving plan refuses training fields, a dense model refuses dualpipe, SP needs tp > 1") {
  json serve = good();
  serve["job"] = json::parse(R"({"kind": "inference", "prompt_len": 1024, "output_len": 256, "concurrent": 8})");
  serve["hardware"] = {{"instance", "aws:p5.48xlarge"}, {"nodes", 1}};
  serve["layout"] = {{"tp", 8}, {"pp", 1}};
  CHECK(failing_field(serve) == "<no error>");
  // The plan's layout no longer claims Megatron sequence parallelism for a serving engine.
  CHECK(planner::plan_json(serve, small_catalog())["layout"]["sequence_parallel"] == false);
  json d = serve;
  d["job"]["framework"] = "megatron-core";
  CHECK(failing_field(d) == "job.framework");
  d = serve;
  d["job"]["optimizer"] = "adamw";
  CHECK(failing_field(d) == "job.optimizer");
  // A training setting on a serving plan is an error, but for the neutral value its own plan prints
  // (so a plan's layout reads back).
  for (const auto& [key, neutral, other] : {std::tuple<const char*, json, json>{"zero", 0, 1},
                                            {"micro_batch", 1, 2},
                                            {"sequence_parallel", false, true},
                                            {"virtual_stages", 1, 2}}) {
    d = serve;
    d["layout"][key] = other;
    CHECK(failing_field(d) == std::string("layout.") + key);
    d["layout"][key] = neutral;
    CHECK(failing_field(d) == "<no error>");
  }
  d = good();
  d["layout"]["dualpipe"] = true;  // llama3.1-70b has no experts: DualPipe would only double its weights
  CHECK(failing_field(d) == "layout.dualpipe");
  d = good();
  d["layout"]["tp"] = 1;
  d["layout"]["dp"] = 32;  // sequence_parallel true stays: Megatron-LM drops it at tp 1
  CHECK(failing_field(d) == "layout.sequence_parallel");
  d["layout"]["sequence_parallel"] = false;
  CHECK(failing_field(d) == "<no error>");
}

// What a plan prints as its layout is a layout the planner reads: pasted back into the workload,
// it plans the same step; a derived size that disagrees is refused.
TEST_CASE("a plan's printed layout reads back as the same plan, edp checked") {
  const Catalog catalog = small_catalog();
  json serve = good();
  serve["job"] = json::parse(R"({"kind": "inference", "prompt_len": 1024, "output_len": 256, "concurrent": 8})");
  serve["hardware"] = {{"instance", "aws:p5.48xlarge"}, {"nodes", 1}};
  serve["layout"] = {{"tp", 8}, {"pp", 1}};
  json moe = good();
  moe["model"] = {{"preset", "mixtral-8x7b"}};
  moe["hardware"]["nodes"] = 2;
  moe["layout"] = {{"tp", 2}, {"pp", 1}, {"ep", 8}};
  for (const json& w : {good(), serve, moe}) {
    INFO(w.dump());
    const json first = planner::plan_json(w, catalog);
    json again = w;
    again["layout"] = first["layout"];
    const json second = planner::plan_json(again, catalog);
    CHECK(second["layout"] == first["layout"]);
    CHECK(second["step_time_s"] == first["step_time_s"]);
    CHECK(second["memory_gb"] == first["memory_gb"]);
  }
  json d = moe;
  for (const json& bad : {json(0), json(-1), json(2147483648LL), json(1e300), json("2"), json::array({2})}) {
    d["layout"]["edp"] = bad;
    INFO(bad.dump());
    CHECK(failing_field(d) == "layout.edp");
  }
  d["layout"]["edp"] = nullptr;  // null is left out, as every optional field
  CHECK(failing_field(d) == "<no error>");
  d["layout"]["edp"] = 2;  // tp 2 x dp 8 / ep 8 = 2
  CHECK(failing_field(d) == "<no error>");
  d["layout"]["edp"] = 4;
  CHECK(failing_field(d) == "layout.edp");
  // recommend searches the sizes edp derives from: it refuses it rather than ignore it.
  json search = moe;
  search.erase("hardware");
  search["layout"] = {{"edp", 2}};
  search["job"]["tokens"] = 1e9;
  try {
    planner::recommend_json(search, catalog, 3);
    FAIL("recommend took layout.edp");
  } catch (const Error& e) {
    CHECK(e.field() == "layout.edp");
  }
  d = good();
  d["layout"]["edp"] = 128;  // a dense model: tp x cp x dp = 8 x 1 x 4 = 32
  CHECK(failing_field(d) == "layout.edp");
  d["layout"]["edp"] = 32;
  CHECK(failing_field(d) == "<no error>");
}

// A client's NUL in a name must not cut the message short (front ends render message(), which
// keeps it; what() would end there): the list of known presets follows the quoted name.
TEST_CASE("an unknown preset with a NUL in its name keeps the whole message") {
  json d = good();
  d["model"]["preset"] = std::string("llama3.1-70b\0x", 14);
  try {
    planner::plan_json(d, small_catalog());
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.field() == "model.preset");
    CHECK(e.message().find("known:") != std::string::npos);
    CHECK(visible_text(e.message()).find("llama3.1-70b\\u0000x'") != std::string::npos);
  }
  // kv_heads below heads is grouped-query attention: refused when the shape says mha.
  json shape = good();
  shape["model"] = json::parse(R"({"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "ffn_hidden": 28672,
                                   "gated_mlp": true, "vocab": 128256, "attention": {"kind": "mha"}})");
  CHECK(failing_field(shape) == "model.kv_heads");
  shape["model"]["attention"]["kind"] = "gqa";
  CHECK(failing_field(shape) == "<no error>");
}

TEST_CASE("a key written twice in one object is an error naming its path") {
  auto field_of = [](std::string_view text) {
    try {
      (void)parse_json_text(text, "workload");
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::invalid_input);
      CHECK_THAT(e.what(), Catch::Matchers::Contains("twice"));
      return e.field();
    }
    return std::string("<no error>");
  };
  CHECK(field_of(R"({"model": {"preset": "llama3.1-8b"}, "model": {"preset": "llama3.1-70b"}})") == "model");
  CHECK(field_of(R"({"job": {"kind": "pretrain", "kind": "inference"}})") == "job.kind");
  CHECK(field_of(R"({"a": [{"x": 1}, 2, {"x": 1, "x": 2}]})") == "a[2].x");
  CHECK(field_of(R"({"a": [[1], {"b": {"x": 1}, "c": {"x": 1, "y": [{"z": 1, "z": 1}]}}]})") == "a[1].c.y[0].z");
  // The same key in sibling objects, or at two depths, is fine.
  CHECK(field_of(R"({"a": {"x": 1}, "b": {"x": 1}, "x": {"x": 1}})") == "<no error>");
}

TEST_CASE("hardware.custom that the catalog loader would refuse is refused, naming the field") {
  const json example =
      read_json_file(std::string(LINKWISE_TEST_DATA_DIR) + "/examples/custom-dgx-a100-gpt3-175b.json", "example");
  CHECK(repo_failing_field(example) == "<no error>");
  auto with = [&](const json& changes) {
    json d = example;
    for (const auto& [key, value] : changes.items()) {
      if (value.is_null()) d["hardware"]["custom"].erase(key);
      else d["hardware"]["custom"][key] = value;
    }
    return repo_failing_field(d);
  };
  // PCIe with an NVLink figure: the figure would be dropped and the plan would still say NVLink.
  CHECK(with({{"intra_node_fabric", "pcie"}}) == "hardware.custom.nvlink_gbytes_per_s");
  CHECK(with({{"intra_node_fabric", "pcie"}, {"nvlink_gbytes_per_s", nullptr}}) == "<no error>");
  CHECK(with({{"intra_node_fabric", "none"}, {"nvlink_gbytes_per_s", nullptr}}) == "hardware.custom.intra_node_fabric");
  // A100's largest NVLink domain is 16 GPUs (nvlink_domain_max_gpus in data/gpus.json).
  CHECK(with({{"nvlink_domain_gpus", 72}}) == "hardware.custom.nvlink_domain_gpus");
  // Left out, the domain is the node's linked GPUs, bounded the same way: 32 A100 behind one
  // NVSwitch, or 8 PCIe cards on one, are refused on gpu_count; a stated bridged pair is not.
  CHECK(with({{"gpu_count", 32}}) == "hardware.custom.gpu_count");
  CHECK(with({{"gpu_model", "H100-PCIE-80GB"}, {"nvlink_gbytes_per_s", nullptr}}) == "hardware.custom.gpu_count");
  CHECK(with({{"gpu_model", "H100-PCIE-80GB"},
              {"nvlink_gbytes_per_s", nullptr},
              {"intra_node_fabric", "nvlink"},
              {"nvlink_domain_gpus", 2}}) == "<no error>");
  CHECK(with({{"network_type", "ethernet"}, {"gpudirect_rdma", true}}) == "hardware.custom.gpudirect_rdma");
  CHECK(with({{"network_type", "gpudirect-tcpx"}, {"gpudirect_rdma", true}}) == "hardware.custom.gpudirect_rdma");
  CHECK(with({{"gpudirect_rdma", true}}) == "<no error>");                               // InfiniBand
  CHECK(with({{"nvlink_gbytes_per_s", 900}}) == "hardware.custom.nvlink_gbytes_per_s");  // above A100's 600
  // Figures too small to be a machine (they would drive the step time past a double: null hours,
  // a 0 GB/s bottleneck, a negative capacity) are refused too, at the field.
  CHECK(with({{"nvlink_gbytes_per_s", 1e-300}}) == "hardware.custom.nvlink_gbytes_per_s");
  CHECK(with({{"nvlink_gbytes_per_s", 7.9}}) == "hardware.custom.nvlink_gbytes_per_s");
  CHECK(with({{"nvlink_gbytes_per_s", 8}}) == "<no error>");
  CHECK(with({{"network_gbits_per_s", 0.5}}) == "hardware.custom.network_gbits_per_s");
  CHECK(with({{"network_gbits_per_s", 1}}) == "<no error>");
  CHECK(with({{"gpu_memory_gb", 0.0001}}) == "hardware.custom.gpu_memory_gb");
  CHECK(with({{"gpu_memory_gb", 1}}) == "<no error>");
}

TEST_CASE("constraints hold for the workload's own hardware, an empty answer says why") {
  const Catalog catalog = small_catalog();
  // plan: a fixed machine that misses constraints does not answer a silent "fits".
  json d = good();
  d["constraints"] = {{"providers", {"gcp"}}, {"gpu_models", {"A100"}}, {"max_nodes", 2}};
  const json p = planner::plan_json(d, catalog);
  REQUIRE(p["why_not"].size() == 3);
  CHECK(p["why_not_reasons"] == json({"constraint", "constraint", "constraint"}));
  CHECK_THAT(p["why_not"][0].get<std::string>(), Catch::Matchers::Contains("constraints.providers"));
  CHECK_THAT(p["why_not"][1].get<std::string>(), Catch::Matchers::Contains("constraints.gpu_models"));
  CHECK_THAT(p["why_not"][2].get<std::string>(), Catch::Matchers::Contains("constraints.max_nodes"));
  d["constraints"] = {{"providers", {"aws"}}, {"max_nodes", 16}};
  CHECK(planner::plan_json(d, catalog)["why_not"].empty());

  d = good();
  d["constraints"] = {{"min_nodes", 8}, {"max_nodes", 4}};
  CHECK(failing_field(d) == "constraints.min_nodes");

  // A stated tp_across_nodes false rules out a TP group beyond the NVLink domain (tp 16 over two
  // 8-GPU nodes); true, or left out, lets the fixed layout stand. An objective ranks recommend's
  // plans: plan, with one, refuses it rather than ignore it.
  d = good();
  d["model"] = {{"preset", "gpt3-175b"}};
  d["layout"]["tp"] = 16;
  d["layout"]["dp"] = 2;
  d["constraints"] = {{"tp_across_nodes", false}};
  const json across = planner::plan_json(d, catalog);
  REQUIRE(across["why_not"].size() == 1);
  CHECK(across["why_not_reasons"] == json({"constraint"}));
  CHECK_THAT(across["why_not"][0].get<std::string>(), Catch::Matchers::Contains("constraints.tp_across_nodes"));
  d["constraints"] = {{"tp_across_nodes", true}};
  CHECK(planner::plan_json(d, catalog)["why_not"].empty());
  d.erase("constraints");
  CHECK(planner::plan_json(d, catalog)["why_not"].empty());
  d = good();
  d["constraints"] = {{"objective", "time"}};
  CHECK(failing_field(d) == "constraints.objective");

  json r = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e9}})");
  // recommend on the workload's own machine, which the constraints exclude: rejected, not searched.
  json own = r;
  own["hardware"] = {{"instance", "aws:p5.48xlarge"}};
  own["constraints"] = {{"instances", {"lambda:gpu_1x_a100"}}};
  json out = planner::recommend_json(own, catalog, 3);
  CHECK(out["results"].empty());
  REQUIRE(out["rejected"].size() == 1);
  CHECK(out["rejected"][0]["reason"] == "constraint");
  CHECK_THAT(out["rejected"][0]["reasons"][0]["detail"].get<std::string>(),
             Catch::Matchers::Contains("constraints.instances"));
  CHECK(out["why_no_results"].is_string());
  own["hardware"] = {{"instance", "aws:p5.48xlarge"}, {"nodes", 4}};
  own["constraints"] = {{"max_nodes", 2}};
  out = planner::recommend_json(own, catalog, 3);
  REQUIRE(out["rejected"].size() == 1);
  CHECK(out["rejected"][0]["reason"] == "constraint");  // not "deadline", and not planned on 4 nodes
  CHECK(out["results"].empty());

  // Filters that match nothing together: the reason is in the JSON, not only in the CLI's text.
  json none = r;
  none["constraints"] = {{"providers", {"lambda"}}, {"instances", {"aws:p5.48xlarge"}}};
  out = planner::recommend_json(none, catalog, 3);
  CHECK(out["results"].empty());
  CHECK(out["rejected"].empty());
  REQUIRE(out["why_no_results"].is_string());
  const std::string why = out["why_no_results"];
  CHECK_THAT(why, Catch::Matchers::Contains("constraints.providers [lambda] (1 instance type alone)"));
  CHECK_THAT(why, Catch::Matchers::Contains("constraints.instances [aws:p5.48xlarge] (1 instance type alone)"));
  CHECK(planner::recommend_json(r, catalog, 3)["why_no_results"].is_null());
}

TEST_CASE("job.grad_reduce_dtype: fp32 or bf16, for the stacks whose gradient buffer it sets") {
  json d = good();
  d["job"]["grad_reduce_dtype"] = "bf16";
  CHECK(failing_field(d) == "<no error>");
  d["job"]["grad_reduce_dtype"] = "fp16";
  CHECK(failing_field(d) == "job.grad_reduce_dtype");
  d["job"]["grad_reduce_dtype"] = 16;
  CHECK(failing_field(d) == "job.grad_reduce_dtype");
  // fp16 training keeps fp16 gradients; DeepSpeed's bf16 optimizer and hai-llm accumulate in fp32.
  d = good();
  d["job"]["grad_reduce_dtype"] = "bf16";
  d["job"]["precision"] = "fp16";
  CHECK(failing_field(d) == "job.grad_reduce_dtype");
  for (const char* framework : {"deepspeed", "hai-llm"}) {
    d = good();
    d["job"]["grad_reduce_dtype"] = "fp32";
    d["job"]["framework"] = framework;
    CHECK(failing_field(d) == "job.grad_reduce_dtype");
  }
  d = good();
  d["job"] = json::parse(R"({"kind": "lora", "seq_len": 4096, "global_batch": 64, "grad_reduce_dtype": "bf16"})");
  CHECK(failing_field(d) == "job.grad_reduce_dtype");
  d["job"] = json::parse(R"({"kind": "inference", "prompt_len": 512, "output_len": 512, "grad_reduce_dtype": "bf16"})");
  CHECK(failing_field(d) == "job.grad_reduce_dtype");
}

TEST_CASE("job.loss: eager or fused, for training jobs") {
  json d = good();
  d["job"]["loss"] = "fused";
  CHECK(failing_field(d) == "<no error>");
  d["job"]["loss"] = "liger";
  CHECK(failing_field(d) == "job.loss");
  d["job"] = json::parse(R"({"kind": "inference", "prompt_len": 512, "output_len": 512, "loss": "fused"})");
  CHECK(failing_field(d) == "job.loss");
}

TEST_CASE("job.lora_base fp8 needs fp8 GEMMs; job.lora_targets is all or attention, for lora jobs") {
  json d = good();
  d["job"] = json::parse(R"({"kind": "lora", "seq_len": 4096, "global_batch": 64, "lora_base": "fp8"})");
  CHECK(failing_field(d) == "job.lora_base");  // bf16 GEMMs
  d["job"]["precision"] = "fp8";
  CHECK(failing_field(d) == "<no error>");
  d["job"]["lora_targets"] = "attention";
  CHECK(failing_field(d) == "<no error>");
  d["job"]["lora_targets"] = "mlp";
  CHECK(failing_field(d) == "job.lora_targets");
  d = good();
  d["job"]["lora_targets"] = "attention";  // a pretrain job has no adapters
  CHECK(failing_field(d) == "job.lora_targets");
}

TEST_CASE("layout.overlap_p2p_comm: echoed as planned, refused where the schedule cannot overlap, naming it") {
  const Catalog catalog = small_catalog();
  json interleaved = good();
  interleaved["layout"]["virtual_stages"] = 5;
  // Megatron-Core's interleaved schedule overlaps its sends unless told not to; one chunk per stage does not.
  CHECK(planner::plan_json(interleaved, catalog)["layout"]["overlap_p2p_comm"] == true);
  CHECK(planner::plan_json(good(), catalog)["layout"]["overlap_p2p_comm"] == false);
  json blocking = interleaved;
  blocking["layout"]["overlap_p2p_comm"] = false;
  const json open = planner::plan_json(blocking, catalog), hidden = planner::plan_json(interleaved, catalog);
  CHECK(open["layout"]["overlap_p2p_comm"] == false);
  CHECK(open["time_s"]["pp_exposed"] == Approx(open["time_s"]["pp_comm"].get<double>()).epsilon(1e-12));
  CHECK(hidden["time_s"]["pp_exposed"].get<double>() < hidden["time_s"]["pp_comm"].get<double>());
  CHECK(open["step_time_s"].get<double>() > hidden["step_time_s"].get<double>());
  // A plan's printed layout reads back.
  json echoed = interleaved;
  echoed["layout"] = hidden["layout"];
  CHECK(failing_field(echoed) == "<no error>");
  // Stated true where it cannot run.
  const auto with = [&](const std::function<void(json&)>& edit) {
    json doc = interleaved;
    doc["layout"]["overlap_p2p_comm"] = true;
    edit(doc);
    return doc;
  };
  CHECK(failing_field(with([](json&) {})) == "<no error>");
  CHECK(failing_field(with([](json& d) { d["layout"]["virtual_stages"] = 1; })) == "layout.overlap_p2p_comm");
  CHECK(failing_field(with([](json& d) {
          d["layout"]["pp"] = 1;
          d["layout"]["dp"] = 16;
          d["layout"]["virtual_stages"] = 1;
        })) == "layout.overlap_p2p_comm");
  CHECK(failing_field(with([](json& d) { d["job"]["framework"] = "torchtitan"; })) == "layout.overlap_p2p_comm");
  CHECK(failing_field(with([](json& d) { d["layout"]["overlap_p2p_comm"] = 1; })) == "layout.overlap_p2p_comm");
  CHECK(failing_field(with([](json& d) { d["layout"]["overlap_p2p_comm"] = "true"; })) == "layout.overlap_p2p_comm");
}

TEST_CASE(
    "layout.overlap_grad_reduce: Megatron-Core's DDP overlap, echoed, off exposes the reduction, refused elsewhere") {
  const Catalog catalog = small_catalog();
  json doc = good();  // Megatron-Core's runtime at ZeRO-1, DP 4 across nodes
  const json by_default = planner::plan_json(doc, catalog);
  CHECK(by_default["layout"]["overlap_grad_reduce"] == true);
  doc["layout"]["overlap_grad_reduce"] = false;  // Megatron-LM's own default
  const json open = planner::plan_json(doc, catalog);
  CHECK(open["layout"]["overlap_grad_reduce"] == false);
  CHECK(open["time_s"]["dp_exposed"] == Approx(open["time_s"]["dp_comm"].get<double>()).epsilon(1e-12));
  CHECK(by_default["time_s"]["dp_exposed"].get<double>() < by_default["time_s"]["dp_comm"].get<double>());
  CHECK(open["step_time_s"].get<double>() > by_default["step_time_s"].get<double>());
  // The default is said, with the step without it; a stated value is not.
  auto warns = [](const json& plan, const std::string& words) {
    for (const json& w : plan["warnings"])
      if (w.get<std::string>().find(words) != std::string::npos) return true;
    return false;
  };
  CHECK(warns(by_default, "layout.overlap_grad_reduce not stated"));
  char step[64];
  std::snprintf(step, sizeof step, "the step is %.3g s", open["step_time_s"].get<double>());
  CHECK(warns(by_default, step));
  CHECK_FALSE(warns(open, "layout.overlap_grad_reduce not stated"));
  // Under FSDP (ZeRO-3 under auto) Megatron-Core's overlap does not run: echoed false, and that reads back.
  json fsdp = good();
  fsdp["layout"]["zero"] = 3;
  const json fsdp_plan = planner::plan_json(fsdp, catalog);
  CHECK(fsdp_plan["layout"]["overlap_grad_reduce"] == false);
  fsdp["layout"] = fsdp_plan["layout"];
  CHECK(failing_field(fsdp) == "<no error>");
  // Stated true where it does not apply, or not a boolean.
  const auto with = [](const std::function<void(json&)>& edit) {
    json d = good();
    d["layout"]["overlap_grad_reduce"] = true;
    edit(d);
    return d;
  };
  CHECK(failing_field(with([](json&) {})) == "<no error>");
  CHECK(failing_field(with([](json& d) { d["layout"]["zero"] = 3; })) == "layout.overlap_grad_reduce");
  CHECK(failing_field(with([](json& d) { d["job"]["framework"] = "deepspeed"; })) == "layout.overlap_grad_reduce");
  // Megatron-FSDP (ZeRO 2 or 3 under Megatron-Core's runtime) always overlaps: echoed true, false refused.
  json fsdp_megatron = good();
  fsdp_megatron["job"]["framework"] = "megatron-core";
  fsdp_megatron["layout"]["zero"] = 2;
  CHECK(planner::plan_json(fsdp_megatron, catalog)["layout"]["overlap_grad_reduce"] == true);
  fsdp_megatron["layout"]["overlap_grad_reduce"] = false;
  CHECK(failing_field(fsdp_megatron) == "layout.overlap_grad_reduce");
  CHECK(failing_field(with([](json& d) { d["layout"]["overlap_grad_reduce"] = "no"; })) ==
        "layout.overlap_grad_reduce");
}

// Serving runs no training schedule: each training-only overlap takes only false there, and a true
// is an error naming it.
TEST_CASE("serving takes only false for the training overlaps, naming the one stated true") {
  for (const char* field : {"tp_comm_overlap", "overlap_p2p_comm", "overlap_grad_reduce"}) {
    INFO(field);
    json serving = json::parse(R"({"model": {"preset": "llama3.1-8b"},
      "job": {"kind": "inference", "prompt_len": 1024, "output_len": 256, "concurrent": 8},
      "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1}, "layout": {"tp": 8, "pp": 1}})");
    serving["layout"][field] = true;
    CHECK(failing_field(serving) == std::string("layout.") + field);
    serving["layout"][field] = false;
    CHECK(failing_field(serving) == "<no error>");
  }
}

TEST_CASE("layout.tp_comm_overlap true where Transformer Engine's TP overlap cannot run is refused, naming it") {
  const auto with = [](const std::function<void(json&)>& edit) {
    json doc = good();
    doc["layout"]["tp_comm_overlap"] = true;
    edit(doc);
    return doc;
  };
  CHECK(failing_field(with([](json&) {})) == "<no error>");  // Megatron-Core's runtime, SP, TP inside the node
  CHECK(failing_field(with([](json& d) {
          d["layout"]["tp"] = 1;
          d["layout"]["dp"] = 32;
          d["layout"]["sequence_parallel"] = false;
        })) == "layout.tp_comm_overlap");
  CHECK(failing_field(with([](json& d) { d["layout"]["sequence_parallel"] = false; })) == "layout.tp_comm_overlap");
  CHECK(failing_field(with([](json& d) { d["job"]["framework"] = "fsdp"; })) == "layout.tp_comm_overlap");
  CHECK(failing_field(with([](json& d) { d["layout"]["zero"] = 3; })) == "layout.tp_comm_overlap");  // auto: FSDP
  // TP 16 leaves the 8-GPU node (NVLink domain) for the network.
  CHECK(failing_field(with([](json& d) {
          d["layout"]["tp"] = 16;
          d["layout"]["dp"] = 2;
          d["model"] = {{"layers", 80},   {"hidden", 8192},      {"heads", 64},
                        {"kv_heads", 16}, {"ffn_hidden", 28672}, {"vocab", 128256}};
        })) == "layout.tp_comm_overlap");
  CHECK(failing_field(with([](json& d) { d["layout"]["tp_comm_overlap"] = "yes"; })) == "layout.tp_comm_overlap");
  // Stated false is always accepted, and the plan echoes it.
  json off = good();
  off["layout"]["tp_comm_overlap"] = false;
  CHECK(failing_field(off) == "<no error>");
}
