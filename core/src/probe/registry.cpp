// The probe list and the --only filter.
#include <algorithm>

#include "linkwise/error.hpp"
#include "linkwise/probe_registry.hpp"

namespace linkwise::probe {

const std::vector<ProbeInfo>& all_probes() {
  static const std::vector<ProbeInfo> probes{
      {"topology",
       "GPUs (name, UUID, PCI bus id, NUMA node, PCIe link, clocks, power limit, ECC), P2P access "
       "matrix, NVLink links (NVML), driver/runtime/NCCL versions, VM detection",
       ProbeMode::any, true},
      {"host-device",
       "H2D, D2H (one-direction) and both at once (both-directions-added), pinned and pageable, per "
       "GPU from its NUMA node's CPUs, and all GPUs at once",
       ProbeMode::single_node, true},
      {"device-memory",
       "device memory: copy-engine copy and SM kernels read, write, copy, triad (bytes read + "
       "written, as each result states)",
       ProbeMode::single_node, true},
      {"gpu-gpu",
       "GPU pairs: unidirectional (one-direction) and bidirectional (both-directions-added) "
       "bandwidth by copy engine and by SM kernel, and latency, with P2P on and off",
       ProbeMode::single_node, true},
      {"nccl",
       "NCCL all-reduce, all-gather, reduce-scatter, all-to-all over the node's GPUs, size sweep, "
       "algbw and busbw as nccl-tests define them",
       ProbeMode::single_node, true},
      {"nccl-multi-node",
       "the NCCL collectives across nodes, one rank per GPU under MPI (ncclCommInitRank)",
       ProbeMode::multi_node, true},
      {"mpi-host-bandwidth",
       "host memory between MPI rank pairs: ping-pong (one-direction) and bidirectional "
       "(both-directions-added) bandwidth and latency over a size sweep; needs no GPU",
       ProbeMode::multi_node, false},
  };
  return probes;
}

std::vector<std::string> split_names(std::string_view comma_separated) {
  std::vector<std::string> names;
  std::string current;
  auto flush = [&] {
    const auto first = current.find_first_not_of(" \t");
    if (first != std::string::npos) {
      names.push_back(current.substr(first, current.find_last_not_of(" \t") - first + 1));
    }
    current.clear();
  };
  for (char c : comma_separated) {
    if (c == ',') {
      flush();
    } else {
      current += c;
    }
  }
  flush();
  return names;
}

std::vector<ProbeInfo> select_probes(const std::vector<std::string>& only, bool multi_node) {
  const auto& probes = all_probes();
  auto fits_mode = [&](const ProbeInfo& p) {
    return p.mode == ProbeMode::any || (p.mode == ProbeMode::multi_node) == multi_node;
  };
  std::vector<ProbeInfo> chosen;
  if (only.empty()) {
    for (const ProbeInfo& p : probes) {
      if (fits_mode(p)) chosen.push_back(p);
    }
    return chosen;
  }

  std::string known;
  for (const ProbeInfo& p : probes) known += (known.empty() ? "" : ", ") + p.name;
  for (const std::string& name : only) {
    auto it = std::find_if(probes.begin(), probes.end(), [&](const ProbeInfo& p) { return p.name == name; });
    if (it == probes.end()) throw_invalid("only", "unknown probe \"" + name + "\"; expected one of " + known);
    if (!fits_mode(*it)) {
      throw_invalid("only", it->mode == ProbeMode::multi_node
                                ? "probe \"" + name + "\" runs across nodes: use --multi-node under mpirun"
                                : "probe \"" + name + "\" runs on one node: run it without --multi-node");
    }
  }
  bool any_gpu = false;
  for (const ProbeInfo& p : probes) {
    if (std::find(only.begin(), only.end(), p.name) != only.end()) any_gpu = any_gpu || p.needs_gpu;
  }
  for (const ProbeInfo& p : probes) {
    const bool named = std::find(only.begin(), only.end(), p.name) != only.end();
    if (named || (p.name == "topology" && any_gpu)) chosen.push_back(p);
  }
  return chosen;
}

}  // namespace linkwise::probe
