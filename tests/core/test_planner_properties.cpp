// Properties the time and memory models must have whatever their constants.
#include <catch2/catch.hpp>

#include "linkwise/planner/engine.hpp"
#include "linkwise/planner/framework_memory.hpp"
#include "linkwise/planner/search.hpp"
#include "planner_test_util.hpp"

using namespace linkwise::planner;

namespace {

struct Case {
  const char* preset;
  int nodes;
  Layout layout;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (int zero : {0, 1, 2, 3})
    for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
      Layout a;  // 4 nodes: tp 8, pp 2, dp 2
      a.tp = 8;
      a.pp = 2;
      a.dp = 2;
      a.zero = zero;
      a.recompute = rc;
      a.sequence_parallel = true;
      a.micro_batch = 1;
      out.push_back({"llama3.1-70b", 4, a});
      Layout b;  // 2 nodes: tp 2, pp 1, dp 8 (TP inside, DP across)
      b.tp = 2;
      b.pp = 1;
      b.dp = 8;
      b.zero = zero;
      b.recompute = rc;
      b.micro_batch = 2;
      out.push_back({"llama3.1-8b", 2, b});
      Layout c;  // 2 nodes: tp 4, pp 4, dp 1, interleaved
      c.tp = 4;
      c.pp = 4;
      c.dp = 1;
      c.zero = zero;
      c.recompute = rc;
      c.virtual_stages = 2;
      c.micro_batch = 1;
      out.push_back({"llama2-13b", 2, c});
    }
  return out;
}

Job pretrain() {
  Job j;
  j.seq_len = 4096;
  j.global_batch = 64;
  return j;
}

Estimate run(const Case& c, const linkwise::planner::Hardware& hw, const Job& job = pretrain()) {
  const PlannerConstants& k = default_constants();
  return estimate(prepare_model(preset(c.preset), job), prepare_hardware(hw, job, k, nullptr, false), c.nodes, c.layout,
                  k);
}

}  // namespace

// Strict where physics says strict: while some tensor-parallel communication is exposed (not
// hidden behind compute), a faster NVLink must shorten the step, or NVLink would have no effect.
TEST_CASE("more NVLink bandwidth never slows a plan, and speeds it up while TP communication is exposed") {
  int strict_steps = 0;
  for (const Case& c : cases()) {
    double previous = 1e300;
    double previous_tp_exposed = 0;
    for (double nvlink : {100.0, 300.0, 600.0, 900.0, 1800.0}) {
      auto hw = planner_test::dgx(planner_test::h100_80());
      hw.instance.nvlink_gbytes_per_s = nvlink;
      const Estimate e = run(c, hw);
      INFO(c.preset << " tp " << c.layout.tp << " zero " << c.layout.zero << " nvlink " << nvlink);
      CHECK(e.step <= previous);
      if (previous_tp_exposed > 0) {
        CHECK(e.step < previous);
        ++strict_steps;
      }
      previous = e.step;
      previous_tp_exposed = e.tp_exposed;
    }
  }
  CHECK(strict_steps > 0);  // the cases do expose TP communication, so the strict check ran
}

