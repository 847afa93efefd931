// Catalog::load_data_dir: the valid fixture and the real data load; every kind of bad record fails
// the whole load with a message naming the file, the record and the field.
#include <catch2/catch.hpp>

#include <set>

#include "catalog_test_util.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"

using namespace linkwise;
using namespace linkwise::test;
using Catch::Matchers::Contains;
using nlohmann::ordered_json;

namespace {

Error load_error(const fs::path& data_dir) {
  try {
    Catalog::load_data_dir(data_dir);
  } catch (const Error& e) {
    return e;
  }
  FAIL("the load succeeded but should have failed");
  throw std::logic_error("unreachable");
}

// Edits one instance record of `file` and returns the load error.
Error instance_error(const std::string& file, const std::string& name, const std::function<void(ordered_json&)>& edit) {
  ScratchDir dir;
  const fs::path data = data_dir_with(dir, file, [&](ordered_json& doc) { edit(record(doc, "instances", name)); });
  return load_error(data);
}

Error gpu_error(const std::string& id, const std::function<void(ordered_json&)>& edit) {
  ScratchDir dir;
  const fs::path data = data_dir_with(dir, "gpus.json", [&](ordered_json& doc) { edit(record(doc, "gpus", id)); });
  return load_error(data);
}

void require_names(const Error& e, const std::string& file, const std::string& record_id, const std::string& field) {
  INFO(e.what());
  CHECK(e.kind() == ErrorKind::invalid_input);
  CHECK_THAT(e.what(), Contains(file));
  CHECK_THAT(e.what(), Contains("\"" + record_id + "\""));
  CHECK_THAT(e.what(), Contains("field \"" + field + "\""));
  CHECK_THAT(e.field(), Contains(field));
}

}  // namespace

TEST_CASE("the valid fixture loads completely", "[catalog][load]") {
  const Catalog catalog = Catalog::load_data_dir(valid_data_dir());
  CHECK(catalog.gpus().size() == 10);
  CHECK(catalog.instances().size() == 13);

  const Instance& nd = catalog.instance("azure:Standard_ND96isr_H100_v5");
  CHECK(nd.provider == "azure");
  CHECK(nd.name == "Standard_ND96isr_H100_v5");
  CHECK(nd.gpu_model == "H100-SXM5-80GB");
  CHECK(nd.gpu_count == 8);
  CHECK(nd.intra_node_fabric == Fabric::nvswitch);
  CHECK(nd.nvlink_gbytes_per_s == 900);
  CHECK(nd.network_type == NetworkType::infiniband);
  CHECK(nd.network_gbits_per_s == 3200);
  CHECK(nd.gpudirect_rdma == true);
  CHECK(nd.sources.contains("gpu"));
  CHECK(nd.sources.contains("interconnect"));
  CHECK(nd.sources.contains("network"));
  CHECK(nd.sources.at("price").as_of == "2026-11-30");

  const Gpu& h100 = catalog.gpu("H100-SXM5-80GB");
  CHECK(h100.memory_gb == 80);
  CHECK(h100.nvlink_gbytes_per_s == 900);
  CHECK(h100.sources.contains("spec"));
}

TEST_CASE("the repository's data/ loads", "[catalog][load][data]") {
  const Catalog catalog = Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  CHECK(catalog.gpus().size() >= 15);
  // The bar: at least 60 instance types from at least 5 providers.
  CHECK(catalog.instances().size() >= 60);
  std::set<std::string> providers;
  for (const Instance& instance : catalog.instances()) providers.insert(instance.provider);
  CHECK(providers.size() >= 5);
  for (const Instance& instance : catalog.instances()) {
    INFO(instance.id);
    CHECK(instance.sources.contains("gpu"));
    CHECK(instance.sources.contains("interconnect"));
    CHECK(instance.sources.contains("network"));
  }
}

