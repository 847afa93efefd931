// The JSON contract of plan and recommend (shared by CLI --json, REST and Python).
#include <nlohmann/json.hpp>

#include "../json_fields.hpp"
#include "linkwise/planner.hpp"

namespace linkwise::planner {

namespace {

using json_fields::optional_json;

nlohmann::json reason_names(const std::vector<Reason>& reasons) {
  nlohmann::json out = nlohmann::json::array();
  for (Reason r : reasons) out.push_back(std::string(to_string(r)));
  return out;
}

}  // namespace

nlohmann::json to_json(const Plan& p) {
  using nlohmann::json;
  json out = {
      {"model", p.model},
      {"params_b", p.params_b},
      {"active_params_b", p.active_params_b},
      {"job_kind", std::string(to_string(p.kind))},
      {"precision", std::string(to_string(p.precision))},
      {"instance", p.instance},
      {"gpu_model", p.gpu_model},
      {"custom_hardware", p.custom_hardware},
      {"nodes", p.nodes},
      {"gpus_per_node", p.gpus_per_node},
      {"gpus", p.gpus},
      {"nvlink_domain_gpus", p.nvlink_domain_gpus},
      {"layout", to_json(p.layout)},
      {"fits", p.fits},
      {"memory_verdict", p.memory_verdict},
      {"offload_host_checked", optional_json(p.offload_host_checked)},
      {"memory_error_band", p.memory_error_band},
      {"memory_margin_gb", p.memory_margin_gb},
      {"why_not", p.why_not},
      {"why_not_reasons", reason_names(p.why_not_reasons)},
      {"memory_gb",
       {{"weights", p.memory_gb.weights},
        {"gradients", p.memory_gb.gradients},
        {"optimizer", p.memory_gb.optimizer},
        {"activations", p.memory_gb.activations},
        {"kv_cache", p.memory_gb.kv_cache},
        {"overhead", p.memory_gb.overhead},
        {"total", p.memory_gb.total},
        {"capacity", p.memory_gb.capacity}}},
      {"step_time_s", p.step_time_s},
      {"time_s",
       {{"compute", p.time_s.compute},
        {"tp_comm", p.time_s.tp_comm},
        {"cp_comm", p.time_s.cp_comm},
        {"pp_comm", p.time_s.pp_comm},
        {"pp_bubble", p.time_s.pp_bubble},
        {"dp_comm", p.time_s.dp_comm},
        {"ep_comm", p.time_s.ep_comm},
        {"exposed_comm", p.time_s.exposed_comm},
        {"tp_exposed", p.time_s.tp_exposed},
        {"cp_exposed", p.time_s.cp_exposed},
        {"pp_exposed", p.time_s.pp_exposed},
        {"dp_exposed", p.time_s.dp_exposed},
        {"ep_exposed", p.time_s.ep_exposed},
        {"dequant", p.time_s.dequant},
        {"offload", p.time_s.offload}}},
      {"tokens_per_s", p.tokens_per_s},
      {"model_tflops_per_gpu", p.model_tflops_per_gpu},
      {"hardware_tflops_per_gpu", p.hardware_tflops_per_gpu},
      {"mfu", p.mfu},
      {"price_usd_per_hour", optional_json(p.price_usd_per_hour)},
      {"job_hours", optional_json(p.job_hours)},
      {"cost_usd", optional_json(p.cost_usd)},
      {"usd_per_million_tokens", optional_json(p.usd_per_million_tokens)},
      {"meets_deadline", optional_json(p.meets_deadline)},
      {"within_budget", optional_json(p.within_budget)},
      {"bottleneck", p.bottleneck},
      {"bandwidth_source",
       {{"intra_node", p.bandwidth_source.intra_node},
        {"inter_node", p.bandwidth_source.inter_node},
        {"hbm", p.bandwidth_source.hbm}}},
      {"links",
       {{"intra_node_busbw_gbytes_per_s", p.intra_node_busbw_gbytes_per_s},
        {"inter_node_gbytes_per_s_per_gpu", optional_json(p.inter_node_gbytes_per_s_per_gpu)}}},
      {"warnings", p.warnings},
  };
  auto range = [](const Plan::Range& r) { return nlohmann::json{{"p10", r.p10}, {"p90", r.p90}}; };
  out["interval"] = {{"level", "p10-p90"},
                     {"step_time_s", range(p.step_time_interval)},
                     {"job_hours", p.job_hours_interval ? range(*p.job_hours_interval) : nlohmann::json(nullptr)},
                     {"tokens_per_s", range(p.tokens_per_s_interval)},
                     {"cost_usd", p.cost_usd_interval ? range(*p.cost_usd_interval) : nlohmann::json(nullptr)},
                     {"usd_per_million_tokens", p.usd_per_million_tokens_interval
                                                    ? range(*p.usd_per_million_tokens_interval)
                                                    : nlohmann::json(nullptr)},
                     {"basis", p.interval_basis},
                     {"widened", p.interval_widened}};
  if (p.kind == JobKind::inference) {
    out["kv_cache_precision"] = std::string(to_string(p.kv_cache_precision));
    out["ttft_s"] = optional_json(p.ttft_s);
    out["tpot_s"] = optional_json(p.tpot_s);
    out["decode_tokens_per_s"] = optional_json(p.decode_tokens_per_s);
    out["meets_latency_target"] = optional_json(p.meets_latency_target);
    out["ttft_under_load_s"] = optional_json(p.ttft_under_load_s);
    out["engine"] = p.engine;
    out["concurrent"] = optional_json(p.concurrent);
    out["max_concurrent"] = optional_json(p.max_concurrent);
    out["max_concurrent_limit"] = optional_json(p.max_concurrent_limit);
    out["concurrent_is_max"] = p.concurrent_is_max;
  } else {
    out["framework"] = p.framework;
  }
  if (!p.why.empty()) out["why"] = p.why;
  return out;
}

nlohmann::json plan_json(const nlohmann::json& workload, const Catalog& catalog, const MeasuredLinks* measured) {
  const Workload w = parse_workload(workload, catalog);
  return to_json(plan(w, measured));
}

nlohmann::json to_json(const Rejection& r) {
  nlohmann::json reasons = nlohmann::json::array();
  for (const Rejection::Count& c : r.reasons) {
    nlohmann::json one = {{"reason", std::string(to_string(c.reason))}, {"count", c.count}, {"detail", c.detail}};
    if (c.best_hours) one["best_hours"] = *c.best_hours;
    if (c.best_cost_usd) one["best_cost_usd"] = *c.best_cost_usd;
    if (c.best_tpot_ms) one["best_tpot_ms"] = *c.best_tpot_ms;
    reasons.push_back(std::move(one));
  }
  return {{"instance", r.instance},
          {"gpu_model", r.gpu_model},
          {"reason", r.reasons.empty() ? std::string() : std::string(to_string(r.reasons.front().reason))},
          {"reasons", std::move(reasons)}};
}

nlohmann::json recommend_json(const nlohmann::json& workload, const Catalog& catalog, int top_k,
                              const MeasuredLinks* measured, Grouping per, const SearchBudget& budget) {
  const Workload w = parse_workload(workload, catalog);
  SearchOptions options;
  options.per = per;
  options.budget = budget;
  const SearchResult r = search(w, catalog, top_k, measured, options);
  nlohmann::json rejected = nlohmann::json::array();
  for (const Rejection& x : r.rejected) rejected.push_back(to_json(x));
  nlohmann::json results = nlohmann::json::array();
  for (const Plan& p : r.plans) results.push_back(to_json(p));
  return {{"results", std::move(results)},  // moved: an initializer list copies lvalues deeply
          {"evaluated", r.evaluated},
          {"feasible", r.feasible},
          {"pruned_subtrees", r.pruned_subtrees},
          {"hardware_considered", r.hardware_considered},
          {"skipped", r.skipped},
          {"rejected", std::move(rejected)},
          // null with results; otherwise why there are none (an empty answer carries its reason)
          {"why_no_results", r.why_no_results.empty() ? nlohmann::json() : nlohmann::json(r.why_no_results)},
          {"per", std::string(to_string(per))},
          {"objective", std::string(to_string(r.objective))},
          {"model", to_json(w.model)}};
}

nlohmann::json preset_json(std::string_view name) { return to_json(preset(name)); }

nlohmann::json models_json() {
  nlohmann::json models = nlohmann::json::array();
  for (const ModelShape& m : presets()) models.push_back(to_json(m));
  return {{"models", std::move(models)}};
}

}  // namespace linkwise::planner
