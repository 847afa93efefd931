// Probe reports: POST /v1/probe-reports (needs an API key), GET /v1/probe-reports[?instance=ID],
// GET /v1/probe-reports/{id}, and GET /v1/instances/{id}/validation, which checks the catalog's
// claims for one instance type against every report stored for it. Parsing and checking a
// report, and the fleet verdict, are core's (probe_report.hpp); this file stores and lists.
#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/probe_report.hpp"
#include "server/handlers.hpp"
#include "server/request.hpp"

namespace linkwise::server {
namespace {

using nlohmann::ordered_json;

constexpr long long kDefaultLimit = 100;
constexpr long long kMaxLimit = 1000;

ordered_json summary_json(const StoredReport& stored) {
  return {{"id", stored.id},
          {"instance", stored.instance_id},
          {"received_at", stored.received_at},
          {"uploaded_by", stored.key_name},
          {"synthetic", stored.validation.is_object() && stored.validation.value("synthetic", false)},
          {"validation", stored.validation}};
}

ordered_json full_json(const StoredReport& stored) {
  ordered_json out = summary_json(stored);
  out["report"] = stored.report;
  return out;
}

// An instance named by the client in a query parameter: a bad value, not a missing resource.
std::optional<std::string> instance_param(const QueryParams& query, const Catalog& catalog) {
  const auto id = query.text("instance");
  if (!id) return std::nullopt;
  return catalog.instance(*id, ErrorKind::invalid_input, "instance").id;  // any case, with a suggestion
}

}  // namespace

void add_report_routes(Router& router, Context& ctx) {
  router.add(
      "POST", "/v1/probe-reports", [&ctx](const httplib::Request& req, httplib::Response& res, const PathParams&) {
        require_json_content_type(req);
        const QueryParams query(req, {"instance"});
        const std::string key_name = ctx.keys.authenticate(
            req.has_header("Authorization") ? std::optional<std::string_view>(req.get_header_value("Authorization"))
                                            : std::nullopt);
        const auto instance = instance_param(query, ctx.catalog);
        const nlohmann::json body = json_body(req);
        const probe::ProbeReport report = probe::parse_report(body);
        const probe::Validation validation = probe::validate(report, ctx.catalog, instance);
        if (!validation.instance.instance_id) {
          throw_invalid("instance", "instance: the report does not name its instance type (" +
                                        validation.instance.reason + "); pass ?instance=ID");
        }
        const StoredReport stored = ctx.reports.add(*validation.instance.instance_id, key_name, probe::to_json(report),
                                                    probe::stored_validation(report, validation));
        res.set_header("Location", "/v1/probe-reports/" + std::to_string(stored.id));
        send_json(res, summary_json(stored).dump(), 201);
      });

  router.add(
      "GET", "/v1/probe-reports", [&ctx](const httplib::Request& req, httplib::Response& res, const PathParams&) {
        const QueryParams query(req, {"instance", "limit", "offset"});
        const auto instance = instance_param(query, ctx.catalog);
        const long long limit = query.integer("limit", 0, kMaxLimit).value_or(kDefaultLimit);
        const long long offset = query.integer("offset", 0, 1'000'000'000).value_or(0);
        const auto page = ctx.reports.list(instance, limit, offset);
        ordered_json items = ordered_json::array();
        for (const auto& stored : page.items) items.push_back(summary_json(stored));
        send_json(res,
                  ordered_json{{"total", page.total}, {"limit", limit}, {"offset", offset}, {"items", items}}.dump());
      });

  router.add("GET", "/v1/probe-reports/{id}",
             [&ctx](const httplib::Request& req, httplib::Response& res, const PathParams& params) {
               QueryParams(req, {});
               const std::string& text = params.find("id")->second;
               std::int64_t id = 0;
               const bool numeric =
                   !text.empty() && text.size() <= 18 && text.find_first_not_of("0123456789") == std::string::npos;
               if (numeric) id = std::stoll(text);
               auto stored = numeric ? ctx.reports.get(id) : std::nullopt;
               if (!stored) throw_not_found("id", "no probe report with id \"" + text + "\"");
               send_json(res, full_json(*stored).dump());
             });

  router.add("GET", "/v1/instances/{id}/validation",
             [&ctx](const httplib::Request& req, httplib::Response& res, const PathParams& params) {
               const QueryParams query(req, {"include_synthetic"});
               const bool include_synthetic = query.boolean("include_synthetic").value_or(false);
               const std::string& id = ctx.catalog.instance(params.find("id")->second).id;  // not_found "id"

               // The fleet verdict is core's (probe::validate_fleet), from the verdicts stored at upload: no
               // report is parsed or validated again on a read.
               const ordered_json out = probe::to_json(
                   probe::validate_fleet(ctx.reports.validations_for(id), ctx.catalog, id, include_synthetic));
               send_json(res, out.dump());
             });
}

}  // namespace linkwise::server