TEST_CASE("a wrong JSON type names file, record and field", "[catalog][load][bad]") {
  const Error e = instance_error("instances/azure.json", "Standard_ND96asr_v4",
                                 [](ordered_json& r) { r["gpudirect_rdma"] = "yes"; });
  require_names(e, "instances/azure.json", "azure:Standard_ND96asr_v4", "gpudirect_rdma");
  CHECK_THAT(e.what(), Contains("expected true, false or null, got the string \"yes\""));

  const Error count =
      instance_error("instances/azure.json", "Standard_ND96asr_v4", [](ordered_json& r) { r["gpu_count"] = 8.5; });
  require_names(count, "instances/azure.json", "azure:Standard_ND96asr_v4", "gpu_count");
  CHECK_THAT(count.what(), Contains("expected an integer"));
}

TEST_CASE("a unit written into a number is named as such", "[catalog][load][bad]") {
  const Error e = instance_error("instances/azure.json", "Standard_ND96isr_H100_v5",
                                 [](ordered_json& r) { r["nvlink_gbytes_per_s"] = "900 GB/s"; });
  require_names(e, "instances/azure.json", "azure:Standard_ND96isr_H100_v5", "nvlink_gbytes_per_s");
  CHECK_THAT(e.what(), Contains("expected a number in GB/s, got the string \"900 GB/s\""));

  const Error network = instance_error("instances/azure.json", "Standard_ND96isr_H100_v5",
                                       [](ordered_json& r) { r["network_gbits_per_s"] = "3200 Gbps"; });
  CHECK_THAT(network.what(), Contains("expected a number in Gbit/s, got the string \"3200 Gbps\""));

  const Error gpu = gpu_error("T4", [](ordered_json& r) { r["memory_gb"] = "16 GB"; });
  require_names(gpu, "gpus.json", "T4", "memory_gb");
  CHECK_THAT(gpu.what(), Contains("expected a number in GB, got the string \"16 GB\""));
}

TEST_CASE("an unknown GPU id fails the load", "[catalog][load][bad]") {
  const Error e =
      instance_error("instances/lambda.json", "gpu_8x_h100_sxm5", [](ordered_json& r) { r["gpu_model"] = "H100"; });
  require_names(e, "instances/lambda.json", "lambda:gpu_8x_h100_sxm5", "gpu_model");
  CHECK_THAT(e.what(), Contains("unknown GPU id \"H100\""));
  CHECK_THAT(e.what(), Contains("\"H100-SXM5-80GB\""));  // the known ids are listed
}

TEST_CASE("a missing required field fails the load", "[catalog][load][bad]") {
  const Error e =
      instance_error("instances/azure.json", "Standard_NC4as_T4_v3", [](ordered_json& r) { r.erase("vcpus"); });
  require_names(e, "instances/azure.json", "azure:Standard_NC4as_T4_v3", "vcpus");
  CHECK_THAT(e.what(), Contains("missing required field"));

  const Error gpu = gpu_error("A10", [](ordered_json& r) { r.erase("tdp_w"); });
  require_names(gpu, "gpus.json", "A10", "tdp_w");
}

TEST_CASE("duplicate ids fail the load", "[catalog][load][bad]") {
  ScratchDir dir;
  const fs::path data = data_dir_with(dir, "instances/lambda.json", [](ordered_json& doc) {
    doc["instances"].push_back(record(doc, "instances", "gpu_1x_a10"));
  });
  const Error e = load_error(data);
  require_names(e, "instances/lambda.json", "lambda:gpu_1x_a10", "name");
  CHECK_THAT(e.what(), Contains("duplicate id \"lambda:gpu_1x_a10\""));

  ScratchDir gpu_dir;
  const fs::path gpu_data =
      data_dir_with(gpu_dir, "gpus.json", [](ordered_json& doc) { doc["gpus"].push_back(record(doc, "gpus", "T4")); });
  const Error gpu = load_error(gpu_data);
  require_names(gpu, "gpus.json", "T4", "id");
  CHECK_THAT(gpu.what(), Contains("duplicate id"));
}

