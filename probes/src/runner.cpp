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

// Every probe class compiled into this build, in one list (like nvbandwidth's testcase list).
std::vector<std::unique_ptr<Probe>> probe_classes() {
  std::vector<std::unique_ptr<Probe>> probes;
#if LINKWISE_PROBES_HAVE_CUDA
  probes.push_back(make_topology_probe());
  probes.push_back(make_host_device_probe());
  probes.push_back(make_device_memory_probe());
  probes.push_back(make_gpu_gpu_probe());
  probes.push_back(make_nccl_probe());
#if LINKWISE_PROBES_HAVE_MPI
  probes.push_back(make_nccl_multi_node_probe());
#endif
#endif
#if LINKWISE_PROBES_HAVE_MPI
  probes.push_back(make_mpi_host_bandwidth_probe());
#endif
  // The classes and the CPU-side registry (probe_registry.hpp) must name the same probes.
  for (const auto& probe : probes) {
    const auto& infos = all_probes();
    if (std::none_of(infos.begin(), infos.end(), [&](const ProbeInfo& i) { return i.name == probe->name(); })) {
      throw Error(ErrorKind::internal, "probe class \"" + std::string(probe->name()) + "\" is not in the registry");
    }
  }
  return probes;
}

std::string_view to_string(ProbeMode mode) {
  switch (mode) {
    case ProbeMode::any: return "any";
    case ProbeMode::single_node: return "single-node";
    case ProbeMode::multi_node: return "multi-node";
  }
  return "any";
}

[[noreturn]] void throw_not_built(const ProbeInfo& probe) {
  const BuiltProbes built = built_probes();
  std::string message;
  if (probe.needs_gpu && !built.gpu) {
    message = "the GPU probes were not built into this linkwise (no CUDA compiler at configure time): install "
              "the CUDA toolkit (nvcc and NCCL) and reconfigure with -DLINKWISE_CUDA=ON";
    if (probe.mode == ProbeMode::multi_node && !built.mpi) message += "; " + probe.name + " also needs Open MPI";
  } else {
    message = "the MPI probes were not built into this linkwise (no MPI at configure time): install Open MPI "
              "(libopenmpi-dev, openmpi-bin) and reconfigure";
  }
  throw Error(ErrorKind::unsupported, message, "only");
}

}  // namespace

BuiltProbes built_probes() {
  return {LINKWISE_PROBES_HAVE_CUDA != 0, LINKWISE_PROBES_HAVE_MPI != 0};
}

bool is_built(const ProbeInfo& probe) {
  const BuiltProbes built = built_probes();
  if (probe.needs_gpu && !built.gpu) return false;
  if (probe.mode == ProbeMode::multi_node && !built.mpi) return false;
  return true;
}

std::vector<ProbeInfo> list_probes() { return all_probes(); }

nlohmann::json run_probes(const ProbeOptions& options) {
  if (options.list) {
    nlohmann::json list = nlohmann::json::array();
    for (const ProbeInfo& p : list_probes()) {
      list.push_back({{"name", p.name},
                      {"description", p.description},
                      {"mode", std::string(to_string(p.mode))},
                      {"needs_gpu", p.needs_gpu},
                      {"built", is_built(p)}});
    }
    return {{"probes", list}};
  }

  const std::vector<ProbeInfo> chosen = select_probes(options.only, options.multi_node);
  for (const ProbeInfo& p : chosen) {
    if (!is_built(p)) throw_not_built(p);
  }
#if LINKWISE_PROBES_HAVE_CUDA
  if (std::any_of(chosen.begin(), chosen.end(), [](const ProbeInfo& p) { return p.needs_gpu; })) {
    require_gpus();  // one clear line before anything runs
  }
#endif

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

  auto classes = probe_classes();
  for (const ProbeInfo& info : chosen) {
    auto it = std::find_if(classes.begin(), classes.end(), [&](const auto& p) { return p->name() == info.name; });
    if (it == classes.end()) throw_not_built(info);
    ProbeRun run;
    run.name = info.name;
    run.description = info.description;
    context.say("probe " + info.name + " ...");
    const auto start = std::chrono::steady_clock::now();
    try {
      run.results = (*it)->run(context);
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
