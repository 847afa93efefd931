// Synthetic probe reports for the tests: labelled test inputs (note "synthetic test input"), built
// in code with chosen figures, never measured.
#pragma once

#include <string>
#include <vector>

#include "linkwise/probe_report.hpp"

namespace linkwise::probe::testing {

// Five samples around `center` (+-1%), so the median is `center` exactly.
inline std::vector<double> around(double center) {
  return {center * 0.99, center * 0.995, center, center * 1.005, center * 1.01};
}

struct SyntheticFigures {
  int gpus = 8;
  std::string gpu_name = "NVIDIA H100 80GB HBM3";
  std::uint64_t gpu_memory_bytes = 85'520'809'984;  // 79.6 GiB, what an "80 GB" H100 reports
  double allreduce_busbw = 360;                     // GB/s at the largest size
  double p2p_unidirectional = 380;
  double device_copy = 2900;  // read+write
  double h2d_pinned = 53;
  int pcie_link_gen = 5;
};

inline ProbeReport synthetic_report(const SyntheticFigures& f = {}) {
  ProbeReport report;
  report.note = "synthetic test input";
  Environment& env = report.environment;
  env.created_at = "2026-01-01T00:00:00Z";
  env.hostname = "synthetic-host";
  env.linkwise_version = "test";
  env.quick = true;
  for (int i = 0; i < f.gpus; ++i) {
    GpuInfo gpu;
    gpu.index = i;
    gpu.name = f.gpu_name;
    gpu.memory_bytes = f.gpu_memory_bytes;
    gpu.pcie_link_gen = f.pcie_link_gen;
    gpu.pcie_link_width = 16;
    gpu.pcie_max_link_gen = f.pcie_link_gen;
    gpu.pcie_max_link_width = 16;
    env.gpus.push_back(gpu);
  }
  env.p2p_access = std::vector<std::vector<bool>>(f.gpus, std::vector<bool>(f.gpus, true));
  for (int i = 0; i < f.gpus; ++i) (*env.p2p_access)[i][i] = false;

  ProbeRun host{"host-device", "synthetic", ProbeStatus::ok, std::nullopt, 1.0, {}};
  ProbeRun memory{"device-memory", "synthetic", ProbeStatus::ok, std::nullopt, 1.0, {}};
  for (int i = 0; i < f.gpus; ++i) {
    const std::string gpu = std::to_string(i);
    host.results.push_back(Result::make(std::string(metric::h2d), Unit::gbytes_per_s, Counting::one_direction, 1u << 30,
                                        {{"gpu", gpu}, {"memory", "pinned"}, {"scope", "one-gpu"}},
                                        around(f.h2d_pinned)));
    host.results.push_back(Result::make(std::string(metric::h2d), Unit::gbytes_per_s, Counting::one_direction, 1u << 30,
                                        {{"gpu", gpu}, {"memory", "pageable"}, {"scope", "one-gpu"}},
                                        around(f.h2d_pinned / 3)));
    memory.results.push_back(Result::make(std::string(metric::device_copy), Unit::gbytes_per_s,
                                          Counting::read_plus_write, 1u << 30, {{"gpu", gpu}, {"method", "sm"}},
                                          around(f.device_copy)));
    memory.results.push_back(Result::make(std::string(metric::device_copy), Unit::gbytes_per_s,
                                          Counting::read_plus_write, 1u << 30,
                                          {{"gpu", gpu}, {"method", "copy-engine"}}, around(f.device_copy * 0.9)));
  }
  ProbeRun peers{"gpu-gpu", "synthetic", ProbeStatus::ok, std::nullopt, 1.0, {}};
  for (int i = 0; i + 1 < f.gpus; ++i) {
    peers.results.push_back(Result::make(std::string(metric::p2p_bandwidth), Unit::gbytes_per_s,
                                         Counting::one_direction, 1u << 28,
                                         {{"src", std::to_string(i)},
                                          {"dst", std::to_string(i + 1)},
                                          {"method", "copy-engine"},
                                          {"direction", "unidirectional"},
                                          {"p2p", "on"}},
                                         around(f.p2p_unidirectional)));
  }
  ProbeRun nccl{"nccl", "synthetic", ProbeStatus::ok, std::nullopt, 1.0, {}};
  // A sweep: the busbw grows with size and the largest size gives `allreduce_busbw`.
  for (double fraction : {0.25, 0.6, 1.0}) {
    nccl.results.push_back(
        Result::make(std::string(metric::nccl_busbw), Unit::gbytes_per_s, Counting::one_direction,
                     static_cast<std::uint64_t>(fraction * (1u << 30)),
                     {{"collective", "all-reduce"}, {"ranks", std::to_string(f.gpus)}, {"nodes", "1"}},
                     around(f.allreduce_busbw * fraction)));
  }
  report.probes = {host, memory, peers, nccl};
  return report;
}

// A host-only MPI report: two ranks, `same_node` says whether they shared a host.
inline ProbeReport synthetic_mpi_report(double gbytes_per_s, bool same_node) {
  ProbeReport report;
  report.note = "synthetic test input";
  report.environment.created_at = "2026-01-01T00:00:00Z";
  report.environment.hostname = "synthetic-host";
  report.environment.linkwise_version = "test";
  report.environment.nodes = same_node ? 1 : 2;
  report.environment.ranks = 2;
  ProbeRun mpi{"mpi-host-bandwidth", "synthetic", ProbeStatus::ok, std::nullopt, 1.0, {}};
  for (double fraction : {0.5, 1.0}) {
    mpi.results.push_back(
        Result::make(std::string(metric::mpi_bandwidth), Unit::gbytes_per_s, Counting::one_direction,
                     static_cast<std::uint64_t>(fraction * (1 << 26)),
                     {{"pair", "0-1"}, {"direction", "unidirectional"}, {"same_node", same_node ? "true" : "false"}},
                     around(gbytes_per_s * fraction)));
  }
  report.probes = {mpi};
  return report;
}

}  // namespace linkwise::probe::testing
