// Catalog::load_data_dir: reads the reviewed JSON files of data/ and checks every record.
//
// Any finding fails the whole load (no partial catalog) with invalid_input. The message names the
// file, the record ("gpu \"H100-SXM5-80GB\"", "instance \"aws:p5.48xlarge\"") and the field, and
// says what was expected. Checks, per record:
//   - shape: every field of data/schema/catalog.schema.json present (null where unknown), no
//     unknown keys (typos), each value of the right JSON type; a number written as text
//     ("900 GB/s") is named as such;
//   - values: no negative numbers, counts and sizes > 0, integers where integers, dates are real
//     YYYY-MM-DD dates, enums among their accepted spellings, provider among known_providers();
//   - references: gpu_model names a GPU of gpus.json, ids are unique, the file is <provider>.json;
//   - sources: GPUs have "spec"; instances have "gpu", "interconnect", "network", plus "price"
//     when a price is given and "specs" when vCPUs or host memory are given; more groups may be
//     added (e.g. "interconnect_nvswitch"), named in lowercase snake_case; each source has a url,
//     a real as_of date and an optional note, nothing else;
//   - consistency (each catches a real data-entry mistake):
//       gpu_memory_gb equals the GPU's memory_gb (a wrong GPU variant picked);
//       fabric "none" exactly when gpu_count is 1;
//       NVLink bandwidth given when the fabric is nvswitch or nvlink, null on pcie and none (for
//       infinity-fabric it may hold AMD's Infinity Fabric figure), and never above the GPU's own
//       per-GPU figure (catches per-direction/both-direction mix-ups upwards);
//       an NVIDIA GPU's nvlink_gbytes_per_s and nvlink_generation are both set or both null (AMD
//       GPUs hold their Infinity Fabric figure without a generation);
//       gpudirect_rdma is not true on plain ethernet or GPUDirect-TCPX(O) (those are not RDMA);
//       a price (on demand or spot) comes with price_as_of; an on-demand price with price_region;
//       NIC product: network_nics x network_nic_gbits_per_s equals network_gbits_per_s where all
//       three are known (catches a per-NIC figure taken for the total, or the host NICs added in);
//       NVLink domain: nvlink_domain_gpus is 1 (or null) on fabric "none" and "pcie", at least 2
//       on "nvlink" and "infinity-fabric", at least gpu_count on "nvswitch"; above gpu_count (a
//       rack-scale domain such as NVL72) only where the GPU's nvlink_domain_max_gpus is known and
//       allows it, and never above that maximum;
//       frontend vs fabric: a frontend_network_gbits_per_s needs network_gbits_per_s (the GPU
//       fabric) known, and is refused on plain ethernet without RDMA, where there is no separate
//       fabric: the instance's bandwidth is network_gbits_per_s itself;
//       per GPU: an NVIDIA GPU without NVLink has no NVLink domain above 1.
//   - derived fields (price_usd_per_gpu_hour) are outputs only and refused in the files.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "suggest.hpp"

namespace linkwise {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kDataSchemaVersion = 1;

// Where a finding is: file, record, and the path prefix for Error::field ("instances[3]").
struct Where {
  std::string file;
  std::string record;  // "instance \"aws:p5.48xlarge\"", or "instances[3]" before the id is known
  std::string path;    // "instances[3]"
};

[[noreturn]] void fail(const Where& where, std::string_view field, const std::string& what) {
  std::string message = where.file + ": " + where.record;
  if (!field.empty()) message += ": field \"" + std::string(field) + "\"";
  message += ": " + what;
  std::string path = where.path;
  if (!field.empty()) path += (path.empty() ? "" : ".") + std::string(field);
  throw Error(ErrorKind::invalid_input, message, path);
}

std::string in_quotes(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string join_quoted(const auto& names) {
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += ", ";
    out += in_quotes(name);
  }
  return out;
}

// "got the string \"900 GB/s\"", "got true", "got an array" ...
std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::null: return "got null";
    case json::value_t::boolean: return std::string("got ") + (value.get<bool>() ? "true" : "false");
    case json::value_t::string: return "got the string " + in_quotes(value.get<std::string>());
    case json::value_t::array: return "got an array";
    case json::value_t::object: return "got an object";
    default: return "got the number " + value.dump();
  }
}

