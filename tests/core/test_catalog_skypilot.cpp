// The RFC 4180 CSV reader and the SkyPilot vms.csv price import.
#include <catch2/catch.hpp>

#include "catalog_test_util.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/csv.hpp"
#include "linkwise/error.hpp"
#include "linkwise/skypilot_import.hpp"

using namespace linkwise;
using namespace linkwise::test;
using Catch::Matchers::Contains;

namespace {

const fs::path kLambdaCsv = catalog_fixtures() / "skypilot" / "lambda-vms-excerpt.csv";
const fs::path kAzureCsv = catalog_fixtures() / "skypilot" / "azure-order-test-input.csv";

const Catalog& fixture() {
  static const Catalog catalog = Catalog::load_data_dir(valid_data_dir());
  return catalog;
}

SkyPilotImportReport plan(const fs::path& csv, const std::string& provider) {
  return plan_skypilot_import(fixture(), read_text(csv), csv.filename().string(),
                              SkyPilotImportOptions{provider, "2026-11-30", ""});
}

const InstancePriceChange& change_of(const SkyPilotImportReport& report, const std::string& id) {
  for (const auto& change : report.changes) {
    if (change.instance_id == id) return change;
  }
  throw std::runtime_error("no change for " + id);
}

const SkippedRow& skipped_of(const SkyPilotImportReport& report, const std::string& type) {
  for (const auto& row : report.skipped) {
    if (row.instance_type == type) return row;
  }
  throw std::runtime_error("no skipped row for " + type);
}

}  // namespace

TEST_CASE("CSV: quoted fields hold commas, doubled quotes and line breaks", "[catalog][csv]") {
  const CsvTable table = parse_csv("a,b,c\r\n1,\"x, y\",\"say \"\"hi\"\"\"\n2,\"two\nlines\",\n\n3,,z", "t.csv");
  REQUIRE(table.header == std::vector<std::string>{"a", "b", "c"});
  REQUIRE(table.rows.size() == 3);
  CHECK(table.rows[0] == std::vector<std::string>{"1", "x, y", "say \"hi\""});
  CHECK(table.rows[1] == std::vector<std::string>{"2", "two\nlines", ""});
  CHECK(table.rows[2] == std::vector<std::string>{"3", "", "z"});
  CHECK(table.row_lines == std::vector<std::size_t>{2, 3, 6});
  CHECK(table.column("c") == 2u);
  CHECK_FALSE(table.column("C").has_value());
}

TEST_CASE("CSV: malformed input names the line", "[catalog][csv]") {
  CHECK_THROWS_WITH(parse_csv("a,b\n1,\"open\n", "t.csv"), Contains("t.csv:2: a quoted field is not closed"));
  CHECK_THROWS_WITH(parse_csv("a,b\n1,2\n3\n", "t.csv"),
                    Contains("t.csv:3: expected 2 fields as in the header, got 1"));
  CHECK_THROWS_WITH(parse_csv("a,b\n1,x\"y\n", "t.csv"), Contains("t.csv:2: a quote inside an unquoted field"));
  CHECK_THROWS_WITH(parse_csv("a,b\n\"1\"x,2\n", "t.csv"), Contains("t.csv:2: unexpected 'x' after a closing quote"));
  CHECK_THROWS_AS(parse_csv("", "t.csv"), Error);
}

