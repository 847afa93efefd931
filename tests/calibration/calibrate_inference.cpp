// Calibration of the serving-engine profiles (core/src/planner/serving.cpp) against each engine's
// own published throughput (tests/calibration/inference_runs.json: TensorRT-LLM's performance
// overview tables (0.5, 0.17, 1.0 and the 1.2-era page), SGLang's and vLLM's offline ShareGPT runs,
// Lambda's vLLM 0.6.0 runs; GPUStack's vLLM and SGLang runs, DataCrunch's SGLang H200 runs). Rows
// marked "set": "fit" tune the profiles (--fit); "check" rows are never fit and say how far the
// planner lands elsewhere.
//
//   linkwise_calibrate_inference [--runs FILE] [--data DIR] [--table] [--fit] [--bands]
//                                [--check MAX_FIT_MEDIAN MAX_DENSE_CHECK_MEDIAN] [--check-groups MAX_DENSE_GROUP]
//                                [--check-moe MAX_MOE_CHECK_MEDIAN MAX_MOE_GROUP]
//                                [--group-limit "SET: SOURCE" MAX_MEDIAN]...
//
// --moe-training-check FILE MAX pools the MoE serving check rows with the MoE training check rows
// (FILE: `linkwise_calibrate --write-held-out` on moe_check_runs.json, "id<TAB>|error|" per line):
// issue 10's MoE check set is both, and MAX gates its median |error|.
//
// --latency-runs FILE [--latency-check TTFT ITL TOKENS ITL_BEYOND] checks serving latency under load
// instead (tests/calibration/latency_runs.json, NVIDIA NIM's sweeps): median |error| of time to first
// token, time per output token and output tokens/s within the planned KV pool, and of time per output
// token beyond it.
//
// --group-limit gates one source group (named as the report prints it) at its own limit instead of
// the dense or MoE group limit: the vLLM and SGLang check sources that land far from the planner
// are gated a few points above their figure, so a regression still fails without loosening the
// limit every other source is held to. Naming a group the runs do not have is an error.
//
// Mixture-of-experts rows (TensorRT-LLM's Mixtral, Qwen3, Llama 4, gpt-oss and DeepSeek-R1 tables)
// are reported and gated apart from the dense ones; their fit rows (the 1.2-era table) fit only the
// serving MoE constants (moe_serving_routed_row_s, moe_serving_ep_layer_sync_s), never the engine
// profiles; "ep", "etp" and
// "attention_dp" in a row place its experts as the source ran them.
//
// Every row is planned on one node of its GPU (NVSwitch at the GPU's NVLink figure), its model
// preset, precision, KV-cache precision, prompt/output lengths, concurrency (a number, or "max":
// what the engine's KV pool holds) and engine; predicted output tokens/s (whole system) is
// compared with the measured figure.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner.hpp"
#include "linkwise/planner/uncertainty.hpp"

using namespace linkwise;
using nlohmann::json;

