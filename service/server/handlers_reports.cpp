// Probe reports: POST /v1/probe-reports (needs an API key), GET /v1/probe-reports[?instance=ID],
// GET /v1/probe-reports/{id}, and GET /v1/instances/{id}/validation, which checks the catalog's
// claims for one instance type against every report stored for it. Parsing and checking a
// report is core's (probe_report.hpp); this file stores, lists and aggregates.
#include <algorithm>
#include <map>

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

template <typename T>
ordered_json optional_json(const std::optional<T>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

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
  auto id = query.text("instance");
  if (id && !catalog.find_instance(*id)) {
    throw_invalid("instance", "instance: no instance type \"" + *id + "\" in the catalog (see GET /v1/instances)");
  }
  return id;
}

// One claim of the catalog against every stored report of the instance type.
struct ClaimSummary {
  probe::ClaimVerdict first;            // the claim's fixed facts (claimed figure, units, threshold)
  std::vector<double> measured;         // in `unit`, one per report that measured it
  std::vector<double> shares;           // measured / expected
  std::map<std::string, int> verdicts;  // "meets" / "below" / "cannot-check" -> reports
};

ordered_json claim_json(const ClaimSummary& summary, int reports) {
  const auto& v = summary.first;
  ordered_json out = {{"claim", v.claim},
                      {"claimed", optional_json(v.claimed)},
                      {"claimed_unit", v.claimed_unit},
                      {"claim_convention", v.claim_convention},
                      {"expected", optional_json(v.expected)},
                      {"unit", v.unit},
                      {"min_efficiency", v.min_efficiency},
                      {"reports", reports},
                      {"count", summary.measured.size()}};
  std::optional<probe::Stats> measured, shares;
  if (!summary.measured.empty()) measured = probe::compute_stats(summary.measured);
  if (!summary.shares.empty()) shares = probe::compute_stats(summary.shares);
  out["median"] = measured ? ordered_json(measured->median) : ordered_json(nullptr);
  out["min"] = measured ? ordered_json(measured->min) : ordered_json(nullptr);
  out["max"] = measured ? ordered_json(measured->max) : ordered_json(nullptr);
  out["median_share_of_claim"] = shares ? ordered_json(shares->median) : ordered_json(nullptr);
  out["min_share_of_claim"] = shares ? ordered_json(shares->min) : ordered_json(nullptr);
  ordered_json verdicts = ordered_json::object();
  for (const char* name : {"meets", "below", "cannot-check"}) {
    auto it = summary.verdicts.find(name);
    verdicts[name] = it == summary.verdicts.end() ? 0 : it->second;
  }
  out["verdicts"] = std::move(verdicts);
  // The fleet's verdict: the median report's share against what a healthy system reaches.
  std::string verdict = "cannot-check";
  if (shares) verdict = shares->median >= v.min_efficiency ? "meets" : "below";
  out["verdict"] = verdict;
  return out;
}

}  // namespace

void add_report_routes(Router& router, Context& ctx) {
  router.add("POST", "/v1/probe-reports", [&ctx](const httplib::Request& req, httplib::Response& res,
                                                 const PathParams&) {
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
    nlohmann::json checked = probe::to_json(validation);
    checked["synthetic"] = probe::is_synthetic(report);  // kept with the verdicts: fleet views leave it out
    const StoredReport stored =
        ctx.reports.add(*validation.instance.instance_id, key_name, probe::to_json(report), std::move(checked));
    res.set_header("Location", "/v1/probe-reports/" + std::to_string(stored.id));
    send_json(res, summary_json(stored).dump(), 201);
  });

  router.add("GET", "/v1/probe-reports", [&ctx](const httplib::Request& req, httplib::Response& res,
                                                const PathParams&) {
    const QueryParams query(req, {"instance", "limit", "offset"});
    const auto instance = instance_param(query, ctx.catalog);
    const long long limit = query.integer("limit", 0, kMaxLimit).value_or(kDefaultLimit);
    const long long offset = query.integer("offset", 0, 1'000'000'000).value_or(0);
    const auto page = ctx.reports.list(instance, limit, offset);
    ordered_json items = ordered_json::array();
    for (const auto& stored : page.items) items.push_back(summary_json(stored));
    send_json(res, ordered_json{{"total", page.total}, {"limit", limit}, {"offset", offset}, {"items", items}}.dump());
  });

  router.add("GET", "/v1/probe-reports/{id}", [&ctx](const httplib::Request& req, httplib::Response& res,
                                                     const PathParams& params) {
    QueryParams(req, {});
    const std::string& text = params.find("id")->second;
    std::int64_t id = 0;
    const bool numeric = !text.empty() && text.size() <= 18 &&
                         text.find_first_not_of("0123456789") == std::string::npos;
    if (numeric) id = std::stoll(text);
    auto stored = numeric ? ctx.reports.get(id) : std::nullopt;
    if (!stored) throw_not_found("id", "no probe report with id \"" + text + "\"");
    send_json(res, full_json(*stored).dump());
  });

  router.add("GET", "/v1/instances/{id}/validation", [&ctx](const httplib::Request& req, httplib::Response& res,
                                                            const PathParams& params) {
    const QueryParams query(req, {"include_synthetic"});
    const bool include_synthetic = query.boolean("include_synthetic").value_or(false);
    const std::string& id = params.find("id")->second;
    if (!ctx.catalog.find_instance(id)) throw_not_found("id", "no instance type \"" + id + "\" in the catalog");

    // The claims as the catalog states them now, each with what the reports measured: the
    // verdicts stored at upload (no report is parsed or validated again on a read).
    std::vector<ClaimSummary> claims;
    probe::ProbeReport empty;
    for (const auto& v : probe::validate(empty, ctx.catalog, id).verdicts) claims.push_back({v, {}, {}, {}});
    // Synthetic and test reports are stored but, unless asked for, not part of the fleet's verdict.
    std::vector<nlohmann::json> stored;
    long long synthetic = 0;
    for (auto& validation : ctx.reports.validations_for(id)) {
      const bool is_synthetic = validation.value("synthetic", false);
      synthetic += is_synthetic;
      if (!is_synthetic || include_synthetic) stored.push_back(std::move(validation));
    }
    for (const auto& validation : stored) {
      for (const auto& v : validation.at("verdicts")) {
        auto it = std::find_if(claims.begin(), claims.end(), [&](const auto& c) { return c.first.claim == v.at("claim"); });
        if (it == claims.end()) continue;  // a claim the catalog no longer makes
        // What a healthy system reaches depends on the measured system (its GPU count): the first
        // report that says it sets it.
        if (!it->first.expected && v.at("expected").is_number()) it->first.expected = v.at("expected").get<double>();
        ++it->verdicts[v.at("verdict").get<std::string>()];
        if (v.at("measured").is_number()) it->measured.push_back(v.at("measured").get<double>());
        if (v.at("efficiency").is_number()) it->shares.push_back(v.at("efficiency").get<double>());
      }
    }
    ordered_json out = {{"instance", id},
                        {"reports", stored.size()},
                        {"synthetic_reports", synthetic},
                        {"synthetic_included", include_synthetic},
                        {"claims", ordered_json::array()}};
    for (const auto& c : claims) out["claims"].push_back(claim_json(c, static_cast<int>(stored.size())));
    send_json(res, out.dump());
  });
}

}  // namespace linkwise::server
