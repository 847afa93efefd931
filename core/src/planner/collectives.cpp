// Scale effects of collectives (collectives.hpp). The latency model is NCCL's own tuning model
// (NVIDIA/nccl src/graph/tuning.cc, ncclTopoTuneModel): a ring collective costs
//   baseLat + (nsteps - nInterSteps) * hwLat[NVLink] + nInterSteps * hwLat[NET]
// with nsteps = n - 1 per pass around the ring and nInterSteps = nodes - 1 per pass; the double
// binary tree all-reduce costs baseLat + 2 ((n/nodes - 1) hwLat[NVLink] + log2(nodes) hwLat[NET])
// and NCCL runs whichever is faster. All-gather and reduce-scatter have no tree, so the latency of
// every ZeRO-3 / FSDP collective grows linearly with the data-parallel group: at a thousand GPUs a
// gather of one layer costs milliseconds before a byte has moved, and a fixed global batch leaves
// each GPU less compute to hide it behind. The constants (PlannerConstants::nccl_*) start from
// NCCL's table (Simple protocol, ring: 8.4 us base, 5.7 us per NVLink hop, 6.6 us per network hop)
// and the fit bounds them (tests/calibration/calibrate.cpp).
#include "linkwise/planner/collectives.hpp"

#include <algorithm>
#include <cmath>

#include "linkwise/link_physics.hpp"

namespace linkwise::planner {

double ring_latency_s(const CommGroup& g, double passes, const PlannerConstants& k) noexcept {
  if (g.n <= 1) return 0.0;
  const double nodes = std::clamp(g.nodes, 1.0, g.n);
  const double steps = g.n - 1, inter = nodes - 1;
  return k.nccl_base_latency_s +
         passes * ((steps - inter) * k.nccl_hop_latency_nvlink_s + inter * k.nccl_hop_latency_net_s);
}

double small_message_efficiency(double chunk_bytes, const PlannerConstants& k) noexcept {
  if (k.nccl_half_bandwidth_bytes <= 0) return 1.0;
  return chunk_bytes / (chunk_bytes + k.nccl_half_bandwidth_bytes);
}

double ring_all_gather_s(double bytes, const CommGroup& g, const PlannerConstants& k) noexcept {
  if (g.n <= 1 || bytes <= 0) return 0.0;
  const double eff = small_message_efficiency(bytes / g.n, k);
  return bus_factor(Collective::all_gather, g.n) * bytes / (g.busbw * eff) + ring_latency_s(g, 1.0, k);
}

double all_reduce_best_s(double bytes, const CommGroup& g, const PlannerConstants& k, bool* tree) noexcept {
  if (tree) *tree = false;
  if (g.n <= 1 || bytes <= 0) return 0.0;
  const double eff = small_message_efficiency(bytes / g.n, k);
  const double bandwidth = bus_factor(Collective::all_reduce, g.n) * bytes / (g.busbw * eff);
  const double ring = bandwidth + ring_latency_s(g, 2.0, k);
  const double nodes = std::clamp(g.nodes, 1.0, g.n);
  if (nodes < 2) return ring;  // NCCL's tree pays off between nodes only
  const double tree_latency =
      k.nccl_base_latency_s + 2.0 * ((g.n / nodes - 1) * k.nccl_tree_hop_latency_nvlink_s +
                                     std::ceil(std::log2(nodes)) * k.nccl_tree_hop_latency_net_s);
  const double tree_time = bandwidth / std::max(1e-3, k.nccl_tree_bandwidth_fraction) + tree_latency;
  if (tree_time < ring) {
    if (tree) *tree = true;
    return tree_time;
  }
  return ring;
}

Zero3Time zero3_micro_batch(const Zero3Units& u, const CommGroup& dp, const CommGroup& edp,
                            const PlannerConstants& k) noexcept {
  Zero3Time t;
  const double units = std::max(1.0, u.units);
  // One unit's collectives: its weights gathered (dense over DP x CP, experts over the expert-DP
  // group), its gradients reduce-scattered.
  const double gather =
      ring_all_gather_s(u.weight_bytes / units, dp, k) + ring_all_gather_s(u.expert_bytes / units, edp, k);
  const double reduce = ring_all_gather_s(u.grad_bytes / units, dp, k) +
                        ring_all_gather_s(u.expert_grad_bytes / units, edp, k) + u.replica_reduce_s;
  if (gather <= 0 && reduce <= 0) return t;
  t.comm = units * (2.0 * gather + reduce);
  // Prefetch one unit ahead: the gather of unit i + 1 runs during the compute of unit i (the
  // fraction zero3_overlap of it: NCCL's kernels take SMs and HBM bandwidth from the GEMMs), the
  // backward's gather and the previous unit's reduce-scatter share the backward of a unit.
  const double fwd = k.zero3_overlap * u.forward_s / units;
  const double bwd = k.zero3_overlap * u.backward_s / units;
  t.exposed = gather                                          // the first unit's gather
              + (units - 1) * std::max(0.0, gather - fwd)     // forward, prefetched
              + units * std::max(0.0, gather + reduce - bwd)  // backward: re-gather and reduce-scatter
              + 0.0;
  // The last reduce-scatter runs after the last backward: exposed unless already counted above.
  t.exposed += std::min(reduce, bwd);
  t.exposed = std::min(t.exposed, t.comm);
  return t;
}

double megatron_grad_bucket_bytes(double dp_group, double bytes_per_grad, const PlannerConstants& k) noexcept {
  return bytes_per_grad * std::max(k.grad_bucket_params, 1e6 * dp_group);
}

double bucket_count(double grad_bytes, double bucket_bytes) noexcept {
  // A hair below the quotient first: a bucket of exactly 1/n of the gradients is n buckets, not n + 1
  // where the division rounds up.
  return bucket_bytes > 0 ? std::max(1.0, std::ceil(grad_bytes / bucket_bytes * (1.0 - 1e-12))) : 1.0;
}

double bucket_latency_s(double grad_bytes, const CommGroup& g, bool all_reduce, const PlannerConstants& k,
                        double bucket_bytes) noexcept {
  if (g.n <= 1 || grad_bytes <= 0 || bucket_bytes <= 0) return 0.0;
  const double buckets = bucket_count(grad_bytes, bucket_bytes);
  double per = 0;
  if (all_reduce) {
    // The latency part of the best all-reduce of one bucket.
    const double bucket = grad_bytes / buckets;
    const double with = all_reduce_best_s(bucket, g, k);
    const double bandwidth = bus_factor(Collective::all_reduce, g.n) * bucket / g.busbw;
    per = std::max(0.0, with - bandwidth);
  } else {
    per = 2.0 * ring_latency_s(g, 1.0, k);  // reduce-scatter + all-gather per bucket
  }
  return buckets * per;
}

}  // namespace linkwise::planner