TEST_CASE("negative numbers fail the load", "[catalog][load][bad]") {
  const Error e = instance_error("instances/azure.json", "Standard_ND96asr_v4",
                                 [](ordered_json& r) { r["network_gbits_per_s"] = -1600; });
  require_names(e, "instances/azure.json", "azure:Standard_ND96asr_v4", "network_gbits_per_s");
  CHECK_THAT(e.what(), Contains("negative"));

  const Error price = instance_error("instances/azure.json", "Standard_ND96asr_v4",
                                     [](ordered_json& r) { r["price_usd_per_hour"] = -1; });
  require_names(price, "instances/azure.json", "azure:Standard_ND96asr_v4", "price_usd_per_hour");

  const Error hbm = gpu_error("H100-SXM5-80GB", [](ordered_json& r) { r["hbm_gbytes_per_s"] = -3350; });
  require_names(hbm, "gpus.json", "H100-SXM5-80GB", "hbm_gbytes_per_s");
}

TEST_CASE("an unknown provider fails the load", "[catalog][load][bad]") {
  ScratchDir dir;
  const fs::path data = data_dir_with(dir, "instances/oci.json", [](ordered_json& doc) { doc["provider"] = "oracle"; });
  const Error e = load_error(data);
  CHECK(e.kind() == ErrorKind::invalid_input);
  CHECK_THAT(e.what(), Contains("instances/oci.json"));
  CHECK_THAT(e.what(), Contains("field \"provider\""));
  CHECK_THAT(e.what(), Contains("unknown provider \"oracle\""));
  CHECK_THAT(e.what(), Contains("\"oci\""));  // the known ones are listed
}

TEST_CASE("a provider file must be named after its provider", "[catalog][load][bad]") {
  ScratchDir dir;
  const fs::path data = data_dir_with(dir, "instances/oci.json", [](ordered_json& doc) { doc["provider"] = "lambda"; });
  const Error e = load_error(data);
  CHECK_THAT(e.what(), Contains("instances/oci.json"));
  CHECK_THAT(e.what(), Contains("must be named \"lambda.json\""));
}

TEST_CASE("bad dates fail the load", "[catalog][load][bad]") {
  const Error e = instance_error("instances/azure.json", "Standard_NC4as_T4_v3",
                                 [](ordered_json& r) { r["price_as_of"] = "2026-02-30"; });
  require_names(e, "instances/azure.json", "azure:Standard_NC4as_T4_v3", "price_as_of");
  CHECK_THAT(e.what(), Contains("expected a date YYYY-MM-DD, got \"2026-02-30\""));

  const Error source = instance_error("instances/azure.json", "Standard_NC4as_T4_v3",
                                      [](ordered_json& r) { r["sources"]["network"]["as_of"] = "June 2025"; });
  require_names(source, "instances/azure.json", "azure:Standard_NC4as_T4_v3", "sources.network.as_of");
}

TEST_CASE("unknown enum values list the accepted ones", "[catalog][load][bad]") {
  const Error e = instance_error("instances/azure.json", "Standard_ND96asr_v4",
                                 [](ordered_json& r) { r["intra_node_fabric"] = "NVLink"; });
  require_names(e, "instances/azure.json", "azure:Standard_ND96asr_v4", "intra_node_fabric");
  CHECK_THAT(e.what(), Contains("unknown value \"NVLink\"; accepted: \"nvswitch\", \"nvlink\", \"pcie\""));

  const Error network =
      instance_error("instances/azure.json", "Standard_ND96asr_v4", [](ordered_json& r) { r["network_type"] = "ib"; });
  CHECK_THAT(network.what(), Contains("\"infiniband\""));

  const Error vendor = gpu_error("T4", [](ordered_json& r) { r["vendor"] = "NVIDIA"; });
  require_names(vendor, "gpus.json", "T4", "vendor");
  CHECK_THAT(vendor.what(), Contains("accepted: \"nvidia\", \"amd\""));
}

