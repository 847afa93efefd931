// measured_links: what the planner takes from a report.
#include <catch2/catch.hpp>

#include <functional>

#include "linkwise/error.hpp"
#include "linkwise/planner.hpp"
#include "linkwise/probe_report.hpp"
#include "probe_test_reports.hpp"

using namespace linkwise::probe;

namespace {
const linkwise::Catalog& catalog() {
  static const linkwise::Catalog c = linkwise::Catalog::embedded();
  return c;
}
}  // namespace

TEST_CASE("measured_links takes each figure from its result", "[probe][measured]") {
  testing::SyntheticFigures figures;
  figures.allreduce_busbw = 370;
  figures.p2p_unidirectional = 390;
  figures.device_copy = 2800;
  figures.h2d_pinned = 52;
  const auto links = measured_links(testing::synthetic_report(figures), catalog());
  // The largest size of the sweep, not the first.
  CHECK(links.intra_node_allreduce_busbw_gbytes_per_s == Approx(370));
  CHECK_FALSE(links.inter_node_allreduce_busbw_gbytes_per_s.has_value());
  CHECK(links.p2p_unidirectional_gbytes_per_s == Approx(390));
  // The better method per GPU (SM 2800 over copy engine 2520).
  CHECK(links.hbm_gbytes_per_s == Approx(2800));
  // Pinned, not pageable.
  CHECK(links.h2d_gbytes_per_s == Approx(52));
  CHECK(links.source.find("8 x NVIDIA H100 80GB HBM3") != std::string::npos);
}

TEST_CASE("measured_links leaves absent figures empty", "[probe][measured]") {
  const auto links = measured_links(testing::synthetic_mpi_report(10, false), catalog());
  CHECK_FALSE(links.intra_node_allreduce_busbw_gbytes_per_s);
  CHECK_FALSE(links.hbm_gbytes_per_s);
  CHECK_FALSE(links.h2d_gbytes_per_s);
  CHECK(links.source.find("no GPU") != std::string::npos);
}

TEST_CASE("measured_links ignores probes that did not run", "[probe][measured]") {
  auto report = testing::synthetic_report();
  report.probes[3].status = ProbeStatus::failed;
  report.probes[3].reason = "synthetic failure";
  CHECK_FALSE(measured_links(report, catalog()).intra_node_allreduce_busbw_gbytes_per_s);
}

TEST_CASE("multi-node all-reduce counts as inter-node", "[probe][measured]") {
  auto report = testing::synthetic_report();
  report.probes.push_back({"nccl-multi-node", "synthetic", ProbeStatus::ok, std::nullopt, 1.0, {}});
  report.probes.back().results.push_back(
      Result::make(std::string(metric::nccl_busbw), Unit::gbytes_per_s, Counting::one_direction, 1u << 30,
                   {{"collective", "all-reduce"}, {"ranks", "16"}, {"nodes", "2"}}, testing::around(45)));
  const auto links = measured_links(report, catalog());
  CHECK(links.inter_node_allreduce_busbw_gbytes_per_s == Approx(45));
  CHECK(links.intra_node_allreduce_busbw_gbytes_per_s == Approx(360));
}

// A report measured one machine: its figures never stand in for another GPU's or instance's.
namespace {
nlohmann::json llama8b_on(nlohmann::json hardware) {
  return {{"model", {{"preset", "llama3.1-8b"}}},
          {"job", {{"kind", "pretrain"}, {"seq_len", 4096}, {"global_batch", 64}, {"tokens", 1e9}}},
          {"hardware", std::move(hardware)},
          {"layout", {{"tp", 1}, {"pp", 1}, {"dp", 8}, {"micro_batch", 1}}}};
}
std::string report_error(const std::function<void()>& run) {
  try {
    run();
  } catch (const linkwise::Error& e) {
    CHECK(e.kind() == linkwise::ErrorKind::invalid_input);
    CHECK(e.field() == "report");
    return e.what();
  }
  FAIL("no error");
  return {};
}
}  // namespace