// Fact groups are open-ended ("interconnect_nvswitch" adds a second source for one claim), but
// named like the JSON fields: lowercase letters, digits, '_'.
bool is_group_name(std::string_view name) {
  if (name.empty() || !std::islower(static_cast<unsigned char>(name.front()))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

// One JSON object under inspection, with its location for messages.
class Record {
 public:
  // `prefix` names a nested object in messages: fields of a source read "sources.price.as_of".
  Record(const json& object, Where where, std::string prefix = {})
      : object_(object), where_(std::move(where)), prefix_(std::move(prefix)) {}

  void set_record(std::string record) { where_.record = std::move(record); }
  [[noreturn]] void fail(std::string_view field, const std::string& what) const {
    linkwise::fail(where_, prefix_ + std::string(field), what);
  }

  // Every key of `required` must be present; no other key may be, except those in `optional`.
  void check_keys(const std::vector<std::string_view>& required,
                  const std::vector<std::string_view>& optional = {}) const {
    for (const auto& [key, value] : object_.items()) {
      const bool known = std::find(required.begin(), required.end(), key) != required.end() ||
                         std::find(optional.begin(), optional.end(), key) != optional.end();
      if (known) continue;
      std::string what = "unknown field";
      std::string_view best;
      std::size_t best_distance = 3;  // suggest only close matches
      for (auto candidate : required) {
        const std::size_t d = edit_distance(key, candidate);
        if (d < best_distance) best_distance = d, best = candidate;
      }
      if (!best.empty()) what += " (did you mean " + in_quotes(best) + "?)";
      what += "; accepted fields: " + join_quoted(required);
      if (!optional.empty()) what += ", " + join_quoted(optional);
      fail(key, what);
    }
    for (auto key : required) {
      if (!object_.contains(key)) {
        fail(key, "missing required field (write null where the value is unknown)");
      }
    }
  }

  const json& at(std::string_view key) const { return object_.at(std::string(key)); }

  std::string string(std::string_view key) const {
    const json& value = at(key);
    if (!value.is_string()) fail(key, "expected a string, " + describe(value));
    std::string text = value.get<std::string>();
    if (text.empty()) fail(key, "expected a non-empty string");
    return text;
  }

  std::optional<std::string> optional_string(std::string_view key) const {
    if (at(key).is_null()) return std::nullopt;
    return string(key);
  }

  std::string enum_value(std::string_view key, const std::vector<std::string_view>& accepted) const {
    const std::string text = string(key);
    if (std::find(accepted.begin(), accepted.end(), text) == accepted.end()) {
      fail(key, "unknown value " + in_quotes(text) + "; accepted: " + join_quoted(accepted));
    }
    return text;
  }

  std::optional<std::string> optional_date(std::string_view key) const {
    if (at(key).is_null()) return std::nullopt;
    return date(key);
  }

  std::string date(std::string_view key) const {
    const json& value = at(key);
    if (!value.is_string()) fail(key, "expected a date YYYY-MM-DD, " + describe(value));
    const std::string text = value.get<std::string>();
    if (!is_valid_date(text)) fail(key, "expected a date YYYY-MM-DD, got " + in_quotes(text));
    return text;
  }

  // A number >= 0 (> 0 when `positive`), in `unit` for the message.
  double number(std::string_view key, std::string_view unit, bool positive = false) const {
    const json& value = at(key);
    if (!value.is_number()) {
      std::string what = "expected a number";
      if (!unit.empty()) what += " in " + std::string(unit);
      fail(key, what + ", " + describe(value));
    }
    const double number = value.get<double>();
    if (number < 0) fail(key, "expected a number >= 0, got " + value.dump() + " (negative)");
    if (positive && number == 0) fail(key, "expected a number > 0, got 0");
    return number;
  }

  std::optional<double> optional_number(std::string_view key, std::string_view unit, bool positive = false) const {
    if (at(key).is_null()) return std::nullopt;
    return number(key, unit, positive);
  }

  int integer(std::string_view key, int minimum) const {
    const json& value = at(key);
    if (!value.is_number_integer()) {
      fail(key, "expected an integer, " + describe(value));
    }
    const long long number = value.get<long long>();
    if (number < minimum) {
      fail(key, "expected an integer >= " + std::to_string(minimum) + ", got " + value.dump());
    }
    if (number > 1'000'000) fail(key, "expected a plausible integer, got " + value.dump());
    return static_cast<int>(number);
  }

  std::optional<int> optional_integer(std::string_view key, int minimum) const {
    if (at(key).is_null()) return std::nullopt;
    return integer(key, minimum);
  }

  std::optional<bool> optional_bool(std::string_view key) const {
    const json& value = at(key);
    if (value.is_null()) return std::nullopt;
    if (!value.is_boolean()) fail(key, "expected true, false or null, " + describe(value));
    return value.get<bool>();
  }

  std::vector<std::string> string_list(std::string_view key) const {
    const json& value = at(key);
    if (!value.is_array()) fail(key, "expected an array of strings, " + describe(value));
    std::vector<std::string> out;
    for (std::size_t i = 0; i < value.size(); ++i) {
      const std::string item_key = std::string(key) + "[" + std::to_string(i) + "]";
      if (!value[i].is_string() || value[i].get<std::string>().empty()) {
        fail(item_key, "expected a non-empty string, " + describe(value[i]));
      }
      const std::string item = value[i].get<std::string>();
      if (std::find(out.begin(), out.end(), item) != out.end()) {
        fail(item_key, "duplicate entry " + in_quotes(item));
      }
      out.push_back(item);
    }
    return out;
  }

  // sources: {"group": {"url", "as_of", "note"?}}; `required` groups present; `examples` named in
  // the message for a badly named group.
  Sources sources(const std::vector<std::string_view>& required, const std::vector<std::string_view>& examples) const {
    const json& value = at("sources");
    if (!value.is_object()) fail("sources", "expected an object of fact group -> source, " + describe(value));
    Sources out;
    for (const auto& [group, source] : value.items()) {
      const std::string field = "sources." + group;
      if (!is_group_name(group)) {
        fail(field, "a fact group is a lowercase name of letters, digits and '_' (e.g. " + join_quoted(examples) + ")");
      }
      if (!source.is_object()) fail(field, "expected an object {url, as_of, note}, " + describe(source));
      Record record(source, where_, prefix_ + field + ".");
      record.check_keys({"url", "as_of"}, {"note"});
      SourceRef ref;
      ref.url = record.string("url");
      ref.as_of = record.date("as_of");
      if (source.contains("note")) ref.note = record.optional_string("note");
      out.emplace(group, std::move(ref));
    }
    for (auto group : required) {
      if (!out.contains(std::string(group))) {
        fail("sources", "missing required source group " + in_quotes(group));
      }
    }
    return out;
  }

 private:
  const json& object_;
  Where where_;
  std::string prefix_;
};

// Through core's one JSON entry point (json_input.hpp): bad JSON, nesting past kMaxJsonDepth and
// numbers beyond the double range are invalid_input naming the file (a number such as 1e400 used to
// escape as nlohmann's out_of_range: exit 3 instead of 2; found by fuzz/catalog_load.cpp).
json read_json_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::io, path.string() + ": cannot open for reading");
  std::stringstream text;
  text << in.rdbuf();
  return parse_json_text(text.str(), path.string());
}