// Megatron-Core's interleaved schedule (overlap_p2p_comm) waits on a pipeline send only at the
// pipeline's fill and drain and where one chunk's compute cannot cover it; without interleaving,
// and under stacks that batch their sends, every send is on the critical path.
TEST_CASE("the interleaved schedule hides pipeline sends behind a chunk's compute where overlap_p2p_comm says so") {
  const auto hw = planner_test::dgx(planner_test::h100_80(), 400);  // 50 GB/s per node: sends that matter
  Layout l;                                                         // 4 nodes: tp 8 inside, pp 4 across
  l.tp = 8;
  l.pp = 4;
  l.dp = 1;
  l.zero = 1;
  l.sequence_parallel = true;
  l.virtual_stages = 2;
  l.overlap_p2p_comm = true;
  const Case interleaved{"llama3.1-70b", 4, l};
  Job job = pretrain();
  job.framework = Framework::megatron_core;
  const Estimate hidden = run(interleaved, hw, job);
  const double send = hidden.pp_comm / (2.0 * hidden.micro_batches * l.virtual_stages);
  CHECK(hidden.pp_comm > 0.01 * hidden.step);
  CHECK(hidden.pp_exposed == Approx(2.0 * (l.pp - 1) * send).epsilon(1e-9));  // a chunk's compute covers each send
  CHECK(hidden.exposed_comm ==
        Approx(hidden.tp_exposed + hidden.cp_exposed + hidden.ep_exposed + hidden.pp_exposed + hidden.dp_exposed)
            .epsilon(1e-12));
  // Blocking sends (Megatron-LM before mid-2023): every send on the critical path, the rest unchanged.
  Case blocking = interleaved;
  blocking.layout.overlap_p2p_comm = false;
  const Estimate open = run(blocking, hw, job);
  CHECK(open.pp_comm == Approx(hidden.pp_comm).epsilon(1e-12));
  CHECK(open.pp_exposed == Approx(open.pp_comm).epsilon(1e-12));
  CHECK(open.step == Approx(hidden.step + open.pp_comm - hidden.pp_exposed).epsilon(1e-9));
  // Where it runs is one rule (workload.hpp), which the parser and the search apply: Megatron-Core's
  // interleaved schedule, not the other stacks, not one chunk per stage.
  CHECK(overlap_p2p_comm_problem(job, l) == nullptr);
  for (Framework other : {Framework::deepspeed, Framework::torchtitan}) {
    job.framework = other;
    CHECK(overlap_p2p_comm_problem(job, l) != nullptr);
  }
  job.framework = Framework::megatron_core;
  Layout one_chunk = l;
  one_chunk.virtual_stages = 1;
  CHECK(overlap_p2p_comm_problem(job, one_chunk) != nullptr);
}

TEST_CASE("more NVLink bandwidth speeds up tensor-parallel decoding") {
  const Job job = planner_test::inference(2048, 512, 32);
  for (int tp : {2, 4, 8}) {
    Layout l;
    l.tp = tp;
    l.dp = 8 / tp;
    const Case c{"llama3.1-70b", 1, l};
    double previous_tpot = 1e300, previous_ttft = 1e300;
    for (double nvlink : {100.0, 300.0, 900.0, 1800.0}) {
      auto hw = planner_test::dgx(planner_test::h100_80());
      hw.instance.nvlink_gbytes_per_s = nvlink;
      const Estimate e = run(c, hw, job);
      INFO("tp " << tp << " nvlink " << nvlink);
      // Every decoded token all-reduces over NVLink (tp > 1): strictly faster with more of it.
      CHECK(e.tpot < previous_tpot);
      CHECK(e.ttft < previous_ttft);
      previous_tpot = e.tpot;
      previous_ttft = e.ttft;
    }
  }
}

TEST_CASE("more network bandwidth never slows a plan") {
  for (const Case& c : cases()) {
    double previous = 1e300;
    for (double net : {100.0, 400.0, 800.0, 1600.0, 3200.0, 6400.0}) {
      const double step = run(c, planner_test::dgx(planner_test::h100_80(), net)).step;
      CHECK(step <= previous);
      previous = step;
    }
  }
}

TEST_CASE("more GPUs never raise per-GPU weight memory") {
  const auto hw = planner_test::dgx(planner_test::h100_80());
  for (int zero : {0, 1, 2, 3})
    for (int tp : {1, 2, 8})
      for (int pp : {1, 2, 4}) {
        double previous = 1e300;
        for (int nodes : {1, 2, 4, 8}) {
          if (tp * pp > nodes * 8) continue;
          Layout l;
          l.tp = tp;
          l.pp = pp;
          l.zero = zero;
          l.dp = nodes * 8 / (tp * pp);
          const Case c{"llama3.1-70b", nodes, l};
          const double weights = run(c, hw).weights;
          CHECK(weights <= previous);
          previous = weights;
        }
      }
}

