// The instance catalog: GPU models and cloud instance types, every fact with its source, and the
// Catalog that holds them in memory (loaded from the SQLite store, catalog_db.hpp, or straight from
// data/) and answers queries. Field names here are the JSON contract shared by the CLI (--json),
// the REST service and Python.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "linkwise/error.hpp"

namespace linkwise {

// Where a group of facts comes from: a public document and the date it states or was read.
struct SourceRef {
  std::string url;                  // URL, or a document's name where there is no URL
  std::string as_of;                // YYYY-MM-DD
  std::optional<std::string> note;  // e.g. "per-direction figure doubled"

  friend bool operator==(const SourceRef&, const SourceRef&) = default;
};
// Fact group ("gpu", "interconnect", "network", "price", "specs", ...) -> its source.
using Sources = std::map<std::string, SourceRef>;

// The GPU architectures the catalog knows (data/schema/catalog.schema.json); the planner's
// per-architecture rules (tensor-core precisions, CUDA context size, calibration) key on them.
enum class Architecture { volta, turing, ampere, ada, hopper, blackwell, cdna3, cdna4 };

struct Gpu {
  std::string id;                                    // "H100-SXM5-80GB"
  std::string vendor;                                // "nvidia", "amd"
  Architecture architecture = Architecture::hopper;  // JSON "hopper"
  double memory_gb = 0;                              // nominal, as on the spec sheet (binary: see units.hpp)
  double hbm_gbytes_per_s = 0;
  std::optional<double> bf16_dense_tflops;  // dense tensor-core peak, no sparsity; null where none or unpublished
  std::optional<double> fp16_dense_tflops;
  std::optional<double> fp8_dense_tflops;
  std::optional<double> fp4_dense_tflops;     // NVFP4/MXFP4; null where the GPU has no FP4 tensor cores
  std::optional<double> nvlink_gbytes_per_s;  // per GPU, both directions added; null without NVLink
  std::optional<int> nvlink_generation;
  // The most GPUs one NVLink (or Infinity Fabric) domain can join at full per-GPU bandwidth, as the
  // vendor states it: 8 on HGX H100/B200, 72 on GB200/GB300 NVL72; null where not stated.
  std::optional<int> nvlink_domain_max_gpus;
  std::optional<int> pcie_gen;
  std::optional<double> tdp_w;
  Sources sources;

