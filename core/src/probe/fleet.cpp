// The fleet verdict across the stored reports of one instance type (probe_report.hpp).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/probe_report.hpp"

namespace linkwise::probe {

namespace {

using nlohmann::ordered_json;

template <typename T>
ordered_json optional_json(const std::optional<T>& value) {
  return value ? ordered_json(*value) : ordered_json(nullptr);
}

}  // namespace

nlohmann::json stored_validation(const ProbeReport& report, const Validation& validation) {
  nlohmann::json checked = to_json(validation);
  checked["synthetic"] = is_synthetic(report);  // kept with the verdicts: fleet views leave it out
  return checked;
}

FleetValidation validate_fleet(const std::vector<nlohmann::json>& stored, const Catalog& catalog,
                               const std::string& instance_id, bool include_synthetic) {
  FleetValidation fleet;
  fleet.instance_id = catalog.instance(instance_id).id;  // not_found "id", with a suggestion
  fleet.synthetic_included = include_synthetic;
  // The claims as the catalog states them now, each with what the reports measured.
  const ProbeReport empty;
  for (const auto& v : validate(empty, catalog, fleet.instance_id).verdicts)
    fleet.claims.push_back({v, {}, {}, 0, 0, 0, {}});
  for (const auto& validation : stored) {
    const bool synthetic = validation.value("synthetic", false);
    fleet.synthetic_reports += synthetic;
    if (synthetic && !include_synthetic) continue;  // stored, but not part of the fleet's verdict
    ++fleet.reports;
    for (const auto& v : validation.at("verdicts")) {
      auto it = std::find_if(fleet.claims.begin(), fleet.claims.end(),
                             [&](const FleetClaim& c) { return c.claim.claim == v.at("claim"); });
      if (it == fleet.claims.end()) continue;  // a claim the catalog no longer makes
      // What a healthy system reaches depends on the measured system (its GPU count): the first
      // report that says it sets it.
      if (!it->claim.expected && v.at("expected").is_number()) it->claim.expected = v.at("expected").get<double>();
      const std::string verdict = v.at("verdict").get<std::string>();
      if (verdict == to_string(Verdict::meets)) ++it->meets;
      else if (verdict == to_string(Verdict::below)) ++it->below;
      else ++it->cannot_check;
      if (v.at("measured").is_number()) it->measured.push_back(v.at("measured").get<double>());
      if (v.at("efficiency").is_number()) it->shares.push_back(v.at("efficiency").get<double>());
    }
  }
  for (FleetClaim& c : fleet.claims) {
    c.verdict = Verdict::cannot_check;
    if (!c.shares.empty())
      c.verdict = compute_stats(c.shares).median >= c.claim.min_efficiency ? Verdict::meets : Verdict::below;
  }
  return fleet;
}

FleetValidation validate_fleet(const std::vector<ProbeReport>& reports, const Catalog& catalog,
                               std::optional<std::string> instance_id, bool include_synthetic) {
  std::vector<nlohmann::json> stored;
  std::optional<std::string> named = instance_id;
  for (const ProbeReport& report : reports) {
    const Validation validation = validate(report, catalog, instance_id);
    const auto& id = validation.instance.instance_id;
    if (!id) {
      throw_invalid("instance", "instance: a report does not name its instance type (" + validation.instance.reason +
                                    "); pass --instance ID");
    }
    if (named && *named != *id) {
      throw_invalid("instance", "instance: the reports name different instance types (\"" + *named + "\", \"" + *id +
                                    "\"); a fleet is one instance type");
    }
    named = id;
    stored.push_back(stored_validation(report, validation));
  }
  if (!named) throw_invalid("instance", "instance: no report and no --instance: nothing names the instance type");
  return validate_fleet(stored, catalog, *named, include_synthetic);
}

nlohmann::ordered_json to_json(const FleetValidation& fleet) {
  ordered_json out = {{"instance", fleet.instance_id},
                      {"reports", fleet.reports},
                      {"synthetic_reports", fleet.synthetic_reports},
                      {"synthetic_included", fleet.synthetic_included},
                      {"claims", ordered_json::array()}};
  for (const FleetClaim& c : fleet.claims) {
    const ClaimVerdict& v = c.claim;
    ordered_json claim = {{"claim", v.claim},
                          {"claimed", optional_json(v.claimed)},
                          {"claimed_unit", v.claimed_unit},
                          {"claim_convention", v.claim_convention},
                          {"expected", optional_json(v.expected)},
                          {"unit", v.unit},
                          {"min_efficiency", v.min_efficiency},
                          {"reports", fleet.reports},
                          {"count", c.measured.size()}};
    std::optional<Stats> measured, shares;
    if (!c.measured.empty()) measured = compute_stats(c.measured);
    if (!c.shares.empty()) shares = compute_stats(c.shares);
    claim["median"] = measured ? ordered_json(measured->median) : ordered_json(nullptr);
    claim["min"] = measured ? ordered_json(measured->min) : ordered_json(nullptr);
    claim["max"] = measured ? ordered_json(measured->max) : ordered_json(nullptr);
    claim["median_share_of_claim"] = shares ? ordered_json(shares->median) : ordered_json(nullptr);
    claim["min_share_of_claim"] = shares ? ordered_json(shares->min) : ordered_json(nullptr);
    claim["verdicts"] = {{"meets", c.meets}, {"below", c.below}, {"cannot-check", c.cannot_check}};
    claim["verdict"] = std::string(to_string(c.verdict));
    out["claims"].push_back(std::move(claim));
  }
  return out;
}

bool any_below(const FleetValidation& fleet) {
  return std::any_of(fleet.claims.begin(), fleet.claims.end(),
                     [](const FleetClaim& c) { return c.verdict == Verdict::below; });
}

}  // namespace linkwise::probe