TEST_CASE("SkyPilot import of real Lambda rows", "[catalog][skypilot]") {
  const SkyPilotImportReport report = plan(kLambdaCsv, "lambda");
  CHECK(report.rows_read == 11);
  CHECK(report.rows_used == 7);
  CHECK(report.skipped_by_reason.at(std::string(kSkipUnknownType)) == 4);
  CHECK(report.skipped.size() == 4);
  CHECK(report.instances_matched == 3);
  CHECK(report.instances_updated == 3);
  CHECK(report.instances_not_in_file == std::vector<std::string>{"lambda:gpu_1x_h100_pcie", "lambda:gpu_1x_a10"});

  const PriceUpdate& a100 = change_of(report, "lambda:gpu_8x_a100").update;
  CHECK(change_of(report, "lambda:gpu_8x_a100").old_price_usd_per_hour == 15.92);
  CHECK(a100.price_usd_per_hour == 10.32);
  // "all regions" is not a region of the file: the cheapest, ties to the first name.
  CHECK(a100.price_region == "europe-central-1");
  CHECK(a100.regions == std::vector<std::string>{"europe-central-1", "us-east-1", "us-west-1"});
  CHECK(a100.spot_price_usd_per_hour == std::nullopt);
  CHECK(a100.price_as_of == "2026-11-30");
  CHECK_THAT(a100.price_source.url, Contains("lambda-vms-excerpt.csv"));

  CHECK(change_of(report, "lambda:gpu_8x_h100_sxm5").update.price_usd_per_hour == 23.92);
  CHECK(change_of(report, "lambda:gpu_1x_h100_sxm5").update.price_usd_per_hour == 3.29);
}

TEST_CASE("SkyPilot import: columns by name, zones, kept region and every skip reason", "[catalog][skypilot]") {
  const SkyPilotImportReport report = plan(kAzureCsv, "azure");
  CHECK(report.rows_read == 11);
  CHECK(report.rows_used == 7);
  CHECK(report.skipped_by_reason.at(std::string(kSkipUnknownType)) == 1);
  CHECK(report.skipped_by_reason.at(std::string(kSkipNoPrice)) == 1);
  CHECK(report.skipped_by_reason.at(std::string(kSkipAcceleratorMismatch)) == 1);
  CHECK(report.skipped_by_reason.at(std::string(kSkipBadValue)) == 1);
  CHECK(report.instances_matched == 3);

  // The current price region (eastus) is kept; the lowest price and spot among its zones.
  const PriceUpdate& t4 = change_of(report, "azure:Standard_NC4as_T4_v3").update;
  CHECK(t4.price_region == "eastus");
  CHECK(t4.price_usd_per_hour == 0.55);
  CHECK(t4.spot_price_usd_per_hour == 0.05);
  CHECK(t4.regions == std::vector<std::string>{"eastus", "westus2"});

  // eastus has no price in the file: the cheapest region instead, without a spot price there.
  const PriceUpdate& t4x4 = change_of(report, "azure:Standard_NC64as_T4_v3").update;
  CHECK(t4x4.price_region == "centralus");
  CHECK(t4x4.price_usd_per_hour == 4.0);
  CHECK(t4x4.spot_price_usd_per_hour == std::nullopt);
  CHECK(t4x4.regions == std::vector<std::string>{"centralus", "westus3"});

  CHECK(change_of(report, "azure:Standard_ND96isr_H100_v5").update.price_region == "eastus2");

  const SkippedRow& mismatch = skipped_of(report, "Standard_ND96asr_v4");
  CHECK(mismatch.reason == kSkipAcceleratorMismatch);
  CHECK(mismatch.line == 10);
  CHECK_THAT(mismatch.detail, Contains("A100-80GB x8"));
  CHECK_THAT(mismatch.detail, Contains("A100-SXM4-40GB x8"));
  CHECK(skipped_of(report, "Standard_NC24ads_A100_v4").reason == kSkipBadValue);
}

TEST_CASE("SkyPilot import never replaces a more recent price", "[catalog][skypilot]") {
  // The fixture's Lambda prices are dated 2026-09-20; a snapshot of 2025-01-01 is older.
  const SkyPilotImportReport report = plan_skypilot_import(fixture(), read_text(kLambdaCsv), "lambda.csv",
                                                           SkyPilotImportOptions{"lambda", "2025-01-01", ""});
  CHECK(report.instances_matched == 0);
  CHECK(report.instances_kept_newer ==
        std::vector<std::string>{"lambda:gpu_8x_h100_sxm5", "lambda:gpu_1x_h100_sxm5", "lambda:gpu_8x_a100"});
}

