// The probe list, the --only filter and each probe's filter(): testable without a GPU.
#include <algorithm>
#include <set>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/probes.hpp"
#include "probe.hpp"
#include "probe_classes.hpp"

using namespace linkwise;
using namespace linkwise::probe;

namespace {
std::vector<std::string> names(const std::vector<ProbeInfo>& probes) {
  std::vector<std::string> out;
  for (const auto& p : probes) out.push_back(p.name);
  return out;
}
}  // namespace

TEST_CASE("the registry lists every probe once with a description", "[probe][registry]") {
  const auto& probes = all_probes();
  auto list = names(probes);
  CHECK(list == std::vector<std::string>{"topology", "host-device", "device-memory", "gpu-gpu", "nccl",
                                         "nccl-multi-node", "mpi-host-bandwidth"});
  for (const auto& p : probes) CHECK_FALSE(p.description.empty());
  auto host_mpi = std::find_if(probes.begin(), probes.end(), [](auto& p) { return p.name == "mpi-host-bandwidth"; });
  CHECK_FALSE(host_mpi->needs_gpu);
}

TEST_CASE("without --only: every probe of the mode", "[probe][registry]") {
  CHECK(names(select_probes({}, false)) ==
        std::vector<std::string>{"topology", "host-device", "device-memory", "gpu-gpu", "nccl"});
  CHECK(names(select_probes({}, true)) ==
        std::vector<std::string>{"topology", "nccl-multi-node", "mpi-host-bandwidth"});
}

TEST_CASE("only: keeps registry order and adds topology for GPU probes", "[probe][registry]") {
  CHECK(names(select_probes({"nccl", "host-device"}, false)) ==
        std::vector<std::string>{"topology", "host-device", "nccl"});
  CHECK(names(select_probes({"topology"}, false)) == std::vector<std::string>{"topology"});
  // The host-only MPI test needs no GPU, so no topology either.
  CHECK(names(select_probes({"mpi-host-bandwidth"}, true)) == std::vector<std::string>{"mpi-host-bandwidth"});
}

TEST_CASE("only: rejects unknown names and probes of the other mode", "[probe][registry]") {
  try {
    select_probes({"nvlink"}, false);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    CHECK(e.field() == "only");
    CHECK(std::string(e.what()).find("host-device") != std::string::npos);  // lists the known names
  }
  CHECK_THROWS_AS(select_probes({"mpi-host-bandwidth"}, false), Error);
  CHECK_THROWS_AS(select_probes({"gpu-gpu"}, true), Error);
}

TEST_CASE("split_names trims and drops empty items", "[probe][registry]") {
  CHECK(split_names("a, b ,,c") == std::vector<std::string>{"a", "b", "c"});
  CHECK(split_names("").empty());
  CHECK(split_names(" nccl ") == std::vector<std::string>{"nccl"});
}

TEST_CASE("every registered probe has a class with its own key, description and mode", "[probe][registry]") {
  const auto probes = make_all_probes();
  REQUIRE(probes.size() == all_probes().size());
  std::set<std::string> keys;
  for (std::size_t i = 0; i < probes.size(); ++i) {
    const Probe& probe = *probes[i];
    const ProbeInfo& info = all_probes()[i];
    INFO(info.name);
    CHECK_FALSE(probe.key().empty());
    CHECK_FALSE(probe.description().empty());
    CHECK(keys.insert(std::string(probe.key())).second);  // keys are unique
    // The list is read from the object, nothing else.
    CHECK(info.name == probe.key());
    CHECK(info.description == probe.description());
    CHECK(info.mode == probe.mode());
    CHECK(info.needs_gpu == probe.needs_gpu());
    CHECK(info.unavailable == probe.filter(Machine::of_this_build()));
    const auto made = make_probe(info.name);
    REQUIRE(made);
    CHECK(made->key() == info.name);
  }
  CHECK_FALSE(make_probe("no-such-probe"));
}

namespace {
// A machine with everything built and `gpus` GPUs; no MPI world unless given.
Machine fake_machine(int gpus, std::optional<int> mpi_ranks = std::nullopt) {
  Machine machine;
  machine.cuda_built = true;
  machine.mpi_built = true;
  machine.gpus = gpus;
  machine.no_gpu_reason = "faked";
  machine.mpi_ranks = mpi_ranks;
  return machine;
}

std::optional<std::string> filter_of(std::string_view key, const Machine& machine) {
  const auto probe = make_probe(key);
  REQUIRE(probe);
  return probe->filter(machine);
}
}  // namespace

