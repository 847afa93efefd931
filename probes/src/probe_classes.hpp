// Every probe class: its key, description, mode and needs, compiled in every build (nvbandwidth's
// pattern: a test case carries its own key, description and filter). run() is in the file named
// beside each class, or in stubs.cpp for a build without CUDA or MPI. registry.cpp lists them in
// the order they run.
#pragma once

#include "probe.hpp"

namespace linkwise::probe {

class Topology final : public Probe {  // topology.cpp
 public:
  std::string_view key() const override { return "topology"; }
  std::string_view description() const override {
    return "GPUs (name, UUID, PCI bus id, NUMA node, PCIe link, clocks, power limit, ECC), P2P access matrix, "
           "NVLink links (NVML), driver/runtime/NCCL versions, VM detection";
  }
  ProbeMode mode() const override { return ProbeMode::any; }
  std::vector<Result> run(RunContext& context) override;
};

class HostDevice final : public Probe {  // host_device.cpp
 public:
  std::string_view key() const override { return "host-device"; }
  std::string_view description() const override {
    return "H2D, D2H (one-direction) and both at once (both-directions-added), pinned and pageable, per GPU "
           "from its NUMA node's CPUs, and all GPUs at once";
  }
  ProbeMode mode() const override { return ProbeMode::single_node; }
  std::vector<Result> run(RunContext& context) override;
};

class DeviceMemory final : public Probe {  // device_memory.cu
 public:
  std::string_view key() const override { return "device-memory"; }
  std::string_view description() const override {
    return "device memory: copy-engine copy and SM kernels read, write, copy, triad (bytes read + written, as "
           "each result states)";
  }
  ProbeMode mode() const override { return ProbeMode::single_node; }
  std::vector<Result> run(RunContext& context) override;
};

class GpuGpu final : public Probe {  // gpu_gpu.cu
 public:
  std::string_view key() const override { return "gpu-gpu"; }
  std::string_view description() const override {
    return "GPU pairs: unidirectional (one-direction) and bidirectional (both-directions-added) bandwidth by "
           "copy engine and by SM kernel, and latency, with P2P on and off";
  }
  ProbeMode mode() const override { return ProbeMode::single_node; }
  int min_gpus() const override { return 2; }  // a pair
  std::vector<Result> run(RunContext& context) override;
};

class NcclSingleNode final : public Probe {  // nccl.cpp
 public:
  std::string_view key() const override { return "nccl"; }
  std::string_view description() const override {
    return "NCCL all-reduce, all-gather, reduce-scatter, all-to-all over the node's GPUs, size sweep, algbw "
           "and busbw as nccl-tests define them";
  }
  ProbeMode mode() const override { return ProbeMode::single_node; }
  int min_gpus() const override { return 2; }  // a collective over one GPU moves nothing
  std::vector<Result> run(RunContext& context) override;
};

class NcclMultiNode final : public Probe {  // nccl.cpp (CUDA and MPI builds)
 public:
  std::string_view key() const override { return "nccl-multi-node"; }
  std::string_view description() const override {
    return "the NCCL collectives across nodes, one rank per GPU under MPI (ncclCommInitRank)";
  }
  ProbeMode mode() const override { return ProbeMode::multi_node; }
  std::vector<Result> run(RunContext& context) override;
};

class MpiHostBandwidth final : public Probe {  // mpi_host_bandwidth.cpp (MPI builds)
 public:
  std::string_view key() const override { return "mpi-host-bandwidth"; }
  std::string_view description() const override {
    return "host memory between MPI rank pairs: ping-pong (one-direction) and bidirectional "
           "(both-directions-added) bandwidth and latency over a size sweep; needs no GPU";
  }
  ProbeMode mode() const override { return ProbeMode::multi_node; }
  bool needs_gpu() const override { return false; }
  std::vector<Result> run(RunContext& context) override;
};

}  // namespace linkwise::probe