int check_file_header(const json& document, const Where& where, std::string_view list_key,
                      const std::vector<std::string_view>& keys) {
  if (!document.is_object()) fail(where, "", "expected a JSON object at the top level");
  Record top(document, where);
  top.check_keys(keys);
  const int version = top.integer("schema_version", 0);
  if (version != kDataSchemaVersion) {
    fail(where, "schema_version",
         "unsupported schema_version " + std::to_string(version) + "; this linkwise reads " +
             std::to_string(kDataSchemaVersion));
  }
  if (!document.at(std::string(list_key)).is_array()) {
    fail(where, list_key, "expected an array of records, " + describe(document.at(std::string(list_key))));
  }
  return version;
}

const std::vector<std::string_view> kVendors{"nvidia", "amd"};
const std::vector<std::string_view> kGpuFields{"id",
                                               "vendor",
                                               "architecture",
                                               "memory_gb",
                                               "hbm_gbytes_per_s",
                                               "bf16_dense_tflops",
                                               "fp16_dense_tflops",
                                               "fp8_dense_tflops",
                                               "fp4_dense_tflops",
                                               "nvlink_gbytes_per_s",
                                               "nvlink_generation",
                                               "nvlink_domain_max_gpus",
                                               "pcie_gen",
                                               "tdp_w",
                                               "sources"};
