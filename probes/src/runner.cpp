// run_probes: chooses probes from the registry, asks each why it cannot run here (filter), runs
// the rest, and assembles the report.
#include <algorithm>
#include <chrono>
#include <optional>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/probes.hpp"
#include "probe.hpp"

#if LINKWISE_PROBES_HAVE_MPI
#include "mpi_session.hpp"
#endif

namespace linkwise::probe {

nlohmann::json run_probes(const ProbeOptions& options) {
  if (options.list) return list_json();

  std::vector<std::unique_ptr<Probe>> chosen;
  for (const ProbeInfo& info : select_probes(options.only, options.multi_node)) chosen.push_back(make_probe(info.name));

  // When this build has none of the chosen probes, say so before MPI or CUDA start.
  const Machine build = Machine::of_this_build();
  std::vector<std::optional<std::string>> build_reasons;
  for (const auto& probe : chosen) build_reasons.push_back(probe->filter(build));
  if (std::all_of(build_reasons.begin(), build_reasons.end(), [](const auto& why) { return why.has_value(); })) {
    throw Error(ErrorKind::unsupported, *build_reasons.front(), "only");
  }

#if LINKWISE_PROBES_HAVE_MPI
  std::optional<MpiSession> mpi;
  if (options.multi_node) mpi.emplace();
#endif

  // What filter() judges. GPUs are looked for only when a chosen probe needs one (the host-only MPI
  // test never starts CUDA); under MPI every rank takes the fewest GPUs over all ranks, so every
  // rank filters alike and none waits in a collective the others skipped.
  Machine machine = build;
  if (std::any_of(chosen.begin(), chosen.end(), [](const auto& p) { return p->needs_gpu(); })) {
    int gpus = count_gpus(machine.no_gpu_reason);
#if LINKWISE_PROBES_HAVE_MPI
    if (mpi) {
      const int fewest = static_cast<int>(-mpi->max(-static_cast<double>(gpus)));
      if (fewest == 0 && gpus > 0) machine.no_gpu_reason = "another rank found none; run one rank per GPU";
      gpus = fewest;
    }
#endif
    machine.gpus = gpus;
  }
#if LINKWISE_PROBES_HAVE_MPI
  if (mpi) machine.mpi_ranks = mpi->size();
#endif

  // A run that could measure nothing stops with the first reason (one line, exit 2 in the CLI);
  // otherwise the report lists each probe that cannot run here as skipped, with why.
  std::vector<std::optional<std::string>> reasons;
  for (const auto& probe : chosen) reasons.push_back(probe->filter(machine));
  if (std::all_of(reasons.begin(), reasons.end(), [](const auto& why) { return why.has_value(); })) {
    throw Error(ErrorKind::unsupported, *reasons.front(), "only");
  }

  ProbeReport report;
  Environment& env = report.environment;
  fill_host_environment(env);
  env.quick = options.quick;
  RunContext context;
  context.quick = options.quick;
  context.machine = &machine;
  context.environment = &env;
  bool report_writer = true;
#if LINKWISE_PROBES_HAVE_MPI
  if (mpi) {
    context.mpi = &*mpi;
    env.ranks = mpi->size();
    env.nodes = mpi->nodes();
    env.mpi_library_version = mpi->library_version();
    report_writer = mpi->rank() == 0;
  }
#endif
  if (report_writer) context.progress = options.progress;

  for (std::size_t i = 0; i < chosen.size(); ++i) {
    Probe& probe = *chosen[i];
    const std::string key(probe.key());
    ProbeRun run;
    run.name = key;
    run.description = std::string(probe.description());
    const auto start = std::chrono::steady_clock::now();
    if (reasons[i]) {
      run.status = ProbeStatus::skipped;
      run.reason = reasons[i];
    } else {
      context.say("probe " + key + " ...");
      try {
        run.results = probe.run(context);
      } catch (const Skip& skip) {
        run.status = ProbeStatus::skipped;
        run.reason = skip.reason;
      } catch (const std::exception& e) {
        run.status = ProbeStatus::failed;
        run.reason = e.what();
      }
    }
    run.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    context.say("probe " + key + ": " + std::string(to_string(run.status)) +
                (run.reason ? " (" + *run.reason + ")" : "") + " in " +
                std::to_string(static_cast<int>(run.duration_s + 0.5)) + " s");
    report.probes.push_back(std::move(run));
  }
  return report_writer ? to_json(report) : nlohmann::json(nullptr);
}

}  // namespace linkwise::probe
