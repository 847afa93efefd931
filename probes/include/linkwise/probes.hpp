// The probes library: measures an instance's links on the instance and returns a probe report
// (core/include/linkwise/probe_report.hpp describes it). The only header service/ includes.
//
// What is in a build: the GPU probes when CUDA was found (LINKWISE_CUDA), the MPI probes (host
// bandwidth; NCCL across nodes also needs CUDA) when MPI was found. built_probes() says which.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "linkwise/probe_registry.hpp"

namespace linkwise::probe {

struct ProbeOptions {
  bool quick = false;              // fewer samples and sizes: under 60 s on an 8-GPU node
  std::vector<std::string> only;   // probe names; empty: all probes of the mode
  bool list = false;               // run nothing, return the probe list
  bool multi_node = false;         // under mpirun: every rank calls run_probes
  std::function<void(std::string_view)> progress;  // one line per step; may be empty
};

struct BuiltProbes {
  bool gpu = false;  // CUDA probes compiled in
  bool mpi = false;  // MPI probes compiled in
};
BuiltProbes built_probes();

// The registry, each with whether this build can run it.
std::vector<ProbeInfo> list_probes();
bool is_built(const ProbeInfo& probe);

// Runs the chosen probes and returns the report document (to_json(ProbeReport)), or, with
// `list`, {"probes": [{"name", "description", "mode", "needs_gpu", "built"}]}.
// Multi-node: initialises and finalises MPI; every rank must call it; only rank 0 gets the
// report, the other ranks get null.
// Throws Error(unsupported) "no CUDA-capable GPU found (...)" when a GPU probe is chosen and the
// machine has none, and Error(unsupported) naming the missing part when this build lacks a probe;
// invalid_input for a bad --only.
nlohmann::json run_probes(const ProbeOptions& options);

}  // namespace linkwise::probe