const std::vector<std::string_view> kInstanceFields{"name",
                                                    "gpu_model",
                                                    "gpu_count",
                                                    "gpu_memory_gb",
                                                    "vcpus",
                                                    "memory_gib",
                                                    "intra_node_fabric",
                                                    "nvlink_gbytes_per_s",
                                                    "nvlink_domain_gpus",
                                                    "network_type",
                                                    "network_gbits_per_s",
                                                    "network_nics",
                                                    "network_nic_gbits_per_s",
                                                    "frontend_network_gbits_per_s",
                                                    "gpudirect_rdma",
                                                    "price_usd_per_hour",
                                                    "price_region",
                                                    "price_as_of",
                                                    "spot_price_usd_per_hour",
                                                    "regions",
                                                    "sources"};
// Computed from other fields for every output; a data file that carries one was probably pasted
// from `linkwise instances --json`.
const std::vector<std::string_view> kDerivedInstanceFields{"price_usd_per_gpu_hour"};
const std::vector<std::string_view> kInstanceSourceGroups{"gpu", "interconnect", "network", "price", "specs"};

Gpu parse_gpu(const json& object, const Where& where) {
  if (!object.is_object()) fail(where, "", "expected an object, " + describe(object));
  Record record(object, where);
  if (object.contains("id") && object.at("id").is_string()) {
    record.set_record("gpu " + in_quotes(object.at("id").get<std::string>()));
  }
  record.check_keys(kGpuFields);
  Gpu gpu;
  gpu.id = record.string("id");
  gpu.vendor = record.enum_value("vendor", kVendors);
  gpu.architecture = parse_architecture(record.enum_value("architecture", architecture_names()));
  gpu.memory_gb = record.number("memory_gb", "GB", true);
  gpu.hbm_gbytes_per_s = record.number("hbm_gbytes_per_s", "GB/s", true);
  gpu.bf16_dense_tflops = record.optional_number("bf16_dense_tflops", "TFLOPS");
  gpu.fp16_dense_tflops = record.optional_number("fp16_dense_tflops", "TFLOPS");
  gpu.fp8_dense_tflops = record.optional_number("fp8_dense_tflops", "TFLOPS");
  gpu.fp4_dense_tflops = record.optional_number("fp4_dense_tflops", "TFLOPS");
  gpu.nvlink_gbytes_per_s = record.optional_number("nvlink_gbytes_per_s", "GB/s", true);
  gpu.nvlink_generation = record.optional_integer("nvlink_generation", 1);
  gpu.nvlink_domain_max_gpus = record.optional_integer("nvlink_domain_max_gpus", 1);
  gpu.pcie_gen = record.optional_integer("pcie_gen", 1);
  gpu.tdp_w = record.optional_number("tdp_w", "W", true);
  gpu.sources = record.sources({"spec"}, {"spec"});
  // AMD GPUs carry their Infinity Fabric GPU-to-GPU figure in nvlink_gbytes_per_s, without an
  // NVLink generation; for NVIDIA the two go together.
  if (gpu.vendor == "nvidia" && gpu.nvlink_gbytes_per_s.has_value() != gpu.nvlink_generation.has_value()) {
    record.fail("nvlink_generation",
                "nvlink_gbytes_per_s and nvlink_generation must both be set (a GPU with NVLink) or "
                "both be null (no NVLink)");
  }
  if (gpu.vendor != "nvidia" && gpu.nvlink_generation) {
    record.fail("nvlink_generation", "only NVIDIA GPUs have an NVLink generation; use null");
  }
  if (gpu.vendor == "nvidia" && !gpu.nvlink_gbytes_per_s && gpu.nvlink_domain_max_gpus.value_or(1) > 1) {
    record.fail("nvlink_domain_max_gpus",
                "is " + std::to_string(*gpu.nvlink_domain_max_gpus) +
                    ", but the GPU has no NVLink (nvlink_gbytes_per_s is null); use 1 or null");
  }
  return gpu;
}

