// validate: verdicts on labelled synthetic reports against a catalog written here (test inputs:
// the figures mirror the spec sheets' but only the arithmetic matters).
#include <algorithm>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/probe_report.hpp"
#include "probe_test_reports.hpp"

using namespace linkwise;
using namespace linkwise::probe;

namespace {

Gpu gpu(std::string id, double memory_gb, double hbm, std::optional<double> nvlink, std::optional<int> pcie) {
  Gpu g;
  g.id = std::move(id);
  g.vendor = "nvidia";
  g.architecture = Architecture::hopper;
  g.memory_gb = memory_gb;
  g.hbm_gbytes_per_s = hbm;
  g.nvlink_gbytes_per_s = nvlink;
  g.pcie_gen = pcie;
  g.sources["spec"] = {"test input", "2026-01-01", std::nullopt};
  return g;
}

Instance instance(std::string provider, std::string name, std::string gpu_model, int count, Fabric fabric,
                  std::optional<double> nvlink, std::optional<double> network) {
  Instance i;
  i.provider = std::move(provider);
  i.name = std::move(name);
  i.id = i.provider + ":" + i.name;
  i.gpu_model = std::move(gpu_model);
  i.gpu_count = count;
  i.gpu_memory_gb = 80;
  i.intra_node_fabric = fabric;
  i.nvlink_gbytes_per_s = nvlink;
  i.network_type = NetworkType::efa;
  i.network_gbits_per_s = network;
  for (const char* group : {"gpu", "interconnect", "network"})
    i.sources[group] = {"test input", "2026-01-01", std::nullopt};
  return i;
}

std::vector<Gpu> test_gpus() {
  return {gpu("H100-SXM5-80GB", 80, 3350, 900, 5), gpu("H100-PCIE-80GB", 80, 2000, std::nullopt, 5),
          gpu("A100-SXM4-40GB", 40, 1555, 600, 4), gpu("A100-SXM4-80GB", 80, 2039, 600, 4),
          gpu("L4", 24, 300, std::nullopt, 4),     gpu("L40S", 48, 864, std::nullopt, 4)};
}

Catalog one_h100_instance() {
  return Catalog(test_gpus(), {instance("aws", "p5.48xlarge", "H100-SXM5-80GB", 8, Fabric::nvswitch, 900, 3200)});
}

Catalog two_h100_instances() {
  return Catalog(test_gpus(),
                 {instance("aws", "p5.48xlarge", "H100-SXM5-80GB", 8, Fabric::nvswitch, 900, 3200),
                  instance("lambda", "gpu_8x_h100_sxm5", "H100-SXM5-80GB", 8, Fabric::nvswitch, 900, std::nullopt)});
}

const ClaimVerdict& claim(const Validation& v, const std::string& name) {
  for (const auto& c : v.verdicts) {
    if (c.claim == name) return c;
  }
  FAIL("no verdict for " << name);
  throw;
}
// The verdict lives in `v`: a temporary Validation would be gone before the reference is read.
const ClaimVerdict& claim(Validation&& v, const std::string& name) = delete;

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a healthy synthetic H100 node meets its GPU claims", "[probe][validate]") {
  const Validation v = validate(testing::synthetic_report(), one_h100_instance(), std::nullopt);
  CHECK(v.instance.instance_id == std::optional<std::string>("aws:p5.48xlarge"));
  CHECK(v.instance.detected_by == "gpu-name-and-count");
  REQUIRE(v.verdicts.size() == 4);

  const auto& nvlink = claim(v, "nvlink");
  CHECK(nvlink.verdict == Verdict::meets);
  CHECK(nvlink.expected == Approx(450));  // 900 both directions -> 450 one direction
  CHECK(nvlink.measured == Approx(360));
  CHECK(*nvlink.efficiency == Approx(0.8));
  CHECK(contains(nvlink.measurement, "all-reduce busbw, 8 ranks"));

  CHECK(claim(v, "hbm").verdict == Verdict::meets);
  CHECK(claim(v, "hbm").measured == Approx(2900));  // the better method (SM over copy engine)
  CHECK(claim(v, "pcie").verdict == Verdict::meets);
  CHECK(claim(v, "pcie").expected == Approx(63.015).epsilon(1e-3));

  const auto& network = claim(v, "network");
  CHECK(network.verdict == Verdict::cannot_check);
  CHECK(contains(network.reason, "no measurement across nodes"));
  CHECK_FALSE(v.any_below());
}

