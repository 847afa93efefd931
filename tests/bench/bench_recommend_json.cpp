// The JSON-in, JSON-out recommend that the Python package (and the REST service) calls, timed in
// C++: the reference for "a recommend from Python is within 10% of the same call in C++".
// tests/python/bench_recommend.py times linkwise.recommend on the same workload; README, "Python".
#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include "linkwise/catalog_db.hpp"
#include "linkwise/planner.hpp"

namespace {

// data/examples/recommend-llama3.1-70b.json: Llama 3.1 70B pre-training on 1T tokens within 30
// days, the cheapest instances and layouts across the whole catalog.
const nlohmann::json kWorkload = nlohmann::json::parse(R"({
  "model": {"preset": "llama3.1-70b"},
  "job": {"kind": "pretrain", "seq_len": 8192, "global_batch": 512, "tokens": 1e12, "precision": "bf16"},
  "constraints": {"max_nodes": 64, "deadline_hours": 720, "objective": "cost_within_deadline"}
})");

void BM_RecommendJson_Llama70B(benchmark::State& state) {
  const linkwise::Catalog catalog = linkwise::Catalog::embedded();
  const int top = static_cast<int>(state.range(0));
  for (auto _ : state) {
    nlohmann::json result = linkwise::planner::recommend_json(kWorkload, catalog, top);
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_RecommendJson_Llama70B)->Arg(1)->Arg(10)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
