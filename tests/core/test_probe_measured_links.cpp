// measured_links: what the planner takes from a report.
#include <catch2/catch.hpp>

#include "linkwise/probe_report.hpp"
#include "probe_test_reports.hpp"

using namespace linkwise::probe;

TEST_CASE("measured_links takes each figure from its result", "[probe][measured]") {
  testing::SyntheticFigures figures;
  figures.allreduce_busbw = 370;
  figures.p2p_unidirectional = 390;
  figures.device_copy = 2800;
  figures.h2d_pinned = 52;
  const auto links = measured_links(testing::synthetic_report(figures));
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
  const auto links = measured_links(testing::synthetic_mpi_report(10, false));
  CHECK_FALSE(links.intra_node_allreduce_busbw_gbytes_per_s);
  CHECK_FALSE(links.hbm_gbytes_per_s);
  CHECK_FALSE(links.h2d_gbytes_per_s);
  CHECK(links.source.find("no GPU") != std::string::npos);
}

TEST_CASE("measured_links ignores probes that did not run", "[probe][measured]") {
  auto report = testing::synthetic_report();
  report.probes[3].status = ProbeStatus::failed;
  report.probes[3].reason = "synthetic failure";
  CHECK_FALSE(measured_links(report).intra_node_allreduce_busbw_gbytes_per_s);
}

TEST_CASE("multi-node all-reduce counts as inter-node", "[probe][measured]") {
  auto report = testing::synthetic_report();
  report.probes.push_back({"nccl-multi-node", "synthetic", ProbeStatus::ok, std::nullopt, 1.0, {}});
  report.probes.back().results.push_back(
      Result::make(std::string(metric::nccl_busbw), Unit::gbytes_per_s, Counting::one_direction, 1u << 30,
                   {{"collective", "all-reduce"}, {"ranks", "16"}, {"nodes", "2"}}, testing::around(45)));
  const auto links = measured_links(report);
  CHECK(links.inter_node_allreduce_busbw_gbytes_per_s == Approx(45));
  CHECK(links.intra_node_allreduce_busbw_gbytes_per_s == Approx(360));
}
