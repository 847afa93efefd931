// Statistics of samples and the collective bandwidth formulas (nccl-tests' definitions).
#include <cmath>
#include <limits>
#include <vector>

#include <catch2/catch.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner/engine.hpp"
#include "linkwise/probe_report.hpp"
#include "planner_test_util.hpp"

using namespace linkwise;
using namespace linkwise::probe;

TEST_CASE("stats of an odd number of samples", "[probe][stats]") {
  const std::vector<double> samples{5, 1, 4, 2, 3};
  const Stats s = compute_stats(samples);
  CHECK(s.count == 5);
  CHECK(s.median == 3);
  CHECK(s.min == 1);
  CHECK(s.max == 5);
  CHECK(s.mean == Approx(3));
  CHECK(s.stddev == Approx(std::sqrt(2.5)));  // sample standard deviation, n - 1
  CHECK(s.p5 == Approx(1.2));                 // 1 + 0.05 * 4 * (2 - 1)
  CHECK(s.p95 == Approx(4.8));
  CHECK(s.spread == Approx(4.0 / 3.0));  // (max - min) / median
}

TEST_CASE("stats of an even number of samples interpolate the median", "[probe][stats]") {
  const std::vector<double> samples{4, 1, 3, 2};
  const Stats s = compute_stats(samples);
  CHECK(s.median == Approx(2.5));
  CHECK(s.p95 == Approx(3.85));  // position 0.95 * 3 = 2.85 -> 3 + 0.85
}

TEST_CASE("stats of one sample", "[probe][stats]") {
  const std::vector<double> samples{42};
  const Stats s = compute_stats(samples);
  CHECK(s.median == 42);
  CHECK(s.p5 == 42);
  CHECK(s.p95 == 42);
  CHECK(s.stddev == 0);
  CHECK(s.spread == 0);
}

TEST_CASE("stats reject no samples and non-finite samples, naming the field", "[probe][stats]") {
  const std::vector<double> none;
  try {
    compute_stats(none, "probes[0].results[0].samples");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    CHECK(e.field() == "probes[0].results[0].samples");
  }
  const std::vector<double> nan{1, std::numeric_limits<double>::quiet_NaN()};
  try {
    compute_stats(nan, "samples");
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.field() == "samples[1]");
  }
}

TEST_CASE("busbw factors per collective are nccl-tests'", "[probe][busbw]") {
  CHECK(busbw_factor(Collective::all_reduce, 8) == Approx(1.75));   // 2(n-1)/n
  CHECK(busbw_factor(Collective::all_gather, 8) == Approx(0.875));  // (n-1)/n
  CHECK(busbw_factor(Collective::reduce_scatter, 8) == Approx(0.875));
  CHECK(busbw_factor(Collective::all_to_all, 8) == Approx(0.875));
  CHECK(busbw_factor(Collective::broadcast, 8) == 1);
  CHECK(busbw_factor(Collective::reduce, 8) == 1);
  CHECK(busbw_factor(Collective::send_recv, 2) == 1);
  CHECK(busbw_factor(Collective::all_reduce, 2) == Approx(1.0));
  CHECK(busbw_factor(Collective::all_reduce, 1) == 0);  // one rank moves nothing over a link
  CHECK(busbw_factor(Collective::all_gather, 16) == Approx(15.0 / 16.0));
  CHECK_THROWS_AS(busbw_factor(Collective::all_reduce, 0), Error);
}

TEST_CASE("algbw is bytes per second in GB/s, busbw scales it", "[probe][busbw]") {
  // 1 GB in 10 ms: 100 GB/s algbw; all-reduce on 8 ranks: 175 GB/s busbw.
  CHECK(algbw_gbytes_per_s(1e9, 0.01) == Approx(100));
  CHECK(busbw_gbytes_per_s(Collective::all_reduce, 8, 1e9, 0.01) == Approx(175));
  CHECK(busbw_gbytes_per_s(Collective::all_gather, 4, 1e9, 0.01) == Approx(75));
  CHECK(busbw_gbytes_per_s(Collective::broadcast, 4, 1e9, 0.01) == Approx(100));
  CHECK_THROWS_AS(algbw_gbytes_per_s(1e9, 0), Error);
  CHECK_THROWS_AS(algbw_gbytes_per_s(-1, 1), Error);
}

TEST_CASE("collective names round-trip", "[probe][busbw]") {
  for (Collective c : {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter,
                       Collective::all_to_all, Collective::broadcast, Collective::reduce, Collective::send_recv}) {
    CHECK(parse_collective(to_string(c)) == c);
  }
  CHECK(to_string(Collective::all_reduce) == "all-reduce");
  CHECK_THROWS_AS(parse_collective("allreduce"), Error);
}

TEST_CASE("PCIe one-direction bandwidth per generation", "[probe][pcie]") {
  CHECK(pcie_gbytes_per_s(3, 16) == Approx(15.754).epsilon(1e-3));
  CHECK(pcie_gbytes_per_s(4, 16) == Approx(31.508).epsilon(1e-3));
  CHECK(pcie_gbytes_per_s(5, 16) == Approx(63.015).epsilon(1e-3));
  CHECK(pcie_gbytes_per_s(4, 8) == Approx(pcie_gbytes_per_s(4, 16) / 2));
  CHECK(pcie_gbytes_per_s(2, 16) == Approx(8.0));
  CHECK_THROWS_AS(pcie_gbytes_per_s(7, 16), Error);
  CHECK_THROWS_AS(pcie_gbytes_per_s(4, 0), Error);
}

// Issue 15: PCIe per generation is one table (link_physics.hpp), used by validate and the planner.
// Gen 1-2 use 8b/10b (4.0 and 8.0 GB/s at x16, not 15.75/4 and 15.75/2); gen 6 FLIT mode carries
// 242 of 256 bytes (121 GB/s, not 126).
TEST_CASE("PCIe bandwidth per generation, and the planner's PCIe nodes use it", "[probe][statistics][pcie]") {
  CHECK(pcie_gbytes_per_s(1, 16) == Approx(4.0));
  CHECK(pcie_gbytes_per_s(2, 16) == Approx(8.0));
  CHECK(pcie_gbytes_per_s(6, 16) == Approx(121.0));
  CHECK(pcie_gbytes_per_s(6, 16) < 2 * pcie_gbytes_per_s(5, 16));
  CHECK(linkwise::bus_factor(Collective::all_reduce, 8) == busbw_factor(Collective::all_reduce, 8));

  const planner::PlannerConstants& k = planner::default_constants();
  for (int gen : {1, 2, 3, 4, 5, 6}) {
    INFO("gen " << gen);
    Gpu gpu = planner_test::h100_80();
    gpu.pcie_gen = gen;
    const Instance in = planner_test::node(gpu, "aws", "pcie-node", Fabric::pcie, 400, 10);
    const auto hw = planner::prepare_hardware(planner::HardwareRef(in, gpu, false), planner_test::inference(128, 16, 1),
                                              k, nullptr, false);
    CHECK(hw.intra_busbw == Approx(pcie_gbytes_per_s(gen, 16) * k.pcie_busbw_fraction * 1e9));
  }
}