namespace {

struct Run {
  std::string id, source, set;
  planner::Engine engine = planner::Engine::auto_;
  planner::Workload workload;
  double measured = 0;  // output tokens/s, whole system
  // "requests": the prompts the benchmark sends, all at once: no more sequences than that run
  // together, however many the KV pool would hold (0: not stated).
  double requests = 0;
  bool moe = false;  // a mixture-of-experts model: reported and gated apart (--check-moe)
};

std::vector<Run> load_runs(const std::string& path, const Catalog& catalog) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const json doc = json::parse(in);
  std::vector<Run> runs;
  for (const json& r : doc.at("runs")) {
    Run run;
    run.id = r.at("id").get<std::string>();
    run.source = r.at("source").get<std::string>();
    run.set = r.at("set").get<std::string>();
    run.engine = planner::parse_engine(r.at("engine").get<std::string>());
    run.measured = r.at("measured_output_tokens_per_s").get<double>();
    run.requests = r.value("requests", 0.0);
    const std::string gpu = r.at("gpu").get<std::string>();
    const int gpus = r.at("gpus").get<int>();
    json job = {{"kind", "inference"},
                {"prompt_len", r.at("prompt_len")},
                {"output_len", r.at("output_len")},
                {"concurrent", r.at("concurrent")},
                {"precision", r.at("precision")},
                {"kv_cache_precision", r.at("kv_cache_precision")},
                {"engine", r.at("engine")}};
    // The engine's sequence cap where the run set it (vLLM --max-num-seqs, ...).
    if (r.contains("engine_batch_limit")) job["engine_batch_limit"] = r.at("engine_batch_limit");
    // A one-GPU run is a machine without a GPU link (the catalog's rule: fabric "none", no NVLink
    // figure); nothing of a plan on one GPU reads the link. Otherwise the GPUs' own link figure
    // (the planner takes the catalog GPU's when the custom hardware states none: NVLink 4 on H100,
    // 5 on Blackwell, Infinity Fabric on MI300X).
    // AMD's 8-GPU boards join their GPUs by Infinity Fabric links, NVIDIA's by NVSwitch.
    const char* fabric = catalog.gpu(gpu).vendor == "amd" ? "infinity-fabric" : "nvswitch";
    const json custom = gpus == 1 ? json{{"gpu_model", gpu}, {"gpu_count", 1}, {"intra_node_fabric", "none"}}
                                  : json{{"gpu_model", gpu}, {"gpu_count", gpus}, {"intra_node_fabric", fabric}};
    // Expert parallelism as the row states it; "attention_dp": the engine's attention data
    // parallelism (TensorRT-LLM enable_attention_dp, SGLang --enable-dp-attention): each of the TP
    // GPUs runs attention and its own KV cache on its own requests, so the row plans as tp 1 with
    // as many replicas, the experts spread over all of them by ep.
    const bool attention_dp = r.value("attention_dp", false);
    // "etp": the experts split over TP GPUs (TensorRT-LLM's MoE tensor parallelism, its default before 1.0).
    const json layout = {
        {"tp", attention_dp ? json(1) : r.at("tp")}, {"pp", 1}, {"ep", r.value("ep", 1)}, {"etp", r.value("etp", 1)}};
    const json w = {{"model", {{"preset", r.at("model")}}},
                    {"job", job},
                    {"hardware", {{"custom", custom}, {"nodes", 1}}},
                    {"layout", layout}};
    run.workload = planner::parse_workload(w, catalog);
    run.moe = run.workload.model.moe.enabled();
    runs.push_back(std::move(run));
  }
  return runs;
}

// Predicted output tokens/s of a run under the given profile of its engine.
double predict(const Run& run, const planner::EngineProfile& profile, const planner::PlannerConstants& k,
               planner::Estimate* detail = nullptr) {
  const planner::Workload& w = run.workload;
  const planner::Hardware& hw = *w.hardware;
  const int nodes = *w.nodes;
  const planner::Layout l = planner::complete_layout(w, nodes * hw.instance.gpu_count);
  auto prepared = planner::prepare_hardware(hw, w.job, k, nullptr, false);
  prepared.engine_profile = planner::with_batch_limit(profile, w.job.engine_batch_limit);
  planner::Estimate e = planner::estimate(planner::prepare_model(w.model, w.job), prepared, nodes, l, k);
  // A max-throughput run whose pool holds more sequences than the benchmark sends: it runs them all.
  if (w.job.concurrent_max && run.requests > 0 && e.sequences * l.dp > run.requests) {
    planner::Job sent = w.job;
    sent.concurrent_max = false;
    sent.concurrent = sent.global_batch = int(run.requests);
    e = planner::estimate(planner::prepare_model(w.model, sent), prepared, nodes, l, k);
  }
  if (detail) *detail = e;
  return e.fits ? e.tokens_per_s : 0.0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Linear interpolation between order statistics at (n - 1) q.
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double at = q * double(v.size() - 1);
  const std::size_t lo = std::size_t(at);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (at - double(lo)) * (v[hi] - v[lo]);
}

using Profiles = std::map<planner::Engine, planner::EngineProfile>;

Profiles shipped_profiles() {
  Profiles p;
  for (planner::Engine e : {planner::Engine::vllm, planner::Engine::sglang, planner::Engine::tensorrt_llm})
    p[e] = planner::engine_profile(e);
  return p;
}

