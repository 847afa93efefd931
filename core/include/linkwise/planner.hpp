// The planner: will a model fit, how fast does it train or serve, at what cost, and on which layout
// and instances. One umbrella over the planner's parts:
//   planner/model.hpp      model shapes, presets, the params_b shape rule
//   planner/workload.hpp   the workload JSON (model, job, hardware, layout, constraints)
//   planner/constants.hpp  every efficiency and overlap constant, calibrated
//   planner/engine.hpp     memory and time models on prepared numbers (the fast inner loop)
//   planner/plan.hpp       one evaluated plan, described for people
//   planner/search.hpp     the layout and instance search behind recommend()
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkwise/catalog_db.hpp"
#include "linkwise/links.hpp"
#include "linkwise/planner/model.hpp"
#include "linkwise/planner/plan.hpp"
#include "linkwise/planner/search.hpp"
#include "linkwise/planner/workload.hpp"

namespace linkwise::planner {

// JSON in, JSON out (REST service and Python).
nlohmann::json plan_json(const nlohmann::json& workload, const Catalog& catalog,
                         const MeasuredLinks* measured = nullptr);
// {"results": [plan + "rank" + "why"...], "evaluated": N, "feasible": M, "objective": ..., "search": {...}}
// "rejected": per instance type with no qualifying plan, its reasons (search.hpp: Rejection);
// per: the best plan per instance type or GPU model instead of the global top K. budget: a bound
// on the search's work (search.hpp), unbounded by default (CLI, Python); the REST service sets one.
nlohmann::json recommend_json(const nlohmann::json& workload, const Catalog& catalog, int top_k,
                              const MeasuredLinks* measured = nullptr, Grouping per = Grouping::none,
                              const SearchBudget& budget = {});
nlohmann::json to_json(const Rejection& r);

nlohmann::json preset_json(std::string_view name);  // throws not_found naming "model.preset"
// {"models": [every preset's shape, total and active parameters, source]} (CLI `models --json`,
// GET /v1/models, Python linkwise.models()).
nlohmann::json models_json();

}  // namespace linkwise::planner