TEST_CASE("SkyPilot import refuses bad options and files", "[catalog][skypilot]") {
  CHECK_THROWS_WITH(plan_skypilot_import(fixture(), "InstanceType,Region\nx,y\n", "f.csv",
                                         SkyPilotImportOptions{"lambda", "2026-11-30", ""}),
                    Contains("no column \"Price\""));
  CHECK_THROWS_AS(plan(kLambdaCsv, "lambdalabs"), Error);
  CHECK_THROWS_AS(plan_skypilot_import(fixture(), read_text(kLambdaCsv), "f.csv",
                                       SkyPilotImportOptions{"lambda", "30/11/2026", ""}),
                  Error);
}

TEST_CASE("SkyPilot import writes the database in one go", "[catalog][skypilot][store]") {
  ScratchDir dir;
  const fs::path db = dir.path() / "catalog.db";
  save_catalog(fixture(), db);
  const SkyPilotImportReport report =
      import_skypilot(kLambdaCsv, db, SkyPilotImportOptions{"lambda", "2026-11-30", ""});
  CHECK(report.instances_updated == 3);

  const Catalog after = Catalog::open(db);
  const Instance& a100 = after.instance("lambda:gpu_8x_a100");
  CHECK(a100.price_usd_per_hour == 10.32);
  CHECK(a100.price_region == "europe-central-1");
  CHECK(a100.price_as_of == "2026-11-30");
  CHECK(a100.regions.size() == 3);
  CHECK_THAT(a100.sources.at("price").url, Contains("lambda-vms-excerpt.csv"));
  CHECK(after.instance("lambda:gpu_1x_a10") == fixture().instance("lambda:gpu_1x_a10"));  // not in the file
  CHECK(after.instance("azure:Standard_NC4as_T4_v3") == fixture().instance("azure:Standard_NC4as_T4_v3"));

  // A second import of the same snapshot changes nothing.
  CHECK(import_skypilot(kLambdaCsv, db, SkyPilotImportOptions{"lambda", "2026-11-30", ""}).instances_updated == 0);
}

TEST_CASE("coverage lists the file's GPU instance types the catalog lacks", "[catalog][skypilot][coverage]") {
  const SkyPilotCoverageReport report =
      skypilot_coverage(fixture(), read_text(kLambdaCsv), kLambdaCsv.filename().string(), "lambda");
  CHECK(report.provider == "lambda");
  CHECK(report.rows_read == 11);
  // gpu_8x_v100 and gpu_1x_gh200 are not in the fixture; cpu_4x_general has no accelerator.
  std::vector<std::string> missing;
  for (const auto& offer : report.missing) missing.push_back(offer.instance_type);
  CHECK(missing == std::vector<std::string>{"gpu_1x_gh200", "gpu_8x_v100"});
  CHECK(report.gpu_types == report.covered + report.missing.size());
  const SkyPilotTypeOffer& v100 = report.missing.back();
  CHECK(v100.accelerator == "V100");
  CHECK(v100.accelerator_count == "8.0");
  CHECK(v100.regions == 1);
  CHECK(v100.min_price_usd_per_hour == 4.4);
  CHECK(v100.line == 4);
  CHECK(report.non_gpu_types.empty());
  // Catalog instances of the provider the excerpt does not name are listed for review.
  CHECK(std::find(report.catalog_not_in_file.begin(), report.catalog_not_in_file.end(), "lambda:gpu_1x_a10") !=
        report.catalog_not_in_file.end());
}

