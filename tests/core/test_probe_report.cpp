// The report's JSON: round trip, the schema file against the code, and errors naming the field.
#include <fstream>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/probe_report.hpp"
#include "probe_test_reports.hpp"

using namespace linkwise;
using namespace linkwise::probe;
using nlohmann::json;

namespace {

json load_schema() {
  std::ifstream in(std::string(LINKWISE_TEST_DATA_DIR) + "/schema/probe-report.schema.json");
  REQUIRE(in);
  return json::parse(in);
}

std::set<std::string> keys_of(const json& object) {
  std::set<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
  return keys;
}

std::set<std::string> as_set(const json& array) {
  std::set<std::string> out;
  for (const auto& item : array) out.insert(item.get<std::string>());
  return out;
}

// Parses `document` expecting invalid_input naming `field`.
void expect_invalid(const json& document, const std::string& field) {
  try {
    parse_report(document);
    FAIL("expected invalid_input for " << field);
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    CHECK(e.field() == field);
  }
}

}  // namespace

TEST_CASE("a report round-trips through JSON unchanged", "[probe][report]") {
  const ProbeReport report = testing::synthetic_report();
  const json first = to_json(report);
  const ProbeReport parsed = parse_report(json::parse(first.dump()));
  CHECK(to_json(parsed) == first);
  CHECK(parsed.note == std::optional<std::string>("synthetic test input"));
  REQUIRE(parsed.probes.size() == report.probes.size());
  CHECK(parsed.probes[0].results[0].stats.median == report.probes[0].results[0].stats.median);
  CHECK(parsed.environment.gpus.size() == 8);
  CHECK(parsed.environment.p2p_access->at(0).at(1));
  CHECK_FALSE(parsed.environment.p2p_access->at(0).at(0));
}

TEST_CASE("numbers carry units and counting conventions in JSON", "[probe][report]") {
  const json document = to_json(testing::synthetic_report());
  const json& result = document["probes"][1]["results"][0];
  CHECK(result["metric"] == "device-copy");
  CHECK(result["unit"] == "GB/s");
  CHECK(result["counting"] == "read+write");
  CHECK(result["stats"]["median"] == Approx(2900));
  CHECK(document["environment"]["driver_version"].is_null());  // unknown stays null, written out
}

TEST_CASE("the schema file names exactly the fields the code writes", "[probe][report][schema]") {
  const json schema = load_schema();
  CHECK(schema["$schema"] == "https://json-schema.org/draft/2020-12/schema");
  const auto& required = required_report_fields();
  CHECK(as_set(schema["required"]) == std::set<std::string>(required.begin(), required.end()));

  const json document = to_json(testing::synthetic_report());
  CHECK(keys_of(document) == as_set(schema["required"]));
  CHECK(keys_of(document) == keys_of(schema["properties"]));
  const json& defs = schema["$defs"];
  CHECK(keys_of(document["environment"]) == as_set(defs["environment"]["required"]));
  CHECK(keys_of(document["environment"]) == keys_of(defs["environment"]["properties"]));
  CHECK(keys_of(document["environment"]["gpus"][0]) == as_set(defs["gpu"]["required"]));
  CHECK(keys_of(document["environment"]["gpus"][0]) == keys_of(defs["gpu"]["properties"]));
  CHECK(keys_of(document["probes"][0]) == as_set(defs["probe"]["required"]));
  CHECK(keys_of(document["probes"][0]["results"][0]) == as_set(defs["result"]["required"]));
  CHECK(keys_of(document["probes"][0]["results"][0]["stats"]) == as_set(defs["stats"]["required"]));

  // The enumerations the code accepts are the schema's.
  std::set<std::string> counting;
  for (const auto& c : defs["result"]["properties"]["counting"]["enum"]) {
    if (c.is_string()) counting.insert(c.get<std::string>());
  }
  CHECK(counting == std::set<std::string>{"one-direction", "both-directions-added", "read+write", "read", "write"});
  for (const auto& c : counting) CHECK(to_string(parse_counting(c)) == c);
}

TEST_CASE("bad reports fail naming the field", "[probe][report]") {
  const json good = to_json(testing::synthetic_report());

  json doc = good;
  doc.erase("environment");
  expect_invalid(doc, "environment");

  doc = good;
  doc["schema_version"] = 2;
  expect_invalid(doc, "schema_version");

  doc = good;
  doc["probes"][0]["results"][0]["counting"] = nullptr;  // a bandwidth must say how it counts
  expect_invalid(doc, "probes[0].results[0].counting");

  doc = good;
  doc["probes"][0]["results"][0]["unit"] = "GiB/s";
  expect_invalid(doc, "probes[0].results[0].unit");

  doc = good;
  doc["probes"][0]["results"][0]["stats"]["median"] = 1000.0;  // stats must come from the samples
  expect_invalid(doc, "probes[0].results[0].stats.median");

  doc = good;
  doc["probes"][0]["results"][0]["samples"] = json::array();
  expect_invalid(doc, "probes[0].results[0].samples");

  doc = good;
  doc["probes"][2]["status"] = "skipped";  // without a reason
  expect_invalid(doc, "probes[2].reason");

  doc = good;
  doc["environment"]["gpus"][0]["bandwidth"] = 1;  // a field the schema does not know
  expect_invalid(doc, "environment.gpus[0].bandwidth");

  doc = good;
  doc["environment"]["p2p_access"][3] = json::array({true});
  expect_invalid(doc, "environment.p2p_access[3]");
}

TEST_CASE("a latency has no counting convention", "[probe][report]") {
  ProbeReport report = testing::synthetic_report();
  report.probes[2].results.push_back(Result::make(std::string(metric::p2p_latency), Unit::microseconds, std::nullopt,
                                                  std::nullopt, {{"src", "0"}, {"dst", "1"}}, {2.1, 2.0, 2.2}));
  json doc = to_json(report);
  CHECK(parse_report(doc).probes[2].results.back().stats.median == Approx(2.1));
  doc["probes"][2]["results"].back()["counting"] = "one-direction";
  expect_invalid(doc, "probes[2].results[" + std::to_string(report.probes[2].results.size() - 1) + "].counting");
}

TEST_CASE("load_report names the report when the file is missing, a directory or too deep", "[probe][report]") {
  // The path is the user's input: a bad one is invalid_input (exit 2), never an internal error.
  for (const std::string& path : {std::string("/nonexistent/report.json"), std::string(LINKWISE_TEST_FIXTURES_DIR)}) {
    try {
      load_report(path);
      FAIL("expected an error for " << path);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::invalid_input);
      CHECK(e.field() == "report");
    }
  }
}

TEST_CASE("the committed synthetic reports parse and say they are test inputs", "[probe][report]") {
  for (const char* name : {"synthetic-h100-meets.json", "synthetic-h100-below.json", "synthetic-host-only.json"}) {
    const ProbeReport report = load_report(std::string(LINKWISE_TEST_FIXTURES_DIR) + "/probe/" + name);
    CHECK(report.note == std::optional<std::string>("synthetic test input"));
    CHECK(report.environment.hostname == "synthetic-host");
  }
}
