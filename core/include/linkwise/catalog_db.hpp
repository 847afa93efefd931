// The catalog held in memory, loaded from the SQLite store or straight from data/, and queried.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "linkwise/catalog.hpp"

namespace linkwise {

// Filters of `linkwise instances`, GET /v1/instances and Catalog.instances(); unset means "any".
struct InstanceFilter {
  std::optional<std::string> provider;
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

class Catalog {
 public:
  Catalog() = default;
  Catalog(std::vector<Gpu> gpus, std::vector<Instance> instances);  // validates cross-references

  // The catalog built into this binary (data/ loaded at build time).
  static Catalog embedded();
  // A SQLite catalog database written by save() or the build step.
  static Catalog open(const std::filesystem::path& db_path);
  // The reviewed text files: data_dir/gpus.json and data_dir/instances/*.json.
  static Catalog load_data_dir(const std::filesystem::path& data_dir);

  const std::vector<Gpu>& gpus() const { return gpus_; }
  const std::vector<Instance>& instances() const { return instances_; }

  const Gpu* find_gpu(std::string_view id) const;
  const Instance* find_instance(std::string_view id) const;
  const Gpu& gpu(std::string_view id) const;            // throws not_found
  const Instance& instance(std::string_view id) const;  // throws not_found

  std::vector<const Instance*> query(const InstanceFilter& filter, const InstanceSort& sort = {}) const;

 private:
  std::vector<Gpu> gpus_;
  std::vector<Instance> instances_;
};

}  // namespace linkwise
