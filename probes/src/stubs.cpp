// The stubs a build without CUDA or without MPI compiles in place of the missing probe classes: the
// registry still lists those probes, says why they cannot run (registry.cpp), and never runs them.
#include "linkwise/error.hpp"
#include "linkwise/probes.hpp"
#include "probe.hpp"

namespace linkwise::probe {

#if !LINKWISE_PROBES_HAVE_CUDA
std::unique_ptr<Probe> make_topology_probe() { return nullptr; }
std::unique_ptr<Probe> make_host_device_probe() { return nullptr; }
std::unique_ptr<Probe> make_device_memory_probe() { return nullptr; }
std::unique_ptr<Probe> make_gpu_gpu_probe() { return nullptr; }
std::unique_ptr<Probe> make_nccl_probe() { return nullptr; }

int require_gpus() {
  const auto& probes = all_probes();
  for (const ProbeInfo& p : probes) {
    if (p.needs_gpu && p.unavailable) throw Error(ErrorKind::unsupported, *p.unavailable, "only");
  }
  throw Error(ErrorKind::unsupported, "no CUDA-capable GPU found (this linkwise has no CUDA)");
}
#endif

#if !(LINKWISE_PROBES_HAVE_CUDA && LINKWISE_PROBES_HAVE_MPI)
std::unique_ptr<Probe> make_nccl_multi_node_probe() { return nullptr; }
#endif

#if !LINKWISE_PROBES_HAVE_MPI
std::unique_ptr<Probe> make_mpi_host_bandwidth_probe() { return nullptr; }
#endif

}  // namespace linkwise::probe