// Mean |log(pred/meas)| over the engine's fit rows (a row that does not fit counts as a miss):
// its dense-model rows, or with_moe all of them.
double loss(const std::vector<Run>& runs, planner::Engine engine, const planner::EngineProfile& p,
            const planner::PlannerConstants& k, bool with_moe) {
  double sum = 0;
  int n = 0;
  for (const Run& r : runs) {
    if (r.set != "fit" || r.engine != engine || (r.moe && !with_moe)) continue;
    const double pred = predict(r, p, k);
    sum += pred > 0 ? std::fabs(std::log(pred / r.measured)) : 5.0;
    ++n;
  }
  return n ? sum / n : 0.0;
}

struct FitParam {
  double* value;
  double lo, hi;
};

// Coordinate descent over grids of `steps` steps within physical bounds, from the current values;
// returns the loss.
template <typename Loss>
double descend(std::vector<FitParam>& params, const Loss& loss_of, int steps = 40) {
  for (FitParam& q : params) *q.value = std::clamp(*q.value, q.lo, q.hi);  // a start outside its bounds
  double best = loss_of();
  for (int round = 0; round < 6; ++round) {
    for (FitParam& q : params) {
      double best_value = *q.value;
      for (int i = 0; i <= steps; ++i) {
        *q.value = q.lo + (q.hi - q.lo) * i / steps;
        const double l = loss_of();
        if (l < best - 1e-12) {
          best = l;
          best_value = *q.value;
        }
      }
      *q.value = best_value;
    }
  }
  return best;
}

// Which of an engine's fit rows there are: dense ones (its fractions) and all (its per-layer terms).
struct FitRows {
  int dense = 0, all = 0;
  bool blackwell_dense = false, cdna3 = false, cdna4 = false;
};
FitRows fit_rows(const std::vector<Run>& runs, planner::Engine engine) {
  FitRows f;
  for (const Run& r : runs) {
    if (r.set != "fit" || r.engine != engine) continue;
    ++f.all;
    f.dense += !r.moe;
    const Architecture arch = r.workload.hardware->gpu.architecture;
    f.blackwell_dense |= !r.moe && arch == Architecture::blackwell;
    f.cdna3 |= arch == Architecture::cdna3;
    f.cdna4 |= arch == Architecture::cdna4;
  }
  return f;
}

// Stage 1, an engine's fractions on its dense fit rows. TensorRT-LLM: decode and GEMM fractions,
// per-step overhead and Blackwell scale (its MoE rows then fit the MoE constants, fit_moe). vLLM and
// SGLang: the decode fraction (high-concurrency ShareGPT runs); they keep TensorRT-LLM's GEMM
// fraction, per-step overhead and Blackwell scale, which their rows cannot separate.
double fit_fractions(const std::vector<Run>& runs, Profiles& profiles, const planner::PlannerConstants& k,
                     planner::Engine engine) {
  planner::EngineProfile& p = profiles[engine];
  const FitRows rows = fit_rows(runs, engine);
  if (rows.dense == 0) return 0;
  std::vector<FitParam> params = {{&p.decode_hbm_fraction, 0.40, 0.95}};
  if (engine == planner::Engine::tensorrt_llm) {
    params.push_back({&p.gemm_fraction, 0.30, 0.90});
    params.push_back({&p.step_overhead_s, 0.0, 0.010});
    if (rows.blackwell_dense) params.push_back({&p.blackwell_scale, 0.40, 1.0});
  } else {
    const planner::EngineProfile& t = profiles[planner::Engine::tensorrt_llm];
    p.gemm_fraction = t.gemm_fraction;
    p.step_overhead_s = t.step_overhead_s;
    p.blackwell_scale = t.blackwell_scale;
  }
  return descend(params, [&] { return loss(runs, engine, p, k, false); });
}

