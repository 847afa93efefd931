// Scale effects of NCCL collectives (core/src/planner/collectives.cpp): per-collective latency that
// grows with the ring's length (NCCL's tuning model, src/graph/tuning.cc: base latency plus one hop
// latency per ring step, inter-node steps at the network's), the tree all-reduce whose latency
// grows with log2 of the nodes (NCCL picks the faster of ring and tree), small-message efficiency
// (each ring step moves bytes / n; below a few hundred KiB per rank a step is latency, not
// bandwidth), the number of collectives a step issues (one per FSDP unit, one per gradient bucket)
// and ZeRO-3 / FSDP's one-unit prefetch, which hides a unit's gathers only behind the compute of
// the unit before it.
#pragma once

#include "linkwise/planner/constants.hpp"

namespace linkwise::planner {

// One communicator: n ranks over `nodes` nodes (n / nodes ranks per node on NVLink), `busbw` the
// bus bandwidth the time model gives its links (bytes/s, nccl-tests' definition).
struct CommGroup {
  double n = 1, nodes = 1, busbw = 1;
};

// Latency of one ring collective with `passes` passes around the ring (all-gather and
// reduce-scatter 1, ring all-reduce 2): NCCL's base latency plus one hop per step, the n - nodes
// steps inside nodes at the NVLink hop latency and the nodes - 1 steps between nodes at the
// network's.
double ring_latency_s(const CommGroup& g, double passes, const PlannerConstants& k) noexcept;
// Fraction of busbw a ring step of `chunk_bytes` per rank reaches (chunk / (chunk + half)).
double small_message_efficiency(double chunk_bytes, const PlannerConstants& k) noexcept;
// All-gather or reduce-scatter of `bytes` (the gathered size): ring only in NCCL.
double ring_all_gather_s(double bytes, const CommGroup& g, const PlannerConstants& k) noexcept;
// All-reduce of `bytes`: the faster of NCCL's ring and double binary tree. `tree` tells which.
double all_reduce_best_s(double bytes, const CommGroup& g, const PlannerConstants& k, bool* tree = nullptr) noexcept;

// ZeRO-3 / FSDP over one micro-batch of one pipeline stage: every unit (a layer, the embedding
// and output layer with the first and last) gathered before its forward and again before its
// backward, its gradients reduce-scattered after it; the next unit's gather is prefetched behind
// the current unit's compute (FSDP forward_prefetch / BACKWARD_PRE, DeepSpeed's prefetch bucket),
// so a unit whose collectives outlast its compute exposes the difference, and the first gather and
// the last reduce-scatter are never hidden.
struct Zero3Units {
  double units = 1;              // FSDP units (transformer layers) of the stage
  double weight_bytes = 0;       // 16-bit weights gathered per pass, the whole stage
  double grad_bytes = 0;         // gradients reduce-scattered (in the reduction's dtype), the whole stage
  double expert_bytes = 0;       // routed experts' weights (gathered over the expert-DP group)
  double expert_grad_bytes = 0;  // ... and their gradients (reduce-scattered over it)
  double forward_s = 0;          // compute of one micro-batch's forward through the stage
  double backward_s = 0;         // ... backward (recompute included)
  double replica_reduce_s = 0;   // hybrid sharding: one unit's all-reduce of its reduced shards across the copies
};
struct Zero3Time {
  double comm = 0;     // collective time per micro-batch (what nvidia profiles would add up)
  double exposed = 0;  // what the compute does not hide
};
Zero3Time zero3_micro_batch(const Zero3Units& u, const CommGroup& dp, const CommGroup& edp,
                            const PlannerConstants& k) noexcept;

// Buckets of `bucket_bytes` that `grad_bytes` fill (at least one).
double bucket_count(double grad_bytes, double bucket_bytes) noexcept;
// Extra latency of reducing `grad_bytes` in buckets of `bucket_bytes` (the stack's: Megatron-Core's
// DDP buckets, DeepSpeed's reduce_bucket_size, PyTorch DDP's 25 MiB, an FSDP unit): one collective
// per bucket beyond the one the bandwidth model already counts.
double bucket_latency_s(double grad_bytes, const CommGroup& g, bool all_reduce, const PlannerConstants& k,
                        double bucket_bytes) noexcept;

// The gradient bucket of a ZeRO-0/1/2 reduction over `dp_group` ranks (DP x CP): Megatron-Core's
// default, max(40M, 1M x dp_cp size) parameters ("larger DP sizes need larger buckets to ensure
// collectives do not become latency-bound": megatron/core/distributed/
// distributed_data_parallel_config.py, bucket_size), of `bytes_per_grad` each (the buffer's dtype);
// k.grad_bucket_params is its 40M floor.
double megatron_grad_bucket_bytes(double dp_group, double bytes_per_grad, const PlannerConstants& k) noexcept;

}  // namespace linkwise::planner