TEST_CASE("filter: one GPU is too few for the pair and collective probes", "[probe][filter]") {
  const Machine one_gpu = fake_machine(1);
  for (const char* key : {"gpu-gpu", "nccl"}) {
    INFO(key);
    const auto why = filter_of(key, one_gpu);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Matchers::Contains("needs at least 2 GPUs, found 1"));
  }
  for (const char* key : {"topology", "host-device", "device-memory"}) {
    INFO(key);
    CHECK_FALSE(filter_of(key, one_gpu));
  }
  CHECK_FALSE(filter_of("gpu-gpu", fake_machine(2)));
  CHECK_FALSE(filter_of("nccl", fake_machine(8)));
}

TEST_CASE("filter: no GPU, and nothing built, come before the GPU count", "[probe][filter]") {
  const auto why = filter_of("gpu-gpu", fake_machine(0));
  REQUIRE(why);
  CHECK(*why == "no CUDA-capable GPU found (faked)");
  CHECK_FALSE(filter_of("mpi-host-bandwidth", fake_machine(0, 2)));  // needs no GPU

  Machine no_cuda = fake_machine(0);
  no_cuda.cuda_built = false;
  const auto not_built = filter_of("gpu-gpu", no_cuda);
  REQUIRE(not_built);
  CHECK_THAT(*not_built, Catch::Matchers::Contains("-DLINKWISE_CUDA=ON"));

  Machine no_mpi = fake_machine(8, 4);
  no_mpi.mpi_built = false;
  CHECK_THAT(filter_of("mpi-host-bandwidth", no_mpi).value_or(""),
             Catch::Matchers::Contains("the MPI probes were not built"));
  CHECK_FALSE(filter_of("nccl", no_mpi));  // a single-node probe needs no MPI
}

TEST_CASE("filter: multi-node probes need an MPI world of at least 2 ranks", "[probe][filter]") {
  for (const char* key : {"nccl-multi-node", "mpi-host-bandwidth"}) {
    INFO(key);
    const auto why = filter_of(key, fake_machine(8, 1));
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Matchers::Contains("needs an MPI world of at least 2 ranks, found 1"));
    CHECK_FALSE(filter_of(key, fake_machine(8, 2)));
  }
  // Without MPI in this build the same probes say what to install instead.
  if (!Machine::of_this_build().mpi_built) {
    CHECK_THAT(filter_of("mpi-host-bandwidth", Machine::of_this_build()).value_or(""),
               Catch::Matchers::Contains("the MPI probes were not built"));
  }
}

TEST_CASE("filter on this machine: the GPU probes say why they cannot run where there is no GPU", "[probe][filter]") {
  Machine here = Machine::of_this_build();
  here.gpus = count_gpus(here.no_gpu_reason);
  INFO("GPUs here: " << *here.gpus << " (" << here.no_gpu_reason << ")");
  for (const auto& probe : make_all_probes()) {
    INFO(probe->key());
    const auto why = probe->filter(here);
    if (!probe->needs_gpu()) continue;
    if (!here.cuda_built) {
      REQUIRE(why);
      CHECK_THAT(*why, Catch::Matchers::Contains("the GPU probes were not built"));
    } else if (*here.gpus == 0) {
      REQUIRE(why);
      CHECK_THAT(*why, Catch::Matchers::StartsWith("no CUDA-capable GPU found ("));
    } else {
      CHECK_FALSE((why && why->find("no CUDA-capable GPU") != std::string::npos));
    }
  }
}

TEST_CASE("a build without CUDA lists the GPU probes as skipped, with how to get them", "[probe][registry]") {
  CHECK(has_gpu_probes() == (LINKWISE_PROBES_HAVE_CUDA != 0));
  const nlohmann::json list = list_json();
  REQUIRE(list["probes"].size() == all_probes().size());
  for (const auto& p : list["probes"]) {
    INFO(p.dump());
    CHECK(p["status"] == (p["built"].get<bool>() ? "built" : "skipped"));
    CHECK(p["reason"].is_null() == p["built"].get<bool>());
    if (p["needs_gpu"].get<bool>() && !has_gpu_probes()) {
      CHECK(p["status"] == "skipped");
      CHECK_THAT(p["reason"].get<std::string>(), Catch::Matchers::Contains("-DLINKWISE_CUDA=ON"));
    }
  }
  CHECK(to_string(ProbeMode::multi_node) == "multi-node");
  CHECK(to_string(ProbeMode::single_node) == "single-node");
}

TEST_CASE("a run that can measure nothing here is unsupported with the first probe's reason", "[probe][registry]") {
  std::string why_none;
  if (has_gpu_probes() && count_gpus(why_none) > 0) return;  // a GPU machine would measure
  ProbeOptions options;
  options.only = {"gpu-gpu"};
  try {
    run_probes(options);
    FAIL("expected unsupported");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unsupported);
    CHECK(e.field() == "only");
    CHECK_THAT(e.what(), Catch::Matchers::Contains(has_gpu_probes() ? "no CUDA-capable GPU found ("
                                                                    : "the GPU probes were not built"));
  }
}