TEST_CASE("missing source groups fail the load", "[catalog][load][bad]") {
  const Error network = instance_error("instances/azure.json", "Standard_ND96asr_v4",
                                       [](ordered_json& r) { r["sources"].erase("network"); });
  require_names(network, "instances/azure.json", "azure:Standard_ND96asr_v4", "sources");
  CHECK_THAT(network.what(), Contains("missing required source group \"network\""));

  // A price needs a "price" source.
  const Error price = instance_error("instances/azure.json", "Standard_ND96asr_v4",
                                     [](ordered_json& r) { r["sources"].erase("price"); });
  CHECK_THAT(price.what(), Contains("missing required source group \"price\""));

  const Error spec = gpu_error("T4", [](ordered_json& r) { r["sources"].erase("spec"); });
  require_names(spec, "gpus.json", "T4", "sources");
  CHECK_THAT(spec.what(), Contains("\"spec\""));
}

TEST_CASE("unknown keys (typos) fail the load with a suggestion", "[catalog][load][bad]") {
  const Error e = instance_error("instances/azure.json", "Standard_ND96asr_v4",
                                 [](ordered_json& r) { r["netwrok_gbits_per_s"] = 1600; });
  require_names(e, "instances/azure.json", "azure:Standard_ND96asr_v4", "netwrok_gbits_per_s");
  CHECK_THAT(e.what(), Contains("unknown field (did you mean \"network_gbits_per_s\"?)"));

  const Error source = instance_error("instances/azure.json", "Standard_ND96asr_v4",
                                      [](ordered_json& r) { r["sources"]["gpu"]["date"] = "2024-01-01"; });
  require_names(source, "instances/azure.json", "azure:Standard_ND96asr_v4", "sources.gpu.date");
}

TEST_CASE("cross-field checks catch transcription mistakes", "[catalog][load][bad]") {
  SECTION("GPU memory differs from the GPU model's") {
    const Error e =
        instance_error("instances/azure.json", "Standard_ND96asr_v4", [](ordered_json& r) { r["gpu_memory_gb"] = 80; });
    require_names(e, "instances/azure.json", "azure:Standard_ND96asr_v4", "gpu_memory_gb");
    CHECK_THAT(e.what(), Contains("\"A100-SXM4-40GB\" has 40 GB"));
  }
  SECTION("fabric none on a multi-GPU instance") {
    const Error e = instance_error("instances/azure.json", "Standard_NC64as_T4_v3",
                                   [](ordered_json& r) { r["intra_node_fabric"] = "none"; });
    require_names(e, "instances/azure.json", "azure:Standard_NC64as_T4_v3", "intra_node_fabric");
  }
  SECTION("a fabric on a single-GPU instance") {
    const Error e = instance_error("instances/azure.json", "Standard_NC4as_T4_v3",
                                   [](ordered_json& r) { r["intra_node_fabric"] = "pcie"; });
    require_names(e, "instances/azure.json", "azure:Standard_NC4as_T4_v3", "intra_node_fabric");
  }
  SECTION("NVLink bandwidth on a PCIe instance") {
    const Error e = instance_error("instances/azure.json", "Standard_NC64as_T4_v3",
                                   [](ordered_json& r) { r["nvlink_gbytes_per_s"] = 300; });
    require_names(e, "instances/azure.json", "azure:Standard_NC64as_T4_v3", "nvlink_gbytes_per_s");
  }
  SECTION("NVSwitch without its bandwidth") {
    const Error e = instance_error("instances/azure.json", "Standard_ND96asr_v4",
                                   [](ordered_json& r) { r["nvlink_gbytes_per_s"] = nullptr; });
    require_names(e, "instances/azure.json", "azure:Standard_ND96asr_v4", "nvlink_gbytes_per_s");
  }
  SECTION("NVLink above the GPU's own figure (a doubled both-direction figure)") {
    const Error e = instance_error("instances/azure.json", "Standard_ND96isr_H100_v5",
                                   [](ordered_json& r) { r["nvlink_gbytes_per_s"] = 1800; });
    require_names(e, "instances/azure.json", "azure:Standard_ND96isr_H100_v5", "nvlink_gbytes_per_s");
    CHECK_THAT(e.what(), Contains("exceeds the 900 GB/s"));
  }
  SECTION("GPUDirect RDMA on plain Ethernet") {
    const Error e = instance_error("instances/azure.json", "Standard_NC4as_T4_v3",
                                   [](ordered_json& r) { r["gpudirect_rdma"] = true; });
    require_names(e, "instances/azure.json", "azure:Standard_NC4as_T4_v3", "gpudirect_rdma");
  }
  SECTION("a price without its date") {
    const Error e = instance_error("instances/azure.json", "Standard_NC4as_T4_v3",
                                   [](ordered_json& r) { r["price_as_of"] = nullptr; });
    require_names(e, "instances/azure.json", "azure:Standard_NC4as_T4_v3", "price_as_of");
  }
}

