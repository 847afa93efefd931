// The way in for outside JSON (json_input.hpp) and the workload's documented ranges: every bad
// value is invalid_input naming its field, whatever its size or depth.
#include <catch2/catch.hpp>

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/planner/workload.hpp"

using namespace linkwise;
using nlohmann::json;

namespace {

std::string field_of_error(const std::function<void()>& run) {
  try {
    run();
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    return e.field();
  }
  FAIL("expected an invalid_input error");
  return {};
}

json base_workload() {
  return json::parse(R"({"model": {"preset": "llama3.1-8b"},
    "job": {"kind": "pretrain", "seq_len": 4096, "global_batch": 64},
    "hardware": {"instance": "aws:p5.48xlarge", "nodes": 1}, "layout": {"tp": 8, "pp": 1}})");
}

}  // namespace

TEST_CASE("outside JSON: depth, number range and parse errors name the field", "[input]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(field_of_error([&] { parse_json_text(deep, "body"); }) == "body");
  CHECK(field_of_error([&] { parse_json_text("{\"a\": 1e400}", "body"); }) == "body");
  CHECK(field_of_error([&] { parse_json_text("{\"a\": ", "body"); }) == "body");
  CHECK(parse_json_text("{\"a\": [[1]]}", "body")["a"][0][0] == 1);
  // Brackets inside strings do not count.
  CHECK(json_text_depth("{\"a\": \"[[[[[[\"}") == 1);
  json nested = 1;
  for (int i = 0; i < 100; ++i) nested = json::array({nested});
  CHECK(field_of_error([&] { check_json_depth(nested, "report"); }) == "report");
}

TEST_CASE("workload numbers outside their ranges are refused naming the field", "[input][planner]") {
  const Catalog catalog = Catalog::embedded();
  const auto field_for = [&](const std::string& pointer, const json& value) {
    json w = base_workload();
    w[json::json_pointer(pointer)] = value;
    return field_of_error([&] { planner::parse_workload(w, catalog); });
  };
  CHECK(field_for("/layout/cp", 1LL << 29) == "layout.cp");
  CHECK(field_for("/layout/tp", 0) == "layout.tp");
  CHECK(field_for("/layout/dp", 4294967296LL) == "layout.dp");
  CHECK(field_for("/hardware/nodes", 1000000000) == "hardware.nodes");
  CHECK(field_for("/job/seq_len", 1000000000) == "job.seq_len");
  CHECK(field_for("/job/seq_len", 2.5) == "job.seq_len");
  CHECK(field_for("/job/seq_len", json::array({json::array()})) == "job.seq_len");
  json step = base_workload();
  step["job"]["seq_len"] = 1 << 24;
  step["job"]["global_batch"] = 1 << 17;  // 2^41 tokens per step: each in range, the product not
  CHECK(field_of_error([&] { planner::parse_workload(step, catalog); }) == "job.global_batch");
  CHECK(field_for("/job/tokens", 1e300) == "job.tokens");
  CHECK(field_for("/hardware/instance", nullptr) == "hardware.instance");
  CHECK(field_for("/model/layers", 12) == "model.layers");  // shape fields beside a preset
  json custom = base_workload();
  custom["model"] = {{"layers", 8}, {"hidden", 4096}, {"heads", 32}, {"gated_mlp", "yes"}};
  CHECK(field_of_error([&] { planner::parse_workload(custom, catalog); }) == "model.gated_mlp");
  custom["model"] = {{"layers", 65536}, {"hidden", 65536}, {"heads", 65536}};
  CHECK(field_of_error([&] { planner::parse_workload(custom, catalog); }) == "model.layers");
  json hardware = base_workload();
  hardware["hardware"] = {{"custom", {{"gpu_model", "H100-SXM5-80GB"}, {"gpu_count", 8}, {"nvlink_gbytes_per_s", 0}}}};
  CHECK(field_of_error([&] { planner::parse_workload(hardware, catalog); }) == "hardware.custom.nvlink_gbytes_per_s");
}

TEST_CASE("a layout whose sizes multiply past 64 bits is refused, not wrapped", "[input][planner]") {
  const Catalog catalog = Catalog::embedded();
  json w = base_workload();
  // Each size within its own range; their product is 2^70.
  w["model"] = {{"layers", 16384}, {"hidden", 1 << 20}, {"heads", 1 << 16}};
  w["layout"] = {{"tp", 1 << 16}, {"pp", 16384}, {"cp", 1 << 20}, {"dp", 1 << 20}};
  const planner::Workload parsed = planner::parse_workload(w, catalog);
  const planner::Layout layout = planner::complete_layout(parsed, 8);
  CHECK(field_of_error([&] { planner::validate_layout(parsed, layout, 8, 1); }) == "layout.dp");
}

TEST_CASE("files are read up to a bound, never past it", "[input][limits]") {
  // /dev/zero has no end: the read stops past the bound with an error naming the field and file.
  try {
    (void)linkwise::read_text_file("/dev/zero", "WORKLOAD", 1024);
    FAIL("no error");
  } catch (const linkwise::Error& e) {
    CHECK(e.kind() == linkwise::ErrorKind::invalid_input);
    CHECK(e.field() == "WORKLOAD");
    CHECK_THAT(e.what(), Catch::Matchers::Contains("/dev/zero is over the size limit"));
  }
  CHECK_THROWS_WITH(linkwise::read_json_file("/dev/zero", "WORKLOAD"), Catch::Matchers::Contains("4 MiB"));
  CHECK(linkwise::kMaxDocumentBytes == 4u * 1024 * 1024);  // the REST body cap (server.hpp) is this constant
  CHECK_THROWS_WITH(linkwise::read_text_file("/nonexistent/file.csv", "file", 10),
                    Catch::Matchers::Contains("no file /nonexistent/file.csv"));
}