// nvlink_domain_gpus against the fabric, gpu_count and the GPU's largest NVLink domain.
using Fail = std::function<void(std::string_view field, const std::string& what)>;

void check_nvlink_domain(const Fail& fail, const Instance& instance, const Gpu& gpu, const std::string& fabric) {
  if (!instance.nvlink_domain_gpus) {
    // Unstated, the domain is the node's GPUs where the fabric links them (what prepare assumes), and
    // the GPU's largest NVLink domain bounds it as it bounds a stated one: no 16 H100 behind one
    // NVSwitch, no NVSwitch of PCIe cards.
    if (links_gpus(instance.intra_node_fabric) && gpu.nvlink_domain_max_gpus &&
        instance.gpu_count > *gpu.nvlink_domain_max_gpus) {
      fail("gpu_count", "is " + std::to_string(instance.gpu_count) + " GPUs linked by intra_node_fabric " +
                            in_quotes(fabric) + ", above the " + std::to_string(*gpu.nvlink_domain_max_gpus) +
                            " GPUs of GPU " + in_quotes(gpu.id) +
                            "'s largest NVLink domain (nvlink_domain_max_gpus in gpus.json); for GPUs bridged in "
                            "smaller groups state nvlink_domain_gpus");
    }
    return;
  }
  const int domain = *instance.nvlink_domain_gpus;
  const std::string shown = std::to_string(domain);
  const std::string count = std::to_string(instance.gpu_count);
  switch (instance.intra_node_fabric) {
    case Fabric::none:
    case Fabric::pcie:
      if (domain != 1) {
        fail("nvlink_domain_gpus", "is " + shown + ", but intra_node_fabric " + in_quotes(fabric) +
                                       " has no NVLink: a GPU reaches only itself (use 1, or null)");
      }
      return;
    case Fabric::nvswitch:
      if (domain < instance.gpu_count) {
        fail("nvlink_domain_gpus", "is " + shown +
                                       ", but behind an NVSwitch every GPU of the instance "
                                       "reaches the others: at least gpu_count (" +
                                       count + ")");
      }
      break;
    case Fabric::nvlink:
    case Fabric::infinity_fabric:
      if (domain < 2) {
        fail("nvlink_domain_gpus", "is " + shown + ", but intra_node_fabric " + in_quotes(fabric) +
                                       " links each GPU to at least one other (a bridged pair: 2)");
      }
      break;
  }
  if (gpu.nvlink_domain_max_gpus && domain > *gpu.nvlink_domain_max_gpus) {
    fail("nvlink_domain_gpus", "is " + shown + ", above the " + std::to_string(*gpu.nvlink_domain_max_gpus) +
                                   " GPUs of GPU " + in_quotes(gpu.id) +
                                   "'s largest NVLink domain "
                                   "(nvlink_domain_max_gpus in gpus.json)");
  }
  // A domain beyond the instance (an NVL72 rack) is a vendor claim that must be on record first,
  // and it is made of whole instances (72 GPUs: 18 trays of 4).
  if (domain > instance.gpu_count && !gpu.nvlink_domain_max_gpus) {
    fail("nvlink_domain_gpus", "is " + shown + ", more than the instance's " + count + " GPUs, but GPU " +
                                   in_quotes(gpu.id) +
                                   " has no nvlink_domain_max_gpus in gpus.json to allow a domain beyond "
                                   "the instance");
  }
  if (domain > instance.gpu_count && domain % instance.gpu_count != 0) {
    fail("nvlink_domain_gpus", "is " + shown + ", beyond the instance but not a multiple of its " + count +
                                   " GPUs: a rack-scale domain spans whole instances");
  }
}