TEST_CASE("a file that is not JSON fails the load naming the file", "[catalog][load][bad]") {
  ScratchDir dir;
  const fs::path data = data_dir_with(dir, "instances/oci.json", [](ordered_json&) {});
  write_text(data / "instances" / "oci.json", "{\"schema_version\": 1, \"provider\": \"oci\", ");
  const Error e = load_error(data);
  CHECK(e.kind() == ErrorKind::invalid_input);
  CHECK_THAT(e.what(), Contains("instances/oci.json: not valid JSON"));
}

// Found by fuzz/catalog_load.cpp: a number past the double range escaped as nlohmann's
// out_of_range (exit 3 from `linkwise catalog check`) instead of invalid_input naming the file.
TEST_CASE("a number beyond the double range or deep nesting fails the load naming the file", "[catalog][load][bad]") {
  ScratchDir dir;
  const fs::path data = data_dir_with(dir, "instances/oci.json", [](ordered_json&) {});
  write_text(data / "gpus.json", "{\"schema_version\": 1, \"gpus\": [{\"id\": \"X\", \"memory_gb\": 1e400}]}");
  const Error range = load_error(data);
  CHECK(range.kind() == ErrorKind::invalid_input);
  CHECK_THAT(range.what(), Contains("gpus.json: a number is out of range"));
  write_text(data / "gpus.json",
             "{\"schema_version\": 1, \"gpus\": " + std::string(100000, '[') + std::string(100000, ']') + "}");
  const Error deep = load_error(data);
  CHECK(deep.kind() == ErrorKind::invalid_input);
  CHECK_THAT(deep.what(), Contains("gpus.json: JSON nested deeper than"));
}

TEST_CASE("an unsupported data schema_version fails the load", "[catalog][load][bad]") {
  ScratchDir dir;
  const fs::path data = data_dir_with(dir, "gpus.json", [](ordered_json& doc) { doc["schema_version"] = 2; });
  const Error e = load_error(data);
  CHECK_THAT(e.what(), Contains("unsupported schema_version 2"));
}

TEST_CASE("the error field is the record's path", "[catalog][load][bad]") {
  const Error e = instance_error("instances/lambda.json", "gpu_1x_a10", [](ordered_json& r) { r["gpu_count"] = 0; });
  CHECK(e.field() == "instances[4].gpu_count");
}

