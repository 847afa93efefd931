// Catalog value types: enum spellings, the provider list and the JSON contract writers.
#include "linkwise/catalog.hpp"

#include <cctype>
#include <nlohmann/json.hpp>

#include "json_fields.hpp"
#include "linkwise/enum_names.hpp"
#include "linkwise/error.hpp"

namespace linkwise {
namespace {

constexpr EnumNames<Fabric, 5> kFabricNames{{
    {Fabric::nvswitch, "nvswitch"},
    {Fabric::nvlink, "nvlink"},
    {Fabric::pcie, "pcie"},
    {Fabric::infinity_fabric, "infinity-fabric"},
    {Fabric::none, "none"},
}};

constexpr EnumNames<NetworkType, 6> kNetworkNames{{
    {NetworkType::efa, "efa"},
    {NetworkType::infiniband, "infiniband"},
    {NetworkType::roce, "roce"},
    {NetworkType::gpudirect_tcpx, "gpudirect-tcpx"},
    {NetworkType::gpudirect_tcpxo, "gpudirect-tcpxo"},
    {NetworkType::ethernet, "ethernet"},
}};

constexpr EnumNames<Architecture, 8> kArchitectureNames{{
    {Architecture::volta, "volta"},
    {Architecture::turing, "turing"},
    {Architecture::ampere, "ampere"},
    {Architecture::ada, "ada"},
    {Architecture::hopper, "hopper"},
    {Architecture::blackwell, "blackwell"},
    {Architecture::cdna3, "cdna3"},
    {Architecture::cdna4, "cdna4"},
}};

using json_fields::optional_json;

// One writer for both JSON flavours: nlohmann::json sorts keys, ordered_json keeps this order.
template <typename Json>
void write_source(Json& out, const SourceRef& source) {
  out = Json::object();
  out["url"] = source.url;
  out["as_of"] = source.as_of;
  out["note"] = optional_json<Json>(source.note);
}

template <typename Json>
Json sources_json(const Sources& sources) {
  auto out = Json::object();
  for (const auto& [group, source] : sources) write_source(out[group], source);
  return out;
}

template <typename Json>
void write_gpu(Json& out, const Gpu& gpu) {
  out = Json::object();
  out["id"] = gpu.id;
  out["vendor"] = gpu.vendor;
  out["architecture"] = std::string(to_string(gpu.architecture));
  out["memory_gb"] = gpu.memory_gb;
  out["hbm_gbytes_per_s"] = gpu.hbm_gbytes_per_s;
  out["bf16_dense_tflops"] = optional_json<Json>(gpu.bf16_dense_tflops);
  out["fp16_dense_tflops"] = optional_json<Json>(gpu.fp16_dense_tflops);
  out["fp8_dense_tflops"] = optional_json<Json>(gpu.fp8_dense_tflops);
  out["fp4_dense_tflops"] = optional_json<Json>(gpu.fp4_dense_tflops);
  out["nvlink_gbytes_per_s"] = optional_json<Json>(gpu.nvlink_gbytes_per_s);
  out["nvlink_generation"] = optional_json<Json>(gpu.nvlink_generation);
  out["nvlink_domain_max_gpus"] = optional_json<Json>(gpu.nvlink_domain_max_gpus);
  out["pcie_gen"] = optional_json<Json>(gpu.pcie_gen);
  out["tdp_w"] = optional_json<Json>(gpu.tdp_w);
  out["sources"] = sources_json<Json>(gpu.sources);
}

template <typename Json>
void write_instance(Json& out, const Instance& instance) {
  out = Json::object();
  out["id"] = instance.id;
  out["provider"] = instance.provider;
  out["name"] = instance.name;
  out["gpu_model"] = instance.gpu_model;
  out["gpu_count"] = instance.gpu_count;
  out["gpu_memory_gb"] = instance.gpu_memory_gb;
  out["vcpus"] = optional_json<Json>(instance.vcpus);
  out["memory_gib"] = optional_json<Json>(instance.memory_gib);
  out["intra_node_fabric"] = std::string(to_string(instance.intra_node_fabric));
  out["nvlink_gbytes_per_s"] = optional_json<Json>(instance.nvlink_gbytes_per_s);
  out["nvlink_domain_gpus"] = optional_json<Json>(instance.nvlink_domain_gpus);
  out["network_type"] = std::string(to_string(instance.network_type));
  out["network_gbits_per_s"] = optional_json<Json>(instance.network_gbits_per_s);
  out["network_nics"] = optional_json<Json>(instance.network_nics);
  out["network_nic_gbits_per_s"] = optional_json<Json>(instance.network_nic_gbits_per_s);
  out["frontend_network_gbits_per_s"] = optional_json<Json>(instance.frontend_network_gbits_per_s);
  out["gpudirect_rdma"] = optional_json<Json>(instance.gpudirect_rdma);
  out["price_usd_per_hour"] = optional_json<Json>(instance.price_usd_per_hour);
  out["price_usd_per_gpu_hour"] = optional_json<Json>(instance.price_usd_per_gpu_hour());
  out["price_region"] = optional_json<Json>(instance.price_region);
  out["price_as_of"] = optional_json<Json>(instance.price_as_of);
  out["spot_price_usd_per_hour"] = optional_json<Json>(instance.spot_price_usd_per_hour);
  out["regions"] = instance.regions;
  out["sources"] = sources_json<Json>(instance.sources);
}

}  // namespace

std::string_view to_string(Fabric fabric) noexcept { return enum_name(kFabricNames, fabric); }
std::string_view to_string(NetworkType type) noexcept { return enum_name(kNetworkNames, type); }
std::string_view to_string(Architecture architecture) noexcept { return enum_name(kArchitectureNames, architecture); }

Fabric parse_fabric(std::string_view text, std::string_view field) { return parse_enum(kFabricNames, text, field); }
NetworkType parse_network_type(std::string_view text, std::string_view field) {
  return parse_enum(kNetworkNames, text, field);
}
Architecture parse_architecture(std::string_view text, std::string_view field) {
  return parse_enum(kArchitectureNames, text, field);
}

std::vector<std::string_view> fabric_names() { return enum_names(kFabricNames); }
std::vector<std::string_view> network_type_names() { return enum_names(kNetworkNames); }
std::vector<std::string_view> architecture_names() { return enum_names(kArchitectureNames); }

const std::vector<std::string>& known_providers() {
  // The provider enum of data/schema/catalog.schema.json: the large clouds, the GPU clouds, and the
  // smaller ones allowed.
  static const std::vector<std::string> providers{
      "aws",    "gcp",    "azure",      "oci",      "lambda", "coreweave",  "runpod",   "paperspace", "vultr",
      "nebius", "crusoe", "fluidstack", "together", "ibm",    "hyperstack", "scaleway", "ovhcloud",   "digitalocean",
  };
  return providers;
}

std::optional<double> Instance::price_usd_per_gpu_hour() const {
  if (!price_usd_per_hour || gpu_count <= 0) return std::nullopt;
  return *price_usd_per_hour / gpu_count;
}

bool is_valid_date(std::string_view text) {
  if (text.size() != 10 || text[4] != '-' || text[7] != '-') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  }
  const int year = std::stoi(std::string(text.substr(0, 4)));
  const int month = std::stoi(std::string(text.substr(5, 2)));
  const int day = std::stoi(std::string(text.substr(8, 2)));
  if (year < 1990 || month < 1 || month > 12 || day < 1) return false;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return day <= kDays[month - 1] + ((month == 2 && leap) ? 1 : 0);
}

// Field order follows the structs in catalog.hpp, which is the contract's order (kept by
// ordered_json; nlohmann::json sorts keys alphabetically).
void to_json(nlohmann::json& out, const SourceRef& source) { write_source(out, source); }
void to_json(nlohmann::json& out, const Gpu& gpu) { write_gpu(out, gpu); }
void to_json(nlohmann::json& out, const Instance& instance) { write_instance(out, instance); }
void to_json(nlohmann::ordered_json& out, const SourceRef& source) { write_source(out, source); }
void to_json(nlohmann::ordered_json& out, const Gpu& gpu) { write_gpu(out, gpu); }
void to_json(nlohmann::ordered_json& out, const Instance& instance) { write_instance(out, instance); }

}  // namespace linkwise