TEST_CASE("a low busbw is below the NVLink claim", "[probe][validate]") {
  testing::SyntheticFigures figures;
  figures.allreduce_busbw = 120;  // e.g. NVLink unused, traffic over PCIe
  const Validation v = validate(testing::synthetic_report(figures), one_h100_instance(), std::nullopt);
  const auto& nvlink = claim(v, "nvlink");
  CHECK(nvlink.verdict == Verdict::below);
  CHECK(*nvlink.efficiency == Approx(120.0 / 450.0));
  CHECK(contains(nvlink.reason, "26.7% of 450.0 GB/s"));
  CHECK(v.any_below());
}

TEST_CASE("HBM and PCIe below, with the link's generation as the cause", "[probe][validate]") {
  testing::SyntheticFigures figures;
  figures.device_copy = 2000;  // 60% of 3350
  figures.h2d_pinned = 25;     // a gen-4 link under a gen-5 GPU
  figures.pcie_link_gen = 4;
  const Validation v = validate(testing::synthetic_report(figures), one_h100_instance(), std::nullopt);
  CHECK(claim(v, "hbm").verdict == Verdict::below);
  CHECK(claim(v, "pcie").verdict == Verdict::below);
  CHECK(contains(claim(v, "pcie").reason, "can only reach gen 4 x16"));
  CHECK(claim(v, "nvlink").verdict == Verdict::meets);
  CHECK(v.any_below());
}

TEST_CASE("the threshold is the boundary: exactly at it meets", "[probe][validate]") {
  testing::SyntheticFigures figures;
  figures.allreduce_busbw = 450 * 0.70;
  Thresholds thresholds;
  const Validation at = validate(testing::synthetic_report(figures), one_h100_instance(), std::nullopt, thresholds);
  CHECK(claim(at, "nvlink").verdict == Verdict::meets);
  thresholds.nvlink_busbw = 0.71;
  const Validation under = validate(testing::synthetic_report(figures), one_h100_instance(), std::nullopt, thresholds);
  CHECK(claim(under, "nvlink").verdict == Verdict::below);
}

TEST_CASE("several matching instances: shared claims are checked, differing ones cannot be", "[probe][validate]") {
  const Validation v = validate(testing::synthetic_report(), two_h100_instances(), std::nullopt);
  CHECK_FALSE(v.instance.instance_id);
  CHECK(v.instance.gpu_model == std::optional<std::string>("H100-SXM5-80GB"));
  CHECK(contains(v.instance.reason, "aws:p5.48xlarge, lambda:gpu_8x_h100_sxm5"));
  CHECK(v.instance.candidates == std::vector<std::string>{"aws:p5.48xlarge", "lambda:gpu_8x_h100_sxm5"});
  // Both claim 900 GB/s NVLink behind NVSwitch: checked without --instance.
  CHECK(claim(v, "nvlink").verdict == Verdict::meets);
  CHECK(contains(claim(v, "nvlink").reason, "shared by all 2 candidate instances"));
  // Their network figures differ (3200 Gbit/s, none): not checked.
  CHECK(claim(v, "network").verdict == Verdict::cannot_check);
  CHECK(contains(claim(v, "network").reason, "not identified"));
  CHECK(claim(v, "hbm").verdict == Verdict::meets);

  // NVLink at a quarter of the shared claim is below without --instance (the CLI exits 1).
  testing::SyntheticFigures slow;
  slow.allreduce_busbw = 120;
  const Validation below = validate(testing::synthetic_report(slow), two_h100_instances(), std::nullopt);
  CHECK(claim(below, "nvlink").verdict == Verdict::below);
  CHECK(below.any_below());
  CHECK(to_json(below)["instance"]["candidates"].size() == 2);

  // --instance settles it.
  const Validation named = validate(testing::synthetic_report(), two_h100_instances(), "lambda:gpu_8x_h100_sxm5");
  CHECK(named.instance.detected_by == "option");
  CHECK(claim(named, "nvlink").verdict == Verdict::meets);
  CHECK(claim(named, "network").verdict == Verdict::cannot_check);
  CHECK(contains(claim(named, "network").reason, "no network figure"));
}

TEST_CASE("an --instance naming nothing is not_found", "[probe][validate]") {
  try {
    validate(testing::synthetic_report(), one_h100_instance(), "aws:p9.nothing");
    FAIL("expected not_found");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::not_found);
  }
}