// Stage 2, an engine's fixed time per layer per step, which only low concurrency shows, on all its
// fit rows (InferenceX's sweeps among them), and each AMD Instinct generation's ROCm figures where
// the engine has rows of that generation (a fraction factor keeping at most 0.95 of the HBM peak).
double fit_layer_terms(const std::vector<Run>& runs, Profiles& profiles, const planner::PlannerConstants& k,
                       planner::Engine engine) {
  planner::EngineProfile& p = profiles[engine];
  const FitRows rows = fit_rows(runs, engine);
  if (rows.all == rows.dense) return loss(runs, engine, p, k, true);  // nothing at low concurrency to fit on
  std::vector<FitParam> params = {{&p.layer_step_s, 0.0, 0.5e-3}};
  for (auto [has_rows, terms] : {std::pair{rows.cdna3, &p.cdna3}, std::pair{rows.cdna4, &p.cdna4}}) {
    terms->fit = has_rows;
    if (!has_rows) continue;
    params.push_back({&terms->fraction_scale, 0.30, 0.95 / p.decode_hbm_fraction});
    params.push_back({&terms->layer_step_s, 0.0, 1.0e-3});
  }
  return descend(params, [&] { return loss(runs, engine, p, k, true); });
}

// Whether two figures agree to a relative tolerance (0: exactly).
bool agree(double a, double b, double tolerance) {
  return a == b || std::fabs(a - b) <= tolerance * std::max(std::fabs(a), std::fabs(b));
}

// Whether two sets of profiles hold the same fitted figures.
bool same_fit(const Profiles& a, const Profiles& b, double tolerance = 0) {
  for (const auto& [engine, p] : a) {
    const planner::EngineProfile& q = b.at(engine);
    for (auto [x, y] : {std::pair{p.decode_hbm_fraction, q.decode_hbm_fraction},
                        {p.gemm_fraction, q.gemm_fraction},
                        {p.step_overhead_s, q.step_overhead_s},
                        {p.blackwell_scale, q.blackwell_scale},
                        {p.layer_step_s, q.layer_step_s},
                        {p.cdna3.fraction_scale, q.cdna3.fraction_scale},
                        {p.cdna3.layer_step_s, q.cdna3.layer_step_s},
                        {p.cdna4.fraction_scale, q.cdna4.fraction_scale},
                        {p.cdna4.layer_step_s, q.cdna4.layer_step_s}})
      if (!agree(x, y, tolerance)) return false;
  }
  return true;
}

// Whether two sets of constants hold the same serving MoE figures.
bool same_moe_fit(const planner::PlannerConstants& a, const planner::PlannerConstants& b, double tolerance = 0) {
  return agree(a.moe_serving_routed_row_s, b.moe_serving_routed_row_s, tolerance) &&
         agree(a.moe_serving_ep_layer_sync_s, b.moe_serving_ep_layer_sync_s, tolerance);
}

void print_fit(const Profiles& profiles, planner::Engine engine, const FitRows& rows, double loss_all) {
  const planner::EngineProfile& p = profiles.at(engine);
  std::printf("fit %-13s rows %3d (%3d dense)  decode_hbm_fraction %.3f  gemm_fraction %.3f  step_overhead_s %.6f  "
              "blackwell_scale %.3f  layer_step_s %.4g  cdna3 %.3f / %.4g  cdna4 %.3f / %.4g  (mean |log err| %.4f)\n",
              std::string(planner::to_string(engine)).c_str(), rows.all, rows.dense, p.decode_hbm_fraction,
              p.gemm_fraction, p.step_overhead_s, p.blackwell_scale, p.layer_step_s, p.cdna3.fraction_scale,
              p.cdna3.layer_step_s, p.cdna4.fraction_scale, p.cdna4.layer_step_s, loss_all);
}

// Mean |log(pred/meas)| over the mixture-of-experts fit rows, every engine at its (fitted) profile.
double moe_loss(const std::vector<Run>& runs, Profiles& profiles, const planner::PlannerConstants& k) {
  double sum = 0;
  int n = 0;
  for (const Run& r : runs) {
    if (r.set != "fit" || !r.moe || r.engine != planner::Engine::tensorrt_llm) continue;
    const double pred = predict(r, profiles[planner::resolve(r.engine, r.workload.hardware->gpu)], k);
    sum += pred > 0 ? std::fabs(std::log(pred / r.measured)) : 5.0;
    ++n;
  }
  return n ? sum / n : 0.0;
}