// The GPU fabric figures against each other: the NIC product, and the front-end NICs.
void check_network(const Record& record, const Instance& instance) {
  if (instance.network_nics && instance.network_nic_gbits_per_s && instance.network_gbits_per_s) {
    const double product = *instance.network_nics * *instance.network_nic_gbits_per_s;
    // Relative tolerance: the figures are decimal Gbit/s, exact in practice but read as doubles.
    if (std::abs(product - *instance.network_gbits_per_s) > 1e-9 * std::max(1.0, product)) {
      std::ostringstream what;
      what << *instance.network_nics << " NICs x " << *instance.network_nic_gbits_per_s << " Gbit/s = " << product
           << " Gbit/s, but network_gbits_per_s is " << *instance.network_gbits_per_s
           << " (the GPU fabric only: the NICs' product, without the host/front-end NICs)";
      record.fail("network_nic_gbits_per_s", what.str());
    }
  }
  if (instance.frontend_network_gbits_per_s) {
    if (!instance.network_gbits_per_s) {
      record.fail("frontend_network_gbits_per_s",
                  "a front-end figure needs network_gbits_per_s (the GPU fabric) known: a front end is what is "
                  "left beside the fabric");
    }
    if (instance.network_type == NetworkType::ethernet && instance.gpudirect_rdma != true) {
      record.fail("frontend_network_gbits_per_s",
                  "must be null on plain ethernet without RDMA: there is no separate GPU fabric, so the "
                  "instance's bandwidth is network_gbits_per_s itself");
    }
  }
}

