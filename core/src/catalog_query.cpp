// The in-memory Catalog: construction checks, lookups, filters and sorting.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <variant>

#include <nlohmann/json.hpp>

#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/text.hpp"
#include "suggest.hpp"

namespace linkwise {
namespace {

using text::lower;

// A GPU filter matches a GPU id exactly, or as a leading part that ends at a '-' boundary:
// "H100" matches H100-SXM5-80GB, H100-PCIE-80GB and H100-NVL-94GB (the family is the token before
// the first '-'); "H100-SXM5" matches H100-SXM5-80GB; "A10" matches neither A100-... nor A10G.
// Case-insensitive.
bool gpu_matches_impl(std::string_view gpu_id, std::string_view wanted) {
  const std::string id = lower(gpu_id);
  const std::string want = lower(wanted);
  if (id == want) return true;
  return id.size() > want.size() && id.compare(0, want.size(), want) == 0 && id[want.size()] == '-';
}

// A sort key: absent (null), a number or a text.
using SortKey = std::variant<std::monostate, double, std::string>;

SortKey key_of(const std::optional<double>& value) { return value ? SortKey(*value) : SortKey(std::monostate{}); }
SortKey key_of(const std::optional<int>& value) {
  return value ? SortKey(static_cast<double>(*value)) : SortKey(std::monostate{});
}
SortKey key_of(const std::optional<bool>& value) {
  return value ? SortKey(*value ? 1.0 : 0.0) : SortKey(std::monostate{});
}
SortKey key_of(const std::optional<std::string>& value) { return value ? SortKey(*value) : SortKey(std::monostate{}); }

using KeyFunction = std::function<SortKey(const Instance&)>;

const std::vector<std::pair<std::string_view, KeyFunction>>& sort_fields() {
  static const std::vector<std::pair<std::string_view, KeyFunction>> fields{
      {"id", [](const Instance& i) { return SortKey(i.id); }},
      {"provider", [](const Instance& i) { return SortKey(i.provider); }},
      {"name", [](const Instance& i) { return SortKey(i.name); }},
      {"gpu_model", [](const Instance& i) { return SortKey(i.gpu_model); }},
      {"gpu_count", [](const Instance& i) { return SortKey(static_cast<double>(i.gpu_count)); }},
      {"gpu_memory_gb", [](const Instance& i) { return SortKey(i.gpu_memory_gb); }},
      {"vcpus", [](const Instance& i) { return key_of(i.vcpus); }},
      {"memory_gib", [](const Instance& i) { return key_of(i.memory_gib); }},
      {"intra_node_fabric", [](const Instance& i) { return SortKey(std::string(to_string(i.intra_node_fabric))); }},
      {"nvlink_gbytes_per_s", [](const Instance& i) { return key_of(i.nvlink_gbytes_per_s); }},
      {"nvlink_domain_gpus", [](const Instance& i) { return key_of(i.nvlink_domain_gpus); }},
      {"network_type", [](const Instance& i) { return SortKey(std::string(to_string(i.network_type))); }},
      {"network_gbits_per_s", [](const Instance& i) { return key_of(i.network_gbits_per_s); }},
      {"network_nics", [](const Instance& i) { return key_of(i.network_nics); }},
      {"network_nic_gbits_per_s", [](const Instance& i) { return key_of(i.network_nic_gbits_per_s); }},
      {"frontend_network_gbits_per_s", [](const Instance& i) { return key_of(i.frontend_network_gbits_per_s); }},
      {"gpudirect_rdma", [](const Instance& i) { return key_of(i.gpudirect_rdma); }},
      {"price_usd_per_hour", [](const Instance& i) { return key_of(i.price_usd_per_hour); }},
      {"price_usd_per_gpu_hour", [](const Instance& i) { return key_of(i.price_usd_per_gpu_hour()); }},
      {"price_region", [](const Instance& i) { return key_of(i.price_region); }},
      {"price_as_of", [](const Instance& i) { return key_of(i.price_as_of); }},
      {"spot_price_usd_per_hour", [](const Instance& i) { return key_of(i.spot_price_usd_per_hour); }},
  };
  return fields;
}

const KeyFunction* find_sort_field(std::string_view name) {
  for (const auto& [field, function] : sort_fields()) {
    if (field == name) return &function;
  }
  return nullptr;
}

}  // namespace

Catalog::Catalog(std::vector<Gpu> gpus, std::vector<Instance> instances)
    : gpus_(std::move(gpus)), instances_(std::move(instances)) {
  // Ids are unique ignoring case: lookups fall back to a case-insensitive match (find_instance).
  std::set<std::string_view> gpu_ids;
  std::set<std::string> folded_gpu_ids;
  for (const Gpu& gpu : gpus_) {
    if (!gpu_ids.insert(gpu.id).second || !folded_gpu_ids.insert(text::lower(gpu.id)).second)
      throw_invalid("gpus.id", "duplicate GPU id \"" + gpu.id + "\"");
  }
  std::set<std::string> instance_ids;
  for (const Instance& instance : instances_) {
    if (instance.id != instance.provider + ":" + instance.name) {
      throw_invalid("instances.id", "instance id \"" + instance.id + "\" is not provider:name (\"" + instance.provider +
                                        ":" + instance.name + "\")");
    }
    if (!instance_ids.insert(text::lower(instance.id)).second) {
      throw_invalid("instances.id", "duplicate instance id \"" + instance.id + "\"");
    }
    if (!gpu_ids.contains(instance.gpu_model)) {
      throw_invalid("instances.gpu_model",
                    "instance \"" + instance.id + "\": unknown GPU id \"" + instance.gpu_model + "\"");
    }
  }
}

namespace {

// The record with this id: the exact spelling first (the search's hot path), else ignoring case.
template <typename Record>
const Record* find_by_id(const std::vector<Record>& records, std::string_view id) {
  const auto exact = std::find_if(records.begin(), records.end(), [&](const Record& r) { return r.id == id; });
  if (exact != records.end()) return &*exact;
  const std::string folded = text::lower(id);
  const auto any_case =
      std::find_if(records.begin(), records.end(), [&](const Record& r) { return text::lower(r.id) == folded; });
  return any_case == records.end() ? nullptr : &*any_case;
}

[[noreturn]] void throw_unknown_id(ErrorKind kind, const std::string& field, std::string message) {
  if (!field.empty() && message.rfind(field, 0) != 0) message = field + ": " + message;
  throw Error(kind, std::move(message), field);
}

}  // namespace

const Gpu* Catalog::find_gpu(std::string_view id) const { return find_by_id(gpus_, id); }

const Instance* Catalog::find_instance(std::string_view id) const { return find_by_id(instances_, id); }

std::string Catalog::suggest_gpu_id(std::string_view id) const {
  std::vector<std::string> ids;
  for (const Gpu& g : gpus_) ids.push_back(g.id);
  return did_you_mean(closest_names(id, ids));
}

std::string Catalog::suggest_instance_id(std::string_view id) const {
  std::vector<std::string> ids;
  for (const Instance& i : instances_) ids.push_back(i.id);
  std::vector<std::string> names = closest_names(id, ids);
  // The name without its provider ("p5.48xlarge"): the instances of that name.
  if (names.empty()) {
    const std::string folded = text::lower(id);
    for (const Instance& i : instances_)
      if (text::lower(i.name) == folded && names.size() < 3) names.push_back(i.id);
  }
  return did_you_mean(names);
}

const Gpu& Catalog::gpu(std::string_view id, ErrorKind kind, const std::string& field) const {
  if (const Gpu* found = find_gpu(id)) return *found;
  const std::string suggestion = suggest_gpu_id(id);
  throw_unknown_id(kind, field,
                   "unknown GPU model '" + std::string(id) + "'" + (suggestion.empty() ? "" : ": " + suggestion));
}

const Instance& Catalog::instance(std::string_view id, ErrorKind kind, const std::string& field) const {
  if (const Instance* found = find_instance(id)) return *found;
  const std::string suggestion = suggest_instance_id(id);
  throw_unknown_id(kind, field,
                   "unknown instance '" + std::string(id) + "'" + (suggestion.empty() ? "" : ": " + suggestion) +
                       " (ids are provider:name, e.g. aws:p5.48xlarge)");
}

InstanceSort InstanceSort::parse(std::string_view spec) {
  InstanceSort sort;
  if (!spec.empty() && spec.front() == '-') {
    sort.descending = true;
    spec.remove_prefix(1);
  }
  if (!find_sort_field(spec)) {
    std::string accepted;
    for (const auto& [field, function] : sort_fields()) {
      accepted += (accepted.empty() ? "" : ", ") + std::string(field);
    }
    throw_invalid("sort", "cannot sort by \"" + std::string(spec) + "\"; accepted fields: " + accepted +
                              " (prefix '-' for descending)");
  }
  sort.field = std::string(spec);
  return sort;
}

bool gpu_id_matches(std::string_view gpu_id, std::string_view wanted) { return gpu_matches_impl(gpu_id, wanted); }

bool provider_matches(std::string_view provider, std::string_view wanted) { return lower(provider) == lower(wanted); }

bool region_matches(const Instance& instance, std::string_view wanted) {
  const std::string want = lower(wanted);
  return std::any_of(instance.regions.begin(), instance.regions.end(),
                     [&](const std::string& region) { return lower(region) == want; }) ||
         (instance.price_region && lower(*instance.price_region) == want);
}

namespace {

void require_non_negative(const std::optional<double>& bound, const char* field) {
  if (!bound || (std::isfinite(*bound) && *bound >= 0)) return;
  char shown[32];
  std::snprintf(shown, sizeof shown, "%g", *bound);
  throw_invalid(field, std::string(field) + ": expected a finite number >= 0, got " + shown);
}

}  // namespace

void validate(const InstanceFilter& filter) {
  if (filter.min_gpus && *filter.min_gpus < 0) {
    throw_invalid("min_gpus", "min_gpus: expected an integer >= 0, got " + std::to_string(*filter.min_gpus));
  }
  require_non_negative(filter.min_gpu_memory_gb, "min_gpu_memory_gb");
  require_non_negative(filter.min_nvlink_gbytes_per_s, "min_nvlink_gbytes_per_s");
  require_non_negative(filter.min_network_gbits_per_s, "min_network_gbits_per_s");
  require_non_negative(filter.max_price, "max_price");
}

namespace {

// One filter's verdict on one instance: unknown where the filtered field is null, so the query can
// say what it hid for want of a value rather than hide it silently.
enum class Verdict { pass, fail, unknown };

Verdict at_least(const std::optional<double>& value, double bound) {
  if (!value) return Verdict::unknown;
  return *value >= bound ? Verdict::pass : Verdict::fail;
}

// Calls `on(field, verdict)` for each set filter, with the instance field it reads (the name
// excluded_unknown reports), and stops at the first that fails: returns false then. Unknowns do not
// stop it; what they mean is the caller's rule.
template <typename On>
bool evaluate(const Instance& instance, const InstanceFilter& filter, On&& on) {
  const auto check = [&](std::string_view field, Verdict verdict) {
    on(field, verdict);
    return verdict != Verdict::fail;
  };
  const auto known = [](bool pass) { return pass ? Verdict::pass : Verdict::fail; };
  if (filter.provider && !check("provider", known(provider_matches(instance.provider, *filter.provider)))) return false;
  if (filter.gpu && !check("gpu_model", known(gpu_id_matches(instance.gpu_model, *filter.gpu)))) return false;
  if (filter.min_gpus && !check("gpu_count", known(instance.gpu_count >= *filter.min_gpus))) return false;
  if (filter.min_gpu_memory_gb && !check("gpu_memory_gb", known(instance.gpu_memory_gb >= *filter.min_gpu_memory_gb))) {
    return false;
  }
  if (filter.fabric && !check("intra_node_fabric", known(instance.intra_node_fabric == *filter.fabric))) return false;
  if (filter.min_nvlink_gbytes_per_s) {
    // Null NVLink means "no NVLink" on nvswitch/nvlink/pcie/none (the loader's rule); only an
    // Infinity Fabric instance may lack a figure it has.
    Verdict verdict = at_least(instance.nvlink_gbytes_per_s, *filter.min_nvlink_gbytes_per_s);
    if (verdict == Verdict::unknown && instance.intra_node_fabric != Fabric::infinity_fabric) verdict = Verdict::fail;
    if (!check("nvlink_gbytes_per_s", verdict)) return false;
  }
  if (filter.min_network_gbits_per_s &&
      !check("network_gbits_per_s", at_least(instance.network_gbits_per_s, *filter.min_network_gbits_per_s))) {
    return false;
  }
  if (filter.rdma) {
    const Verdict verdict =
        !instance.gpudirect_rdma ? Verdict::unknown : known(*instance.gpudirect_rdma == *filter.rdma);
    if (!check("gpudirect_rdma", verdict)) return false;
  }
  if (filter.max_price) {
    const Verdict verdict =
        !instance.price_usd_per_hour ? Verdict::unknown : known(*instance.price_usd_per_hour <= *filter.max_price);
    if (!check("price_usd_per_hour", verdict)) return false;
  }
  if (filter.region) {
    const bool none_known = instance.regions.empty() && !instance.price_region;
    const Verdict verdict = none_known ? Verdict::unknown : known(region_matches(instance, *filter.region));
    if (!check("regions", verdict)) return false;
  }
  return true;
}

// GPU ids and their families (the first token), the names the GPU filter accepts.
std::vector<std::string> gpu_filter_names(const std::vector<Gpu>& gpus) {
  std::vector<std::string> names;
  for (const Gpu& gpu : gpus) {
    const std::string family = gpu.id.substr(0, gpu.id.find('-'));
    if (std::find(names.begin(), names.end(), family) == names.end()) names.push_back(family);
  }
  for (const Gpu& gpu : gpus) {
    if (std::find(names.begin(), names.end(), gpu.id) == names.end()) names.push_back(gpu.id);
  }
  return names;
}

}  // namespace

bool instance_matches(const Instance& instance, const InstanceFilter& filter) {
  bool unknown = false;
  const bool pass = evaluate(
      instance, filter, [&](std::string_view, Verdict verdict) { unknown = unknown || verdict == Verdict::unknown; });
  return pass && !unknown;  // an unknown value never matches
}

void Catalog::check_filter_names(const InstanceFilter& filter) const {
  if (filter.gpu) check_gpu_name(*filter.gpu, "gpu");
  if (filter.provider) check_provider_name(*filter.provider, "provider");
  if (filter.region) check_region_name(*filter.region, "region");
}

void Catalog::check_gpu_name(std::string_view wanted, const std::string& field) const {
  const bool known =
      std::any_of(gpus_.begin(), gpus_.end(), [&](const Gpu& gpu) { return gpu_id_matches(gpu.id, wanted); });
  if (known) return;
  const auto names = gpu_filter_names(gpus_);
  std::vector<std::string> families;
  for (const auto& name : names) {
    if (name.find('-') == std::string::npos) families.push_back(name);
  }
  const std::string suggestion = did_you_mean(closest_names(wanted, names));
  throw_invalid(field, field + ": no GPU id or family \"" + std::string(wanted) + "\" in the catalog" +
                           (suggestion.empty() ? "" : "; " + suggestion) + " (families: " + text::join(families) +
                           "; ids: linkwise gpus)");
}

void Catalog::check_provider_name(std::string_view wanted, const std::string& field) const {
  const auto& names = known_providers();
  const bool known =
      std::any_of(names.begin(), names.end(), [&](const std::string& name) { return provider_matches(name, wanted); });
  if (known) return;
  const std::string suggestion = did_you_mean(closest_names(wanted, names));
  throw_invalid(field, field + ": unknown provider \"" + std::string(wanted) + "\"" +
                           (suggestion.empty() ? "" : "; " + suggestion) + " (known: " + text::join(names) + ")");
}

void Catalog::check_region_name(std::string_view wanted, const std::string& field) const {
  const bool known = std::any_of(instances_.begin(), instances_.end(),
                                 [&](const Instance& instance) { return region_matches(instance, wanted); });
  if (known) return;
  std::vector<std::string> names;  // every region the catalog names, once, in catalog order
  for (const Instance& instance : instances_) {
    for (const std::string& region : instance.regions)
      if (std::find(names.begin(), names.end(), region) == names.end()) names.push_back(region);
    if (instance.price_region && std::find(names.begin(), names.end(), *instance.price_region) == names.end())
      names.push_back(*instance.price_region);
  }
  const std::string suggestion = did_you_mean(closest_names(wanted, names));
  throw_invalid(field, field + ": no instance of the catalog lists the region \"" + std::string(wanted) + "\"" +
                           (suggestion.empty() ? "" : "; " + suggestion) +
                           " (regions are the providers' own names, e.g. us-east-1, us-central1, eastus)");
}

InstanceMatches Catalog::match(const InstanceFilter& filter, const InstanceSort& sort) const {
  validate(filter);
  check_filter_names(filter);
  const KeyFunction* key = find_sort_field(sort.field);
  if (!key) InstanceSort::parse(sort.field);  // throws the message listing the fields

  InstanceMatches result;
  std::vector<std::string_view> unknown;
  for (const Instance& instance : instances_) {
    unknown.clear();
    const bool pass = evaluate(instance, filter, [&](std::string_view field, Verdict verdict) {
      if (verdict == Verdict::unknown) unknown.push_back(field);
    });
    if (pass && unknown.empty()) {
      result.instances.push_back(&instance);
    } else if (pass) {  // every known filtered field passes: hidden only for want of a value
      ++result.excluded_unknown_instances;
      for (std::string_view field : unknown) ++result.excluded_unknown[std::string(field)];
    }
  }
  // Nulls last in either direction; ties (and equal keys) break on id ascending.
  std::stable_sort(result.instances.begin(), result.instances.end(), [&](const Instance* a, const Instance* b) {
    const SortKey ka = (*key)(*a);
    const SortKey kb = (*key)(*b);
    const bool a_null = std::holds_alternative<std::monostate>(ka);
    const bool b_null = std::holds_alternative<std::monostate>(kb);
    if (a_null != b_null) return b_null;
    if (!a_null && ka != kb) return sort.descending ? kb < ka : ka < kb;
    return a->id < b->id;
  });
  return result;
}

std::vector<const Instance*> Catalog::query(const InstanceFilter& filter, const InstanceSort& sort) const {
  return match(filter, sort).instances;
}

nlohmann::ordered_json gpus_json(const std::vector<Gpu>& gpus) {
  auto items = nlohmann::ordered_json::array();
  for (const Gpu& gpu : gpus) items.push_back(gpu);
  return {{"total", gpus.size()}, {"items", std::move(items)}};
}

nlohmann::ordered_json matches_summary_json(const InstanceMatches& matches) {
  nlohmann::ordered_json out;
  out["total"] = matches.instances.size();
  out["excluded_unknown"] = matches.excluded_unknown;
  return out;
}

}  // namespace linkwise
