// The instance catalog: GPU models and cloud instance types, every fact with its source.
// Field names here are the JSON contract shared by the CLI (--json), the REST service and Python.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

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
  std::string id;            // "H100-SXM5-80GB"
  std::string vendor;        // "nvidia", "amd"
  Architecture architecture = Architecture::hopper;  // JSON "hopper"
  double memory_gb = 0;      // nominal, as on the spec sheet (binary: see units.hpp)
  double hbm_gbytes_per_s = 0;
  std::optional<double> bf16_dense_tflops;  // dense tensor-core peak, no sparsity; null where none or unpublished
  std::optional<double> fp16_dense_tflops;
  std::optional<double> fp8_dense_tflops;
  std::optional<double> fp4_dense_tflops;  // NVFP4/MXFP4; null where the GPU has no FP4 tensor cores
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
  std::string id;          // "aws:p5.48xlarge" = provider + ":" + name
  std::string provider;    // "aws", "gcp", "azure", "oci", "lambda", "coreweave", ...
  std::string name;        // as the provider spells it
  std::string gpu_model;   // a Gpu::id
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

}  // namespace linkwise