// The serving-only MoE constants (moe_serving_routed_row_s, moe_serving_ep_layer_sync_s), fit on
// TensorRT-LLM's MoE fit rows after its profile, which its dense fit rows alone set: coordinate
// descent over grids of 0.5 ns (0-200 ns per routed row) and 2.5 us (0-1 ms per layer and step).
void fit_moe(const std::vector<Run>& runs, Profiles& profiles, planner::PlannerConstants& k) {
  int rows = 0;
  for (const Run& r : runs) rows += r.set == "fit" && r.moe && r.engine == planner::Engine::tensorrt_llm;
  if (rows == 0) return;
  std::vector<FitParam> params = {{&k.moe_serving_routed_row_s, 0.0, 200e-9},
                                  {&k.moe_serving_ep_layer_sync_s, 0.0, 1e-3}};
  const double best = descend(
      params, [&] { return moe_loss(runs, profiles, k); }, 400);
  std::printf("fit MoE       rows %3d  moe_serving_routed_row_s %.4g  moe_serving_ep_layer_sync_s %.4g  (mean |log "
              "err| %.4f)\n",
              rows, k.moe_serving_routed_row_s, k.moe_serving_ep_layer_sync_s, best);
}

struct Group {
  std::vector<double> abs_err, signed_err;
};

