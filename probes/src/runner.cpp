// run_probes: chooses probes from the registry, runs each, and assembles the report.
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

namespace {

[[noreturn]] void throw_unavailable(const ProbeInfo& probe) {
  throw Error(ErrorKind::unsupported, probe.unavailable.value_or("probe \"" + probe.name + "\" has no class"), "only");
}

}  // namespace

nlohmann::json run_probes(const ProbeOptions& options) {
  if (options.list) return list_json();

  const std::vector<ProbeInfo> chosen = select_probes(options.only, options.multi_node);
  for (const ProbeInfo& p : chosen) {
    if (p.unavailable) throw_unavailable(p);
  }
  if (std::any_of(chosen.begin(), chosen.end(), [](const ProbeInfo& p) { return p.needs_gpu; })) {
    require_gpus();  // one clear line before anything runs
  }

#if LINKWISE_PROBES_HAVE_MPI
  std::optional<MpiSession> mpi;
  if (options.multi_node) mpi.emplace();
#endif

  ProbeReport report;
  Environment& env = report.environment;
  fill_host_environment(env);
  env.quick = options.quick;
  RunContext context;
  context.quick = options.quick;
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

  for (const ProbeInfo& info : chosen) {
    const std::unique_ptr<Probe> probe = make_probe(info.name);
    if (!probe) throw_unavailable(info);
    ProbeRun run;
    run.name = info.name;
    run.description = info.description;
    context.say("probe " + info.name + " ...");
    const auto start = std::chrono::steady_clock::now();
    try {
      run.results = probe->run(context);
    } catch (const Skip& skip) {
      run.status = ProbeStatus::skipped;
      run.reason = skip.reason;
    } catch (const std::exception& e) {
      run.status = ProbeStatus::failed;
      run.reason = e.what();
    }
    run.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    context.say("probe " + info.name + ": " + std::string(to_string(run.status)) +
                (run.reason ? " (" + *run.reason + ")" : "") + " in " +
                std::to_string(static_cast<int>(run.duration_s + 0.5)) + " s");
    report.probes.push_back(std::move(run));
  }
  return report_writer ? to_json(report) : nlohmann::json(nullptr);
}

}  // namespace linkwise::probe
