// The inside of the probes library: one class per probe, all listed in registry.cpp. A probe fills
// results; the runner wraps them with the registry's name and description, the time taken, and a
// failure reason when it throws.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "linkwise/probe_report.hpp"

namespace linkwise::probe {

class MpiSession;  // mpi_session.hpp, when MPI is built

struct RunContext {
  bool quick = false;
  Environment* environment = nullptr;  // topology fills the GPU part; others read it
  std::function<void(std::string_view)> progress;
  MpiSession* mpi = nullptr;  // set for multi-node runs
  void say(std::string_view line) const {
    if (progress) progress(line);
  }
};

// A probe that cannot run here (one GPU for a pair test) throws Skip; the report says why.
struct Skip {
  std::string reason;
};

class Probe {
 public:
  virtual ~Probe() = default;
  virtual std::string_view name() const = 0;  // its key in the registry (registry.cpp)
  virtual std::vector<Result> run(RunContext& context) = 0;
};

// The factories, one per probe class (defined next to each class; in a build without CUDA or MPI,
// stubs.cpp defines the missing ones, returning null).
std::unique_ptr<Probe> make_topology_probe();
std::unique_ptr<Probe> make_host_device_probe();
std::unique_ptr<Probe> make_device_memory_probe();
std::unique_ptr<Probe> make_gpu_gpu_probe();
std::unique_ptr<Probe> make_nccl_probe();
std::unique_ptr<Probe> make_nccl_multi_node_probe();
std::unique_ptr<Probe> make_mpi_host_bandwidth_probe();

// The class registered under `name`; null for an unknown name or one this build lacks.
std::unique_ptr<Probe> make_probe(std::string_view name);

// The host part of the environment (no CUDA): time, hostname, DMI, hypervisor, version.
void fill_host_environment(Environment& environment);

// Returns the number of CUDA devices, or throws Error(unsupported) "no CUDA-capable GPU found (...)"
// (without CUDA: unsupported, the GPU probes' unavailable reason).
int require_gpus();

}  // namespace linkwise::probe