// Serving latency under load (tests/calibration/latency_runs.json, never fit): each row's workload
// planned as it is, its time to first token, time per output token and output tokens/s against the
// measured means. Rows whose concurrency the planned KV pool holds and rows beyond it (the engine
// queues the rest) are reported apart. `limits`: median |error| ceilings for TTFT, time per output
// token and tokens/s within the pool, and time per output token beyond it (a negative: not gated).
bool latency_report(const std::string& path, const Catalog& catalog, bool table, const double (&limits)[4]) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  const json doc = json::parse(in);
  Group ttft[2], itl[2], tput[2];  // [0]: within the pool, [1]: beyond it
  for (const json& r : doc["runs"]) {
    const json plan = planner::plan_json(r["workload"], catalog);
    const json& m = r["measured"];
    const bool beyond = r["workload"]["job"]["concurrent"].get<double>() > plan["max_concurrent"].get<double>();
    const double e_ttft = plan["ttft_under_load_s"].get<double>() / m["ttft_s"].get<double>() - 1.0;
    const double e_itl = plan["tpot_s"].get<double>() / m["itl_s"].get<double>() - 1.0;
    const double e_tput = plan["tokens_per_s"].get<double>() / m["output_tokens_per_s"].get<double>() - 1.0;
    for (auto [g, e] : {std::pair{&ttft[beyond], e_ttft}, {&itl[beyond], e_itl}, {&tput[beyond], e_tput}}) {
      g->abs_err.push_back(std::fabs(e));
      g->signed_err.push_back(e);
    }
    if (table)
      std::printf("%-56s %s TTFT %8.3f / %8.3f s  per token %6.1f / %6.1f ms  tokens/s %7.0f / %7.0f\n",
                  r["id"].get<std::string>().c_str(), beyond ? "beyond pool" : "in pool    ", m["ttft_s"].get<double>(),
                  plan["ttft_under_load_s"].get<double>(), 1000 * m["itl_s"].get<double>(),
                  1000 * plan["tpot_s"].get<double>(), m["output_tokens_per_s"].get<double>(),
                  plan["tokens_per_s"].get<double>());
  }
  bool ok = true;
  const char* names[2] = {"within the planned KV pool", "beyond it (queued)"};
  for (int b = 0; b < 2; ++b) {
    std::printf("latency, %-28s %3zu rows: TTFT %5.1f%% (%+5.1f%%), per output token %5.1f%% (%+5.1f%%), "
                "tokens/s %5.1f%% (%+5.1f%%)\n",
                names[b], ttft[b].abs_err.size(), 100 * median(ttft[b].abs_err), 100 * median(ttft[b].signed_err),
                100 * median(itl[b].abs_err), 100 * median(itl[b].signed_err), 100 * median(tput[b].abs_err),
                100 * median(tput[b].signed_err));
  }
  const double figures[4] = {median(ttft[0].abs_err), median(itl[0].abs_err), median(tput[0].abs_err),
                             median(itl[1].abs_err)};
  const char* what[4] = {"TTFT within the pool", "time per output token within the pool", "tokens/s within the pool",
                         "time per output token beyond the pool"};
  for (int i = 0; i < 4; ++i)
    if (limits[i] >= 0 && !(figures[i] <= limits[i])) {
      std::printf("FAIL: latency %s median |error| %.3f above %.3f\n", what[i], figures[i], limits[i]);
      ok = false;
    }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::string runs_path = std::string(LINKWISE_CALIBRATION_DIR) + "/inference_runs.json";
  std::string data_dir = LINKWISE_DATA_DIR;
  bool table = false, do_fit = false, check_fit = false, bands = false, check_bands = false;
  double max_fit = -1, max_check = -1, max_group = -1, max_moe = -1, max_moe_group = -1;
  std::map<std::string, double> group_limits;  // --group-limit: "<set>: <source>" -> max median
  std::string training_errors_path;            // --moe-training-check FILE MAX
  double max_moe_combined = -1;
  std::string latency_path;                     // --latency-runs FILE: serving latency under load only
  double latency_limits[4] = {-1, -1, -1, -1};  // --latency-check TTFT ITL TOKENS ITL_BEYOND
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--runs" && i + 1 < argc) runs_path = argv[++i];
    else if (a == "--data" && i + 1 < argc) data_dir = argv[++i];
    else if (a == "--table") table = true;
    else if (a == "--fit") do_fit = true;
    else if (a == "--check-fit") do_fit = check_fit = true;
    else if (a == "--bands") bands = true;
    else if (a == "--check-bands") check_bands = true;
    else if (a == "--check" && i + 2 < argc) {
      max_fit = std::atof(argv[++i]);
      max_check = std::atof(argv[++i]);
    } else if (a == "--check-groups" && i + 1 < argc) max_group = std::atof(argv[++i]);
    else if (a == "--check-moe" && i + 2 < argc) {
      max_moe = std::atof(argv[++i]);
      max_moe_group = std::atof(argv[++i]);
    } else if (a == "--moe-training-check" && i + 2 < argc) {
      training_errors_path = argv[++i];
      max_moe_combined = std::atof(argv[++i]);
    } else if (a == "--latency-runs" && i + 1 < argc) {
      latency_path = argv[++i];
    } else if (a == "--latency-check" && i + 4 < argc) {
      for (double& v : latency_limits) v = std::atof(argv[++i]);
    } else if (a == "--group-limit" && i + 2 < argc) {
      const std::string name = argv[++i];
      group_limits[name] = std::atof(argv[++i]);
    } else {
      std::fprintf(
          stderr,
          "usage: %s [--runs FILE] [--data DIR] [--table] [--fit | --check-fit] [--bands] [--check-bands] [--check FIT "
          "DENSE_CHECK] "
          "[--check-groups DENSE_GROUP] [--check-moe MOE_CHECK MOE_GROUP] [--moe-training-check FILE MAX] "
          "[--group-limit \"SET: SOURCE\" MAX]... | --latency-runs FILE [--latency-check TTFT ITL TOKENS ITL_BEYOND]\n",
          argv[0]);
      return 2;
    }
  }
  try {
    const Catalog catalog = Catalog::load_data_dir(data_dir);
    if (!latency_path.empty()) return latency_report(latency_path, catalog, table, latency_limits) ? 0 : 1;
    const std::vector<Run> runs = load_runs(runs_path, catalog);
    planner::PlannerConstants k = planner::default_constants();
    Profiles profiles = shipped_profiles();
    if (do_fit) {
      // TensorRT-LLM's dense rows set its fractions, its MoE rows the MoE constants, its low-
      // concurrency rows its per-layer step time; vLLM's and SGLang's rows their profiles under those
      // constants. Each engine's stages alternate until a round changes nothing (a fixed point: a
      // second --fit from the printed values prints them again), at most 20 rounds.
      const planner::Engine trtllm = planner::Engine::tensorrt_llm;
      const auto fixed_point = [&](const std::function<void()>& round) {
        for (int rounds = 0; rounds < 20; ++rounds) {
          const Profiles before = profiles;
          const planner::PlannerConstants k_before = k;
          round();
          if (same_fit(before, profiles) && same_moe_fit(k_before, k)) return;
        }
        std::printf("fit: no fixed point in 20 rounds\n");
      };
      fixed_point([&] {
        fit_fractions(runs, profiles, k, trtllm);
        fit_moe(runs, profiles, k);
        fit_layer_terms(runs, profiles, k, trtllm);
      });
      print_fit(profiles, trtllm, fit_rows(runs, trtllm), loss(runs, trtllm, profiles[trtllm], k, true));
      for (planner::Engine engine : {planner::Engine::vllm, planner::Engine::sglang}) {
        fixed_point([&] {
          fit_fractions(runs, profiles, k, engine);
          fit_layer_terms(runs, profiles, k, engine);
        });
        print_fit(profiles, engine, fit_rows(runs, engine), loss(runs, engine, profiles[engine], k, true));
      }
      // --check-fit: the shipped figures must be the fit's own (a constant edited by hand, or rows
      // added without a refit, fail here).
      if (check_fit) {
        // The shipped figures are the printed ones, rounded to what the grid's steps resolve.
        constexpr double kPrinted = 5e-3;
        if (!same_fit(profiles, shipped_profiles(), kPrinted) ||
            !same_moe_fit(k, planner::default_constants(), kPrinted)) {
          std::printf("FAIL: the fit moves the shipped serving figures (serving.cpp, constants.cpp): refit\n");
          return 1;
        }
        std::printf("the shipped serving figures are the fit's fixed point\n");
        return 0;
      }
    }

    std::map<std::string, Group> groups;  // "<set>: <source>"
    std::map<std::string, bool> group_moe;
    Group fit_all, fit_moe_rows, check_dense, check_moe;
    // measured / predicted on the check rows (--bands), by engine and model kind: "<engine> dense|moe"
    std::map<std::pair<planner::Engine, bool>, std::vector<double>> ratios;
    for (const Run& r : runs) {
      planner::Estimate e;
      const double pred = predict(r, profiles[planner::resolve(r.engine, r.workload.hardware->gpu)], k, &e);
      const double err = pred > 0 ? pred / r.measured - 1.0 : -1.0;
      // The batch each replica decodes and its time per output token say which term sets the pace.
      if (table)
        std::printf("%-5s %-52s measured %9.0f  predicted %9.0f  %+6.1f%%  batch %5.0f  tpot %6.1f ms\n", r.set.c_str(),
                    r.id.c_str(), r.measured, pred, 100 * err, e.sequences, 1000 * e.tpot);
      const std::string name = r.set + ": " + r.source;
      Group& g = groups[name];
      group_moe[name] = group_moe[name] || r.moe;
      Group& all = r.set == "fit" ? (r.moe ? fit_moe_rows : fit_all) : r.moe ? check_moe : check_dense;
      for (Group* x : {&g, &all}) {
        x->abs_err.push_back(std::fabs(err));
        x->signed_err.push_back(err);
      }
      if (r.set != "fit" && pred > 0)
        ratios[{planner::resolve(r.engine, r.workload.hardware->gpu), r.moe}].push_back(r.measured / pred);
    }
    // Sources are gated apart: dense ones against DENSE_GROUP, mixture-of-experts ones against
    // MOE_GROUP (the planner is far from the MoE serving rows today, docs/calibration.md).
    std::printf("\noutput tokens/s, median |error| (median signed) per source:\n");
    bool ok = true;
    for (const auto& limit : group_limits)
      if (!groups.contains(limit.first)) {
        std::fprintf(stderr, "error: --group-limit names no source group in the runs: \"%s\"\n", limit.first.c_str());
        return 2;
      }
    for (const auto& [name, g] : groups) {
      const double m = median(g.abs_err);
      std::printf("  %-50s %3zu rows  %5.1f%% (%+5.1f%%)%s\n", name.c_str(), g.abs_err.size(), 100 * m,
                  100 * median(g.signed_err), group_moe[name] ? "  [MoE]" : "");
      const auto own = group_limits.find(name);
      const double limit = own != group_limits.end() ? own->second : group_moe[name] ? max_moe_group : max_group;
      if (limit >= 0 && m > limit) {
        std::printf("    FAIL: above %.0f%%\n", 100 * limit);
        ok = false;
      }
    }
    const double mf = median(fit_all.abs_err), mc = median(check_dense.abs_err), mm = median(check_moe.abs_err);
    auto line = [](const char* what, const Group& g) {
      std::printf("  %-50s %3zu rows  %5.1f%% (%+5.1f%%)\n", what, g.abs_err.size(), 100 * median(g.abs_err),
                  100 * median(g.signed_err));
    };
    line("fit set, dense models", fit_all);
    line("fit set, mixture-of-experts models", fit_moe_rows);
    line("check set, dense models (never fit)", check_dense);
    line("check set, mixture-of-experts models (never fit)", check_moe);
    if (bands) {
      // p10-p90 of measured / predicted on the check rows, per engine and model kind, printed as the
      // rows of core/src/planner/serving_bands.inc (the serving interval of uncertainty.cpp).
      std::printf("\nserving bands (core/src/planner/serving_bands.inc):\n");
      for (const auto& [key, v] : ratios)
        std::printf("{Engine::%s, %s, %.3f, %.3f, %zu},\n",
                    key.first == planner::Engine::tensorrt_llm ? "tensorrt_llm"
                                                               : std::string(to_string(key.first)).c_str(),
                    key.second ? "true" : "false", quantile(v, 0.10), quantile(v, 0.90), v.size());
    }
    if (check_bands) {
      // The shipped serving intervals (serving_bands.inc, compiled into the core) must be the
      // residuals' quantiles of today's check rows: a row added or a constant refit without
      // regenerating the table fails here.
      for (const auto& [key, v] : ratios) {
        const auto& shipped = planner::serving_bands();
        const auto it = std::find_if(shipped.begin(), shipped.end(), [&](const planner::ServingBand& b) {
          return b.engine == key.first && b.moe == key.second;
        });
        const std::string what = std::string(to_string(key.first)) + (key.second ? " moe" : " dense");
        if (it == shipped.end() || it->runs != static_cast<int>(v.size()) ||
            std::fabs(it->p10 - quantile(v, 0.10)) > 0.005 || std::fabs(it->p90 - quantile(v, 0.90)) > 0.005) {
          std::printf("FAIL: serving band %s is %zu rows p10 %.3f p90 %.3f; serving_bands.inc differs "
                      "(regenerate with --bands)\n",
                      what.c_str(), v.size(), quantile(v, 0.10), quantile(v, 0.90));
          ok = false;
        }
      }
    }
    if (max_fit >= 0 && mf > max_fit) {
      std::printf("FAIL: fit set median %.1f%% above %.0f%%\n", 100 * mf, 100 * max_fit);
      ok = false;
    }
    if (max_check >= 0 && mc > max_check) {
      std::printf("FAIL: dense check set median %.1f%% above %.0f%%\n", 100 * mc, 100 * max_check);
      ok = false;
    }
    if (max_moe >= 0 && mm > max_moe) {
      std::printf("FAIL: MoE check set median %.1f%% above %.0f%%\n", 100 * mm, 100 * max_moe);
      ok = false;
    }
    if (!training_errors_path.empty()) {
      std::ifstream in(training_errors_path);
      if (!in) {
        std::fprintf(stderr, "error: cannot read %s (linkwise_calibrate --write-held-out writes it)\n",
                     training_errors_path.c_str());
        return 2;
      }
      std::vector<double> pooled = check_moe.abs_err;
      std::string id;
      double err = 0;
      std::size_t training_rows = 0;
      while (in >> id >> err) {
        pooled.push_back(err);
        ++training_rows;
      }
      const double m = median(pooled);
      std::printf("  %-50s %3zu rows  %5.1f%% (%zu training, %zu serving)\n",
                  "MoE check set, training and serving (never fit)", pooled.size(), 100 * m, training_rows,
                  check_moe.abs_err.size());
      if (training_rows == 0 || m > max_moe_combined) {
        std::printf("FAIL: MoE training + serving check median %.1f%% above %.1f%% (or no training rows)\n", 100 * m,
                    100 * max_moe_combined);
        ok = false;
      }
    }
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
}
