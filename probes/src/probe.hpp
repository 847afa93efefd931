// The inside of the probes library: the Probe base class, what filter() looks at (Machine), and
// what run() gets (RunContext). The probe classes are declared in probe_classes.hpp (every build)
// and listed, in order, in registry.cpp. A probe fills results; the runner wraps them with the
// probe's key and description, the time taken, and a reason when it is skipped or fails.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkwise/probe_report.hpp"
#include "linkwise/probes.hpp"

namespace linkwise::probe {

class MpiSession;  // mpi_session.hpp, when MPI is built

// What a probe's filter() judges: what this build has and what this process found. A part not
// looked for (nullopt) is not judged: `probe --list` looks for nothing, so it shows only what the
// build lacks; a run looks for GPUs when a chosen probe needs one, and for the MPI world under
// --multi-node. Tests fake it.
struct Machine {
  bool cuda_built = false;         // the GPU probes were compiled (CUDA and NCCL at configure time)
  bool mpi_built = false;          // the MPI probes were compiled
  std::optional<int> gpus;         // CUDA devices seen (the fewest over all ranks under MPI)
  std::string no_gpu_reason;       // why gpus == 0: "no NVIDIA driver: ..."
  std::optional<int> mpi_ranks;    // MPI_COMM_WORLD's size under --multi-node
  static Machine of_this_build();  // cuda_built and mpi_built as compiled; nothing looked for
};

// Counts the CUDA devices; 0 with the reason in `why_none` when there are none (no driver, no
// device, or no CUDA in this build). Defined in topology.cpp, or stubs.cpp without CUDA.
int count_gpus(std::string& why_none);

struct RunContext {
  bool quick = false;
  Environment* environment = nullptr;  // topology fills the GPU part; others read it
  const Machine* machine = nullptr;    // what filter() passed
  std::function<void(std::string_view)> progress;
  MpiSession* mpi = nullptr;  // set for multi-node runs
  void say(std::string_view line) const {
    if (progress) progress(line);
  }
};

// Only for what a probe learns while running (too little free GPU memory); what is known before
// running belongs in filter(). The runner records the reason as `skipped`.
struct Skip {
  std::string reason;
};

// One probe: its metadata, why it cannot run here (filter), and the measurement (run). The
// metadata and filter are compiled in every build; run() is in the probe's .cpp/.cu, or in
// stubs.cpp for a build without CUDA or MPI. Constructing a probe touches no GPU.
class Probe {
 public:
  virtual ~Probe() = default;
  virtual std::string_view key() const = 0;          // "host-device": the name --only takes
  virtual std::string_view description() const = 0;  // one line: what it measures, how bytes are counted
  virtual ProbeMode mode() const = 0;
  virtual bool needs_gpu() const { return true; }               // also: needs the CUDA build
  virtual int min_gpus() const { return needs_gpu() ? 1 : 0; }  // per process (per rank under MPI)

  // Why this probe cannot run on `machine`, checked in this order: not built (no CUDA, no MPI:
  // with how to get it), no GPU, too few GPUs, a multi-node probe without an MPI world of at least
  // 2 ranks. nullopt: it can run. A probe with other needs overrides it (and calls this one).
  virtual std::optional<std::string> filter(const Machine& machine) const;

  virtual std::vector<Result> run(RunContext& context) = 0;
};

// Every registered probe, one new object each, in the order they run (registry.cpp).
std::vector<std::unique_ptr<Probe>> make_all_probes();

// The class registered under `key`; null for an unknown key.
std::unique_ptr<Probe> make_probe(std::string_view key);

// For the stubs of stubs.cpp: a skip with the reason this build lacks `probe`.
[[noreturn]] void skip_not_built(const Probe& probe);

// The host part of the environment (no CUDA): time, hostname, DMI, hypervisor, version.
void fill_host_environment(Environment& environment);

}  // namespace linkwise::probe
