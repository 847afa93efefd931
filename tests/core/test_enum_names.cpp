// Every public enum <-> string pair reads back what it writes, for every value: the one string
// table per enum (enum_names.hpp) is complete, and a misspelling is an error naming the field.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "linkwise/catalog.hpp"
#include "linkwise/error.hpp"
#include "linkwise/planner/framework.hpp"
#include "linkwise/planner/model.hpp"
#include "linkwise/planner/plan.hpp"
#include "linkwise/planner/search.hpp"
#include "linkwise/planner/serving.hpp"
#include "linkwise/planner/workload.hpp"

using namespace linkwise;

namespace {

// Each value's spelling is a real name (not the "?" of a value missing from its table) and parses
// back to the same value.
template <typename Enum, typename Parse>
void check_round_trip(std::initializer_list<Enum> values, Parse parse) {
  for (Enum value : values) {
    const std::string name(to_string(value));
    INFO(name);
    CHECK(name != "?");
    CHECK(parse(name) == value);
  }
  try {
    (void)parse("no-such-value");
    FAIL("a misspelt value must be refused");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    CHECK(std::string(e.what()).find("accepted:") != std::string::npos);
  }
}

}  // namespace

TEST_CASE("enum string tables round-trip every value") {
  using namespace planner;
  check_round_trip({Framework::auto_, Framework::megatron_core, Framework::nemo, Framework::torchtitan,
                    Framework::deepspeed, Framework::fsdp, Framework::hf_accelerate, Framework::hai_llm},
                   [](const std::string& t) { return parse_framework(t); });
  check_round_trip({Optimizer::adamw, Optimizer::adam8bit, Optimizer::adafactor, Optimizer::sgd},
                   [](const std::string& t) { return parse_optimizer(t); });
  check_round_trip({Offload::none, Offload::optimizer, Offload::optimizer_and_params},
                   [](const std::string& t) { return parse_offload(t); });
  check_round_trip({Engine::auto_, Engine::vllm, Engine::sglang, Engine::tensorrt_llm},
                   [](const std::string& t) { return parse_engine(t); });
  check_round_trip({Grouping::none, Grouping::instance, Grouping::gpu},
                   [](const std::string& t) { return parse_grouping(t, "per"); });
  check_round_trip({Fabric::nvswitch, Fabric::nvlink, Fabric::pcie, Fabric::infinity_fabric, Fabric::none},
                   [](const std::string& t) { return parse_fabric(t); });
  check_round_trip({NetworkType::efa, NetworkType::infiniband, NetworkType::roce, NetworkType::gpudirect_tcpx,
                    NetworkType::gpudirect_tcpxo, NetworkType::ethernet},
                   [](const std::string& t) { return parse_network_type(t); });
  check_round_trip({Architecture::volta, Architecture::turing, Architecture::ampere, Architecture::ada,
                    Architecture::hopper, Architecture::blackwell, Architecture::cdna3, Architecture::cdna4},
                   [](const std::string& t) { return parse_architecture(t); });
}

namespace {

// Enums the JSON writes but whose parser is internal to its file (read through the workload):
// every value has its own spelling in its table.
template <typename Enum>
void check_names(std::initializer_list<Enum> values) {
  std::set<std::string> seen;
  for (Enum value : values) {
    const std::string name(to_string(value));
    INFO(name);
    CHECK(name != "?");
    CHECK(seen.insert(name).second);
  }
}

}  // namespace

TEST_CASE("every value of the written-only enums has its own name") {
  using namespace planner;
  check_names({JobKind::pretrain, JobKind::finetune, JobKind::lora, JobKind::inference});
  check_names({Precision::bf16, Precision::fp16, Precision::fp8, Precision::fp4});
  check_names({Recompute::none, Recompute::selective, Recompute::full});
  check_names({Objective::cost, Objective::time, Objective::cost_within_deadline});
  check_names({AttentionKind::mha, AttentionKind::gqa, AttentionKind::mla});
  check_names({Reason::memory, Reason::deadline, Reason::budget, Reason::network_unknown, Reason::unpriced,
               Reason::latency_target, Reason::constraint});
}
