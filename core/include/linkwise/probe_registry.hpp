// The list of probes `linkwise probe` knows: names, what each measures, what it needs. CPU-only, so
// `linkwise probe --list`, the --only filter and their tests work in every build; probes/ holds one
// class per entry and checks at start-up that its classes and this list agree.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace linkwise::probe {

enum class ProbeMode {
  any,          // runs alone or under MPI (rank 0 only): topology
  single_node,  // one process drives all GPUs of the node
  multi_node,   // every MPI rank takes part: needs `mpirun ... linkwise probe --multi-node`
};

struct ProbeInfo {
  std::string name;         // "host-device"
  std::string description;  // one line: what it measures and how bytes are counted
  ProbeMode mode = ProbeMode::single_node;
  bool needs_gpu = true;
};

// Every probe, in the order they run.
const std::vector<ProbeInfo>& all_probes();

// The probes to run. `only` empty: every probe of the mode (single node, or --multi-node).
// Otherwise exactly the named ones, in registry order, plus "topology" whenever a GPU probe is
// chosen (the report's environment comes from it). Throws invalid_input naming "only" for an
// unknown name, and for a probe that does not fit the mode.
std::vector<ProbeInfo> select_probes(const std::vector<std::string>& only, bool multi_node);

// "a,b , c" -> {"a", "b", "c"}; empty items are dropped.
std::vector<std::string> split_names(std::string_view comma_separated);

}  // namespace linkwise::probe
