// The probe report's JSON form: writing it, and reading it back with every field checked.
#include <cmath>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../json_fields.hpp"
#include "linkwise/enum_names.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/probe_report.hpp"

namespace linkwise::probe {

using nlohmann::json;

namespace {
// Messages start with the field's full path, so the CLI's one-line error names it.
[[noreturn]] void invalid_at(const std::string& field, const std::string& message) {
  throw_invalid(field, field + ": " + message);
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Enumerations.

namespace {

constexpr EnumNames<Unit, 2> kUnitNames{{
    {Unit::gbytes_per_s, "GB/s"},
    {Unit::microseconds, "us"},
}};
constexpr EnumNames<Counting, 5> kCountingNames{{
    {Counting::one_direction, "one-direction"},
    {Counting::both_directions_added, "both-directions-added"},
    {Counting::read_plus_write, "read+write"},
    {Counting::read, "read"},
    {Counting::write, "write"},
}};
constexpr EnumNames<ProbeStatus, 3> kStatusNames{{
    {ProbeStatus::ok, "ok"},
    {ProbeStatus::skipped, "skipped"},
    {ProbeStatus::failed, "failed"},
}};

}  // namespace

std::string_view to_string(Unit unit) noexcept { return enum_name(kUnitNames, unit); }
std::string_view to_string(Counting counting) noexcept { return enum_name(kCountingNames, counting); }
std::string_view to_string(ProbeStatus status) noexcept { return enum_name(kStatusNames, status); }

Unit parse_unit(std::string_view text, std::string_view field) { return parse_enum(kUnitNames, text, field); }
Counting parse_counting(std::string_view text, std::string_view field) {
  return parse_enum(kCountingNames, text, field);
}

namespace {

using json_fields::optional_json;

// ---------------------------------------------------------------------------------------------
// Reading: each accessor names the full path of the field it checks.

class Reader {
 public:
  Reader(const json& object, std::string path) : object_(object), path_(std::move(path)) {
    if (!object_.is_object()) invalid_at(path_.empty() ? "report" : path_, "expected an object");
  }

  std::string field(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  const json& required(std::string_view key) const {
    auto it = object_.find(key);
    if (it == object_.end()) invalid_at(field(key), "is missing");
    return *it;
  }
  const json* nullable(std::string_view key) const {  // must be present, may be null
    const json& value = required(key);
    return value.is_null() ? nullptr : &value;
  }

  std::string string(std::string_view key) const { return json_fields::string(required(key), field(key)); }
  std::optional<std::string> optional_string(std::string_view key) const {
    const json* value = nullable(key);
    if (!value) return std::nullopt;
    return json_fields::string(*value, field(key));
  }
  double number(std::string_view key) const { return json_fields::number(required(key), field(key)); }
  std::optional<double> optional_number(std::string_view key) const {
    if (!nullable(key)) return std::nullopt;
    return number(key);
  }
  long long integer(std::string_view key, long long minimum) const {
    return json_fields::integer(required(key), field(key), minimum);
  }
  std::optional<int> optional_int(std::string_view key, long long minimum) const {
    if (!nullable(key)) return std::nullopt;
    return static_cast<int>(integer(key, minimum));
  }
  std::optional<std::uint64_t> optional_u64(std::string_view key) const {
    if (!nullable(key)) return std::nullopt;
    return static_cast<std::uint64_t>(integer(key, 0));
  }
  bool boolean(std::string_view key) const { return json_fields::boolean(required(key), field(key)); }
  std::optional<bool> optional_bool(std::string_view key) const {
    if (!nullable(key)) return std::nullopt;
    return boolean(key);
  }
  const json& array(std::string_view key) const {
    const json& value = required(key);
    if (!value.is_array()) json_fields::fail(field(key), "an array", value);
    return value;
  }
  // Rejects keys the schema does not know, so a typo never passes silently.
  void only(std::initializer_list<std::string_view> keys) const {
    for (auto it = object_.begin(); it != object_.end(); ++it) {
      bool known = false;
      for (auto key : keys) known = known || key == it.key();
      if (!known) invalid_at(field(it.key()), "is not a field of this object");
    }
  }

 private:
  const json& object_;
  std::string path_;
};

// Relative comparison for stats recomputed from samples (JSON numbers round-trip exactly, so
// only a changed document differs).
bool close(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max({1.0, std::fabs(a), std::fabs(b)}); }

json stats_json(const Stats& s) {
  return {{"count", s.count},   {"median", s.median}, {"min", s.min}, {"max", s.max},      {"mean", s.mean},
          {"stddev", s.stddev}, {"p5", s.p5},         {"p95", s.p95}, {"spread", s.spread}};
}

Result parse_result(const json& document, const std::string& path) {
  Reader r(document, path);
  r.only({"metric", "unit", "counting", "bytes", "labels", "samples", "stats"});
  Result result;
  result.metric = r.string("metric");
  if (result.metric.empty()) invalid_at(r.field("metric"), "expected a metric name");
  result.unit = parse_unit(r.string("unit"), r.field("unit"));
  if (auto counting = r.optional_string("counting")) {
    result.counting = parse_counting(*counting, r.field("counting"));
  }
  if (result.unit == Unit::gbytes_per_s && !result.counting) {
    invalid_at(r.field("counting"), "a bandwidth must say how its bytes were counted");
  }
  if (result.unit == Unit::microseconds && result.counting) {
    invalid_at(r.field("counting"), "a latency counts no bytes: expected null");
  }
  result.bytes = r.optional_u64("bytes");

  const json& labels = r.required("labels");
  if (!labels.is_object()) invalid_at(r.field("labels"), "expected an object of strings");
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    if (!it.value().is_string()) invalid_at(r.field("labels") + "." + it.key(), "expected a string");
    result.labels[it.key()] = it.value().get<std::string>();
  }

  const json& samples = r.array("samples");
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!samples[i].is_number()) {
      invalid_at(r.field("samples") + "[" + std::to_string(i) + "]", "expected a number");
    }
    const double sample = samples[i].get<double>();
    // A bandwidth or a latency of zero or less is no measurement: refused before it can reach
    // fleet statistics or the planner (a zero bandwidth would plan an infinitely fast link).
    if (!(sample > 0))
      invalid_at(r.field("samples") + "[" + std::to_string(i) + "]",
                 "expected a number above 0, got " + samples[i].dump());
    result.samples.push_back(sample);
  }
  result.stats = compute_stats(result.samples, r.field("samples"));

  Reader s(r.required("stats"), r.field("stats"));
  s.only({"count", "median", "min", "max", "mean", "stddev", "p5", "p95", "spread"});
  if (s.integer("count", 1) != result.stats.count) {
    invalid_at(s.field("count"), "does not match the number of samples (" + std::to_string(result.stats.count) + ")");
  }
  const std::pair<const char*, double> recomputed[] = {
      {"median", result.stats.median}, {"min", result.stats.min},       {"max", result.stats.max},
      {"mean", result.stats.mean},     {"stddev", result.stats.stddev}, {"p5", result.stats.p5},
      {"p95", result.stats.p95},       {"spread", result.stats.spread}};
  for (const auto& [key, value] : recomputed) {
    if (!close(s.number(key), value)) {
      invalid_at(s.field(key), "does not match the samples (they give " + std::to_string(value) + ")");
    }
  }
  return result;
}

ProbeRun parse_probe(const json& document, const std::string& path) {
  Reader r(document, path);
  r.only({"name", "description", "status", "reason", "duration_s", "results"});
  ProbeRun run;
  run.name = r.string("name");
  run.description = r.string("description");
  run.status = parse_enum(kStatusNames, r.string("status"), r.field("status"));
  run.reason = r.optional_string("reason");
  if (run.status != ProbeStatus::ok && !run.reason) {
    invalid_at(r.field("reason"), "a probe that did not run says why");
  }
  run.duration_s = r.number("duration_s");
  if (run.duration_s < 0) invalid_at(r.field("duration_s"), "expected seconds >= 0");
  const json& results = r.array("results");
  for (std::size_t i = 0; i < results.size(); ++i) {
    run.results.push_back(parse_result(results[i], r.field("results") + "[" + std::to_string(i) + "]"));
  }
  return run;
}

GpuInfo parse_gpu(const json& document, const std::string& path) {
  Reader r(document, path);
  r.only({"index", "name", "uuid", "pci_bus_id", "numa_node", "compute_capability", "memory_bytes", "l2_bytes",
          "sm_count", "pcie_link_gen", "pcie_link_width", "pcie_max_link_gen", "pcie_max_link_width", "sm_clock_mhz",
          "memory_clock_mhz", "power_limit_w", "ecc_enabled", "nvlink_active_links"});
  GpuInfo gpu;
  gpu.index = static_cast<int>(r.integer("index", 0));
  gpu.name = r.string("name");
  gpu.uuid = r.optional_string("uuid");
  gpu.pci_bus_id = r.optional_string("pci_bus_id");
  gpu.numa_node = r.optional_int("numa_node", 0);
  gpu.compute_capability = r.optional_string("compute_capability");
  gpu.memory_bytes = r.optional_u64("memory_bytes");
  gpu.l2_bytes = r.optional_u64("l2_bytes");
  gpu.sm_count = r.optional_int("sm_count", 1);
  gpu.pcie_link_gen = r.optional_int("pcie_link_gen", 1);
  gpu.pcie_link_width = r.optional_int("pcie_link_width", 1);
  gpu.pcie_max_link_gen = r.optional_int("pcie_max_link_gen", 1);
  gpu.pcie_max_link_width = r.optional_int("pcie_max_link_width", 1);
  gpu.sm_clock_mhz = r.optional_number("sm_clock_mhz");
  gpu.memory_clock_mhz = r.optional_number("memory_clock_mhz");
  gpu.power_limit_w = r.optional_number("power_limit_w");
  gpu.ecc_enabled = r.optional_bool("ecc_enabled");
  gpu.nvlink_active_links = r.optional_int("nvlink_active_links", 0);
  return gpu;
}

Environment parse_environment(const json& document) {
  Reader r(document, "environment");
  r.only({"created_at", "hostname", "linkwise_version", "quick", "nodes", "ranks", "driver_version",
          "cuda_runtime_version", "nccl_version", "mpi_library_version", "virtual_machine", "hypervisor",
          "dmi_sys_vendor", "dmi_product_name", "cloud_provider", "cloud_instance_type", "gpus", "p2p_access"});
  Environment env;
  env.created_at = r.string("created_at");
  env.hostname = r.string("hostname");
  env.linkwise_version = r.string("linkwise_version");
  env.quick = r.boolean("quick");
  env.nodes = static_cast<int>(r.integer("nodes", 1));
  env.ranks = static_cast<int>(r.integer("ranks", 1));
  env.driver_version = r.optional_string("driver_version");
  env.cuda_runtime_version = r.optional_string("cuda_runtime_version");
  env.nccl_version = r.optional_string("nccl_version");
  env.mpi_library_version = r.optional_string("mpi_library_version");
  env.virtual_machine = r.optional_bool("virtual_machine");
  env.hypervisor = r.optional_string("hypervisor");
  env.dmi_sys_vendor = r.optional_string("dmi_sys_vendor");
  env.dmi_product_name = r.optional_string("dmi_product_name");
  env.cloud_provider = r.optional_string("cloud_provider");
  env.cloud_instance_type = r.optional_string("cloud_instance_type");
  const json& gpus = r.array("gpus");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    env.gpus.push_back(parse_gpu(gpus[i], "environment.gpus[" + std::to_string(i) + "]"));
  }
  if (const json* matrix = r.nullable("p2p_access")) {
    if (!matrix->is_array() || matrix->size() != env.gpus.size()) {
      invalid_at("environment.p2p_access", "expected a square array of booleans, one row per GPU");
    }
    std::vector<std::vector<bool>> rows;
    for (std::size_t i = 0; i < matrix->size(); ++i) {
      const json& row = (*matrix)[i];
      const std::string field = "environment.p2p_access[" + std::to_string(i) + "]";
      if (!row.is_array() || row.size() != env.gpus.size()) {
        invalid_at(field, "expected " + std::to_string(env.gpus.size()) + " booleans");
      }
      std::vector<bool> values;
      for (const json& cell : row) {
        if (!cell.is_boolean()) invalid_at(field, "expected booleans");
        values.push_back(cell.get<bool>());
      }
      rows.push_back(std::move(values));
    }
    env.p2p_access = std::move(rows);
  }
  return env;
}

json gpu_json(const GpuInfo& g) {
  return {{"index", g.index},
          {"name", g.name},
          {"uuid", optional_json(g.uuid)},
          {"pci_bus_id", optional_json(g.pci_bus_id)},
          {"numa_node", optional_json(g.numa_node)},
          {"compute_capability", optional_json(g.compute_capability)},
          {"memory_bytes", optional_json(g.memory_bytes)},
          {"l2_bytes", optional_json(g.l2_bytes)},
          {"sm_count", optional_json(g.sm_count)},
          {"pcie_link_gen", optional_json(g.pcie_link_gen)},
          {"pcie_link_width", optional_json(g.pcie_link_width)},
          {"pcie_max_link_gen", optional_json(g.pcie_max_link_gen)},
          {"pcie_max_link_width", optional_json(g.pcie_max_link_width)},
          {"sm_clock_mhz", optional_json(g.sm_clock_mhz)},
          {"memory_clock_mhz", optional_json(g.memory_clock_mhz)},
          {"power_limit_w", optional_json(g.power_limit_w)},
          {"ecc_enabled", optional_json(g.ecc_enabled)},
          {"nvlink_active_links", optional_json(g.nvlink_active_links)}};
}

}  // namespace