Instance parse_instance(const json& object, const Where& where, const std::string& provider,
                        const std::map<std::string, const Gpu*>& gpus) {
  if (!object.is_object()) fail(where, "", "expected an object, " + describe(object));
  Record record(object, where);
  if (object.contains("name") && object.at("name").is_string()) {
    record.set_record("instance " + in_quotes(provider + ":" + object.at("name").get<std::string>()));
  }
  for (auto derived : kDerivedInstanceFields) {
    if (object.contains(derived)) {
      record.fail(derived, "a derived field (price_usd_per_hour / gpu_count), written by linkwise's outputs, "
                           "never stored in the data files: remove it");
    }
  }
  record.check_keys(kInstanceFields);
  Instance instance;
  instance.provider = provider;
  instance.name = record.string("name");
  instance.id = provider + ":" + instance.name;

  instance.gpu_model = record.string("gpu_model");
  const auto gpu_it = gpus.find(instance.gpu_model);
  if (gpu_it == gpus.end()) {
    std::vector<std::string> known;
    for (const auto& entry : gpus) known.push_back(entry.first);
    record.fail("gpu_model", "unknown GPU id " + in_quotes(instance.gpu_model) +
                                 " (not in gpus.json); known: " + join_quoted(known));
  }
  const Gpu& gpu = *gpu_it->second;
  instance.gpu_count = record.integer("gpu_count", 1);
  instance.gpu_memory_gb = record.number("gpu_memory_gb", "GB", true);
  instance.vcpus = record.optional_integer("vcpus", 1);
  instance.memory_gib = record.optional_number("memory_gib", "GiB", true);
  const std::string fabric = record.enum_value("intra_node_fabric", fabric_names());
  instance.intra_node_fabric = parse_fabric(fabric);
  instance.nvlink_gbytes_per_s = record.optional_number("nvlink_gbytes_per_s", "GB/s", true);
  instance.nvlink_domain_gpus = record.optional_integer("nvlink_domain_gpus", 1);
  instance.network_type = parse_network_type(record.enum_value("network_type", network_type_names()));
  instance.network_gbits_per_s = record.optional_number("network_gbits_per_s", "Gbit/s", true);
  instance.network_nics = record.optional_integer("network_nics", 1);
  instance.network_nic_gbits_per_s = record.optional_number("network_nic_gbits_per_s", "Gbit/s", true);
  instance.frontend_network_gbits_per_s = record.optional_number("frontend_network_gbits_per_s", "Gbit/s", true);
  instance.gpudirect_rdma = record.optional_bool("gpudirect_rdma");
  instance.price_usd_per_hour = record.optional_number("price_usd_per_hour", "USD per hour");
  instance.price_region = record.optional_string("price_region");
  instance.price_as_of = record.optional_date("price_as_of");
  instance.spot_price_usd_per_hour = record.optional_number("spot_price_usd_per_hour", "USD per hour");
  instance.regions = record.string_list("regions");

  std::vector<std::string_view> required_sources{"gpu", "interconnect", "network"};
  if (instance.price_usd_per_hour || instance.spot_price_usd_per_hour) required_sources.push_back("price");
  if (instance.vcpus || instance.memory_gib) required_sources.push_back("specs");
  instance.sources = record.sources(required_sources, kInstanceSourceGroups);

  // Consistency between fields: each rule catches a mistake seen when transcribing spec pages.
  if (instance.gpu_memory_gb != gpu.memory_gb) {
    std::ostringstream what;
    what << "is " << instance.gpu_memory_gb << " GB but GPU " << in_quotes(gpu.id) << " has " << gpu.memory_gb
         << " GB (per GPU, nominal): wrong GPU variant or memory figure";
    record.fail("gpu_memory_gb", what.str());
  }
  check_instance_links(instance, gpu,
                       [&](std::string_view field, const std::string& what) { record.fail(field, what); });
  check_network(record, instance);
  if ((instance.price_usd_per_hour || instance.spot_price_usd_per_hour) && !instance.price_as_of) {
    record.fail("price_as_of", "a price needs the date it was read (YYYY-MM-DD)");
  }
  if (instance.price_usd_per_hour && !instance.price_region) {
    record.fail("price_region", "an on-demand price needs the region it is for");
  }
  return instance;
}

}  // namespace

void check_instance_links(const Instance& instance, const Gpu& gpu, const Fail& report) {
  // Each finding ends the check: a handler that returns is a bug, not a pass.
  const Fail fail = [&](std::string_view field, const std::string& what) {
    report(field, what);
    throw Error(ErrorKind::internal, "check_instance_links: the handler of a finding returned", std::string(field));
  };
  const std::string fabric(to_string(instance.intra_node_fabric));
  const bool single = instance.gpu_count == 1;
  if (single != (instance.intra_node_fabric == Fabric::none)) {
    fail("intra_node_fabric",
         single ? "an instance with one GPU has intra_node_fabric \"none\", got " + in_quotes(fabric)
                : "\"none\" means a single GPU, but gpu_count is " + std::to_string(instance.gpu_count));
  }
  const bool nvlink_fabric =
      instance.intra_node_fabric == Fabric::nvswitch || instance.intra_node_fabric == Fabric::nvlink;
  const bool gpu_link_fabric = links_gpus(instance.intra_node_fabric);
  if (nvlink_fabric && !instance.nvlink_gbytes_per_s) {
    fail("nvlink_gbytes_per_s",
         "intra_node_fabric " + in_quotes(fabric) + " needs the per-GPU NVLink bandwidth in GB/s");
  }
  if (!gpu_link_fabric && instance.nvlink_gbytes_per_s) {
    fail("nvlink_gbytes_per_s",
         "must be null when intra_node_fabric is " + in_quotes(fabric) + " (no GPU-to-GPU link)");
  }
  if (instance.nvlink_gbytes_per_s) {
    if (!gpu.nvlink_gbytes_per_s) {
      fail("nvlink_gbytes_per_s", "GPU " + in_quotes(gpu.id) + " has no NVLink in gpus.json");
    }
    if (*instance.nvlink_gbytes_per_s > *gpu.nvlink_gbytes_per_s) {
      std::ostringstream what;
      what << *instance.nvlink_gbytes_per_s << " GB/s exceeds the " << *gpu.nvlink_gbytes_per_s
           << " GB/s per GPU (both directions) of " << in_quotes(gpu.id);
      fail("nvlink_gbytes_per_s", what.str());
    }
  }
  const bool rdma_capable_network = instance.network_type == NetworkType::efa ||
                                    instance.network_type == NetworkType::infiniband ||
                                    instance.network_type == NetworkType::roce;
  if (instance.gpudirect_rdma == true && !rdma_capable_network) {
    fail("gpudirect_rdma",
         "true, but network_type " + in_quotes(to_string(instance.network_type)) + " is not an RDMA network");
  }
  check_nvlink_domain(fail, instance, gpu, fabric);
}

