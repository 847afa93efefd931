// `linkwise plan WORKLOAD.json [--json] [--report PROBE_REPORT.json]` and
// `linkwise recommend WORKLOAD.json [--top K] [--json] [--report ...]`.
#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/planner.hpp"
#include "linkwise/probe_report.hpp"
#include "linkwise/text.hpp"

namespace linkwise::cli {

namespace {

nlohmann::json read_workload(const std::string& path) { return read_json_file(path, "WORKLOAD"); }

std::optional<MeasuredLinks> read_measured(const std::string& report_path, const Catalog& catalog) {
  if (report_path.empty()) return std::nullopt;
  try {
    return probe::measured_links(probe::load_report(report_path), catalog);
  } catch (const Error& e) {
    // The workload is a file too: say which file a field belongs to.
    throw Error(e.kind(), "--report " + report_path + ": " + e.message(), e.field());
  }
}

std::string fmt(const char* format, double v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string pad(const char* name, int width) {
  std::string out = name;
  if (int(out.size()) < width) out.append(width - out.size(), ' ');
  return out;
}

std::string layout_words(const planner::Layout& l, planner::JobKind kind) {
  // Serving layouts carry no training settings (micro-batch, ZeRO, recompute, cp, sp).
  if (kind == planner::JobKind::inference)
    return "tp=" + std::to_string(l.tp) + " pp=" + std::to_string(l.pp) + " dp=" + std::to_string(l.dp) +
           (l.ep > 1 || l.etp > 1 ? " ep=" + std::to_string(l.ep) + " etp=" + std::to_string(l.etp) : "");
  char fraction[64] = "";
  if (l.recompute == planner::Recompute::full && l.recompute_layer_fraction < 1.0)
    std::snprintf(fraction, sizeof fraction, " recompute_layer_fraction=%g", l.recompute_layer_fraction);
  return "tp=" + std::to_string(l.tp) + " pp=" + std::to_string(l.pp) + " cp=" + std::to_string(l.cp) +
         " dp=" + std::to_string(l.dp) + (l.zero_replicas() > 1 ? " dp_shard=" + std::to_string(l.zero_shard()) : "") +
         " micro_batch=" + std::to_string(l.micro_batch) + " zero=" + std::to_string(l.zero) +
         " recompute=" + std::string(planner::to_string(l.recompute)) + fraction + (l.sequence_parallel ? " sp" : "") +
         (l.virtual_stages > 1 ? " virtual_stages=" + std::to_string(l.virtual_stages) : "") +
         (l.ep > 1 || l.etp > 1 ? " ep=" + std::to_string(l.ep) + " etp=" + std::to_string(l.etp) : "") +
         (l.overlap_a2a ? " overlap_a2a" : "") + (l.tp_comm_overlap ? " tp_comm_overlap" : "") +
         (l.overlap_p2p_comm ? " overlap_p2p_comm" : "") + (l.overlap_grad_reduce ? " overlap_grad_reduce" : "");
}

// "p10-p90: tokens/s 92140-103500, $2.364-2.655 per million tokens, job $4728947-5309785; basis":
// the plan's interval in one line.
std::string interval_words(const planner::Plan& p) {
  auto count = [](double v) { return fmt(v >= 100 ? "%.0f" : "%.3g", v); };
  std::string s = "p10-p90: tokens/s " + count(p.tokens_per_s_interval.p10) + "-" + count(p.tokens_per_s_interval.p90);
  if (p.usd_per_million_tokens_interval)
    s += fmt(", $%.4g", p.usd_per_million_tokens_interval->p10) +
         fmt("-%.4g per million ", p.usd_per_million_tokens_interval->p90) +
         std::string(planner::counted_tokens(p.kind));
  if (p.job_hours_interval)
    s += fmt(", job %.1f", p.job_hours_interval->p10) + fmt("-%.1f h", p.job_hours_interval->p90);
  if (p.cost_usd_interval)
    s += ", job " + text::dollars(p.cost_usd_interval->p10) + "-" + text::dollars(p.cost_usd_interval->p90);
  return s + (p.interval_widened ? " (widened: see the warnings)" : "") + "; " + p.interval_basis;
}

void print_plan(const planner::Plan& p, std::ostream& out) {
  out << p.model << " (" << fmt("%.4g", p.params_b) << "B params"
      << (p.active_params_b < p.params_b ? fmt(", %.4gB active", p.active_params_b) : std::string()) << "; "
      << planner::to_string(p.kind) << ", " << planner::to_string(p.precision) << ") on " << p.nodes << " x "
      << p.instance << " (" << p.gpus << " x " << p.gpu_model << ")\n";
  out << "layout: " << layout_words(p.layout, p.kind) << "\n";
  if (!p.framework.empty()) out << "planned as: " << p.framework << "\n";
  out << "\n";
  const auto& m = p.memory_gb;
  out << "memory per GPU (GB)\n";
  for (const auto& [name, v] : {std::pair<const char*, double>{"weights", m.weights},
                                {"gradients", m.gradients},
                                {"optimizer", m.optimizer},
                                {"activations", m.activations},
                                {"kv_cache", m.kv_cache},
                                {"overhead", m.overhead},
                                {"total", m.total},
                                {"capacity", m.capacity}})
    out << "  " << pad(name, 12) << fmt("%9.2f\n", v);
  // "DOES NOT FIT" in red on a terminal (not when piped, nor with NO_COLOR set).
  const bool colour = &out == &std::cout && isatty(STDOUT_FILENO) && !std::getenv("NO_COLOR");
  // The memory_verdict, not the boolean: "tight" fits but sits inside the model's error band.
  out << (p.memory_verdict == "tight" ? "tight: fits, inside the memory model's error band (see the warning)"
          : p.fits                    ? "fits"
          : colour                    ? "\033[31mDOES NOT FIT\033[0m"
                                      : "DOES NOT FIT")
      << fmt(" (margin %.2f GB)\n", p.memory_margin_gb);
  // What turns the plan down besides memory (a latency target, a deadline) is not part of "fits".
  if (p.fits && !p.why_not.empty()) out << "but it does not qualify:\n";
  for (std::size_t i = 0; i < p.why_not.size(); ++i)
    out << "  - " << (i < p.why_not_reasons.size() ? std::string(planner::to_string(p.why_not_reasons[i])) + ": " : "")
        << p.why_not[i] << "\n";

  const auto& t = p.time_s;
  out << "\ntime per " << (p.kind == planner::JobKind::inference ? "decode step" : "step")
      << fmt(": %.4g s\n", p.step_time_s);
  // A communication's line gives its time and the part compute does not hide; the share of the step
  // is of what adds to it, so compute, bubble, the exposed parts and offload add up to the step.
  struct Part {
    const char* name;
    double seconds, adds;  // adds: what of it lengthens the step
    bool communication;
  };
  for (const Part& part :
       {Part{"compute", t.compute, t.compute, false}, Part{"tp_comm", t.tp_comm, t.tp_exposed, true},
        Part{"cp_comm", t.cp_comm, t.cp_exposed, true}, Part{"pp_comm", t.pp_comm, t.pp_exposed, true},
        Part{"pp_bubble", t.pp_bubble, t.pp_bubble, false}, Part{"dp_comm", t.dp_comm, t.dp_exposed, true},
        Part{"ep_comm", t.ep_comm, t.ep_exposed, true}, Part{"exposed_comm", t.exposed_comm, t.exposed_comm, false},
        Part{"offload", t.offload, t.offload, false}}) {
    if (std::string_view(part.name) == "offload" && part.seconds == 0) continue;  // a line only for a job that offloads
    const bool total = std::string_view(part.name) == "exposed_comm";
    out << "  " << pad(part.name, 13) << fmt("%10.4g s", part.seconds)
        << (part.communication ? fmt(", exposed %9.4g s", part.adds) : std::string(21, ' '))
        << fmt("  (%4.1f%% of the step", 100.0 * part.adds / p.step_time_s)
        << (total ? ": the exposed parts above)\n" : ")\n");
  }
  out << "bottleneck: " << p.bottleneck << "\n\n";
  out << fmt("tokens/s (job) %.6g", p.tokens_per_s) << fmt(", %.0f per GPU\n", p.tokens_per_s / p.gpus);
  out << interval_words(p) << "\n";
  if (p.kind == planner::JobKind::inference) {
    out << fmt("time to first token %.4g s", *p.ttft_s) << fmt(", per output token %.4g ms", *p.tpot_s * 1000)
        << fmt(", decode %.6g tokens/s", *p.decode_tokens_per_s)
        << (p.meets_latency_target
                ? (*p.meets_latency_target ? "; meets job.latency_target_ms" : "; misses job.latency_target_ms")
                : "")
        << "\n";
    out << "engine " << p.engine << fmt(": %.0f sequences together", double(p.concurrent.value_or(0)))
        << (p.concurrent_is_max ? " (max)" : "") << fmt(", at most %.0f", double(p.max_concurrent.value_or(0)))
        << (p.max_concurrent_limit == "engine_batch_limit" ? " (the engine's batch limit, KV memory left over)"
                                                           : " (what its KV pool holds)")
        << fmt("; time to first token under that load %.4g s\n", p.ttft_under_load_s.value_or(0));
  }
  if (t.dequant > 0) out << fmt("QLoRA NF4 dequantisation %.4g s of compute per step\n", t.dequant);
  out << fmt("model TFLOP/s per GPU %.1f", p.model_tflops_per_gpu) << fmt(", hardware %.1f", p.hardware_tflops_per_gpu)
      << fmt(", MFU %.1f%%\n", 100 * p.mfu);
  // Price and job figures on one line, each only where known (no price: no leading ", ").
  std::vector<std::string> money;
  if (p.price_usd_per_hour) money.push_back(fmt("price $%.2f/h", *p.price_usd_per_hour));
  if (p.usd_per_million_tokens)
    money.push_back(fmt("$%.4g per million ", *p.usd_per_million_tokens) +
                    std::string(planner::counted_tokens(p.kind)));
  if (p.job_hours) money.push_back(fmt("job %.1f h", *p.job_hours));
  if (p.cost_usd) money.push_back(text::dollars(*p.cost_usd));
  if (money.empty()) money.push_back("price unknown");
  for (std::size_t i = 0; i < money.size(); ++i) out << (i ? ", " : "") << money[i];
  out << "\n\nbandwidths\n  intra-node: " << p.bandwidth_source.intra_node
      << "\n  inter-node: " << p.bandwidth_source.inter_node << "\n  HBM: " << p.bandwidth_source.hbm << "\n";
  for (const auto& w : p.warnings) out << "warning: " << w << "\n";
}

// "memory 12, deadline 3": how many instance types each main reason turned down.
std::string reason_summary(const std::vector<planner::Rejection>& rejected) {
  std::vector<std::pair<std::string, int>> counts;
  for (const auto& r : rejected) {
    if (r.reasons.empty()) continue;
    const std::string name(planner::to_string(r.reasons.front().reason));
    auto at = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == name; });
    if (at == counts.end()) counts.emplace_back(name, 1);
    else ++at->second;
  }
  std::string out;
  for (const auto& [name, n] : counts) out += (out.empty() ? "" : ", ") + name + " " + std::to_string(n);
  return out;
}

void print_rejected(const std::vector<planner::Rejection>& rejected, std::ostream& out, std::size_t limit) {
  std::size_t shown = 0;
  for (const auto& r : rejected) {
    if (shown++ == limit) break;
    out << "  " << r.instance << " (" << r.gpu_model << ")\n";
    for (const auto& c : r.reasons)
      out << "    " << planner::to_string(c.reason) << ": " << c.detail
          << (c.count > 1 ? " (" + std::to_string(c.count) + " layouts)" : std::string()) << "\n";
  }
}

// Errors name their field in the message too ("layout.tp: ..."), so a person sees what to fix.
template <class F>
void naming_field(F&& body) {
  try {
    body();
  } catch (const Error& e) {
    const std::string& message = e.message();
    if (e.field().empty() || message.find(e.field()) != std::string::npos) throw;
    throw Error(e.kind(), e.field() + ": " + message, e.field());
  }
}

}  // namespace