TEST_CASE("measured_links names the report's GPU and instance", "[probe][measured]") {
  auto report = testing::synthetic_report();
  report.environment.cloud_provider = "aws";
  report.environment.cloud_instance_type = "p5.48xlarge";
  const auto links = measured_links(report, catalog());
  CHECK(links.gpu_name == "NVIDIA H100 80GB HBM3");
  CHECK(links.gpu_model == std::optional<std::string>("H100-SXM5-80GB"));
  CHECK(links.instance == std::optional<std::string>("aws:p5.48xlarge"));
}

TEST_CASE("a plan refuses a probe report of another GPU or instance", "[probe][measured]") {
  auto report = testing::synthetic_report();  // 8 x H100 80GB HBM3, no cloud metadata
  const auto h100 = measured_links(report, catalog());
  // The same GPU: applied, the HBM line says measured.
  const auto p5 = linkwise::planner::plan_json(llama8b_on({{"instance", "aws:p5.48xlarge"}}), catalog(), &h100);
  CHECK(p5.dump().find("measured: probe report") != std::string::npos);
  // Another GPU, catalog or custom: refused, naming both.
  std::string why = report_error([&] {
    linkwise::planner::plan_json(llama8b_on({{"instance", "aws:p6-b200.48xlarge"}}), catalog(), &h100);
  });
  CHECK(why.find("H100-SXM5-80GB") != std::string::npos);
  CHECK(why.find("B200") != std::string::npos);
  report_error([&] {
    linkwise::planner::plan_json(
        llama8b_on(
            {{"custom", {{"gpu_model", "A100-SXM4-80GB"}, {"gpu_count", 8}, {"intra_node_fabric", "nvswitch"}}}}),
        catalog(), &h100);
  });
  // The same GPU on another instance the report names: refused; its own instance, any case: applied.
  report.environment.cloud_provider = "aws";
  report.environment.cloud_instance_type = "p5en.48xlarge";
  const auto p5en = measured_links(report, catalog());
  why = report_error([&] {
    linkwise::planner::plan_json(llama8b_on({{"instance", "aws:p5.48xlarge"}}), catalog(), &p5en);
  });
  CHECK(why.find("aws:p5en.48xlarge") != std::string::npos);
  report.environment.cloud_instance_type = "P5.48XLARGE";
  const auto own = measured_links(report, catalog());
  CHECK_NOTHROW(linkwise::planner::plan_json(llama8b_on({{"instance", "aws:p5.48xlarge"}}), catalog(), &own));
  // A GPU the catalog does not know cannot be told to be the planned one.
  report.environment.gpus.front().name = "Mystery Accelerator";
  const auto unknown = measured_links(report, catalog());
  report_error([&] {
    linkwise::planner::plan_json(llama8b_on({{"instance", "aws:p5.48xlarge"}}), catalog(), &unknown);
  });
}

TEST_CASE("recommend applies a probe report only to the machines it measured", "[probe][measured]") {
  const auto h100 = measured_links(testing::synthetic_report(), catalog());
  nlohmann::json w = llama8b_on(nullptr);
  w.erase("hardware");
  w.erase("layout");
  w["constraints"] = {{"instances", {"aws:p5.48xlarge", "aws:p6-b200.48xlarge"}}, {"max_nodes", 1}};
  const auto r = linkwise::planner::recommend_json(w, catalog(), 10, &h100, linkwise::planner::Grouping::instance);
  REQUIRE(r["results"].size() == 2);
  for (const auto& plan : r["results"]) {
    const bool b200 = plan["instance"] == "aws:p6-b200.48xlarge";
    const std::string warnings = plan["warnings"].dump();
    CHECK((warnings.find("probe report not applied") != std::string::npos) == b200);
    CHECK((plan.dump().find("measured: probe report") != std::string::npos) == !b200);
  }
  // None of the machines measured: refused.
  w["constraints"]["instances"] = {"aws:p6-b200.48xlarge"};
  const std::string why = report_error([&] { linkwise::planner::recommend_json(w, catalog(), 5, &h100); });
  CHECK(why.find("no plan could use the report") != std::string::npos);
}
