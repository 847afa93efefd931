// Scale effects of collectives (core/src/planner/collectives.cpp).
#include <catch2/catch.hpp>

#include "linkwise/planner/collectives.hpp"

using namespace linkwise::planner;

TEST_CASE("ring latency grows with the ring, tree latency with log2 of the nodes") {
  const PlannerConstants& k = default_constants();
  const CommGroup small{64, 8, 180e9}, large{1024, 128, 180e9};
  // NCCL's model: linear in the ranks for a ring.
  const double l64 = ring_latency_s(small, 1, k), l1024 = ring_latency_s(large, 1, k);
  CHECK(l1024 > 10 * l64);
  CHECK(l1024 > 5e-3);  // ~1000 steps of ~6-11 us
  CHECK(ring_latency_s(CommGroup{1, 1, 180e9}, 1, k) == 0.0);
  // A small all-reduce across 128 nodes takes NCCL's tree; a huge one inside a node the ring.
  bool tree = false;
  all_reduce_best_s(1e6, large, k, &tree);
  CHECK(tree);
  all_reduce_best_s(4e9, CommGroup{8, 1, 240e9}, k, &tree);
  CHECK_FALSE(tree);
}

TEST_CASE("small messages reach a fraction of the bus bandwidth") {
  const PlannerConstants& k = default_constants();
  CHECK(small_message_efficiency(64e6, k) > 0.95);
  CHECK(small_message_efficiency(k.nccl_half_bandwidth_bytes, k) == Approx(0.5));
  // The same bytes over 16x the ranks: smaller chunks, more steps, longer.
  const double bytes = 400e6;
  CHECK(ring_all_gather_s(bytes, CommGroup{1024, 128, 180e9}, k) >
        2 * ring_all_gather_s(bytes, CommGroup{64, 8, 180e9}, k));
}

TEST_CASE("FSDP prefetch hides a unit's gathers only behind the unit before it") {
  const PlannerConstants& k = default_constants();
  const CommGroup dp{128, 16, 180e9}, none{1, 1, 1};
  Zero3Units u{32, 14e9, 14e9, 0, 0, 2.0, 4.0};
  const Zero3Time slow_compute = zero3_micro_batch(u, dp, none, k);
  CHECK(slow_compute.exposed < 0.2 * slow_compute.comm);  // compute-bound: mostly hidden
  u.forward_s = 0.02;
  u.backward_s = 0.04;
  const Zero3Time fast_compute = zero3_micro_batch(u, dp, none, k);
  CHECK(fast_compute.exposed > 0.8 * fast_compute.comm);  // communication-bound: exposed
  CHECK(fast_compute.exposed <= fast_compute.comm);
  // Gradient buckets: more buckets, more latency.
  CHECK(bucket_latency_s(14e9, dp, false, k, 80e6) > bucket_latency_s(1e9, dp, false, k, 80e6));
  CHECK(bucket_latency_s(14e9, dp, false, k, 80e6) > bucket_latency_s(14e9, dp, false, k, 800e6));
}