Result Result::make(std::string metric, Unit unit, std::optional<Counting> counting, std::optional<std::uint64_t> bytes,
                    std::map<std::string, std::string> labels, std::vector<double> samples) {
  Result result;
  result.metric = std::move(metric);
  result.unit = unit;
  result.counting = counting;
  result.bytes = bytes;
  result.labels = std::move(labels);
  result.stats = compute_stats(samples, result.metric + ".samples");
  result.samples = std::move(samples);
  return result;
}

const std::string* Result::label(std::string_view key) const {
  auto it = labels.find(std::string(key));
  return it == labels.end() ? nullptr : &it->second;
}

const std::vector<std::string>& required_report_fields() {
  static const std::vector<std::string> fields{"schema_version", "note", "environment", "probes"};
  return fields;
}

json to_json(const ProbeReport& report) {
  const Environment& e = report.environment;
  json gpus = json::array();
  for (const GpuInfo& g : e.gpus) gpus.push_back(gpu_json(g));
  json environment = {{"created_at", e.created_at},
                      {"hostname", e.hostname},
                      {"linkwise_version", e.linkwise_version},
                      {"quick", e.quick},
                      {"nodes", e.nodes},
                      {"ranks", e.ranks},
                      {"driver_version", optional_json(e.driver_version)},
                      {"cuda_runtime_version", optional_json(e.cuda_runtime_version)},
                      {"nccl_version", optional_json(e.nccl_version)},
                      {"mpi_library_version", optional_json(e.mpi_library_version)},
                      {"virtual_machine", optional_json(e.virtual_machine)},
                      {"hypervisor", optional_json(e.hypervisor)},
                      {"dmi_sys_vendor", optional_json(e.dmi_sys_vendor)},
                      {"dmi_product_name", optional_json(e.dmi_product_name)},
                      {"cloud_provider", optional_json(e.cloud_provider)},
                      {"cloud_instance_type", optional_json(e.cloud_instance_type)},
                      {"gpus", gpus},
                      {"p2p_access", nullptr}};
  if (e.p2p_access) {
    json rows = json::array();
    for (const auto& row : *e.p2p_access) {
      json cells = json::array();
      for (bool cell : row) cells.push_back(cell);
      rows.push_back(cells);
    }
    environment["p2p_access"] = rows;
  }

  json probes = json::array();
  for (const ProbeRun& run : report.probes) {
    json results = json::array();
    for (const Result& r : run.results) {
      json counting = r.counting ? json(std::string(to_string(*r.counting))) : json(nullptr);
      results.push_back({{"metric", r.metric},
                         {"unit", std::string(to_string(r.unit))},
                         {"counting", counting},
                         {"bytes", optional_json(r.bytes)},
                         {"labels", r.labels},
                         {"samples", r.samples},
                         {"stats", stats_json(r.stats)}});
    }
    probes.push_back({{"name", run.name},
                      {"description", run.description},
                      {"status", std::string(to_string(run.status))},
                      {"reason", optional_json(run.reason)},
                      {"duration_s", run.duration_s},
                      {"results", results}});
  }
  return {{"schema_version", report.schema_version},
          {"note", optional_json(report.note)},
          {"environment", environment},
          {"probes", probes}};
}

ProbeReport parse_report(const json& document) {
  check_json_depth(document, "report");
  Reader r(document, "");
  r.only({"schema_version", "note", "environment", "probes"});
  ProbeReport report;
  report.schema_version = static_cast<int>(r.integer("schema_version", 1));
  if (report.schema_version != kReportSchemaVersion) {
    invalid_at("schema_version", "expected " + std::to_string(kReportSchemaVersion) +
                                     " (this linkwise reads that version), got " +
                                     std::to_string(report.schema_version));
  }
  report.note = r.optional_string("note");
  report.environment = parse_environment(r.required("environment"));
  const json& probes = r.array("probes");
  for (std::size_t i = 0; i < probes.size(); ++i) {
    report.probes.push_back(parse_probe(probes[i], "probes[" + std::to_string(i) + "]"));
  }
  return report;
}

ProbeReport load_report(const std::filesystem::path& path) { return parse_report(read_json_file(path, "report")); }

}  // namespace linkwise::probe
