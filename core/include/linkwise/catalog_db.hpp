// The catalog held in memory, loaded from the SQLite store or straight from data/, and queried.
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "linkwise/catalog.hpp"

namespace linkwise {

// Filters of `linkwise instances`, GET /v1/instances and Catalog.instances(); unset means "any".
// A name that names nothing (a provider outside known_providers(), a GPU id or family no GPU of the
// catalog matches) is an error with a suggestion, never an empty answer.
struct InstanceFilter {
  std::optional<std::string> provider;  // case-insensitive
  std::optional<std::string> gpu;  // a GPU id, or a family: "H100" matches every H100 variant
  std::optional<int> min_gpus;
  std::optional<double> min_gpu_memory_gb;
  std::optional<Fabric> fabric;
  std::optional<double> min_nvlink_gbytes_per_s;
  std::optional<double> min_network_gbits_per_s;
  std::optional<bool> rdma;
  std::optional<double> max_price;  // USD per hour, on demand; instances without a price never match
  std::optional<std::string> region;
};

// Sort by any numeric or text field of Instance, by its JSON name; "-price_usd_per_hour" sorts
// descending. Nulls sort last either way; ties break on id so the order is total.
struct InstanceSort {
  std::string field = "id";
  bool descending = false;
  static InstanceSort parse(std::string_view spec);  // throws invalid_input naming "sort"
};

// Throws invalid_input naming the first bad field (by its name above, which is also the REST
// query parameter and the Python keyword): every bound must be >= 0, every number finite.
// Catalog::query calls it; front ends need not check the bounds themselves.
void validate(const InstanceFilter& filter);

// The filter test of Catalog::query, for front ends that filter their own lists. An unknown (null)
// value never matches a filter on its field.
bool instance_matches(const Instance& instance, const InstanceFilter& filter);

// A query's answer: the matches, and what the filters hid only because a filtered field is unknown.
struct InstanceMatches {
  std::vector<const Instance*> instances;  // sorted
  // Instance field -> instances that pass every filter whose field they know but lack this one
  // ("gpudirect_rdma" for rdma, "network_gbits_per_s" for min_network_gbits_per_s, "price_usd_per_hour"
  // for max_price, "regions" for region, "nvlink_gbytes_per_s" for an Infinity Fabric instance
  // without a figure). An instance lacking two filtered fields counts under both.
  std::map<std::string, std::size_t> excluded_unknown;
  std::size_t excluded_unknown_instances = 0;  // each hidden instance once
};
// The one GPU matching rule, used by the catalog's filters and the planner's constraints.gpu_models:
// an exact id, or a leading part ending at a '-' ("H100", "H100-SXM5"), case-insensitive. "A10"
// matches neither "A100-SXM4-80GB" nor "A10G".
bool gpu_id_matches(std::string_view gpu_id, std::string_view wanted);
// The one provider matching rule (filters and constraints.providers): equal, case-insensitive.
bool provider_matches(std::string_view provider, std::string_view wanted);

class Catalog {
 public:
  Catalog() = default;
  Catalog(std::vector<Gpu> gpus, std::vector<Instance> instances);  // validates cross-references

  // The catalog built into this binary (data/ loaded at build time).
  static Catalog embedded();
  // A SQLite catalog database written by save() or the build step.
  static Catalog open(const std::filesystem::path& db_path);
  // The reviewed text files: data_dir/gpus.json and data_dir/instances/*.json (<provider>.json).
  // Any bad record fails the whole load with invalid_input; the message names the file, the
  // record id and the field, and says what was expected (see catalog_load.cpp for every check).
  static Catalog load_data_dir(const std::filesystem::path& data_dir);

  const std::vector<Gpu>& gpus() const { return gpus_; }
  const std::vector<Instance>& instances() const { return instances_; }

  const Gpu* find_gpu(std::string_view id) const;
  const Instance* find_instance(std::string_view id) const;
  const Gpu& gpu(std::string_view id) const;            // throws not_found
  const Instance& instance(std::string_view id) const;  // throws not_found

  // Throws invalid_input for a bad filter (see validate and check_filter_names) or sort field.
  InstanceMatches match(const InstanceFilter& filter, const InstanceSort& sort = {}) const;
  // match(...).instances.
  std::vector<const Instance*> query(const InstanceFilter& filter, const InstanceSort& sort = {}) const;
  // Throws invalid_input naming "gpu" or "provider" when the filter's name names nothing, with the
  // closest names ("did you mean \"A100-SXM4-40GB\"?"). A GPU name is known when gpu_id_matches some
  // GPU of this catalog (whether or not an instance has it); a provider when known_providers() has it.
  void check_filter_names(const InstanceFilter& filter) const;
  // The same checks for one name, naming `field` in the error (check_filter_names passes "gpu" and
  // "provider"; the planner "constraints.gpu_models" and "constraints.providers").
  void check_gpu_name(std::string_view wanted, const std::string& field) const;
  void check_provider_name(std::string_view wanted, const std::string& field) const;

 private:
  std::vector<Gpu> gpus_;
  std::vector<Instance> instances_;
};

// ---- The SQLite store (catalog_store.cpp) ----
//
// One database file holds the catalog tables (meta, gpus, instances, instance_regions, sources);
// front ends may add their own tables to the same file and linkwise never drops them. The schema is
// versioned in meta.schema_version: an older file is migrated when opened for writing, a newer one
// is refused with an error that says to upgrade linkwise.
inline constexpr int kCatalogSchemaVersion = 2;

// Writes `catalog` to `db_path` atomically: a temporary file in the same directory is filled and
// renamed over `db_path`, so a failure leaves no file (or the previous one, untouched). Tables of an
// existing file that are not catalog tables are carried over into the new file.
void save_catalog(const Catalog& catalog, const std::filesystem::path& db_path);

// The catalog database built into this binary, as raw SQLite file bytes.
std::span<const std::byte> embedded_catalog_db_bytes();
// Creates `db_path` (atomically) as a copy of the embedded catalog database. Throws conflict if the
// file exists. The service's `--db PATH` calls ensure_catalog_db() before it opens PATH.
void write_embedded_db(const std::filesystem::path& db_path);
// Creates `db_path` from the embedded catalog if it does not exist; returns true if it did so.
bool ensure_catalog_db(const std::filesystem::path& db_path);

// New prices for one instance, as the SkyPilot import computes them. Every price field is replaced
// (a null stays null): the figures come from one snapshot and must not be mixed with older ones.
struct PriceUpdate {
  std::string instance_id;
  std::optional<double> price_usd_per_hour;
  std::optional<std::string> price_region;
  std::optional<std::string> price_as_of;
  std::optional<double> spot_price_usd_per_hour;
  std::vector<std::string> regions;
  SourceRef price_source;  // stored as the instance's "price" source
};
// Applies the updates to the database in one transaction: all or nothing. An unknown instance id
// fails with not_found and nothing is written.
void update_prices(const std::filesystem::path& db_path, const std::vector<PriceUpdate>& updates);

}  // namespace linkwise