  friend bool operator==(const Gpu&, const Gpu&) = default;
};

enum class Fabric { nvswitch, nvlink, pcie, infinity_fabric, none };
enum class NetworkType { efa, infiniband, roce, gpudirect_tcpx, gpudirect_tcpxo, ethernet };

std::string_view to_string(Fabric fabric) noexcept;
// Fabrics with GPU-to-GPU links inside the node (NVSwitch, NVLink bridges, AMD Infinity Fabric);
// the others (PCIe, a single GPU) reach another GPU only through the host.
constexpr bool links_gpus(Fabric fabric) noexcept {
  return fabric == Fabric::nvswitch || fabric == Fabric::nvlink || fabric == Fabric::infinity_fabric;
}
std::string_view to_string(NetworkType type) noexcept;
std::string_view to_string(Architecture architecture) noexcept;
// Parse the JSON spelling ("nvswitch", "infinity-fabric", "gpudirect-tcpx"); throws invalid_input
// naming `field` with the accepted values.
Fabric parse_fabric(std::string_view text, std::string_view field = "intra_node_fabric");
NetworkType parse_network_type(std::string_view text, std::string_view field = "network_type");
Architecture parse_architecture(std::string_view text, std::string_view field = "architecture");
// Every accepted spelling, in declaration order (for help texts and error messages).
std::vector<std::string_view> fabric_names();
std::vector<std::string_view> network_type_names();
std::vector<std::string_view> architecture_names();

struct Instance {
  std::string id;         // "aws:p5.48xlarge" = provider + ":" + name
  std::string provider;   // "aws", "gcp", "azure", "oci", "lambda", "coreweave", ...
  std::string name;       // as the provider spells it
  std::string gpu_model;  // a Gpu::id
  int gpu_count = 0;
  double gpu_memory_gb = 0;  // per GPU, nominal
  std::optional<int> vcpus;
  std::optional<double> memory_gib;  // host memory
  Fabric intra_node_fabric = Fabric::none;
  std::optional<double> nvlink_gbytes_per_s;  // per GPU, both directions added; null without NVLink
  // How many GPUs one GPU reaches over NVLink at nvlink_gbytes_per_s: 8 on HGX H100, 72 on a GB200
  // NVL72 tray rented within its rack (more than gpu_count), 1 without NVLink.
  std::optional<int> nvlink_domain_gpus;
  NetworkType network_type = NetworkType::ethernet;
  // The GPU fabric between instances (the NICs NCCL uses); for instances without one (single GPU,
  // plain ethernet) the instance's sustained network bandwidth. Never the host/front-end NICs.
  std::optional<double> network_gbits_per_s;
  std::optional<int> network_nics;                     // GPU-fabric NICs (p5: 32)
  std::optional<double> network_nic_gbits_per_s;       // one GPU-fabric NIC (p5: 100)
  std::optional<double> frontend_network_gbits_per_s;  // general-purpose NICs, not for GPU traffic
  std::optional<bool> gpudirect_rdma;
  std::optional<double> price_usd_per_hour;  // on demand
  std::optional<std::string> price_region;
  std::optional<std::string> price_as_of;  // YYYY-MM-DD
  std::optional<double> spot_price_usd_per_hour;
  std::vector<std::string> regions;
  Sources sources;

  // Derived, never stored: price_usd_per_hour / gpu_count, null without a price. The figure people
  // compare first across instances of different sizes; written into every JSON output after
  // price_usd_per_hour.
  std::optional<double> price_usd_per_gpu_hour() const;

  friend bool operator==(const Instance&, const Instance&) = default;
};

// The providers the catalog accepts; an instance of any other fails the load.
const std::vector<std::string>& known_providers();

// True for a real calendar date written YYYY-MM-DD (the format of every as_of and price_as_of).
bool is_valid_date(std::string_view text);

// JSON in the contract's field names (nulls written out, never omitted).
void to_json(nlohmann::json& out, const SourceRef& source);
void to_json(nlohmann::json& out, const Gpu& gpu);
void to_json(nlohmann::json& out, const Instance& instance);
// The same, keeping the contract's field order (the order of the structs above).
void to_json(nlohmann::ordered_json& out, const SourceRef& source);
void to_json(nlohmann::ordered_json& out, const Gpu& gpu);
void to_json(nlohmann::ordered_json& out, const Instance& instance);

// ---- The catalog in memory and its queries (catalog.cpp, catalog_query.cpp) ----

// Filters of `linkwise instances`, GET /v1/instances and Catalog.instances(); unset means "any".
// A name that names nothing (a provider outside known_providers(), a GPU id or family no GPU of the
// catalog matches) is an error with a suggestion, never an empty answer.
struct InstanceFilter {
  std::optional<std::string> provider;  // case-insensitive
  std::optional<std::string> gpu;       // a GPU id, or a family: "H100" matches every H100 variant
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

// The answer's envelope as every front end prints it: {"total": matches, "excluded_unknown": {field:
// count}}. CLI --json and Python add "items"; REST adds its paging fields and the page's "items".
nlohmann::ordered_json matches_summary_json(const InstanceMatches& matches);

// The GPU list as every front end prints it: {"total": n, "items": [GPU, ...]} (GET /v1/gpus,
// `linkwise gpus --json`).
nlohmann::ordered_json gpus_json(const std::vector<Gpu>& gpus);

// The one GPU matching rule, used by the catalog's filters and the planner's constraints.gpu_models:
// an exact id, or a leading part ending at a '-' ("H100", "H100-SXM5"), case-insensitive. "A10"
// matches neither "A100-SXM4-80GB" nor "A10G".
bool gpu_id_matches(std::string_view gpu_id, std::string_view wanted);
// The one provider matching rule (filters and constraints.providers): equal, case-insensitive.
bool provider_matches(std::string_view provider, std::string_view wanted);
// The one region matching rule (the region filter): the name equals one of the instance's regions
// or its price_region, case-insensitive ("US-EAST-1" is "us-east-1").
bool region_matches(const Instance& instance, std::string_view wanted);

// The consistency rules between an instance's GPU-link fields and its GPU, one home for the catalog
// loader (data/) and the planner's hardware.custom: intra_node_fabric "none" exactly when gpu_count
// is 1; an NVLink figure given on nvswitch/nvlink (required), on infinity-fabric (AMD's figure) and
// nowhere else, never above the GPU's own; gpudirect_rdma true only on an RDMA network (efa,
// infiniband, roce); nvlink_domain_gpus 1 on pcie/none, at least 2 on nvlink/infinity-fabric, at
// least gpu_count on nvswitch, never above the GPU's nvlink_domain_max_gpus, and beyond the
// instance only where that maximum is known. Calls fail(field, what) at the first finding, with the
// instance's field name ("nvlink_domain_gpus") and what is wrong; fail must throw.
void check_instance_links(const Instance& instance, const Gpu& gpu,
                          const std::function<void(std::string_view field, const std::string& what)>& fail);

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