namespace {

// Loads the valid fixture with one instance and one GPU record edited.
Error instance_and_gpu_error(const std::string& file, const std::string& name,
                             const std::function<void(ordered_json&)>& edit_instance, const std::string& gpu_id,
                             const std::function<void(ordered_json&)>& edit_gpu) {
  ScratchDir dir;
  const fs::path data =
      data_dir_with(dir, file, [&](ordered_json& doc) { edit_instance(record(doc, "instances", name)); });
  ordered_json gpus = read_json(data / "gpus.json");
  edit_gpu(record(gpus, "gpus", gpu_id));
  write_json(data / "gpus.json", gpus);
  return load_error(data);
}

Catalog load_with(const std::string& file, const std::string& name, const std::function<void(ordered_json&)>& edit) {
  ScratchDir dir;
  return Catalog::load_data_dir(
      data_dir_with(dir, file, [&](ordered_json& doc) { edit(record(doc, "instances", name)); }));
}

}  // namespace

TEST_CASE("the fabric's NICs, front end and NVLink domain are read", "[catalog][load]") {
  const Catalog catalog = load_with("instances/azure.json", "Standard_ND96isr_H100_v5", [](ordered_json& r) {
    r["nvlink_domain_gpus"] = 8;
    r["network_nics"] = 8;
    r["network_nic_gbits_per_s"] = 400;
    r["frontend_network_gbits_per_s"] = 100;
  });
  const Instance& nd = catalog.instance("azure:Standard_ND96isr_H100_v5");
  CHECK(nd.nvlink_domain_gpus == 8);
  CHECK(nd.network_nics == 8);
  CHECK(nd.network_nic_gbits_per_s == 400);
  CHECK(nd.frontend_network_gbits_per_s == 100);
  CHECK(nd.price_usd_per_gpu_hour() == Approx(98.32 / 8));
  // Null is always accepted: the fixture's other records carry every new field as null.
  const Instance& nd_a100 = catalog.instance("azure:Standard_ND96asr_v4");
  CHECK_FALSE(nd_a100.nvlink_domain_gpus);
  CHECK_FALSE(nd_a100.network_nics);
  CHECK_FALSE(catalog.instance("oci:BM.GPU.H100.8").price_usd_per_gpu_hour());  // no price, no per-GPU price

  ScratchDir dir;
  const fs::path data = data_dir_with(dir, "gpus.json", [](ordered_json& doc) {
    ordered_json& mi300x = record(doc, "gpus", "MI300X");
    mi300x["architecture"] = "cdna4";
    mi300x["fp4_dense_tflops"] = 2300;
    mi300x["nvlink_domain_max_gpus"] = 8;
  });
  const Gpu& gpu = Catalog::load_data_dir(data).gpu("MI300X");
  CHECK(gpu.architecture == Architecture::cdna4);
  CHECK(gpu.fp4_dense_tflops == 2300);
  CHECK(gpu.nvlink_domain_max_gpus == 8);
}

TEST_CASE("NIC count x NIC speed must equal the GPU fabric", "[catalog][load][bad]") {
  SECTION("a mismatch names the field and both figures") {
    const Error e = instance_error("instances/azure.json", "Standard_ND96isr_H100_v5", [](ordered_json& r) {
      r["network_nics"] = 8;
      r["network_nic_gbits_per_s"] = 200;  // 1600, but the record says 3200
    });
    require_names(e, "instances/azure.json", "azure:Standard_ND96isr_H100_v5", "network_nic_gbits_per_s");
    CHECK_THAT(e.what(), Contains("8 NICs x 200 Gbit/s = 1600 Gbit/s, but network_gbits_per_s is 3200"));
  }
  SECTION("the host NICs added into the fabric figure (GCP's 3,600 = 3,200 + 400)") {
    const Error e = instance_error("instances/azure.json", "Standard_ND96isr_H100_v5", [](ordered_json& r) {
      r["network_gbits_per_s"] = 3600;
      r["network_nics"] = 8;
      r["network_nic_gbits_per_s"] = 400;
    });
    require_names(e, "instances/azure.json", "azure:Standard_ND96isr_H100_v5", "network_nic_gbits_per_s");
  }
  SECTION("a product that agrees, or any of the three unknown, loads") {
    CHECK_NOTHROW(load_with("instances/azure.json", "Standard_ND96isr_H100_v5", [](ordered_json& r) {
      r["network_nics"] = 8;
      r["network_nic_gbits_per_s"] = 400;
    }));
    CHECK_NOTHROW(load_with("instances/azure.json", "Standard_ND96isr_H100_v5", [](ordered_json& r) {
      r["network_nics"] = 16;  // the per-NIC speed is unknown: nothing to compare
    }));
    CHECK_NOTHROW(load_with("instances/oci.json", "BM.GPU.H100.8", [](ordered_json& r) {
      r["network_nics"] = 8;  // the fabric total is unknown
      r["network_nic_gbits_per_s"] = 400;
    }));
  }
  SECTION("a NIC count is a positive integer") {
    const Error e = instance_error("instances/azure.json", "Standard_ND96isr_H100_v5",
                                   [](ordered_json& r) { r["network_nics"] = 0; });
    require_names(e, "instances/azure.json", "azure:Standard_ND96isr_H100_v5", "network_nics");
  }
}

