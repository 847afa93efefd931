// The base class's filter(): the reasons a probe cannot run here that are known before it runs,
// each worded once.
#include "probe.hpp"

namespace linkwise::probe {

Machine Machine::of_this_build() {
  Machine machine;
  machine.cuda_built = LINKWISE_PROBES_HAVE_CUDA != 0;
  machine.mpi_built = LINKWISE_PROBES_HAVE_MPI != 0;
  return machine;
}

std::optional<std::string> Probe::filter(const Machine& machine) const {
  const bool needs_mpi = mode() == ProbeMode::multi_node;
  if (needs_gpu() && !machine.cuda_built) {
    std::string message =
        "the GPU probes were not built into this linkwise (no CUDA compiler at configure time): install the CUDA "
        "toolkit (nvcc and NCCL) and reconfigure with -DLINKWISE_CUDA=ON (pip: -Ccmake.define.LINKWISE_CUDA=ON)";
    if (needs_mpi && !machine.mpi_built) message += "; " + std::string(key()) + " also needs Open MPI";
    return message;
  }
  if (needs_mpi && !machine.mpi_built) {
    return "the MPI probes were not built into this linkwise (no MPI at configure time): install Open MPI "
           "(libopenmpi-dev, openmpi-bin) and reconfigure";
  }
  if (needs_gpu() && machine.gpus) {
    if (*machine.gpus == 0) return "no CUDA-capable GPU found (" + machine.no_gpu_reason + ")";
    if (*machine.gpus < min_gpus()) {
      return "needs at least " + std::to_string(min_gpus()) + " GPUs, found " + std::to_string(*machine.gpus);
    }
  }
  if (needs_mpi && machine.mpi_ranks && *machine.mpi_ranks < 2) {
    return "needs an MPI world of at least 2 ranks, found " + std::to_string(*machine.mpi_ranks) +
           ": run it under mpirun, e.g. mpirun -np 2 linkwise probe --multi-node" +
           (needs_gpu() ? " (one rank per GPU)" : " (one rank per node)");
  }
  return std::nullopt;
}

void skip_not_built(const Probe& probe) {
  throw Skip{probe.filter(Machine::of_this_build())
                 .value_or("probe \"" + std::string(probe.key()) + "\" was not built into this linkwise")};
}

}  // namespace linkwise::probe