  // By id: the exact spelling, else ignoring case ("AWS:P5.48XLARGE", "a100-sxm4-80gb"), as GPU
  // families and providers match; the record carries the catalog's spelling. Null when none.
  const Gpu* find_gpu(std::string_view id) const;
  const Instance* find_instance(std::string_view id) const;
  // The same, throwing `kind` naming `field` for an id that names nothing, with the closest ids:
  // "unknown instance 'aws:p5.48xlarg': did you mean \"aws:p5.48xlarge\"?". not_found where a URL
  // or a command names the id, unknown_reference inside a request document (the workload),
  // invalid_input for a query parameter or option. Every front end's lookup goes through these.
  const Gpu& gpu(std::string_view id, ErrorKind kind = ErrorKind::not_found, const std::string& field = "gpu") const;
  const Instance& instance(std::string_view id, ErrorKind kind = ErrorKind::not_found,
                           const std::string& field = "id") const;
  // "did you mean ..." for an id naming nothing, empty when no id is close (suggest.hpp's rules).
  std::string suggest_gpu_id(std::string_view id) const;
  std::string suggest_instance_id(std::string_view id) const;

  // Throws invalid_input for a bad filter (see validate and check_filter_names) or sort field.
  InstanceMatches match(const InstanceFilter& filter, const InstanceSort& sort = {}) const;
  // match(...).instances.
  std::vector<const Instance*> query(const InstanceFilter& filter, const InstanceSort& sort = {}) const;
  // Throws invalid_input naming "gpu", "provider" or "region" when the filter's name names nothing, with the
  // closest names ("did you mean \"A100-SXM4-40GB\"?"). A GPU name is known when gpu_id_matches some
  // GPU of this catalog (whether or not an instance has it); a provider when known_providers() has it.
  void check_filter_names(const InstanceFilter& filter) const;
  // The same checks for one name, naming `field` in the error (check_filter_names passes "gpu" and
  // "provider"; the planner "constraints.gpu_models" and "constraints.providers").
  void check_gpu_name(std::string_view wanted, const std::string& field) const;
  void check_provider_name(std::string_view wanted, const std::string& field) const;
  // A region is known when region_matches some instance of this catalog.
  void check_region_name(std::string_view wanted, const std::string& field) const;

 private:
  std::vector<Gpu> gpus_;
  std::vector<Instance> instances_;
};

}  // namespace linkwise
