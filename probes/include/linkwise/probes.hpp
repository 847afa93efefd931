// The probes library: measures an instance's links on the instance and returns a probe report
// (core/include/linkwise/probe_report.hpp describes it; the report model and validate stay in core).
// The only header the CLI and the Python binding include for probes: the registry (names,
// descriptions, modes), what this build can run and why not, selection, and the run.
//
// The library exists in every build. The GPU probes need CUDA (LINKWISE_CUDA), the multi-node
// probes MPI; a probe this build lacks is still listed, with the reason it cannot run. Each probe
// is one class that says why it cannot run here (probes/src/probe.hpp, Probe::filter).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace linkwise::probe {

enum class ProbeMode {
  any,          // runs alone or under MPI (rank 0 only): topology
  single_node,  // one process drives all GPUs of the node
  multi_node,   // every MPI rank takes part: needs `mpirun ... linkwise probe --multi-node`
};
// "any", "single-node", "multi-node".
std::string_view to_string(ProbeMode mode) noexcept;

struct ProbeInfo {
  std::string name;         // "host-device"
  std::string description;  // one line: what it measures and how bytes are counted
  ProbeMode mode = ProbeMode::single_node;
  bool needs_gpu = true;
  // Why this build cannot run it (no CUDA or no MPI at configure time, with how to get it): the
  // probe's filter() with only the build known; empty when it is built. Whether the machine has
  // enough GPUs, or an MPI world, is found out when it runs.
  std::optional<std::string> unavailable;
  bool built() const { return !unavailable; }
};

// Every probe, in the order they run, each with its availability in this build.
const std::vector<ProbeInfo>& all_probes();

// True when this build has the GPU probes (linkwise.has_probes() in Python).
bool has_gpu_probes();

// The probes to run. `only` empty: every probe of the mode (single node, or --multi-node).
// Otherwise exactly the named ones, in registry order, plus "topology" whenever a GPU probe is
// chosen (the report's environment comes from it). Throws invalid_input naming "only" for an
// unknown name, and for a probe that does not fit the mode.
std::vector<ProbeInfo> select_probes(const std::vector<std::string>& only, bool multi_node);

// "a,b , c" -> {"a", "b", "c"}; empty items are dropped.
std::vector<std::string> split_names(std::string_view comma_separated);

// {"probes": [{"name", "description", "mode", "needs_gpu", "built", "status", "reason"}]}: status
// "built" or "skipped", reason null or why.
nlohmann::json list_json();

struct ProbeOptions {
  bool quick = false;                              // fewer samples and sizes: under 60 s on an 8-GPU node
  std::vector<std::string> only;                   // probe names; empty: all probes of the mode
  bool list = false;                               // run nothing, return list_json()
  bool multi_node = false;                         // under mpirun: every rank calls run_probes
  std::function<void(std::string_view)> progress;  // one line per step; may be empty
};

// Runs the chosen probes and returns the report document (to_json(ProbeReport)), or, with
// `list`, list_json(). Multi-node: initialises and finalises MPI; every rank must call it; only
// rank 0 gets the report, the other ranks get null. A chosen probe that cannot run here (its
// filter: not built, no GPU, too few GPUs, no MPI world) is `skipped` in the report with the reason.
// Throws invalid_input for a bad --only; Error(unsupported, field "only") with the first probe's
// reason when none of the chosen probes can run here ("no CUDA-capable GPU found (...)" without a
// GPU; the "not built" reason in a build without CUDA).
nlohmann::json run_probes(const ProbeOptions& options);

}  // namespace linkwise::probe
