// The one probe registry: the probe classes (probe_classes.hpp), in the order they run. Every
// class is in every build; what a probe needs and why it cannot run here come from the object
// (key, description, mode, filter), never from a second table.
#include <algorithm>

#include <nlohmann/json.hpp>

#include "linkwise/enum_names.hpp"
#include "linkwise/error.hpp"
#include "linkwise/probes.hpp"
#include "probe.hpp"
#include "probe_classes.hpp"

namespace linkwise::probe {

namespace {

using Factory = std::unique_ptr<Probe> (*)();

template <class P>
std::unique_ptr<Probe> make() {
  return std::make_unique<P>();
}

// The order a run takes: topology first, since the report's environment comes from it.
constexpr Factory kFactories[] = {
    &make<Topology>,       &make<HostDevice>,    &make<DeviceMemory>,     &make<GpuGpu>,
    &make<NcclSingleNode>, &make<NcclMultiNode>, &make<MpiHostBandwidth>,
};

}  // namespace

std::vector<std::unique_ptr<Probe>> make_all_probes() {
  std::vector<std::unique_ptr<Probe>> probes;
  for (Factory make_one : kFactories) probes.push_back(make_one());
  return probes;
}

std::unique_ptr<Probe> make_probe(std::string_view key) {
  for (Factory make_one : kFactories) {
    if (auto probe = make_one(); probe->key() == key) return probe;
  }
  return nullptr;
}

namespace {

constexpr EnumNames<ProbeMode, 3> kModeNames{{
    {ProbeMode::any, "any"},
    {ProbeMode::single_node, "single-node"},
    {ProbeMode::multi_node, "multi-node"},
}};

}  // namespace

std::string_view to_string(ProbeMode mode) noexcept { return enum_name(kModeNames, mode); }

// The list reads each object; `unavailable` is its filter() on the build alone (the list looks
// for no GPU and starts no MPI).
const std::vector<ProbeInfo>& all_probes() {
  static const std::vector<ProbeInfo> probes = [] {
    const Machine build = Machine::of_this_build();
    std::vector<ProbeInfo> out;
    for (const auto& probe : make_all_probes()) {
      out.push_back({std::string(probe->key()), std::string(probe->description()), probe->mode(), probe->needs_gpu(),
                     probe->filter(build)});
    }
    return out;
  }();
  return probes;
}

bool has_gpu_probes() { return Machine::of_this_build().cuda_built; }

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
