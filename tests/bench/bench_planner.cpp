// Planner speed: layout evaluations per second (the search's inner loop) and a full recommend of
// Llama-3.1-70B pre-training over the whole catalog. Run:
//   cmake -S . -B build -DLINKWISE_BUILD_BENCHMARKS=ON && cmake --build build --target bench_planner
//   build/bin/bench_planner
#include <chrono>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "linkwise/catalog_db.hpp"
#include "linkwise/planner.hpp"

using namespace linkwise;

namespace {

const Catalog& catalog() {
  static const Catalog c = Catalog::load_data_dir(LINKWISE_BENCH_DATA_DIR);
  return c;
}

const nlohmann::json& llama70b_workload() {
  static const nlohmann::json doc = nlohmann::json::parse(R"({
    "model": {"preset": "llama3.1-70b"},
    "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512, "tokens": 2e12, "precision": "bf16"},
    "constraints": {"max_nodes": 64, "objective": "cost"}})");
  return doc;
}

// One core evaluating memory and time of many different layouts of Llama-3.1-70B on p5.48xlarge.
void BM_LayoutEvaluation(benchmark::State& state) {
  const planner::Workload w = planner::parse_workload(llama70b_workload(), catalog());
  const Instance& in = catalog().instance("aws:p5.48xlarge");
  const planner::Hardware hw{in, catalog().gpu(in.gpu_model), false};
  const planner::PlannerConstants& k = planner::default_constants();
  const planner::PreparedModel m = planner::prepare_model(w.model, w.job);
  const planner::PreparedHardware p = planner::prepare_hardware(hw, w.job, k, nullptr, false);
  struct Case {
    int nodes;
    planner::Layout layout;
  };
  std::vector<Case> cases;
  for (int nodes : {4, 8, 16, 32})
    for (int tp : {1, 2, 4, 8})
      for (int pp : {1, 2, 4, 8})
        for (int zero : {0, 1, 3})
          for (auto rc : {planner::Recompute::none, planner::Recompute::selective, planner::Recompute::full}) {
            planner::Layout l;
            l.tp = tp;
            l.pp = pp;
            l.dp = nodes * 8 / (tp * pp);
            l.zero = zero;
            l.recompute = rc;
            l.sequence_parallel = tp > 1;
            l.tp_comm_overlap = tp > 1 && zero < 3;  // its default under auto (Megatron-Core's runtime)
            l.overlap_grad_reduce = zero < 3;        // likewise
            cases.push_back({nodes, l});
          }
  size_t i = 0;
  for (auto _ : state) {
    const Case& c = cases[i];
    benchmark::DoNotOptimize(planner::estimate(m, p, c.nodes, c.layout, k));
    if (++i == cases.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LayoutEvaluation);

// The full search of one workload over every catalog instance, top 5, with its counters.
void run_search(benchmark::State& state, const nlohmann::json& workload) {
  const planner::Workload w = planner::parse_workload(workload, catalog());
  long long evaluated = 0;
  for (auto _ : state) {
    const planner::SearchResult r = planner::search(w, catalog(), 5);
    evaluated = r.evaluated;
    benchmark::DoNotOptimize(r.plans.data());
  }
  state.counters["layouts_evaluated"] = double(evaluated);
  state.counters["instances"] = double(catalog().instances().size());
}

// The full search over every catalog instance, node counts up to 64 and all layouts, top 5.
void BM_RecommendLlama70B(benchmark::State& state) { run_search(state, llama70b_workload()); }
BENCHMARK(BM_RecommendLlama70B)->Unit(benchmark::kMillisecond);

// The same search exhaustively (no pruning): what pruning saves.
void BM_RecommendLlama70BExhaustive(benchmark::State& state) {
  const planner::Workload w = planner::parse_workload(llama70b_workload(), catalog());
  planner::SearchOptions exhaustive;
  exhaustive.exhaustive = true;
  long long evaluated = 0;
  for (auto _ : state) {
    const planner::SearchResult r = planner::search(w, catalog(), 5, nullptr, exhaustive);
    evaluated = r.evaluated;
    benchmark::DoNotOptimize(r.plans.data());
  }
  state.counters["layouts_evaluated"] = double(evaluated);
  state.counters["layouts_per_s"] =
      benchmark::Counter(double(evaluated), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_RecommendLlama70BExhaustive)->Unit(benchmark::kMillisecond);

// Mixture-of-experts over the whole catalog (issue 10's goal: under 20 ms): DeepSeek-V3 and
// Qwen3-235B-A22B pre-training, with ep searched as one more layout dimension.
void BM_RecommendMoe(benchmark::State& state, const char* preset) {
  const nlohmann::json doc = {
      {"model", {{"preset", preset}}},
      {"job",
       {{"kind", "pretrain"}, {"seq_len", 4096}, {"global_batch", 1024}, {"tokens", 1e12}, {"precision", "fp8"}}},
      {"constraints", {{"max_nodes", 64}}}};
  run_search(state, doc);
}
BENCHMARK_CAPTURE(BM_RecommendMoe, deepseek_v3, "deepseek-v3")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RecommendMoe, qwen3_235b_a22b, "qwen3-235b-a22b")->Unit(benchmark::kMillisecond);

// JSON in, JSON out, as the REST service calls it (parse + search + describe + serialize).
void BM_RecommendJsonLlama70B(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(planner::recommend_json(llama70b_workload(), catalog(), 5));
}
BENCHMARK(BM_RecommendJsonLlama70B)->Unit(benchmark::kMillisecond);

// The mix tests/bench/wrk/linkwise.lua sends to POST /v1/recommendations with WRK_VARY=1: every
// model preset x sequence length x node limit, pre-training over the whole catalog. Request text
// in, response text out: JSON parse, search, describe and serialize, a different workload each time.
struct VariedWorkload {
  std::string label, body;
};

std::vector<VariedWorkload> varied_workloads() {
  const char* presets[] = {"llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "llama2-7b", "llama2-13b",
                           "llama2-70b",  "mistral-7b",   "qwen2.5-72b",   "gpt3-175b"};
  std::vector<VariedWorkload> out;
  for (int max_nodes : {8, 16, 32, 64})
    for (int seq_len : {2048, 4096, 8192})
      for (const char* preset : presets)
        out.push_back(
            {std::string(preset) + " seq_len " + std::to_string(seq_len) + " max_nodes " + std::to_string(max_nodes),
             std::string(R"({"model": {"preset": ")") + preset + R"("}, "job": {"kind": "pretrain", "seq_len": )" +
                 std::to_string(seq_len) +
                 R"(, "global_batch": 512, "tokens": 1e12, "precision": "bf16"}, "constraints": {"max_nodes": )" +
                 std::to_string(max_nodes) + R"(, "objective": "cost"}})"});
  return out;
}

void BM_RecommendTextVaried(benchmark::State& state) {
  const std::vector<VariedWorkload> workloads = varied_workloads();
  std::size_t i = 0, bytes = 0;
  for (auto _ : state) {
    const std::string answer = planner::recommend_json(nlohmann::json::parse(workloads[i].body), catalog(), 5).dump();
    bytes += answer.size();
    if (++i == workloads.size()) i = 0;
  }
  state.counters["workloads"] = double(workloads.size());
  state.counters["answer_bytes"] = double(bytes) / double(state.iterations());
}
BENCHMARK(BM_RecommendTextVaried)->Unit(benchmark::kMillisecond);

// The slowest single workload of that mix, for the tail (each workload timed alone).
void BM_RecommendTextVariedSlowest(benchmark::State& state) {
  const std::vector<VariedWorkload> workloads = varied_workloads();
  const auto answer = [&](std::size_t i) {
    return planner::recommend_json(nlohmann::json::parse(workloads[i].body), catalog(), 5).dump();
  };
  std::size_t slowest = 0;
  double slowest_s = 0;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < 5; ++r) benchmark::DoNotOptimize(answer(i));
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s > slowest_s) {
      slowest_s = s;
      slowest = i;
    }
  }
  for (auto _ : state) benchmark::DoNotOptimize(answer(slowest));
  state.SetLabel(workloads[slowest].label);
}
BENCHMARK(BM_RecommendTextVariedSlowest)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
