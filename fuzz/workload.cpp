// Fuzz target: a workload document (the planner's JSON contract) through the one JSON entry point,
// then plan and recommend on the embedded catalog. linkwise::Error is the expected answer to bad
// input; any other exception, a crash, a sanitizer report or a non-finite figure is a finding.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz_check.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/planner.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace linkwise;
  static const Catalog catalog = Catalog::embedded();
  nlohmann::json workload;
  try {
    workload = parse_json_text(std::string_view(reinterpret_cast<const char*>(data), size), "workload");
  } catch (const Error&) {
    return 0;
  }
  try {
    fuzz::require_finite_numbers(planner::plan_json(workload, catalog), "plan_json");
  } catch (const Error&) {
  }
  try {
    const nlohmann::json answer = planner::recommend_json(workload, catalog, 2);
    fuzz::require_finite_numbers(answer, "recommend_json");
    if (answer.at("results").size() > 2) fuzz::finding("recommend_json: more results than top_k");
  } catch (const Error&) {
  }
  return 0;
}
