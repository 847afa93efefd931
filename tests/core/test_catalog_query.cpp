// Catalog::query: every filter of InstanceFilter, GPU family matching, and sorting with nulls last.
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>

#include "catalog_test_util.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"

using namespace linkwise;
using namespace linkwise::test;

namespace {

const Catalog& fixture() {
  static const Catalog catalog = Catalog::load_data_dir(valid_data_dir());
  return catalog;
}

std::vector<std::string> ids(const InstanceFilter& filter, const InstanceSort& sort = {}) {
  std::vector<std::string> out;
  for (const Instance* instance : fixture().query(filter, sort)) out.push_back(instance->id);
  return out;
}

using Ids = std::vector<std::string>;

}  // namespace

TEST_CASE("GPU filters match a family by its first token, or an exact id", "[catalog][query]") {
  CHECK(gpu_id_matches("H100-SXM5-80GB", "H100"));
  CHECK(gpu_id_matches("H100-PCIE-80GB", "h100"));
  CHECK(gpu_id_matches("H100-NVL-94GB", "H100"));
  CHECK(gpu_id_matches("H100-SXM5-80GB", "H100-SXM5"));
  CHECK(gpu_id_matches("H100-SXM5-80GB", "h100-sxm5-80gb"));
  CHECK(gpu_id_matches("T4", "T4"));
  CHECK_FALSE(gpu_id_matches("A100-SXM4-80GB", "A10"));
  CHECK_FALSE(gpu_id_matches("A10G", "A10"));
  CHECK_FALSE(gpu_id_matches("H100-SXM5-80GB", "H10"));
  CHECK_FALSE(gpu_id_matches("H200-SXM-141GB", "H100"));

  InstanceFilter h100;
  h100.gpu = "H100";
  CHECK(ids(h100) == Ids{"azure:Standard_NC40ads_H100_v5", "azure:Standard_ND96isr_H100_v5", "lambda:gpu_1x_h100_pcie",
                         "lambda:gpu_1x_h100_sxm5", "lambda:gpu_8x_h100_sxm5", "oci:BM.GPU.H100.8"});

  InstanceFilter a10;
  a10.gpu = "A10";
  CHECK(ids(a10) == Ids{"lambda:gpu_1x_a10"});

  InstanceFilter a100;
  a100.gpu = "a100";
  CHECK(ids(a100) == Ids{"azure:Standard_NC24ads_A100_v4", "azure:Standard_ND96asr_v4", "lambda:gpu_8x_a100"});

  InstanceFilter exact;
  exact.gpu = "H100-SXM5-80GB";
  CHECK(ids(exact).size() == 4);
}

TEST_CASE("each filter keeps exactly the matching instances", "[catalog][query]") {
  InstanceFilter filter;
  SECTION("provider") {
    filter.provider = "azure";
    CHECK(ids(filter).size() == 7);
  }
  SECTION("min GPUs") {
    filter.min_gpus = 8;
    CHECK(ids(filter) == Ids{"azure:Standard_ND96asr_v4", "azure:Standard_ND96isr_H100_v5",
                             "azure:Standard_ND96isr_MI300X_v5", "lambda:gpu_8x_a100", "lambda:gpu_8x_h100_sxm5",
                             "oci:BM.GPU.H100.8"});
  }
  SECTION("min GPU memory") {
    filter.min_gpu_memory_gb = 81;
    CHECK(ids(filter) == Ids{"azure:Standard_NC40ads_H100_v5", "azure:Standard_ND96isr_MI300X_v5"});
  }
  SECTION("fabric") {
    filter.fabric = Fabric::pcie;
    CHECK(ids(filter) == Ids{"azure:Standard_NC64as_T4_v3"});
  }
  SECTION("min NVLink (null never matches)") {
    filter.min_nvlink_gbytes_per_s = 900;
    CHECK(ids(filter) == Ids{"azure:Standard_ND96isr_H100_v5", "lambda:gpu_8x_h100_sxm5", "oci:BM.GPU.H100.8"});
  }
  SECTION("min network (null never matches)") {
    filter.min_network_gbits_per_s = 1000;
    CHECK(ids(filter) == Ids{"azure:Standard_ND96asr_v4", "azure:Standard_ND96isr_H100_v5",
                             "azure:Standard_ND96isr_MI300X_v5"});
  }
  SECTION("RDMA yes and no (unknown matches neither)") {
    filter.rdma = true;
    CHECK(ids(filter).size() == 3);
    filter.rdma = false;
    CHECK(ids(filter) == Ids{"azure:Standard_NC24ads_A100_v4", "azure:Standard_NC40ads_H100_v5",
                             "azure:Standard_NC4as_T4_v3", "azure:Standard_NC64as_T4_v3"});
  }
  SECTION("max price (no price never matches)") {
    filter.max_price = 4.3;
    CHECK(ids(filter) == Ids{"azure:Standard_NC24ads_A100_v4", "azure:Standard_NC4as_T4_v3", "lambda:gpu_1x_a10",
                             "lambda:gpu_1x_h100_pcie", "lambda:gpu_1x_h100_sxm5"});
  }
  SECTION("region: listed in regions or the price region") {
    filter.region = "westus2";
    CHECK(ids(filter) == Ids{"azure:Standard_NC24ads_A100_v4", "azure:Standard_NC4as_T4_v3",
                             "azure:Standard_NC64as_T4_v3", "azure:Standard_ND96asr_v4"});
  }
  SECTION("filters combine") {
    filter.gpu = "H100";
    filter.min_gpus = 8;
    filter.rdma = true;
    CHECK(ids(filter) == Ids{"azure:Standard_ND96isr_H100_v5"});
  }
}

