// The one probe registry: each probe's key, description, mode and class, in the order they run,
// and why this build cannot run it. A build without CUDA or MPI links the stubs of stubs.cpp
// (factories returning null); their entries say what to install.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "linkwise/enum_names.hpp"
#include "linkwise/error.hpp"
#include "linkwise/probes.hpp"
#include "probe.hpp"

namespace linkwise::probe {

namespace {

constexpr bool kHaveCuda = LINKWISE_PROBES_HAVE_CUDA != 0;
constexpr bool kHaveMpi = LINKWISE_PROBES_HAVE_MPI != 0;

// The one "not built" message per missing part.
std::optional<std::string> unavailable_reason(const std::string& name, ProbeMode mode, bool needs_gpu) {
  const bool needs_mpi = mode == ProbeMode::multi_node;
  if (needs_gpu && !kHaveCuda) {
    std::string message =
        "the GPU probes were not built into this linkwise (no CUDA compiler at configure time): install the CUDA "
        "toolkit (nvcc and NCCL) and reconfigure with -DLINKWISE_CUDA=ON (pip: -Ccmake.define.LINKWISE_CUDA=ON)";
    if (needs_mpi && !kHaveMpi) message += "; " + name + " also needs Open MPI";
    return message;
  }
  if (needs_mpi && !kHaveMpi) {
    return "the MPI probes were not built into this linkwise (no MPI at configure time): install Open MPI "
           "(libopenmpi-dev, openmpi-bin) and reconfigure";
  }
  return std::nullopt;
}

struct Entry {
  ProbeInfo info;
  std::unique_ptr<Probe> (*make)();
};

Entry entry(std::string name, std::string description, ProbeMode mode, bool needs_gpu,
            std::unique_ptr<Probe> (*make)()) {
  ProbeInfo info{name, std::move(description), mode, needs_gpu, unavailable_reason(name, mode, needs_gpu)};
  return {std::move(info), make};
}

const std::vector<Entry>& entries() {
  static const std::vector<Entry> list{
      entry("topology",
            "GPUs (name, UUID, PCI bus id, NUMA node, PCIe link, clocks, power limit, ECC), P2P access "
            "matrix, NVLink links (NVML), driver/runtime/NCCL versions, VM detection",
            ProbeMode::any, true, &make_topology_probe),
      entry("host-device",
            "H2D, D2H (one-direction) and both at once (both-directions-added), pinned and pageable, per "
            "GPU from its NUMA node's CPUs, and all GPUs at once",
            ProbeMode::single_node, true, &make_host_device_probe),
      entry("device-memory",
            "device memory: copy-engine copy and SM kernels read, write, copy, triad (bytes read + "
            "written, as each result states)",
            ProbeMode::single_node, true, &make_device_memory_probe),
      entry("gpu-gpu",
            "GPU pairs: unidirectional (one-direction) and bidirectional (both-directions-added) "
            "bandwidth by copy engine and by SM kernel, and latency, with P2P on and off",
            ProbeMode::single_node, true, &make_gpu_gpu_probe),
      entry("nccl",
            "NCCL all-reduce, all-gather, reduce-scatter, all-to-all over the node's GPUs, size sweep, "
            "algbw and busbw as nccl-tests define them",
            ProbeMode::single_node, true, &make_nccl_probe),
      entry("nccl-multi-node", "the NCCL collectives across nodes, one rank per GPU under MPI (ncclCommInitRank)",
            ProbeMode::multi_node, true, &make_nccl_multi_node_probe),
      entry("mpi-host-bandwidth",
            "host memory between MPI rank pairs: ping-pong (one-direction) and bidirectional "
            "(both-directions-added) bandwidth and latency over a size sweep; needs no GPU",
            ProbeMode::multi_node, false, &make_mpi_host_bandwidth_probe),
  };
  return list;
}

}  // namespace

namespace {

constexpr EnumNames<ProbeMode, 3> kModeNames{{
    {ProbeMode::any, "any"},
    {ProbeMode::single_node, "single-node"},
    {ProbeMode::multi_node, "multi-node"},
}};

}  // namespace

std::string_view to_string(ProbeMode mode) noexcept { return enum_name(kModeNames, mode); }

const std::vector<ProbeInfo>& all_probes() {
  static const std::vector<ProbeInfo> probes = [] {
    std::vector<ProbeInfo> out;
    for (const Entry& e : entries()) out.push_back(e.info);
    return out;
  }();
  return probes;
}

bool has_gpu_probes() { return kHaveCuda; }

std::unique_ptr<Probe> make_probe(std::string_view name) {
  for (const Entry& e : entries()) {
    if (e.info.name == name) return e.make();
  }
  return nullptr;
}

nlohmann::json list_json() {
  nlohmann::json list = nlohmann::json::array();
  for (const ProbeInfo& p : all_probes()) {
    list.push_back({{"name", p.name},
                    {"description", p.description},
                    {"mode", std::string(to_string(p.mode))},
                    {"needs_gpu", p.needs_gpu},
                    {"built", p.built()},
                    {"status", p.built() ? "built" : "skipped"},
                    {"reason", p.unavailable ? nlohmann::json(*p.unavailable) : nlohmann::json(nullptr)}});
  }
  return {{"probes", list}};
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