TEST_CASE("coverage: non-GPU accelerators, GCP's built-in GPUs and attached accelerators",
          "[catalog][skypilot][coverage]") {
  // Test input in the column orders of SkyPilot's aws and gcp files (not real prices).
  const std::string aws =
      "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,Region,AvailabilityZone\n"
      "p5.48xlarge,H100,8,192,2048,,98.32,,us-east-1,us-east-1a\n"
      "p5.48xlarge,H100,8,192,2048,,99.0,,us-west-2,us-west-2a\n"
      "inf2.xlarge,Inferentia2,1,4,16,,0.76,,us-east-1,us-east-1a\n"
      "trn1.32xlarge,Trainium,16,128,512,,21.5,,us-east-1,us-east-1a\n"
      "m5.large,,,2,8,,0.096,,us-east-1,us-east-1a\n";
  const SkyPilotCoverageReport a = skypilot_coverage(fixture(), aws, "aws.csv", "aws");
  REQUIRE(a.missing.size() == 1);
  CHECK(a.missing[0].instance_type == "p5.48xlarge");
  CHECK(a.missing[0].regions == 2);
  CHECK(a.missing[0].min_price_usd_per_hour == 98.32);
  CHECK(a.non_gpu_types == std::vector<std::string>{"inf2.xlarge", "trn1.32xlarge"});

  const std::string gcp =
      "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,AvailabilityZone,Price,SpotPrice\n"
      "a3-highgpu-8g,208.0,1872.0,,,,us-central1,us-central1-a,88.25,\n"
      "n1-standard-8,8.0,30.0,,,,us-central1,us-central1-a,0.38,0.08\n"
      ",,,T4,1,,us-central1,us-central1-a,0.35,0.14\n"
      ",,,tpu-v6e-1,1,tpu-v6e-1,us-central1,us-central1-a,2.7,0.54\n";
  const SkyPilotCoverageReport g = skypilot_coverage(fixture(), gcp, "gcp.csv", "gcp");
  REQUIRE(g.missing.size() == 1);
  CHECK(g.missing[0].instance_type == "a3-highgpu-8g");
  CHECK(g.missing[0].accelerator.empty());  // the GPUs come with the machine type
  CHECK(g.attached_accelerators == std::vector<std::string>{"T4", "tpu-v6e-1"});
}

TEST_CASE("coverage refuses bad input, and reads the provider from the path", "[catalog][skypilot][coverage]") {
  CHECK_THROWS_AS(skypilot_coverage(fixture(), read_text(kLambdaCsv), "x.csv", "oracle"), Error);
  try {
    skypilot_coverage(fixture(), "InstanceType,Price,Region\np5,1,us\n", "x.csv", "aws");
    FAIL("accepted a file without AcceleratorName");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    CHECK(e.field() == "AcceleratorName");
  }
  CHECK(skypilot_provider_of("catalogs/v8/aws/vms.csv") == "aws");
  CHECK(skypilot_provider_of("/tmp/skypilot-catalog/catalogs/v7/do/vms.csv") == "digitalocean");
  CHECK_FALSE(skypilot_provider_of("catalogs/v8/kubernetes/vms.csv"));
  CHECK_FALSE(skypilot_provider_of(kLambdaCsv));  // fixtures/catalog/skypilot/...
}

TEST_CASE("SkyPilot import: nan, inf, zero and out-of-range numbers are unreadable values, never prices",
          "[catalog][skypilot]") {
  // Each row would otherwise replace a good price with NaN, infinity or free; a memory figure
  // beyond the double range in an accelerator name threw std::out_of_range (an internal error).
  const std::string header = "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,SpotPrice\n";
  for (const std::string price : {"nan", "inf", "-inf", "1e999", "0", "-3"}) {
    const std::string csv = header + "gpu_8x_h100_sxm5,H100,8,208,1800," + price + ",us-east-1,\n";
    const auto report =
        plan_skypilot_import(fixture(), csv, "test.csv", SkyPilotImportOptions{"lambda", "2026-11-30", ""});
    INFO(price);
    CHECK(report.rows_used == 0);
    REQUIRE(report.skipped.size() == 1);
    CHECK(report.skipped[0].reason == kSkipBadValue);
    CHECK(report.changes.empty());
  }
  const std::string huge =
      header + "gpu_8x_h100_sxm5,H100-" + std::string(400, '9') + "GB,8,208,1800,23.92,us-east-1,\n";
  const auto report =
      plan_skypilot_import(fixture(), huge, "test.csv", SkyPilotImportOptions{"lambda", "2026-11-30", ""});
  CHECK(report.rows_used == 1);  // no memory figure readable in the name: matched on family and count
}