TEST_CASE("the NVLink domain agrees with the fabric, the GPU count and the GPU's largest domain",
          "[catalog][load][bad]") {
  SECTION("pcie: a GPU reaches only itself") {
    const Error e = instance_error("instances/azure.json", "Standard_NC64as_T4_v3",
                                   [](ordered_json& r) { r["nvlink_domain_gpus"] = 4; });
    require_names(e, "instances/azure.json", "azure:Standard_NC64as_T4_v3", "nvlink_domain_gpus");
    CHECK_THAT(e.what(), Contains("has no NVLink"));
    CHECK_NOTHROW(load_with("instances/azure.json", "Standard_NC64as_T4_v3",
                            [](ordered_json& r) { r["nvlink_domain_gpus"] = 1; }));
  }
  SECTION("none (one GPU): 1") {
    const Error e = instance_error("instances/azure.json", "Standard_NC4as_T4_v3",
                                   [](ordered_json& r) { r["nvlink_domain_gpus"] = 2; });
    require_names(e, "instances/azure.json", "azure:Standard_NC4as_T4_v3", "nvlink_domain_gpus");
  }
  SECTION("nvswitch: at least gpu_count") {
    const Error e = instance_error("instances/azure.json", "Standard_ND96asr_v4",
                                   [](ordered_json& r) { r["nvlink_domain_gpus"] = 4; });
    require_names(e, "instances/azure.json", "azure:Standard_ND96asr_v4", "nvlink_domain_gpus");
    CHECK_THAT(e.what(), Contains("at least gpu_count (8)"));
    CHECK_NOTHROW(
        load_with("instances/azure.json", "Standard_ND96asr_v4", [](ordered_json& r) { r["nvlink_domain_gpus"] = 8; }));
  }
  SECTION("beyond the instance only where the GPU's nvlink_domain_max_gpus is known") {
    const Error e = instance_error("instances/azure.json", "Standard_ND96isr_H100_v5",
                                   [](ordered_json& r) { r["nvlink_domain_gpus"] = 72; });
    require_names(e, "instances/azure.json", "azure:Standard_ND96isr_H100_v5", "nvlink_domain_gpus");
    CHECK_THAT(e.what(), Contains("no nvlink_domain_max_gpus"));
  }
  SECTION("beyond the instance: whole instances") {
    const Error e = instance_and_gpu_error(
        "instances/azure.json", "Standard_ND96isr_H100_v5", [](ordered_json& r) { r["nvlink_domain_gpus"] = 36; },
        "H100-SXM5-80GB", [](ordered_json& g) { g["nvlink_domain_max_gpus"] = 72; });
    require_names(e, "instances/azure.json", "azure:Standard_ND96isr_H100_v5", "nvlink_domain_gpus");
    CHECK_THAT(e.what(), Contains("not a multiple of its 8 GPUs"));
  }
  SECTION("never above the GPU's largest domain") {
    const Error e = instance_and_gpu_error(
        "instances/azure.json", "Standard_ND96isr_H100_v5", [](ordered_json& r) { r["nvlink_domain_gpus"] = 72; },
        "H100-SXM5-80GB", [](ordered_json& g) { g["nvlink_domain_max_gpus"] = 8; });
    require_names(e, "instances/azure.json", "azure:Standard_ND96isr_H100_v5", "nvlink_domain_gpus");
    CHECK_THAT(e.what(), Contains("above the 8 GPUs of GPU \"H100-SXM5-80GB\"'s largest NVLink domain"));
  }
  SECTION("a rack-scale domain the GPU allows loads") {
    ScratchDir dir;
    const fs::path data = data_dir_with(dir, "instances/azure.json", [](ordered_json& doc) {
      record(doc, "instances", "Standard_ND96isr_H100_v5")["nvlink_domain_gpus"] = 72;
    });
    ordered_json gpus = read_json(data / "gpus.json");
    record(gpus, "gpus", "H100-SXM5-80GB")["nvlink_domain_max_gpus"] = 72;  // as GB200 NVL72 states it
    write_json(data / "gpus.json", gpus);
    CHECK(Catalog::load_data_dir(data).instance("azure:Standard_ND96isr_H100_v5").nvlink_domain_gpus == 72);
  }
  SECTION("infinity-fabric links a GPU to others") {
    const Error e = instance_error("instances/azure.json", "Standard_ND96isr_MI300X_v5",
                                   [](ordered_json& r) { r["nvlink_domain_gpus"] = 1; });
    require_names(e, "instances/azure.json", "azure:Standard_ND96isr_MI300X_v5", "nvlink_domain_gpus");
  }
  SECTION("an NVIDIA GPU without NVLink has no larger domain") {
    const Error e = gpu_error("T4", [](ordered_json& r) { r["nvlink_domain_max_gpus"] = 8; });
    require_names(e, "gpus.json", "T4", "nvlink_domain_max_gpus");
  }
}