Catalog Catalog::load_data_dir(const fs::path& data_dir) {
  const fs::path gpu_path = data_dir / "gpus.json";
  if (!fs::exists(gpu_path)) {
    throw Error(ErrorKind::invalid_input, gpu_path.string() +
                                              ": no such file (a catalog data "
                                              "directory holds gpus.json and instances/<provider>.json)");
  }

  std::vector<Gpu> gpus;
  std::map<std::string, const Gpu*> gpu_index;
  {
    const json document = read_json_file(gpu_path);
    const Where file_where{gpu_path.string(), "file", ""};
    check_file_header(document, file_where, "gpus", {"schema_version", "gpus"});
    const json& list = document.at("gpus");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = "gpus[" + std::to_string(i) + "]";
      gpus.push_back(parse_gpu(list[i], Where{gpu_path.string(), path, path}));
    }
    std::set<std::string> seen;
    for (std::size_t i = 0; i < gpus.size(); ++i) {
      if (!seen.insert(gpus[i].id).second) {
        const std::string path = "gpus[" + std::to_string(i) + "]";
        fail(Where{gpu_path.string(), "gpu " + in_quotes(gpus[i].id), path}, "id",
             "duplicate id " + in_quotes(gpus[i].id));
      }
    }
    for (const Gpu& gpu : gpus) gpu_index.emplace(gpu.id, &gpu);
  }

  std::vector<Instance> instances;
  std::set<std::string> instance_ids;
  const fs::path instance_dir = data_dir / "instances";
  std::vector<fs::path> files;
  if (fs::is_directory(instance_dir)) {
    for (const auto& entry : fs::directory_iterator(instance_dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    const json document = read_json_file(file);
    const Where file_where{file.string(), "file", ""};
    check_file_header(document, file_where, "instances", {"schema_version", "provider", "instances"});
    Record top(document, file_where);
    const std::string provider = top.string("provider");
    const auto& providers = known_providers();
    if (std::find(providers.begin(), providers.end(), provider) == providers.end()) {
      fail(file_where, "provider", "unknown provider " + in_quotes(provider) + "; known: " + join_quoted(providers));
    }
    if (file.stem().string() != provider) {
      fail(file_where, "provider",
           "file of provider " + in_quotes(provider) + " must be named " + in_quotes(provider + ".json"));
    }
    const json& list = document.at("instances");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string path = "instances[" + std::to_string(i) + "]";
      Instance instance = parse_instance(list[i], Where{file.string(), path, path}, provider, gpu_index);
      if (!instance_ids.insert(instance.id).second) {
        fail(Where{file.string(), "instance " + in_quotes(instance.id), path}, "name",
             "duplicate id " + in_quotes(instance.id));
      }
      instances.push_back(std::move(instance));
    }
  }
  return Catalog(std::move(gpus), std::move(instances));
}

}  // namespace linkwise