TEST_CASE("an --instance of another machine is refused, as plan --report refuses it", "[probe][validate]") {
  // The report measured 8 x H100; an instance of another GPU model, or of fewer GPUs, is another
  // machine: no verdict of its claims comes from this report.
  const Catalog real = Catalog::embedded();
  for (const char* other : {"aws:p5en.48xlarge", "gcp:a3-highgpu-1g"}) {
    try {
      validate(testing::synthetic_report(), real, std::string(other));
      FAIL("expected invalid_input for " << other);
    } catch (const Error& e) {
      CHECK(e.kind() == ErrorKind::invalid_input);
      CHECK(e.field() == "instance");
      CHECK(contains(e.message(), "a report measures only the machine it ran on"));
    }
  }
  CHECK(validate(testing::synthetic_report(), real, std::string("aws:p5.48xlarge")).instance.detected_by == "option");
  // A GPU the catalog cannot name is no proof of the instance's GPU either: refused, not counted.
  ProbeReport unknown = testing::synthetic_report();
  for (auto& gpu : unknown.environment.gpus) gpu.name = "Tesla Z9000";
  try {
    validate(unknown, real, std::string("aws:p5.48xlarge"));
    FAIL("expected invalid_input for an unknown GPU");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    CHECK(e.field() == "instance");
    CHECK(contains(e.message(), "\"Tesla Z9000\" is no single catalog GPU"));
  }
}

TEST_CASE("cloud metadata in the report names the instance", "[probe][validate]") {
  ProbeReport report = testing::synthetic_report();
  report.environment.cloud_provider = "aws";
  report.environment.cloud_instance_type = "p5.48xlarge";
  const Validation v = validate(report, two_h100_instances(), std::nullopt);
  CHECK(v.instance.detected_by == "cloud-metadata");
  CHECK(v.instance.instance_id == std::optional<std::string>("aws:p5.48xlarge"));
}

TEST_CASE("an all-reduce over fewer GPUs than the instance has cannot check NVLink", "[probe][validate]") {
  testing::SyntheticFigures figures;
  figures.gpus = 4;
  ProbeReport report = testing::synthetic_report(figures);
  // With the peer-copy matrix, behind NVSwitch a pair still stands in for NVLink...
  const Validation with_copies = validate(report, one_h100_instance(), "aws:p5.48xlarge");
  CHECK(contains(with_copies.instance.reason, "the report has 4 GPUs, the instance 8"));
  CHECK(contains(claim(with_copies, "nvlink").measurement, "copy-engine peer copy"));
  // ...without it there is nothing comparable.
  report.probes.erase(report.probes.begin() + 2);  // gpu-gpu
  const Validation v = validate(report, one_h100_instance(), "aws:p5.48xlarge");
  CHECK(claim(v, "nvlink").verdict == Verdict::cannot_check);
  CHECK(contains(claim(v, "nvlink").reason, "spans 4 GPUs"));
}

TEST_CASE("without NCCL, behind NVSwitch, a peer copy stands in", "[probe][validate]") {
  ProbeReport report = testing::synthetic_report();
  report.probes.pop_back();  // no nccl probe
  const Validation v = validate(report, one_h100_instance(), std::nullopt);
  const auto& nvlink = claim(v, "nvlink");
  CHECK(nvlink.verdict == Verdict::meets);
  CHECK(nvlink.measured == Approx(380));
  CHECK(contains(nvlink.measurement, "copy-engine peer copy"));
}

TEST_CASE("the network claim from a multi-node all-reduce", "[probe][validate]") {
  ProbeReport report = testing::synthetic_report();
  report.probes.push_back({"nccl-multi-node", "synthetic", ProbeStatus::ok, std::nullopt, 1.0, {}});
  report.probes.back().results.push_back(
      Result::make(std::string(metric::nccl_busbw), Unit::gbytes_per_s, Counting::one_direction, 1u << 30,
                   {{"collective", "all-reduce"}, {"ranks", "16"}, {"nodes", "2"}}, testing::around(350)));
  const Validation v = validate(report, one_h100_instance(), std::nullopt);
  const auto& network = claim(v, "network");
  CHECK(network.verdict == Verdict::meets);
  CHECK(network.unit == "Gbit/s");
  CHECK(network.measured == Approx(2800));  // 350 GB/s x 8
  CHECK(*network.efficiency == Approx(0.875));
}