TEST_CASE("a front-end figure needs a separate GPU fabric", "[catalog][load][bad]") {
  SECTION("no fabric figure to stand beside") {
    const Error e = instance_error("instances/oci.json", "BM.GPU.H100.8",
                                   [](ordered_json& r) { r["frontend_network_gbits_per_s"] = 100; });
    require_names(e, "instances/oci.json", "oci:BM.GPU.H100.8", "frontend_network_gbits_per_s");
    CHECK_THAT(e.what(), Contains("needs network_gbits_per_s"));
  }
  SECTION("plain ethernet without RDMA has no separate fabric") {
    const Error e = instance_error("instances/azure.json", "Standard_NC24ads_A100_v4",
                                   [](ordered_json& r) { r["frontend_network_gbits_per_s"] = 10; });
    require_names(e, "instances/azure.json", "azure:Standard_NC24ads_A100_v4", "frontend_network_gbits_per_s");
    CHECK_THAT(e.what(), Contains("no separate GPU fabric"));
  }
  SECTION("beside an InfiniBand fabric it loads") {
    CHECK_NOTHROW(load_with("instances/azure.json", "Standard_ND96isr_H100_v5",
                            [](ordered_json& r) { r["frontend_network_gbits_per_s"] = 100; }));
  }
}

TEST_CASE("a derived output field pasted into the data is refused", "[catalog][load][bad]") {
  const Error e = instance_error("instances/azure.json", "Standard_NC4as_T4_v3",
                                 [](ordered_json& r) { r["price_usd_per_gpu_hour"] = 0.526; });
  require_names(e, "instances/azure.json", "azure:Standard_NC4as_T4_v3", "price_usd_per_gpu_hour");
  CHECK_THAT(e.what(), Contains("derived"));
}
