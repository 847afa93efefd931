// Fuzz target: a probe report document through parse_report, then what is done with a report that
// passes: validate against the embedded catalog (with and without an instance), the measured links
// and a plan with them, and the round trip to_json -> parse_report (what the service stores and
// reads back). linkwise::Error is the expected answer to bad input; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/planner.hpp"
#include "linkwise/probe_report.hpp"

namespace {

// A small training job on one p5 (8 x H100, NVSwitch), planned with the report's links.
const nlohmann::json& fixed_workload() {
  static const nlohmann::json workload = nlohmann::json::parse(R"({
    "model": {"preset": "llama3.1-8b"},
    "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64, "tokens": 1e9},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 2},
    "layout": {"tp": 2, "pp": 1, "dp": 8}
  })");
  return workload;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace linkwise;
  static const Catalog catalog = Catalog::embedded();
  probe::ProbeReport report;
  try {
    report =
        probe::parse_report(parse_json_text(std::string_view(reinterpret_cast<const char*>(data), size), "report"));
  } catch (const Error&) {
    return 0;
  }
  // A report that was accepted once is accepted again after writing it out.
  try {
    probe::parse_report(probe::to_json(report));
  } catch (const Error& e) {
    fuzz::finding(std::string("parse_report(to_json(report)) refused an accepted report: ") + e.what());
  }
  try {
    fuzz::require_finite_numbers(probe::validate_json(report, catalog, std::nullopt), "validate_json");
  } catch (const Error&) {
  }
  try {
    fuzz::require_finite_numbers(probe::validate_json(report, catalog, std::string("aws:p5.48xlarge")),
                                 "validate_json");
  } catch (const Error&) {
  }
  try {
    const MeasuredLinks links = probe::measured_links(report, catalog);
    const nlohmann::json plan = planner::plan_json(fixed_workload(), catalog, &links);
    fuzz::require_finite_numbers(plan, "plan_json with measured links");
    if (plan.at("step_time_s").get<double>() <= 0) fuzz::finding("plan with measured links: step_time_s <= 0");
    if (plan.at("cost_usd").is_number() && plan.at("cost_usd").get<double>() < 0) {
      fuzz::finding("plan with measured links: negative cost");
    }
  } catch (const Error&) {
  }
  return 0;
}