TEST_CASE("the search's step lower bound never exceeds the estimate") {
  const PlannerConstants& k = default_constants();
  for (const Case& c : cases())
    for (const auto& gpu : {planner_test::a100_80(), planner_test::h100_80()}) {
      const auto hw = planner_test::dgx(gpu);
      const Job job = pretrain();
      const PreparedModel m = prepare_model(preset(c.preset), job);
      const PreparedHardware p = prepare_hardware(hw, job, k, nullptr, false);
      const Layout& l = c.layout;
      const double lb = step_lower_bound(m, p, c.nodes, l.tp, l.pp, l.cp, l.dp, l.virtual_stages, l.tp > 1, k);
      CHECK(lb <= run(c, hw).step);
      INFO(c.preset << " zero " << l.zero << " recompute " << int(l.recompute));
      // and is not trivially loose (ZeRO-2's and -3's per-micro-batch collectives over DP, their
      // gradients in fp32 by default, are not in the bound: there a communication-heavy step may be
      // several times it)
      if (l.zero < 2 || l.dp * l.cp == 1) CHECK(lb > 0.3 * run(c, hw).step);
      // The bound for the layout's own runtime (auto: Megatron-Core's below ZeRO-3, FSDP's at 3) holds
      // too, and is at least the bound for any runtime, which the search uses where both are left.
      const bool megatron = megatron_runtime(m, l);
      const double own =
          step_lower_bound(m, p, c.nodes, l.tp, l.pp, l.cp, l.dp, l.virtual_stages, l.tp > 1, k, 1, megatron);
      CHECK(own <= run(c, hw).step);
      CHECK(own >= lb);
      // With Transformer Engine's TP overlap where the layout can run it (its floors: a tp-th of
      // each ring exchange, a quarter of each pipelined split), the bound still holds.
      Case overlapped = c;
      overlapped.layout.sequence_parallel = l.tp > 1;
      overlapped.layout.tp_comm_overlap = megatron && l.tp > 1;
      CHECK(lb <= run(overlapped, hw).step);
      CHECK(own <= run(overlapped, hw).step);
    }
}

TEST_CASE("a PCIe-only node decodes slower than an NVSwitch node at tp 8") {
  const Job job = planner_test::inference(1024, 256, 16);
  Layout l;
  l.tp = 8;
  const Case c{"llama3.1-70b", 1, l};
  auto nvswitch = planner_test::dgx(planner_test::h100_80());
  auto pcie = nvswitch;
  pcie.instance.intra_node_fabric = linkwise::Fabric::pcie;
  pcie.instance.nvlink_gbytes_per_s.reset();
  const Estimate fast = run(c, nvswitch, job), slow = run(c, pcie, job);
  CHECK(slow.tpot > fast.tpot);
  CHECK(slow.tp_comm > 3 * fast.tp_comm);
}

TEST_CASE("the step lower bound holds under the TP overlap where GEMMs are small next to the collectives") {
  // Llama 3.1 8B at TP 2 on two DGX H100 (found by a review): a bound dividing the TP term by tp
  // alone came out above the estimate, whose pipelined splits show a quarter, not a tp-th.
  const PlannerConstants& k = default_constants();
  Job job = pretrain();
  job.seq_len = 8192;
  job.global_batch = 64;
  const auto hw = planner_test::dgx(planner_test::h100_80());
  const PreparedModel m = prepare_model(preset("llama3.1-8b"), job);
  const PreparedHardware p = prepare_hardware(hw, job, k, nullptr, false);
  for (int tp : {2, 4, 8}) {
    Layout l;
    l.tp = tp;
    l.dp = 16 / tp;
    l.micro_batch = 4;
    l.zero = 1;
    l.sequence_parallel = true;
    l.tp_comm_overlap = true;
    const double step = estimate(m, p, 2, l, k).step;
    INFO("tp " << tp);
    CHECK(step_lower_bound(m, p, 2, tp, 1, 1, l.dp, 1, true, k, 1, true) <= step);
    CHECK(step_lower_bound(m, p, 2, tp, 1, 1, l.dp, 1, true, k) <= step);
  }
}