TEST_CASE("sorting by a field, nulls last either way, ties by id", "[catalog][query]") {
  InstanceFilter all;
  const auto ascending = ids(all, InstanceSort::parse("price_usd_per_hour"));
  REQUIRE(ascending.size() == 13);
  CHECK(ascending.front() == "azure:Standard_NC4as_T4_v3");  // 0.526 USD/h
  CHECK(ascending[ascending.size() - 2] == "azure:Standard_ND96isr_MI300X_v5");  // nulls last, by id
  CHECK(ascending.back() == "oci:BM.GPU.H100.8");

  const auto descending = ids(all, InstanceSort::parse("-price_usd_per_hour"));
  CHECK(descending.front() == "azure:Standard_ND96isr_H100_v5");  // 98.32 USD/h
  CHECK(descending.back() == "oci:BM.GPU.H100.8");                // nulls still last

  const auto by_nvlink = ids(all, InstanceSort::parse("-nvlink_gbytes_per_s"));
  CHECK(Ids(by_nvlink.begin(), by_nvlink.begin() + 3) ==
        Ids{"azure:Standard_ND96isr_H100_v5", "lambda:gpu_8x_h100_sxm5", "oci:BM.GPU.H100.8"});

  const auto by_fabric = ids(all, InstanceSort::parse("intra_node_fabric"));
  CHECK(fixture().instance(by_fabric.front()).intra_node_fabric == Fabric::infinity_fabric);

  const auto by_id = ids(all);
  CHECK(std::is_sorted(by_id.begin(), by_id.end()));
}

TEST_CASE("an unknown sort field is refused with the accepted list", "[catalog][query]") {
  try {
    InstanceSort::parse("-price");
    FAIL("accepted an unknown sort field");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    CHECK(e.field() == "sort");
    CHECK_THAT(e.what(), Catch::Matchers::Contains("price_usd_per_hour"));
  }
  CHECK_THROWS_AS(InstanceSort::parse("sources"), Error);
}

TEST_CASE("lookups by id", "[catalog][query]") {
  CHECK(fixture().find_instance("lambda:gpu_1x_a10") != nullptr);
  CHECK(fixture().find_instance("gpu_1x_a10") == nullptr);
  CHECK_THROWS_MATCHES(fixture().instance("aws:nope"), Error,
                       Catch::Matchers::Predicate<Error>([](const Error& e) { return e.kind() == ErrorKind::not_found; }));
  CHECK_THROWS_AS(fixture().gpu("H100"), Error);
}

TEST_CASE("a filter bound below zero or not finite is refused naming the field", "[catalog][query]") {
  const auto refused_field = [](const InstanceFilter& filter) -> std::string {
    try {
      fixture().query(filter);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::invalid_input);
      CHECK_THAT(e.what(), Catch::Matchers::StartsWith(e.field() + ": expected"));
      return e.field();
    }
    return "(accepted)";
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  InstanceFilter filter;
  filter.min_gpus = -1;
  CHECK(refused_field(filter) == "min_gpus");
  filter = {};
  filter.min_gpu_memory_gb = inf;
  CHECK(refused_field(filter) == "min_gpu_memory_gb");
  filter = {};
  filter.min_nvlink_gbytes_per_s = -0.5;
  CHECK(refused_field(filter) == "min_nvlink_gbytes_per_s");
  filter = {};
  filter.min_network_gbits_per_s = nan;
  CHECK(refused_field(filter) == "min_network_gbits_per_s");
  filter = {};
  filter.max_price = -3;
  CHECK(refused_field(filter) == "max_price");
  CHECK_THROWS_AS(validate(filter), Error);

  // Zero is a bound like any other: it is accepted.
  filter = {};
  filter.min_gpus = 0;
  filter.max_price = 0;
  CHECK_NOTHROW(validate(filter));
  CHECK(ids(filter).empty());  // no instance is free
}
