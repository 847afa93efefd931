// Link bandwidths measured on an instance, as the planner consumes them in place of the catalog's
// claims. A probe report (probe_report.hpp) yields one; the planner only reads this struct, so it
// does not depend on the report format.
#pragma once

#include <optional>
#include <string>

namespace linkwise {

struct MeasuredLinks {
  // NCCL all-reduce bus bandwidth over all GPUs of one node at large messages (nccl-tests' busbw).
  std::optional<double> intra_node_allreduce_busbw_gbytes_per_s;
  // NCCL all-reduce bus bandwidth across nodes (one rank per GPU), large messages.
  std::optional<double> inter_node_allreduce_busbw_gbytes_per_s;
  // GPU-to-GPU copy bandwidth, one direction, between two GPUs of the node (median over pairs).
  std::optional<double> p2p_unidirectional_gbytes_per_s;
  // Device-memory copy bandwidth (read + write counted), the figure comparable to HBM peak.
  std::optional<double> hbm_gbytes_per_s;
  // Host-to-device copy bandwidth, pinned memory, one GPU.
  std::optional<double> h2d_gbytes_per_s;
  // Where these came from, e.g. "probe report 2026-11-30 on aws:p5.48xlarge (H100 80GB HBM3)".
  std::string source;
  // The machine measured, so that a plan never applies these figures to another one
  // (planner::measured_mismatch): the GPU as CUDA names it (empty for a report without a GPU), the
  // catalog GPU id that name resolves to (null when none or several fit), and the instance the
  // report's cloud metadata names ("aws:p5.48xlarge"; null when it names none).
  std::string gpu_name;
  std::optional<std::string> gpu_model;
  std::optional<std::string> instance;
};

}  // namespace linkwise