void register_planner_commands(CLI::App& app) {
  struct Options {
    std::string workload, report;
    bool json = false;
    int top = planner::kDefaultTop;
    std::string per;
  };
  auto opts = std::make_shared<Options>();

  CLI::App* plan = app.add_subcommand("plan", "Evaluate one layout: memory per GPU, time per step, cost, bottleneck");
  plan->add_option("WORKLOAD", opts->workload, "workload JSON (model, job, hardware, layout); see data/examples/")
      ->required();
  plan->add_flag("--json", opts->json, "print the plan as JSON");
  plan->add_option("--report", opts->report,
                   "probe report: use its measured bandwidths instead of the catalog's claims");
  plan->callback([opts] {
    naming_field([&] {
      const Catalog catalog = load_chosen_catalog();
      const auto measured = read_measured(opts->report, catalog);
      const planner::Workload w = planner::parse_workload(read_workload(opts->workload), catalog);
      const planner::Plan p = planner::plan(w, measured ? &*measured : nullptr);
      if (opts->json) std::cout << planner::to_json(p).dump(2) << "\n";
      else print_plan(p, std::cout);
    });
  });

  CLI::App* models =
      app.add_subcommand("models", "List the model presets: shapes, total and active parameters, sources");
  models->add_flag("--json", opts->json, "print the presets as JSON");
  models->callback([opts] {
    const nlohmann::json all = planner::models_json();
    if (opts->json) {
      std::cout << all.dump(2) << "\n";
      return;
    }
    std::cout << pad("preset", 18) << pad("params_b", 10) << pad("active_b", 10) << pad("attention", 10) << "experts\n";
    for (const auto& m : all["models"]) {
      std::string experts = "dense";
      if (!m["moe"].is_null())
        experts = std::to_string(m["moe"]["experts"].get<int>()) + " top-" +
                  std::to_string(m["moe"]["top_k"].get<int>()) +
                  (m["moe"]["shared_experts"].get<int>() > 0
                       ? " + " + std::to_string(m["moe"]["shared_experts"].get<int>()) + " shared"
                       : std::string());
      std::cout << pad(m["name"].get<std::string>().c_str(), 18)
                << pad(fmt("%.1f", m["params_b"].get<double>()).c_str(), 10)
                << pad(fmt("%.1f", m["active_params_b"].get<double>()).c_str(), 10)
                << pad(m["attention"]["kind"].get<std::string>().c_str(), 10) << experts << "\n";
    }
  });

  CLI::App* rec = app.add_subcommand("recommend", "Search instances, node counts and layouts; print the best");
  rec->add_option("WORKLOAD", opts->workload, "workload JSON (model, job, optional hardware/layout, constraints)")
      ->required();
  rec->add_option("--top", opts->top,
                  "how many results (" + std::to_string(planner::kMinTop) + " to " + std::to_string(planner::kMaxTop) +
                      ", default " + std::to_string(planner::kDefaultTop) + ")")
      ->check(CLI::Range(planner::kMinTop, planner::kMaxTop));
  // Checked by planner::parse_grouping below (the one table of the names, as REST ?per= and Python).
  rec->add_option(
      "--per", opts->per,
      "instance | gpu | none: the best plan per instance type or per GPU model, ranked (default: global top K)");
  rec->add_flag("--json", opts->json, "print the results as JSON");
  rec->add_option("--report", opts->report,
                  "probe report: use its measured bandwidths instead of the catalog's claims");
  rec->callback([opts] {
    naming_field([&] {
      const Catalog catalog = load_chosen_catalog();
      const auto measured = read_measured(opts->report, catalog);
      const nlohmann::json doc = read_workload(opts->workload);
      const planner::Grouping per = planner::parse_grouping(opts->per, "--per");
      // Exit 1 when no plan qualifies (the answer, with its reasons, is printed first), as `validate`
      // exits 1 when a claim is not met: a script can tell "nothing fits" from an answer.
      if (opts->json) {
        const nlohmann::json r = planner::recommend_json(doc, catalog, opts->top, measured ? &*measured : nullptr, per);
        std::cout << r.dump(2) << "\n";
        std::cout.flush();
        if (r["results"].empty()) throw CLI::RuntimeError(1);
        return;
      }
      const planner::Workload w = planner::parse_workload(doc, catalog);
      planner::SearchOptions search_options;
      search_options.per = per;
      const planner::SearchResult r =
          planner::search(w, catalog, opts->top, measured ? &*measured : nullptr, search_options);
      std::cout << "evaluated " << r.evaluated << " layouts on " << r.hardware_considered << " machine(s), "
                << r.feasible << " feasible; objective " << planner::to_string(r.objective);
      if (per != planner::Grouping::none) std::cout << "; best plan per " << planner::to_string(per);
      std::cout << "\n";
      // A global top K often holds layouts of one instance type only: say how to compare types.
      if (per == planner::Grouping::none && r.plans.size() > 1 &&
          std::all_of(r.plans.begin(), r.plans.end(),
                      [&](const planner::Plan& p) { return p.instance == r.plans.front().instance; }))
        std::cout << "all " << r.plans.size() << " plans are on " << r.plans.front().instance
                  << ": --per instance gives the best plan of each instance type\n";
      if (r.plans.empty()) {
        // The same words as --json's why_no_results, then each instance type's reasons.
        std::cout << r.why_no_results << "\n";
        if (!r.rejected.empty()) {
          std::cout << "why, per instance type:\n";
          print_rejected(r.rejected, std::cout, r.rejected.size());
        }
      } else if (!r.rejected.empty()) {
        std::cout << r.rejected.size() << " instance type(s) had no qualifying plan: " << reason_summary(r.rejected)
                  << " (--json: \"rejected\")\n";
      }
      for (const auto& p : r.plans) {
        std::cout << "\n"
                  << p.nodes << " x " << p.instance << "  " << layout_words(p.layout, p.kind) << "\n  "
                  << fmt("%.6g tokens/s", p.tokens_per_s) << fmt(", MFU %.1f%%", 100 * p.mfu)
                  << fmt(", %.1f GB of ", p.memory_gb.total) << fmt("%.1f GB", p.memory_gb.capacity);
        if (p.usd_per_million_tokens)
          std::cout << fmt(", $%.4g per million ", *p.usd_per_million_tokens) << planner::counted_tokens(p.kind);
        if (p.job_hours) std::cout << fmt(", %.1f h", *p.job_hours);
        if (p.cost_usd) std::cout << ", " << text::dollars(*p.cost_usd);
        if (p.memory_verdict == "tight") std::cout << ", memory tight";
        if (p.kind == planner::JobKind::inference)
          std::cout << "\n  " << fmt("time to first token %.3g s", p.ttft_s.value_or(0))
                    << fmt(" (%.3g s under load)", p.ttft_under_load_s.value_or(0))
                    << fmt(", per output token %.3g ms", p.tpot_s.value_or(0) * 1000)
                    << fmt(", %.0f sequences together", double(p.concurrent.value_or(0)));
        std::cout << "\n  " << interval_words(p);
        std::cout << "\n  why: " << p.why << "\n";
        for (const auto& warning : p.warnings) std::cout << "  warning: " << warning << "\n";
      }
      std::cout.flush();
      if (r.plans.empty()) throw CLI::RuntimeError(1);
    });
  });
}

}  // namespace linkwise::cli