TEST_CASE("host-only MPI reports: the network claim, and GPU claims cannot be checked", "[probe][validate]") {
  // One process pair drives one network interface: 320 of 3200 Gbit/s is below only against an
  // instance of one NIC; against 32 NICs (p5's EFA) or a count the catalog lacks it cannot check.
  auto with_nics = [](std::optional<int> nics) {
    Instance p5 = instance("aws", "p5.48xlarge", "H100-SXM5-80GB", 8, Fabric::nvswitch, 900, 3200);
    p5.network_nics = nics;
    return Catalog(test_gpus(), {p5});
  };
  const Validation one_nic = validate(testing::synthetic_mpi_report(40, false), with_nics(1), "aws:p5.48xlarge");
  CHECK(claim(one_nic, "network").verdict == Verdict::below);
  CHECK(claim(one_nic, "network").measured == Approx(320));
  for (const std::optional<int> nics : {std::optional<int>(32), std::optional<int>()}) {
    const Validation many = validate(testing::synthetic_mpi_report(40, false), with_nics(nics), "aws:p5.48xlarge");
    CHECK(claim(many, "network").verdict == Verdict::cannot_check);
    CHECK(claim(many, "network").measured == Approx(320));  // the figure is still shown
    CHECK(contains(claim(many, "network").reason, "one process pair cannot fill"));
    CHECK_FALSE(many.any_below());
  }
  const Validation across = validate(testing::synthetic_mpi_report(40, false), one_h100_instance(), "aws:p5.48xlarge");
  for (const char* gpu_claim : {"nvlink", "hbm", "pcie"}) {
    CHECK(claim(across, gpu_claim).verdict == Verdict::cannot_check);
    CHECK(contains(claim(across, gpu_claim).reason, "host-only"));
  }
  CHECK(claim(across, "hbm").claimed == Approx(3350));  // the claim is still shown

  const Validation fast = validate(testing::synthetic_mpi_report(380, false), one_h100_instance(), "aws:p5.48xlarge");
  CHECK(claim(fast, "network").verdict == Verdict::meets);
  CHECK_FALSE(fast.any_below());

  const Validation one_host = validate(testing::synthetic_mpi_report(40, true), one_h100_instance(), "aws:p5.48xlarge");
  CHECK(claim(one_host, "network").verdict == Verdict::cannot_check);
  CHECK(contains(claim(one_host, "network").reason, "one host"));
  CHECK_FALSE(one_host.any_below());

  const Validation unnamed = validate(testing::synthetic_mpi_report(40, false), one_h100_instance(), std::nullopt);
  CHECK(unnamed.instance.detected_by == "none");
  CHECK(claim(unnamed, "network").verdict == Verdict::cannot_check);
}

TEST_CASE("GPU model from the CUDA device name", "[probe][validate]") {
  const Catalog catalog = one_h100_instance();
  const std::uint64_t gib = 1ull << 30;
  CHECK(gpu_model_from_name("NVIDIA H100 80GB HBM3", 79 * gib, catalog) ==
        std::optional<std::string>("H100-SXM5-80GB"));
  CHECK(gpu_model_from_name("NVIDIA H100 PCIe", 79 * gib, catalog) == std::optional<std::string>("H100-PCIE-80GB"));
  CHECK(gpu_model_from_name("NVIDIA A100-SXM4-40GB", 39 * gib, catalog) ==
        std::optional<std::string>("A100-SXM4-40GB"));
  CHECK(gpu_model_from_name("NVIDIA A100-SXM4-80GB", 79 * gib, catalog) ==
        std::optional<std::string>("A100-SXM4-80GB"));
  CHECK(gpu_model_from_name("NVIDIA L4", 22 * gib, catalog) == std::optional<std::string>("L4"));
  CHECK(gpu_model_from_name("NVIDIA L40S", 44 * gib, catalog) == std::optional<std::string>("L40S"));
  CHECK_FALSE(gpu_model_from_name("Tesla T4", 15 * gib, catalog));
  CHECK_FALSE(gpu_model_from_name("NVIDIA A100-SXM4", std::nullopt, catalog));  // 40 or 80: cannot tell
}

