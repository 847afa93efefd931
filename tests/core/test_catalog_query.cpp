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
    CHECK(ids(filter) ==
          Ids{"azure:Standard_ND96asr_v4", "azure:Standard_ND96isr_H100_v5", "azure:Standard_ND96isr_MI300X_v5"});
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
  CHECK(ascending.front() == "azure:Standard_NC4as_T4_v3");                      // 0.526 USD/h
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
  CHECK_THROWS_MATCHES(fixture().instance("aws:nope"), Error, Catch::Matchers::Predicate<Error>([](const Error& e) {
                         return e.kind() == ErrorKind::not_found;
                       }));
  CHECK_THROWS_AS(fixture().gpu("H100"), Error);
}

TEST_CASE("ids match in any case, and an unknown id gets a suggestion", "[catalog][query][names]") {
  const Instance* upper = fixture().find_instance("LAMBDA:GPU_1X_A10");
  REQUIRE(upper != nullptr);
  CHECK(upper->id == "lambda:gpu_1x_a10");  // the catalog's spelling
  REQUIRE(fixture().find_gpu("a100-sxm4-80gb") != nullptr);
  CHECK(fixture().find_gpu("a100-sxm4-80gb")->id == "A100-SXM4-80GB");
  auto error_of = [](auto lookup) {
    try {
      lookup();
    } catch (const Error& e) {
      return e;
    }
    FAIL("no error");
    return Error(ErrorKind::internal, "");
  };
  // A typo, and the name without its provider: the closest ids, with the field and kind asked for.
  Error e = error_of([] { fixture().instance("lambda:gpu_1x_a1"); });
  CHECK(e.kind() == ErrorKind::not_found);
  CHECK(e.field() == "id");
  CHECK_THAT(e.what(), Catch::Matchers::Contains("did you mean \"lambda:gpu_1x_a10\""));
  e = error_of([] { fixture().instance("gpu_8x_h100_sxm5", ErrorKind::unknown_reference, "constraints.instances"); });
  CHECK(e.kind() == ErrorKind::unknown_reference);
  CHECK(e.field() == "constraints.instances");
  CHECK_THAT(e.what(), Catch::Matchers::StartsWith("constraints.instances: unknown instance 'gpu_8x_h100_sxm5'"));
  CHECK_THAT(e.what(), Catch::Matchers::Contains("did you mean \"lambda:gpu_8x_h100_sxm5\""));
  e = error_of([] { fixture().gpu("A100-SMX4-80GB", ErrorKind::unknown_reference, "hardware.custom.gpu_model"); });
  CHECK(e.field() == "hardware.custom.gpu_model");
  CHECK_THAT(e.what(), Catch::Matchers::Contains("did you mean \"A100-SXM4-80GB\""));
  // Far from everything: no suggestion.
  CHECK_THAT(error_of([] { fixture().instance("zzz:qqq"); }).what(), !Catch::Matchers::Contains("did you mean"));
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

namespace {

using Counts = std::map<std::string, std::size_t>;

InstanceMatches matches(const InstanceFilter& filter) { return fixture().match(filter); }

// The invalid_input a query throws, or a failed check.
Error query_error(const InstanceFilter& filter) {
  try {
    fixture().query(filter);
  } catch (const Error& e) {
    return e;
  }
  FAIL("the query was accepted");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("a filter on an unknown value says how many instances it hid", "[catalog][query][unknown]") {
  InstanceFilter filter;
  SECTION("rdma: every instance without a gpudirect_rdma value") {
    filter.rdma = true;
    const InstanceMatches found = matches(filter);
    CHECK(found.instances.size() == 3);
    CHECK(found.excluded_unknown == Counts{{"gpudirect_rdma", 6}});  // 5 Lambda plans and oci:BM.GPU.H100.8
    CHECK(found.excluded_unknown_instances == 6);
  }
  SECTION("an instance a known field already excludes is not counted") {
    filter.rdma = true;
    filter.min_gpus = 8;  // the 1-GPU Lambda plans fail on gpu_count, whatever their RDMA
    CHECK(matches(filter).excluded_unknown == Counts{{"gpudirect_rdma", 3}});
    filter.provider = "azure";  // Azure states RDMA for every record
    CHECK(matches(filter).excluded_unknown.empty());
  }
  SECTION("an instance lacking two filtered fields counts under both, and once in the total") {
    filter.rdma = true;
    filter.max_price = 100;
    const InstanceMatches found = matches(filter);
    CHECK(found.instances.size() == 2);
    // oci lacks both; the MI300X record only its price; the Lambda plans only RDMA.
    CHECK(found.excluded_unknown == Counts{{"gpudirect_rdma", 6}, {"price_usd_per_hour", 2}});
    CHECK(found.excluded_unknown_instances == 7);
  }
  SECTION("network, NVLink and region") {
    filter.min_network_gbits_per_s = 1000;
    CHECK(matches(filter).excluded_unknown == Counts{{"network_gbits_per_s", 6}});
    filter = {};
    // Null NVLink is "none" on PCIe instances; only the Infinity Fabric record lacks a figure.
    filter.min_nvlink_gbytes_per_s = 600;
    CHECK(matches(filter).excluded_unknown == Counts{{"nvlink_gbytes_per_s", 1}});
    filter = {};
    filter.region = "westus2";  // Lambda's "all regions" price region is known (and not westus2)
    CHECK(matches(filter).excluded_unknown == Counts{{"regions", 2}});
  }
  SECTION("filters on fields that are never null hide nothing for want of a value") {
    filter.gpu = "H100";
    filter.min_gpus = 8;
    filter.fabric = Fabric::nvswitch;
    const InstanceMatches found = matches(filter);
    CHECK(found.excluded_unknown.empty());
    CHECK(found.excluded_unknown_instances == 0);
    CHECK(found.instances.size() == 3);
  }
  SECTION("query() is match().instances, and instance_matches never matches an unknown") {
    filter.rdma = false;
    CHECK(ids(filter).size() == matches(filter).instances.size());
    CHECK_FALSE(instance_matches(fixture().instance("oci:BM.GPU.H100.8"), filter));
    CHECK(instance_matches(fixture().instance("azure:Standard_NC4as_T4_v3"), filter));
  }
}

TEST_CASE("an unknown GPU or provider in a filter is an error with a suggestion", "[catalog][query][names]") {
  InstanceFilter filter;
  SECTION("a GPU name written without its form factor") {
    filter.gpu = "A100-40GB";
    const Error e = query_error(filter);
    CHECK(e.kind() == ErrorKind::invalid_input);
    CHECK(e.field() == "gpu");
    CHECK_THAT(e.what(), Catch::Matchers::Contains("no GPU id or family \"A100-40GB\""));
    CHECK_THAT(e.what(), Catch::Matchers::Contains("did you mean \"A100-SXM4-40GB\"?"));
    CHECK_THAT(e.what(), Catch::Matchers::Contains("families: T4, A10, A10G, A100, H100, MI300X"));
  }
  SECTION("a leading part that stops inside a token") {
    filter.gpu = "H100-SXM";
    CHECK_THAT(query_error(filter).what(), Catch::Matchers::Contains("did you mean \"H100-SXM5-80GB\"?"));
    filter.gpu = "H10";
    CHECK_THAT(query_error(filter).what(), Catch::Matchers::Contains("did you mean \"H100\"?"));
  }
  SECTION("a typo") {
    filter.gpu = "A100-SMX4-40GB";
    CHECK_THAT(query_error(filter).what(), Catch::Matchers::Contains("did you mean \"A100-SXM4-40GB\"?"));
    filter.gpu = "MI300";
    CHECK_THAT(query_error(filter).what(), Catch::Matchers::Contains("did you mean \"MI300X\"?"));
  }
  SECTION("a GPU the catalog lacks: no far-fetched suggestion") {
    filter.gpu = "B200";
    const Error e = query_error(filter);
    CHECK(e.field() == "gpu");
    CHECK_THAT(e.what(), !Catch::Matchers::Contains("did you mean"));
  }
  SECTION("a provider") {
    filter.provider = "gpc";
    Error e = query_error(filter);
    CHECK(e.field() == "provider");
    CHECK_THAT(e.what(), Catch::Matchers::Contains("unknown provider \"gpc\"; did you mean \"gcp\"?"));
    filter.provider = "lamda";
    CHECK_THAT(query_error(filter).what(), Catch::Matchers::Contains("did you mean \"lambda\"?"));
    filter.provider = "amazon";
    e = query_error(filter);
    CHECK_THAT(e.what(), !Catch::Matchers::Contains("did you mean"));
    CHECK_THAT(e.what(), Catch::Matchers::Contains("known: aws, gcp, azure"));
  }
  SECTION("known names are matches, even with nothing to list") {
    filter.provider = "Azure";  // case-insensitive
    CHECK(ids(filter).size() == 7);
    filter.provider = "aws";  // a known provider this catalog has no records of
    CHECK(ids(filter).empty());
    filter = {};
    filter.gpu = "A10G";  // a GPU of gpus.json no instance of the fixture has
    CHECK(ids(filter).empty());
    filter.gpu = "h100-sxm5";  // a leading part at a '-', any case
    CHECK(ids(filter).size() == 4);
  }
}

TEST_CASE("name suggestions rank token matches, then prefixes, then small edits", "[catalog][query][names]") {
  InstanceFilter filter;
  filter.gpu = "H100-80GB";  // two H100 variants have 80 GB: both are named, the family covers none
  const std::string text = query_error(filter).what();
  CHECK_THAT(text, Catch::Matchers::Contains("did you mean \"H100-PCIE-80GB\" or \"H100-SXM5-80GB\"?"));
}

TEST_CASE("the per-GPU price is derived and sortable", "[catalog][query]") {
  const Instance& nc64 = fixture().instance("azure:Standard_NC64as_T4_v3");
  CHECK(nc64.price_usd_per_gpu_hour() == Approx(4.352 / 4));
  const auto by_gpu_price = ids({}, InstanceSort::parse("price_usd_per_gpu_hour"));
  REQUIRE(by_gpu_price.size() == 13);
  CHECK(by_gpu_price.front() == "azure:Standard_NC4as_T4_v3");  // 0.526 per GPU
  // 4 x T4 at 1.088 per GPU is cheaper per GPU than one A10 at 1.29, though dearer per instance.
  const auto position = [&](const std::string& id) {
    return std::find(by_gpu_price.begin(), by_gpu_price.end(), id) - by_gpu_price.begin();
  };
  CHECK(position("azure:Standard_NC64as_T4_v3") < position("lambda:gpu_1x_a10"));
  CHECK(by_gpu_price.back() == "oci:BM.GPU.H100.8");  // no price: last
  const auto descending = ids({}, InstanceSort::parse("-price_usd_per_gpu_hour"));
  CHECK(descending.front() == "azure:Standard_ND96isr_H100_v5");  // 12.29 per GPU
  for (const char* field :
       {"nvlink_domain_gpus", "network_nics", "network_nic_gbits_per_s", "frontend_network_gbits_per_s"}) {
    CHECK_NOTHROW(InstanceSort::parse(field));
  }
}

TEST_CASE("regions match case-insensitively, an unknown region is an error with a suggestion",
          "[catalog][query][names]") {
  InstanceFilter filter;
  filter.region = "WESTUS2";
  CHECK(ids(filter) == Ids{"azure:Standard_NC24ads_A100_v4", "azure:Standard_NC4as_T4_v3",
                           "azure:Standard_NC64as_T4_v3", "azure:Standard_ND96asr_v4"});
  filter.region = "wetsus2";  // two letters swapped
  const Error e = query_error(filter);
  CHECK(e.kind() == ErrorKind::invalid_input);
  CHECK(e.field() == "region");
  CHECK_THAT(e.what(), Catch::Matchers::Contains("\"wetsus2\""));
  CHECK_THAT(e.what(), Catch::Matchers::Contains("did you mean \"westus2\"?"));
}
