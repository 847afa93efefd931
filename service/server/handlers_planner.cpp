// POST /v1/plans (one layout) and POST /v1/recommendations (the search): the workload JSON of the
// planner's contract in, the planner's JSON out, exactly as `linkwise plan|recommend --json`.
// ?probe_report=ID plans with the link bandwidths measured in a stored probe report instead of
// the catalog's claims (as the CLI's --report does with a file). Answers are cached by request
// (Context::planner_answers): a repeated workload is answered without planning it again.
#include <limits>
#include <optional>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner.hpp"
#include "linkwise/probe_report.hpp"
#include "server/auth.hpp"
#include "server/connection.hpp"
#include "server/handlers.hpp"
#include "server/request.hpp"

namespace linkwise::server {
namespace {

std::optional<MeasuredLinks> measured_from(const QueryParams& query, ReportStore& reports, const Catalog& catalog) {
  const auto id = query.integer("probe_report", 1, std::numeric_limits<std::int64_t>::max());
  if (!id) return std::nullopt;
  const auto stored = reports.get(*id);
  if (!stored) {
    throw_invalid("probe_report", "probe_report: no stored probe report with id " + std::to_string(*id) +
                                      " (see GET /v1/probe-reports)");
  }
  MeasuredLinks links = probe::measured_links(probe::parse_report(stored->report), catalog);
  links.source = "stored probe report " + std::to_string(stored->id) + ": " + links.source;
  return links;
}

// The planner's run with a stored report: core names a report for another machine "report"; here
// the report is the query parameter probe_report.
template <typename Run>
std::string with_report_field(Run run) {
  try {
    return run();
  } catch (const Error& e) {
    if (e.kind() == ErrorKind::invalid_input && e.field() == "report")
      throw_invalid("probe_report", "probe_report: " + e.message());
    throw;
  }
}

// The planner's answer for this request: from the cache, or computed by `compute` and cached.
template <typename Compute>
void answer(Context& ctx, const httplib::Request& req, httplib::Response& res, Compute compute) {
  const std::string key = req.target + '\n' + sha256(req.body);
  if (auto cached = ctx.planner_answers.find(key)) return send_encoded(req, res, std::move(cached));
  auto body = [&] {
    ComputeGate::Pass pass(ctx.planner_gate);
    // Its turn came, but the client may have left while it queued: drop it before it starts.
    if (current_client_gone()) throw planner::SearchStopped();
    return encode_body(compute());
  }();
  ctx.planner_answers.insert(key, body);
  send_encoded(req, res, std::move(body));
}

}  // namespace

void add_planner_routes(Router& router, Context& ctx) {
  router.add("POST", "/v1/plans", [&ctx](const httplib::Request& req, httplib::Response& res, const PathParams&) {
    require_json_content_type(req);
    answer(ctx, req, res, [&] {
      const QueryParams query(req, {"probe_report"});
      const auto measured = measured_from(query, ctx.reports, ctx.catalog);
      const nlohmann::json workload = json_body(req);
      return with_report_field(
          [&] { return planner::plan_json(workload, ctx.catalog, measured ? &*measured : nullptr).dump(); });
    });
  });

  router.add(
      "POST", "/v1/recommendations", [&ctx](const httplib::Request& req, httplib::Response& res, const PathParams&) {
        require_json_content_type(req);
        answer(ctx, req, res, [&] {
          const QueryParams query(req, {"top", "probe_report", "per"});
          // The same default and bounds as the CLI's --top and Python's top= (search.hpp).
          const int top =
              static_cast<int>(query.integer("top", planner::kMinTop, planner::kMaxTop).value_or(planner::kDefaultTop));
          const planner::Grouping per = planner::parse_grouping(query.text("per").value_or(""), "per");
          const auto measured = measured_from(query, ctx.reports, ctx.catalog);
          const nlohmann::json workload = json_body(req);
          // Bounded, and dropped when the client leaves (context.hpp: kMaxSearchLayouts).
          planner::SearchBudget budget;
          budget.max_evaluated = kMaxSearchLayouts;
          budget.stop = current_client_gone;
          return with_report_field([&] {
            return planner::recommend_json(workload, ctx.catalog, top, measured ? &*measured : nullptr, per, budget)
                .dump();
          });
        });
      });
}

}  // namespace linkwise::server
