// What a build without CUDA or without MPI compiles in place of the missing run() bodies: the
// classes (probe_classes.hpp) still list their key, description and filter(), which says what to
// install; the runner never runs a probe its filter refuses, and a stub run() still only skips.
#include "probe.hpp"
#include "probe_classes.hpp"

namespace linkwise::probe {

#if !LINKWISE_PROBES_HAVE_CUDA
std::vector<Result> Topology::run(RunContext&) { skip_not_built(*this); }
std::vector<Result> HostDevice::run(RunContext&) { skip_not_built(*this); }
std::vector<Result> DeviceMemory::run(RunContext&) { skip_not_built(*this); }
std::vector<Result> GpuGpu::run(RunContext&) { skip_not_built(*this); }
std::vector<Result> NcclSingleNode::run(RunContext&) { skip_not_built(*this); }

int count_gpus(std::string& why_none) {
  why_none = "this linkwise was built without CUDA";
  return 0;
}
#endif

#if !(LINKWISE_PROBES_HAVE_CUDA && LINKWISE_PROBES_HAVE_MPI)
std::vector<Result> NcclMultiNode::run(RunContext&) { skip_not_built(*this); }
#endif

#if !LINKWISE_PROBES_HAVE_MPI
std::vector<Result> MpiHostBandwidth::run(RunContext&) { skip_not_built(*this); }
#endif

}  // namespace linkwise::probe
