// The probe list and the --only filter: testable without a GPU.
#include <algorithm>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/probes.hpp"
#include "probe.hpp"

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

TEST_CASE("every registered probe has a class, or a reason this build has none", "[probe][registry]") {
  for (const ProbeInfo& p : all_probes()) {
    INFO(p.name);
    const auto probe = make_probe(p.name);
    if (p.built()) {
      REQUIRE(probe);
      CHECK(probe->name() == p.name);
    } else {
      CHECK_FALSE(probe);
      REQUIRE(p.unavailable);
      CHECK_FALSE(p.unavailable->empty());
    }
  }
  CHECK_FALSE(make_probe("no-such-probe"));
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

TEST_CASE("running a probe this build lacks is unsupported with its reason", "[probe][registry]") {
  if (has_gpu_probes()) return;  // a CUDA build would look for a GPU
  ProbeOptions options;
  options.only = {"gpu-gpu"};
  try {
    run_probes(options);
    FAIL("expected unsupported");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unsupported);
    CHECK_THAT(e.what(), Catch::Matchers::Contains("the GPU probes were not built"));
  }
}