TEST_CASE("validate's JSON uses the contract's field names", "[probe][validate]") {
  const nlohmann::json j = validate_json(testing::synthetic_report(), one_h100_instance(), std::nullopt);
  CHECK(j["any_below"] == false);
  CHECK(j["instance"]["id"] == "aws:p5.48xlarge");
  REQUIRE(j["verdicts"].size() == 4);
  CHECK(j["verdicts"][0]["claim"] == "nvlink");
  CHECK(j["verdicts"][0]["verdict"] == "meets");
  CHECK(j["verdicts"][1]["verdict"] == "cannot-check");
  CHECK(j["verdicts"][1]["measured"].is_null());
  for (const char* key : {"claimed", "claimed_unit", "claim_convention", "expected", "measured", "unit", "efficiency",
                          "min_efficiency", "measurement", "reason"}) {
    CHECK(j["verdicts"][0].contains(key));
  }
}

TEST_CASE("a report whose note says synthetic or test is synthetic", "[probe][report]") {
  ProbeReport report = testing::synthetic_report();
  CHECK(is_synthetic(report));
  report.note = "A TEST run";
  CHECK(is_synthetic(report));
  report.note = std::nullopt;
  CHECK_FALSE(is_synthetic(report));
  report.note = "rack 4, after the cable swap";
  CHECK_FALSE(is_synthetic(report));
}

// Issue 15: the fleet verdict is core's (REST, CLI --fleet and Python call it).
TEST_CASE("the fleet verdict is the median report's share against the threshold", "[probe][validate][fleet]") {
  const Catalog catalog = one_h100_instance();
  testing::SyntheticFigures low;
  low.allreduce_busbw = 120;  // below
  const std::vector<ProbeReport> two_good_one_low{testing::synthetic_report(), testing::synthetic_report(),
                                                  testing::synthetic_report(low)};
  // The test reports are synthetic: counted only when asked.
  CHECK(validate_fleet(two_good_one_low, catalog, std::nullopt).reports == 0);
  const FleetValidation fleet = validate_fleet(two_good_one_low, catalog, std::nullopt, true);
  CHECK(fleet.instance_id == "aws:p5.48xlarge");
  CHECK(fleet.reports == 3);
  const auto nvlink =
      std::find_if(fleet.claims.begin(), fleet.claims.end(), [](auto& c) { return c.claim.claim == "nvlink"; });
  REQUIRE(nvlink != fleet.claims.end());
  CHECK(nvlink->meets == 2);
  CHECK(nvlink->below == 1);
  CHECK(nvlink->verdict == Verdict::meets);  // the median report meets
  CHECK_FALSE(any_below(fleet));

  const FleetValidation mostly_low =
      validate_fleet(std::vector<ProbeReport>{testing::synthetic_report(low), testing::synthetic_report(low),
                                              testing::synthetic_report()},
                     catalog, std::nullopt, true);
  CHECK(any_below(mostly_low));

  const nlohmann::ordered_json out = to_json(fleet);
  CHECK(out["instance"] == "aws:p5.48xlarge");
  CHECK(out["reports"] == 3);
  for (const auto& c : out["claims"]) {
    if (c["claim"] != "nvlink") continue;
    CHECK(c["verdicts"]["meets"] == 2);
    CHECK(c["verdict"] == "meets");
    CHECK(c["count"] == 3);
  }
  // The network claim: no report measured it.
  const auto network =
      std::find_if(fleet.claims.begin(), fleet.claims.end(), [](auto& c) { return c.claim.claim == "network"; });
  REQUIRE(network != fleet.claims.end());
  CHECK(network->verdict == Verdict::cannot_check);
}

TEST_CASE("the fleet verdict from stored validations leaves synthetic reports out unless asked",
          "[probe][validate][fleet]") {
  const Catalog catalog = one_h100_instance();
  const ProbeReport report = testing::synthetic_report();
  const Validation v = validate(report, catalog, std::nullopt);
  const nlohmann::json stored = stored_validation(report, v);
  CHECK(stored.contains("synthetic"));
  const std::vector<nlohmann::json> documents{stored};
  const FleetValidation left_out = validate_fleet(documents, catalog, "aws:p5.48xlarge", false);
  const FleetValidation included = validate_fleet(documents, catalog, "aws:p5.48xlarge", true);
  if (is_synthetic(report)) {
    CHECK(left_out.reports == 0);
    CHECK(left_out.synthetic_reports == 1);
  }
  CHECK(included.reports == 1);
  CHECK_THROWS_AS(validate_fleet(documents, catalog, "aws:nothing", false), Error);
}
