// The layout and instance search behind recommend() (see search.hpp for what it returns).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <tuple>

#include "linkwise/enum_names.hpp"
#include "linkwise/error.hpp"
#include "linkwise/planner/framework_memory.hpp"
#include "linkwise/planner/search.hpp"
#include "linkwise/text.hpp"
#include "linkwise/units.hpp"

namespace linkwise::planner {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<int> divisors(int n, int limit) {
  std::vector<int> out;
  for (int d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

struct Option {  // one machine the search may use: the catalog's records, not copies of them
  HardwareRef hardware;
  PreparedHardware prepared;
  std::vector<int> node_counts;
  int index = 0;  // in the search's list of options (and of tallies), also when searching a subset
};

// Why an option's layouts were turned down (the rejected summary); one per option.
struct Tally {
  long long feasible = 0, outranked = 0;  // offered to the top K; subtrees skipped as worse than it
  long long memory = 0, deadline = 0, budget = 0, latency = 0;
  double min_total = kInf, capacity = 0;  // bytes: the smallest need that did not fit
  // CPU offload: the smallest host memory (bytes per node) a layout that fit the GPUs needed, and
  // the node's host memory
  double min_host = kInf, host_capacity = 0;
  // Serving: layouts whose engine KV pool cannot hold one sequence though the rest fits the card
  long long kv_pool_empty = 0;
  double best_hours = kInf, best_cost = kInf, best_tpot_ms = kInf;
  // Whether best_hours / best_cost is a subtree's lower bound (the search skipped it once even the
  // bound broke the deadline or budget) rather than a plan's: no plan reaches it.
  bool best_hours_bound = false, best_cost_bound = false;
};

enum class Verdict { ok, latency, deadline, budget };

struct Candidate {
  double objective = kInf;
  int option = 0, nodes = 0;
  Layout layout;
  Estimate estimate;
};

// A plan the planner cannot vouch for: its memory inside the model's error band (`tight`), or CPU
// offload onto a host whose size the catalog does not state (neither its memory nor its optimizer
// rate checked). A cheaper plan that may run out of memory is not the better buy.
bool unsure(const Candidate& c) { return c.estimate.tight || c.estimate.host_unchecked(); }

// A strict total order: plans the planner can vouch for first, then the objective, then less
// memory, then the layout's numbers.
auto key(const Candidate& c) {
  const Layout& l = c.layout;
  return std::make_tuple(unsure(c), c.objective, c.option, c.nodes, l.tp, l.pp, l.cp, l.dp, l.ep, l.etp, l.micro_batch,
                         l.virtual_stages, c.estimate.total, l.zero, int(l.recompute), int(l.sequence_parallel),
                         int(l.overlap_a2a), int(l.tp_comm_overlap), int(l.overlap_p2p_comm),
                         int(l.overlap_grad_reduce));
}
bool better(const Candidate& a, const Candidate& b) { return key(a) < key(b); }

// Plans that differ only in their micro-batch and virtual stages per pipeline rank are one choice
// for a buyer (the same machines and parallel groups; how the batch is cut and the pipeline
// interleaved are tuning knobs of the run): the top-k keeps the best of them and leaves room for a
// different layout.
bool same_parallel_layout(const Candidate& a, const Candidate& b) {
  const Layout &x = a.layout, &y = b.layout;
  return a.option == b.option && a.nodes == b.nodes && x.tp == y.tp && x.pp == y.pp && x.cp == y.cp && x.dp == y.dp &&
         x.ep == y.ep && x.etp == y.etp && x.sequence_parallel == y.sequence_parallel &&
         x.overlap_a2a == y.overlap_a2a && x.dualpipe == y.dualpipe;
}

class TopK {
 public:
  explicit TopK(int k) : k_(k) { items_.reserve(k + 1); }
  // A subtree whose objective bound is above this cannot enter. While the k-th plan is unsure,
  // any plan the planner can vouch for outranks it whatever its objective: nothing can be skipped.
  double threshold() const { return int(items_.size()) < k_ || unsure(items_.back()) ? kInf : items_.back().objective; }
  // The same for a subtree that can hold only unsure plans: they rank after every sure one, so
  // with k plans kept one must beat the k-th's objective, and none enters past a sure k-th.
  double threshold_unsure() const {
    if (int(items_.size()) < k_) return kInf;
    return unsure(items_.back()) ? items_.back().objective : -kInf;
  }
  // The best k plans, one per parallel layout: the same set whatever the order of the offers (a
  // plan outranked by its own layout's, kept or evicted, could not have entered).
  void offer(const Candidate& c) {
    if (int(items_.size()) == k_ && !better(c, items_.back())) return;
    for (auto it = items_.begin(); it != items_.end(); ++it)
      if (same_parallel_layout(*it, c)) {
        if (!better(c, *it)) return;
        items_.erase(it);
        break;
      }
    auto at = std::upper_bound(items_.begin(), items_.end(), c, better);
    items_.insert(at, c);
    if (int(items_.size()) > k_) items_.pop_back();
  }
  const std::vector<Candidate>& items() const { return items_; }

 private:
  int k_;
  std::vector<Candidate> items_;
};

struct Context {
  const Workload& w;
  const PreparedModel& model;
  const PlannerConstants& k;
  bool exhaustive;
  SearchResult& stats;
  std::vector<Tally>& tallies;  // per Option::index
  const SearchBudget& budget;
};

// The budget's checks, at every unit of work (search.hpp: SearchBudget). stop() is polled at the
// first unit and then every 4096: it may be a system call (the REST service peeks at the socket).
void poll_stop(const Context& cx) {
  if (cx.budget.stop && ((cx.stats.evaluated + cx.stats.pruned_subtrees - 1) & 4095) == 0 && cx.budget.stop())
    throw SearchStopped();
}

void count_evaluated(const Context& cx) {
  ++cx.stats.evaluated;
  if (cx.budget.max_evaluated > 0 && cx.stats.evaluated > cx.budget.max_evaluated) {
    const Constraints& c = cx.w.constraints;
    throw Error(ErrorKind::payload_too_large,
                "the search passed " + std::to_string(cx.budget.max_evaluated) +
                    " layouts evaluated, the bound of one search here; narrow it: a lower constraints.max_nodes" +
                    (c.max_nodes ? " (" + std::to_string(*c.max_nodes) + " now)" : std::string()) +
                    " or max_gpus, fewer constraints.gpu_models or instances, or fixed layout.tp / layout.pp",
                "constraints.max_nodes");
  }
  poll_stop(cx);
}

void count_pruned(const Context& cx) {
  ++cx.stats.pruned_subtrees;
  poll_stop(cx);
}

// The objective of an estimate (lower is better) given the machine price; +inf when it cannot rank.
double objective(const Context& cx, const PreparedHardware& hw, int nodes, double tokens_per_s) {
  if (cx.w.constraints.objective == Objective::time) return 1.0 / tokens_per_s;
  if (hw.price_per_node_hour < 0) return kInf;
  return hw.price_per_node_hour * nodes / tokens_per_s;  // USD per second per (token/s) = USD per token x 3600
}

// Which constraint the estimate breaks (ok: none); the tally keeps the best value seen per reason.
Verdict meets_constraints(const Context& cx, const PreparedHardware& hw, int nodes, const Estimate& e, Tally& t) {
  const Constraints& c = cx.w.constraints;
  const Job& job = cx.w.job;
  if (job.kind == JobKind::inference && job.latency_target_ms && e.itl * 1000.0 > *job.latency_target_ms) {
    t.best_tpot_ms = std::min(t.best_tpot_ms, e.itl * 1000.0);
    return Verdict::latency;
  }
  if (job.tokens) {
    const double hours = *job.tokens / e.tokens_per_s / units::kSecondsPerHour;
    if (c.deadline_hours && hours > *c.deadline_hours) {
      if (hours < t.best_hours) t.best_hours = hours, t.best_hours_bound = false;
      return Verdict::deadline;
    }
    if (c.budget_usd && hw.price_per_node_hour >= 0 && hours * hw.price_per_node_hour * nodes > *c.budget_usd) {
      if (const double cost = hours * hw.price_per_node_hour * nodes; cost < t.best_cost)
        t.best_cost = cost, t.best_cost_bound = false;
      return Verdict::budget;
    }
  }
  return Verdict::ok;
}

void count(Tally& t, Verdict v) {
  switch (v) {
    case Verdict::ok: ++t.memory; break;  // nothing fitted (a fitting layout has a verdict)
    case Verdict::latency: ++t.latency; break;
    case Verdict::deadline: ++t.deadline; break;
    case Verdict::budget: ++t.budget; break;
  }
}

void note_memory(Tally& t, const Estimate& e, const PreparedHardware& hw) {
  if (e.total <= e.capacity && !e.host_fits) {  // the GPUs hold it; the host cannot hold what it offloads
    t.min_host = std::min(t.min_host, e.host_offload_bytes * hw.gpus_per_node);
    t.host_capacity = hw.host_memory_bytes;
    return;
  }
  if (e.total <= e.capacity) {  // the card holds the rest; the engine's KV pool holds no sequence
    ++t.kv_pool_empty;
    return;
  }
  if (e.total < t.min_total) {
    t.min_total = e.total;
    t.capacity = e.capacity;
  }
}

// Lower bound of the objective from a step-time lower bound; also false when the bound alone
// already breaks the deadline or budget.
double objective_bound(const Context& cx, const PreparedHardware& hw, int nodes, double step_lb) {
  const double tokens_per_s_ub = cx.model.global_batch * cx.model.seq_len / step_lb;
  const Constraints& c = cx.w.constraints;
  if (cx.w.job.tokens) {
    const double hours_lb = *cx.w.job.tokens / tokens_per_s_ub / units::kSecondsPerHour;
    if (c.deadline_hours && hours_lb > *c.deadline_hours) return kInf;
    if (c.budget_usd && hw.price_per_node_hour >= 0 && hours_lb * hw.price_per_node_hour * nodes > *c.budget_usd)
      return kInf;
  }
  return objective(cx, hw, nodes, tokens_per_s_ub);
}

// A subtree skipped by its bound: outranked when the bound is finite, else turned down by the
// deadline or budget that even the bound breaks (counted once, with the bound as the best value).
void note_pruned(const Context& cx, const PreparedHardware& hw, int nodes, double step_lb, double bound, Tally& t) {
  if (bound < kInf || !cx.w.job.tokens) {
    ++t.outranked;
    return;
  }
  const double hours_lb =
      *cx.w.job.tokens / (cx.model.global_batch * cx.model.seq_len / step_lb) / units::kSecondsPerHour;
  const Constraints& c = cx.w.constraints;
  if (c.deadline_hours && hours_lb > *c.deadline_hours) {
    ++t.deadline;
    if (hours_lb < t.best_hours) t.best_hours = hours_lb, t.best_hours_bound = true;
  } else if (c.budget_usd) {
    ++t.budget;
    if (const double cost_lb = hours_lb * hw.price_per_node_hour * nodes; cost_lb < t.best_cost)
      t.best_cost = cost_lb, t.best_cost_bound = true;
  } else {
    ++t.outranked;
  }
}

template <class T>
std::vector<T> allowed(const std::optional<T>& fixed, std::vector<T> all) {
  if (fixed) return {*fixed};
  return all;
}

// The choices of each layout dimension, worked out once per search so the loops below allocate
// nothing: the tp candidates (divisors of the heads, ascending; filtered by the node size in the
// loop), pp (divisors of the layers), virtual stages per pp, micro-batches (divisors of the global
// batch up to 64: those of one replica's share are among them, the loop keeps the ones that divide it).
struct TrainingChoices {
  std::vector<int> tps;
  bool tp_fixed = false;
  std::vector<int> cps, pps;
  std::vector<std::vector<int>> virtual_stages;  // per entry of pps
  std::vector<int> micro_batches, zeros;
  std::vector<Recompute> recomputes;
  std::vector<int> eps;  // expert parallel sizes (divisors of the experts); {1} for dense models
  int etp = 1;
  bool overlap_a2a = false, dualpipe = false;
  // Whether any layout may run Transformer Engine's TP overlap (the lower bounds count it only then):
  // as stated, else where its default can be on (tp_comm_overlap_default).
  bool tp_comm_overlap_possible = true;
};

// The runtimes a search subtree still holds ZeRO stages of: [0] the others, [1] Megatron-Core's
// (framework_memory.hpp megatron_runtime; under auto the ZeRO stage decides).
struct Runtimes {
  bool alive[2] = {false, false};
  bool none() const { return !alive[0] && !alive[1]; }
};

// Expert-parallel sizes: the workload's, or every divisor of the experts (ascending).
std::vector<int> ep_choices(const Workload& w) {
  if (!w.model.moe.enabled()) return {1};
  return allowed<int>(w.layout.ep, divisors(w.model.moe.experts, w.model.moe.experts));
}

// Pipeline sizes: the workload's, or every stage count whose split Megatron-Core can make
// (pipeline_split_possible): prime layer counts (61) so still pipeline.
std::vector<int> pp_choices(const Workload& w) {
  if (w.layout.pp) return {*w.layout.pp};
  std::vector<int> out;
  for (int pp = 1; pp <= w.model.layers; ++pp)
    if (pipeline_split_possible(w.model.layers, pp) && parallelism_problem(w.job, 1, pp, 1).why.empty())
      out.push_back(pp);
  return out;
}

// Whether expert parallelism of ep x etp may run on these GPUs: the grid divides the stage. An EP
// group larger than the NVLink domain is allowed (wide EP: DeepSeek's EP32 prefill / EP144 decode,
// SGLang's and vLLM's multi-node EP); the time model sends its cross-domain share over the network.
bool ep_fits(long long stage_gpus, int ep, int etp) {
  const long long group = (long long)ep * etp;
  return stage_gpus % group == 0;
}

// The tp sizes that split the model's attention (tp_attention_problem: the heads, and the KV heads
// by the job kind's rule), ascending: checked once here, not per machine and node count.
std::vector<int> tp_candidates(const Workload& w) {
  std::vector<int> out;
  for (int tp : allowed<int>(w.layout.tp, divisors(w.model.heads, w.model.heads)))
    if (tp_attention_problem(w.model, w.job.kind, tp).empty() && parallelism_problem(w.job, tp, 1, 1).why.empty())
      out.push_back(tp);
  return out;
}

TrainingChoices training_choices(const Workload& w) {
  const LayoutSpec& spec = w.layout;
  const ModelShape& shape = w.model;
  TrainingChoices c;
  c.tp_fixed = spec.tp.has_value();
  c.tps = tp_candidates(w);
  c.cps = allowed<int>(spec.cp, {1});
  c.pps = pp_choices(w);
  for (int pp : c.pps) {
    // Virtual stages: 1, and with pp > 1 every divisor of the (heaviest stage's) layers per stage.
    std::vector<int> vs = {1};
    if (pp > 1)
      for (int v : divisors((shape.layers + pp - 1) / pp, shape.layers))
        if (v > 1 && parallelism_problem(w.job, 1, pp, v).why.empty()) vs.push_back(v);
    if (spec.virtual_stages) vs = {*spec.virtual_stages};
    c.virtual_stages.push_back(std::move(vs));
  }
  c.micro_batches = allowed<int>(spec.micro_batch, divisors(w.job.global_batch, 64));
  c.zeros = allowed<int>(spec.zero, {0, 1, 2, 3});
  c.recomputes = allowed<Recompute>(spec.recompute, {Recompute::none, Recompute::selective, Recompute::full});
  c.eps = ep_choices(w);
  // Only etp 1 unless the workload fixes it: Megatron-Core's other setting, etp = tp, was searched
  // once (2026-11-30) and won none of the 36 preset x job x GPU plans of the MoE tests while adding
  // 35% to the MoE recommend benchmark; the experts already shard over ep and the expert-DP group.
  c.etp = spec.etp.value_or(1);
  c.dualpipe = spec.dualpipe.value_or(false);
  c.overlap_a2a = spec.overlap_a2a.value_or(c.dualpipe);
  c.tp_comm_overlap_possible = spec.tp_comm_overlap.value_or(recipes_overlap_tp(w.job, w.model.moe.enabled()));
  // A stated overlap is planned wherever a layout can hold it (resolve_overlaps); a job no layout
  // can hold it for (not even the most permissive: tp 2 with SP at the lowest ZeRO stage its stack
  // runs, keeping what the workload pins) is told so rather than answered without it.
  Layout most_permissive;
  most_permissive.tp = spec.tp.value_or(2);
  most_permissive.pp = spec.pp.value_or(2);
  most_permissive.virtual_stages = spec.virtual_stages.value_or(2);
  // The lowest ZeRO stage the job's stack runs at that depth (CPU offload of the parameters, say,
  // runs only at ZeRO-3).
  most_permissive.zero = spec.zero.value_or(0);
  if (!spec.zero)
    for (int zero = 0; zero <= 3; ++zero)
      if (stack_problem(w.job, most_permissive.pp, zero).why.empty()) {
        most_permissive.zero = zero;
        break;
      }
  most_permissive.sequence_parallel = spec.sequence_parallel.value_or(true);
  most_permissive.dualpipe = spec.dualpipe.value_or(false);
  if (spec.tp_comm_overlap.value_or(false))
    if (const char* why = tp_comm_overlap_problem(w.job, most_permissive, true))
      throw_invalid("layout.tp_comm_overlap",
                    std::string("layout.tp_comm_overlap true cannot run on any layout of this job: ") + why);
  if (spec.overlap_grad_reduce)
    if (const char* why = overlap_grad_reduce_problem(w.job, most_permissive, *spec.overlap_grad_reduce))
      throw_invalid("layout.overlap_grad_reduce", std::string("layout.overlap_grad_reduce ") +
                                                      (*spec.overlap_grad_reduce ? "true" : "false") +
                                                      " cannot hold on any layout of this job: " + why);
  if (c.dualpipe) {  // DualPipe: even pp, no interleaving
    std::vector<int> even;
    std::vector<std::vector<int>> vs;
    for (std::size_t i = 0; i < c.pps.size(); ++i)
      if (c.pps[i] >= 2 && c.pps[i] % 2 == 0) {
        even.push_back(c.pps[i]);
        vs.push_back({1});
      }
    c.pps = std::move(even);
    c.virtual_stages = std::move(vs);
  }
  // The same for the pipeline's send overlap, which needs a depth the search can interleave (or
  // DualPipe): the most permissive layout at the deepest interleaving any pipeline depth allows.
  if (spec.overlap_p2p_comm.value_or(false)) {
    Layout deepest = most_permissive;
    deepest.pp = 1;
    deepest.virtual_stages = 1;
    for (std::size_t i = 0; i < c.pps.size(); ++i) {
      const int most_v = *std::max_element(c.virtual_stages[i].begin(), c.virtual_stages[i].end());
      if (c.pps[i] > 1 && most_v >= deepest.virtual_stages) {
        deepest.pp = c.pps[i];
        deepest.virtual_stages = most_v;
      }
    }
    if (const char* why = overlap_p2p_comm_problem(w.job, deepest))
      throw_invalid("layout.overlap_p2p_comm",
                    std::string("layout.overlap_p2p_comm true cannot run on any layout of this job: ") + why);
  }
  return c;
}

// Whether the loops run micro-batch `mb` for a data-parallel replica's `sequences` at `v` virtual
// stages: it divides them; interleaving needs micro-batches in multiples of pp; DualPipe pairs them.
bool runs_micro_batch(const TrainingChoices& choices, int sequences, int pp, int v, int mb) {
  if (sequences % mb != 0) return false;  // divisors of the batch that are not of this replica's share
  if (v > 1 && (sequences / mb) % pp != 0) return false;
  return !choices.dualpipe || (sequences / mb) % 2 == 0;
}

// What the lightest settings of a subtree hold at its smallest micro-batch, against the card:
// whether one fits outside the memory error band, or fits at all. Memory grows with the micro-batch
// at every setting (the loops below rely on it too), so a subtree where none clears the band there
// holds only `tight` plans, which rank after every sure plan; one where none fits holds no plan,
// and its estimates go to the tally (what the rejection says it needs). The settings that hold the
// least are enough: virtual stages 1 (interleaving holds more micro-batches in flight; else the most
// virtual stages, which run the same micro-batches) at the smallest micro-batch the loops run there;
// the deepest ZeRO stage below 3 the subtree runs (a shallower one never holds less: the search's
// own break) and ZeRO-3; every recompute mode (full recompute keeps the least but one MoE layer's
// working set, which a stage of dense layers may not otherwise hold). Each setting estimated counts
// as a layout evaluated.
enum class LightestMemory { clears_band, tight_only, short_only, no_layout };
LightestMemory lightest_memory(const Context& cx, const PreparedHardware& hw, Layout l, const TrainingChoices& choices,
                               const std::vector<int>& virtual_stages, const std::array<bool, 4>& zero_runs,
                               const Runtimes& runtimes, const std::array<bool, 4>& megatron_at_zero, bool tp_on_nvlink,
                               int sequences, Tally& tally) {
  const bool plain = std::find(virtual_stages.begin(), virtual_stages.end(), 1) != virtual_stages.end();
  l.virtual_stages = plain ? 1 : *std::max_element(virtual_stages.begin(), virtual_stages.end());
  const auto smallest = std::find_if(choices.micro_batches.begin(), choices.micro_batches.end(), [&](int mb) {
    return runs_micro_batch(choices, sequences, l.pp, l.virtual_stages, mb);
  });
  if (smallest == choices.micro_batches.end()) return LightestMemory::no_layout;
  l.micro_batch = *smallest;
  int least_held[2] = {-1, -1};  // the deepest stage below 3 the subtree runs; ZeRO-3
  for (int zero : choices.zeros) {
    if (!zero_runs[zero] || !runtimes.alive[megatron_at_zero[zero]]) continue;
    if (zero == 3) least_held[1] = 3;
    else least_held[0] = std::max(least_held[0], zero);
  }
  bool any_fit = false;
  Tally noted = tally;  // the tally with the estimates' shortfalls, kept only if nothing fits
  for (auto rc = choices.recomputes.rbegin(); rc != choices.recomputes.rend(); ++rc) {  // full first
    l.recompute = *rc;
    for (int zero : least_held) {
      if (zero < 0) continue;
      l.zero = zero;
      resolve_overlaps(cx.w.job, cx.w.layout, cx.model.moe, tp_on_nvlink, l);
      Estimate e;
      estimate_memory(cx.model, hw, l, cx.k, e);
      count_evaluated(cx);
      if (e.fits && !e.tight) return LightestMemory::clears_band;
      if (e.fits) any_fit = true;
      else note_memory(noted, e, hw);
    }
  }
  if (any_fit) return LightestMemory::tight_only;
  tally = noted;
  return LightestMemory::short_only;
}

void search_training(const Context& cx, const std::vector<Option>& options, TopK& top) {
  const Workload& w = cx.w;
  const LayoutSpec& spec = w.layout;
  const int batch = w.job.global_batch;
  const TrainingChoices choices = training_choices(w);
  // Whether a plan that fits can still be turned down by a constraint (meets_constraints). Such a
  // search times its `tight` plans and searches their subtrees even where they cannot enter, so an
  // instance type whose plans all miss the deadline or budget says how near it came.
  const bool constrained = w.job.tokens && (w.constraints.deadline_hours || w.constraints.budget_usd);

  // Visit machines and node counts in order of their bound so good results come early.
  struct Unit {
    int option, nodes;
    double bound, step_lb;
  };
  std::vector<Unit> units;
  for (int o = 0; o < int(options.size()); ++o)
    for (int nodes : options[o].node_counts) {
      const int gpus = nodes * options[o].prepared.gpus_per_node;
      // Best conceivable: all GPUs doing GEMMs only (tp = pp = cp = 1 terms vanish at dp = gpus).
      const double lb = step_lower_bound(cx.model, options[o].prepared, nodes, 1, 1, 1, gpus, 1, false, cx.k);
      units.push_back({o, nodes, objective_bound(cx, options[o].prepared, nodes, lb), lb});
    }
  if (!cx.exhaustive)
    std::sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.bound < b.bound; });

  // Which ZeRO stages run under Megatron-Core's runtime: under auto it depends on the stage (below 3
  // yes, at 3 PyTorch FSDP's), and each runtime has its own bound, so one group can be pruned while
  // the other is searched; a framework with one runtime has one group.
  std::array<bool, 4> megatron_at_zero{};
  for (int zero = 0; zero < 4; ++zero) megatron_at_zero[zero] = megatron_runtime(cx.model, zero);

  Layout l;
  for (const Unit& u : units) {
    const Option& opt = options[u.option];
    Tally& tally = cx.tallies[opt.index];
    if (!cx.exhaustive && !(u.bound <= top.threshold())) {
      count_pruned(cx);
      note_pruned(cx, opt.prepared, u.nodes, u.step_lb, u.bound, tally);
      continue;
    }
    const PreparedHardware& hw = opt.prepared;
    const int gpn = hw.gpus_per_node, gpus = u.nodes * gpn;
    // Drops each runtime whose objective bound (of bound_of(megatron) + extra) is above `threshold`
    // (what a plan must beat to enter: the k-th result's, or the best plan already offered of the
    // same parallel layout, which any other of its micro-batches and virtual stages must beat);
    // where none is left, the subtree is counted as pruned. Returns the smallest bound of those left.
    const auto prune_runtimes = [&](Runtimes& runtimes, double extra, const auto& bound_of, double threshold) {
      double kept = kInf, lowest = kInf, lowest_objective = kInf;
      for (int r = 0; r < 2; ++r) {
        if (!runtimes.alive[r]) continue;
        const double lb = bound_of(r == 1) + extra;
        const double bound = objective_bound(cx, hw, u.nodes, lb);
        if (lb < lowest) lowest = lb, lowest_objective = bound;
        if (bound <= threshold) kept = std::min(kept, lb);
        else runtimes.alive[r] = false;
      }
      if (runtimes.none()) {
        count_pruned(cx);
        note_pruned(cx, hw, u.nodes, lowest, lowest_objective, tally);
        return lowest;
      }
      return kept;
    };
    // TP stays inside the NVLink domain (the node, or a rack-scale domain across instances).
    const int tp_limit = w.constraints.tp_across_nodes ? gpus : std::min(gpus, std::max(gpn, hw.nvlink_domain_gpus));
    for (int tp : choices.tps) {
      if (!choices.tp_fixed && tp > tp_limit) break;  // ascending
      if (gpus % tp != 0) continue;
      // Beyond the node, a TP group must tile the rack-scale domain to stay on NVLink.
      if (!choices.tp_fixed && !w.constraints.tp_across_nodes && !inside_nvlink_domain(hw, tp, gpus)) continue;
      const bool tp_on_nvlink = tp_on_nvidia_nvlink(hw, tp, gpus);
      for (int cp : choices.cps) {
        if (gpus % ((long long)tp * cp) != 0 || w.job.seq_len % cp != 0) continue;
        for (std::size_t pp_index = 0; pp_index < choices.pps.size(); ++pp_index) {
          const int pp = choices.pps[pp_index];
          // The ZeRO stages the job's stack runs at this pipeline depth (stack_problem).
          std::array<bool, 4> zero_runs{};  // per ZeRO stage 0-3, once per pipeline depth
          for (int zero : choices.zeros) zero_runs[zero] = stack_problem(w.job, pp, zero).why.empty();
          // 64-bit: a layout fixed by the workload may hold sizes up to 2^20 each.
          const long long model_parallel = (long long)tp * cp * pp;
          if (gpus % model_parallel != 0) continue;
          const int dp = static_cast<int>(gpus / model_parallel);
          if (spec.dp && *spec.dp != dp) continue;
          if (batch % dp != 0) continue;
          const int sequences = batch / dp;
          const bool sps[] = {tp > 1 && spec.sequence_parallel.value_or(true)};  // Megatron drops SP at tp 1
          const std::vector<int>& vs = choices.virtual_stages[pp_index];
          const int max_v = *std::max_element(vs.begin(), vs.end());
          // The runtimes this subtree still holds a ZeRO stage of ([0] others, [1] Megatron-Core's).
          Runtimes subtree{};
          for (int zero : choices.zeros)
            if (zero_runs[zero]) subtree.alive[megatron_at_zero[zero]] = true;
          double subtree_lb = 0;
          if (!cx.exhaustive) {
            subtree_lb = prune_runtimes(
                subtree, 0.0,
                [&](bool megatron) {
                  return step_lower_bound(cx.model, hw, u.nodes, tp, pp, cp, dp, choices.dualpipe ? 0 : max_v, sps[0],
                                          cx.k, 1, megatron, choices.tp_comm_overlap_possible);
                },
                top.threshold());
            if (subtree.none()) continue;
          }
          l.tp = tp;
          l.cp = cp;
          l.pp = pp;
          l.dp = dp;
          // Hybrid sharding's shard group for this DP, 0 for none (or where the workload states
          // dp_shard = dp: full sharding only).
          const int hybrid_shard = spec.dp_shard ? 0 : nvlink_shard_group(hw, tp, cp, dp, gpus);
          l.etp = choices.etp;
          l.overlap_a2a = choices.overlap_a2a;
          l.dualpipe = choices.dualpipe;
          l.recompute_layer_fraction = spec.recompute_layer_fraction.value_or(1.0);
          for (int ep : choices.eps) {
            if (!ep_fits((long long)tp * cp * dp, ep, choices.etp)) continue;
            l.ep = ep;
            // The all-to-all this ep cannot avoid, added to the subtree's bound: wide EP groups that
            // leave the NVLink domain are skipped here when the network makes them lose.
            const double a2a_lb = cx.exhaustive ? 0.0 : a2a_lower_bound(cx.model, hw, u.nodes, l);
            if (!cx.exhaustive) {
              const double lb = subtree_lb + a2a_lb;
              const double bound = objective_bound(cx, hw, u.nodes, lb);
              if (a2a_lb > 0 && !(bound <= top.threshold())) {
                count_pruned(cx);
                note_pruned(cx, hw, u.nodes, lb, bound, tally);
                continue;
              }
              // While the k-th result is unsure nothing is outranked by the threshold alone; a
              // subtree that holds only plans inside the memory band competes only with the unsure.
              if (!constrained && !(bound <= top.threshold_unsure())) {
                l.sequence_parallel = sps[0];
                const LightestMemory lightest = lightest_memory(cx, hw, l, choices, vs, zero_runs, subtree,
                                                                megatron_at_zero, tp_on_nvlink, sequences, tally);
                if (lightest == LightestMemory::no_layout) continue;  // no micro-batch runs: nothing to count
                if (lightest == LightestMemory::short_only) {
                  // Nothing of it fits: turned down for memory, one count per virtual-stage choice
                  // with a micro-batch to run, as the loops below count.
                  for (int v : vs)
                    for (int mb : choices.micro_batches)
                      if (runs_micro_batch(choices, sequences, pp, v, mb)) {
                        ++tally.memory;
                        break;
                      }
                  continue;
                }
                if (lightest == LightestMemory::tight_only) {
                  count_pruned(cx);
                  note_pruned(cx, hw, u.nodes, lb, bound, tally);
                  continue;
                }
              }
            }
            for (bool sp : sps) {
              l.sequence_parallel = sp;
              // The best plan offered so far of this parallel layout (one the planner vouches for:
              // an unsure one is outranked by any sure one whatever its objective).
              double layout_best = kInf;
              // What a plan inside the memory band of this layout must beat to enter: it ranks after
              // every sure plan, so nothing once this layout has one (offered) or k are kept.
              const auto unsure_threshold = [&] { return layout_best < kInf ? -kInf : top.threshold_unsure(); };
              for (int v : vs) {
                if (v > 1 && (sequences % pp != 0)) continue;  // interleaving needs micro-batches in multiples of pp
                Runtimes at_v = subtree;
                if (!cx.exhaustive && (v != max_v || layout_best < kInf)) {
                  // The subtree's bound, now for this many virtual stages.
                  prune_runtimes(
                      at_v, a2a_lb,
                      [&](bool megatron) {
                        return step_lower_bound(cx.model, hw, u.nodes, tp, pp, cp, dp, v, sps[0], cx.k, 1, megatron,
                                                choices.tp_comm_overlap_possible);
                      },
                      std::min(top.threshold(), layout_best));
                  if (at_v.none()) continue;
                }
                l.virtual_stages = v;
                Runtimes at_mb = at_v;  // a runtime that loses at a micro-batch loses at every larger one
                // Settings (recompute mode x ZeRO stage) the GPU could not hold at a smaller
                // micro-batch: memory grows with the micro-batch, so they cannot fit at a larger one,
                // and their totals there cannot lower the rejection's smallest shortfall either.
                bool gpu_short[int(Recompute::full) + 1][4] = {};  // [recompute mode][ZeRO stage]
                // Settings that did not clear the memory band at a smaller micro-batch (short, or
                // `tight`): they cannot at a larger one.
                bool band_short[int(Recompute::full) + 1][4] = {};
                // Whether no setting cleared the memory band at a smaller micro-batch: then none
                // does at this one, and its plans rank after every sure plan (and after this
                // layout's own sure one, once offered).
                bool unsure_only = false;  // (never set where a deadline or budget can turn plans down)
                for (int mb : choices.micro_batches) {
                  if (!runs_micro_batch(choices, sequences, pp, v, mb)) continue;
                  if (!cx.exhaustive && (unsure_only || (pp > 1 && mb > 1 && !choices.dualpipe))) {
                    // Fewer, larger micro-batches only grow the bubble's bound: once it loses, so do the rest.
                    prune_runtimes(
                        at_mb, a2a_lb,
                        [&](bool megatron) {
                          // DualPipe: the subtree's bound (no 1F1B bubble: virtual stages 0), at
                          // micro-batch 1 (its bubble is not monotone in the micro-batch).
                          return step_lower_bound(cx.model, hw, u.nodes, tp, pp, cp, dp, choices.dualpipe ? 0 : v,
                                                  sps[0], cx.k, choices.dualpipe ? 1 : mb, megatron,
                                                  choices.tp_comm_overlap_possible);
                        },
                        unsure_only ? unsure_threshold() : std::min(top.threshold(), layout_best));
                    if (at_mb.none()) break;
                  }
                  l.micro_batch = mb;
                  Candidate best;
                  bool any_fit = false;          // at any ZeRO stage and recompute mode of this micro-batch
                  Verdict failed = Verdict::ok;  // what turned down the last fitting setting
                  // ZeRO stages where a lighter recompute mode (none, then selective) gave a plan the
                  // planner vouches for: the heavier modes only add work there (the step never
                  // shrinks with more compute: what compute hides, it hides at most one for one),
                  // so they cannot beat it. Hybrid sharding keeps its own flag: it may not fit at the
                  // lighter mode where full sharding does, and then nothing bounds it at a heavier one.
                  bool lighter_sure[4] = {false, false, false, false};
                  bool lighter_sure_hybrid[4] = {false, false, false, false};
                  bool memory_sure = false;  // some setting fits outside the memory band
                  bool outranked = false;    // a setting skipped as unable to enter
                  // Whether a plan inside the memory band can no longer enter (nor beat a sure plan
                  // of this micro-batch).
                  const auto unsure_cannot_enter = [&] {
                    return unsure_threshold() == -kInf || (best.objective != kInf && !unsure(best));
                  };
                  const bool whole_layers = l.recompute_layer_fraction >= 1.0;
                  // A setting that fits: its time, the constraints, and the layout's best so far.
                  const auto offer_setting = [&](Estimate& e) {
                    estimate_time(cx.model, hw, u.nodes, l, cx.k, e);
                    if (const Verdict verdict = meets_constraints(cx, hw, u.nodes, e, tally); verdict != Verdict::ok) {
                      failed = verdict;
                      return;
                    }
                    ++cx.stats.feasible;
                    Candidate c{objective(cx, hw, u.nodes, e.tokens_per_s), u.option, u.nodes, l, e};
                    if (c.objective == kInf) return;
                    // (Not where the all-to-all overlaps another micro-batch's compute with some
                    // of it still exposed: there a heavier mode's extra compute hides as much
                    // all-to-all, the steps tie, and the heavier mode's smaller memory wins.)
                    if (l.recompute != Recompute::full && !unsure(c) &&
                        (e.ep_exposed == 0 || !(l.overlap_a2a || l.dualpipe)))
                      (l.dp_shard > 0 ? lighter_sure_hybrid : lighter_sure)[l.zero] = true;
                    // The layout's best setting by the same order: one that clears the band first.
                    if (best.objective == kInf || better(c, best)) best = c;
                  };
                  for (Recompute rc : choices.recomputes) {
                    l.recompute = rc;
                    for (auto zero_it = choices.zeros.rbegin(); zero_it != choices.zeros.rend(); ++zero_it) {
                      const int zero = *zero_it;
                      // What the job's stack cannot run is never a candidate (the rule plan applies),
                      // nor a stage whose runtime's bound already loses.
                      if (!zero_runs[zero] || !at_mb.alive[megatron_at_zero[zero]]) continue;
                      l.zero = zero;
                      // Hybrid sharding over the ranks one NVLink domain holds (nvlink_shard_group)
                      // at ZeRO-3, where it takes the backward's re-gathers off the network (FSDP's
                      // HYBRID_SHARD, MiCS). At ZeRO 1-2 the copies' all-reduce sends as many bytes as
                      // full sharding's reduce-scatter and gather (FSDP's ZeRO-2 included, which
                      // gathers every micro-batch): plan prices it there, the search does not offer it.
                      l.dp_shard = hybrid_shard;
                      const bool hybrid =
                          hybrid_shard > 0 && zero == 3 && !hybrid_sharding_problem(w.job, l, cx.model.moe);
                      l.dp_shard = 0;
                      const bool full_done = !cx.exhaustive && whole_layers && lighter_sure[zero];
                      const bool hybrid_done = !cx.exhaustive && whole_layers && lighter_sure_hybrid[zero];
                      if (full_done && (!hybrid || hybrid_done)) continue;
                      // The overlaps: as stated where this layout holds that, else its default.
                      resolve_overlaps(w.job, w.layout, cx.model.moe, tp_on_nvlink, l);
                      bool& short_here = gpu_short[int(rc)][zero];
                      bool& unsure_here = band_short[int(rc)][zero];
                      if (!cx.exhaustive && unsure_here && !short_here && !constrained && unsure_cannot_enter()) {
                        // Inside the band at a smaller micro-batch (fitting, but tight), so inside
                        // it or short at this one; so is every shallower stage below 3 (as below).
                        outranked = true;
                        if (zero <= 2) break;
                        continue;
                      }
                      Estimate e;  // fits stays false where the GPU was short at a smaller micro-batch
                      // The hybrid setting: each copy of the states holds more than the fully sharded
                      // setting (never less), so it fits only where that one fits and is clear of the
                      // memory band only where that one is.
                      const auto offer_hybrid = [&] {
                        l.dp_shard = hybrid_shard;
                        Estimate h;
                        estimate_memory(cx.model, hw, l, cx.k, h);
                        count_evaluated(cx);
                        if (h.fits && (cx.exhaustive || !h.tight || constrained || !unsure_cannot_enter()))
                          offer_setting(h);
                        else if (h.fits) outranked = true;
                        l.dp_shard = 0;
                      };
                      if (full_done) {
                        // Full sharding is beaten at a lighter mode; hybrid sharding is not, so it is
                        // worked out on its own (where it fits, so does full sharding).
                        if (cx.exhaustive || !short_here) offer_hybrid();
                        continue;
                      }
                      if (cx.exhaustive || !short_here) {
                        estimate_memory(cx.model, hw, l, cx.k, e);
                        count_evaluated(cx);
                        if (e.fits) any_fit = true;
                        else {
                          note_memory(tally, e, hw);
                          short_here = e.total > e.capacity;
                        }
                        if (e.fits && !e.tight) memory_sure = true;
                        else unsure_here = true;
                      }
                      if (!e.fits) {
                        // Deepest stage first. Below ZeRO-3 memory never shrinks with a shallower
                        // stage (the same runtime, less sharded), so when one does not fit, no
                        // shallower one does. ZeRO-3 is no such bound: auto runs it as FSDP with
                        // its own buffers, and at a small DP group, or under torchtitan's pipeline
                        // (unsharded gradients), it can hold more than ZeRO-2.
                        if (!cx.exhaustive && zero <= 2) break;
                        continue;
                      }
                      // A plan inside the memory band ranks after every sure plan: once k sure plans
                      // are kept, or this layout has a sure one, it cannot enter, and its time is not
                      // worked out (where a deadline or budget could turn it down, it is: the
                      // rejection then says how near it came).
                      if (!cx.exhaustive && e.tight && !constrained && unsure_cannot_enter()) {
                        outranked = true;
                        if (zero <= 2) break;  // a shallower stage holds as much: inside the band or short
                        continue;
                      }
                      offer_setting(e);
                      if (hybrid && !hybrid_done) offer_hybrid();
                    }
                  }
                  if (best.objective != kInf) {
                    top.offer(best);
                    if (!unsure(best)) layout_best = std::min(layout_best, best.objective);
                    ++tally.feasible;
                  } else if (outranked) ++tally.outranked;
                  else count(tally, failed);
                  // Memory grows with the micro-batch at every setting: once nothing fits, larger
                  // ones will not either; once nothing clears the band, nothing will.
                  if (!cx.exhaustive && !any_fit) break;
                  if (!memory_sure && !constrained) unsure_only = true;
                }
              }
            }
          }
        }
      }
    }
  }
}

void search_inference(const Context& cx, const std::vector<Option>& options, TopK& top) {
  const Workload& w = cx.w;
  const LayoutSpec& spec = w.layout;
  const std::vector<int> tps = tp_candidates(w);
  const std::vector<int> pps = pp_choices(w);
  const std::vector<int> eps = ep_choices(w);
  Layout l;
  for (int o = 0; o < int(options.size()); ++o) {
    const PreparedHardware& hw = options[o].prepared;
    Tally& tally = cx.tallies[options[o].index];
    for (int nodes : options[o].node_counts) {
      const int gpus = nodes * hw.gpus_per_node;
      const int tp_limit =
          w.constraints.tp_across_nodes ? gpus : std::min(gpus, std::max(hw.gpus_per_node, hw.nvlink_domain_gpus));
      for (int tp : tps) {
        if (!spec.tp && tp > tp_limit) break;  // ascending
        if (gpus % tp != 0) continue;
        if (!spec.tp && !w.constraints.tp_across_nodes && !inside_nvlink_domain(hw, tp, gpus)) continue;
        for (int pp : pps) {
          if (gpus % ((long long)tp * pp) != 0) continue;
          const int dp = static_cast<int>(gpus / ((long long)tp * pp));
          if ((spec.dp && *spec.dp != dp) || (!w.job.concurrent_max && w.job.concurrent % dp != 0)) continue;
          for (int ep : eps) {
            // Serving: the experts' grid covers each stage's tp x dp GPUs (wide EP across replicas);
            // experts split over what of the TP group ep leaves, as the engines place them.
            const int etp = spec.etp.value_or(cx.model.moe ? serving_default_etp(tp, ep) : 1);
            if (!ep_fits((long long)tp * dp, ep, etp)) continue;
            if (cx.model.moe && static_cast<long long>(cx.model.expert_ffn) % etp != 0) continue;
            l = Layout{};
            l.tp = tp;
            l.pp = pp;
            l.dp = dp;
            l.ep = ep;
            l.etp = etp;
            l.sequence_parallel = false;
            Estimate e;
            estimate_memory(cx.model, hw, l, cx.k, e);
            count_evaluated(cx);
            if (!e.fits) {
              note_memory(tally, e, hw);
              count(tally, Verdict::ok);
              continue;
            }
            estimate_time(cx.model, hw, nodes, l, cx.k, e);
            if (const Verdict v = meets_constraints(cx, hw, nodes, e, tally); v != Verdict::ok) {
              count(tally, v);
              continue;
            }
            ++cx.stats.feasible;
            Candidate c{objective(cx, hw, nodes, e.tokens_per_s), o, nodes, l, e};
            if (c.objective != kInf) {
              top.offer(c);
              ++tally.feasible;
            }
          }
        }
      }
    }
  }
}

std::string why_words(const Workload& w, const Plan& p, int rank) {
  std::string out;
  char buf[256];
  const Objective obj = w.constraints.objective;
  if (obj == Objective::time) {
    std::snprintf(buf, sizeof buf, "#%d by time: %.0f tokens/s", rank, p.tokens_per_s);
  } else {
    std::snprintf(buf, sizeof buf, "#%d by cost: $%.3f per million %s", rank, p.usd_per_million_tokens.value_or(0),
                  std::string(counted_tokens(p.kind)).c_str());
  }
  out = buf;
  if (p.job_hours) {
    std::snprintf(buf, sizeof buf, ", %.1f h", *p.job_hours);
    out += buf;
    if (p.cost_usd) {
      out += ", " + text::dollars(*p.cost_usd);
    }
  }
  // GB as every memory field; GiB beside it, the unit of the cards' nominal sizes (an "80 GB" card holds 80 GiB).
  std::snprintf(buf, sizeof buf, "; fits with %.1f GB (%.1f GiB) to spare per GPU", p.memory_margin_gb,
                units::bytes_to_gib(units::gb_to_bytes(p.memory_margin_gb)));
  out += buf;
  if (p.memory_verdict == "tight") {
    std::snprintf(buf, sizeof buf,
                  " (tight: inside the memory model's error band, measured peaks up to %.0f%% above the prediction; "
                  "no plan the search found clears it)",
                  100 * p.memory_error_band);
    out += buf;
  }
  if (p.raw.host_unchecked())
    out += std::string("; CPU offload onto a host the catalog gives no ") +
           (p.raw.host_memory_unknown ? "memory figure for (the offloaded states not checked against it)"
                                      : "vCPU count for (its optimizer step timed at the reference host's rate)") +
           ": ranked after the plans whose host is known";
  if (p.kind != JobKind::inference)
    out += "; ZeRO-" + std::to_string(p.layout.zero) +
           (p.layout.zero_replicas() > 1
                ? " sharded over " + std::to_string(p.layout.zero_shard()) + " of the " + std::to_string(p.layout.dp) +
                      " data-parallel ranks (hybrid sharding: " + std::to_string(p.layout.zero_replicas()) +
                      " copies, the weight gathers inside each shard group)"
                : std::string()) +
           " with " +
           (p.layout.recompute == Recompute::none ? std::string("no") : std::string(to_string(p.layout.recompute))) +
           " recompute is the fastest setting that fits this layout";
  if (p.layout.ep > 1) {
    const bool domain_beyond_node = p.nvlink_domain_gpus > p.gpus_per_node;
    out += "; expert parallelism ep=" + std::to_string(p.layout.ep) +
           (p.raw.ep_inside_domain
                ? std::string(" keeps the all-to-all inside the ") +
                      (domain_beyond_node
                           ? std::to_string(p.nvlink_domain_gpus) + "-GPU NVLink domain (" +
                                 std::to_string(std::min(p.gpus, p.nvlink_domain_gpus)) + " GPUs of it over " +
                                 std::to_string(std::min(p.gpus, p.nvlink_domain_gpus) / std::max(1, p.gpus_per_node)) +
                                 " instances, no network hop)"
                           : std::string("node's GPU-to-GPU links"))
                : std::string(" sends part of the all-to-all over the network"));
    char a2a[96];
    std::snprintf(a2a, sizeof a2a, " (%.0f%% of the step exposed)",
                  p.step_time_s > 0 ? 100.0 * p.raw.ep_exposed / p.step_time_s : 0.0);
    out += a2a;
  }
  out += "; bottleneck: " + p.bottleneck;
  return out;
}

}  // namespace

std::vector<int> candidate_node_counts(const Constraints& c, int gpus_per_node, bool has_network) {
  // Without constraints.max_nodes the search stops at 64 nodes, or further where max_gpus or
  // min_nodes ask for more (up to twice min_nodes): a limit the user wrote is never cut short by
  // the default.
  constexpr int kDefaultMaxNodes = 64;
  int ceiling = kDefaultMaxNodes;
  if (c.max_gpus) ceiling = std::max(ceiling, *c.max_gpus / std::max(1, gpus_per_node));
  if (c.min_nodes) ceiling = std::max(ceiling, 2 * *c.min_nodes);  // up to twice the floor: a layout may need more
  const int max_nodes = has_network ? c.max_nodes.value_or(ceiling) : 1;
  const auto allowed = [&](long long n) {
    return n <= max_nodes && (!c.max_gpus || n * gpus_per_node <= *c.max_gpus) && (!c.min_nodes || n >= *c.min_nodes);
  };
  std::vector<int> out;
  // The fewest nodes the constraints allow, where the series below would skip it (min_nodes 5 or 100).
  if (c.min_nodes && allowed(*c.min_nodes)) out.push_back(*c.min_nodes);
  for (long long base = 1; base <= max_nodes; base *= 2)
    for (long long n : {base, base + base / 2})
      if ((n == base || base >= 2) && allowed(n) && (out.empty() || out.back() < n)) out.push_back(int(n));
  return out;
}

namespace {

std::string words(const char* format, double v) {
  char buf[160];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

Rejection::Count reason_count(Reason r, long long n, std::string detail) {
  Rejection::Count c;
  c.reason = r;
  c.count = n;
  c.detail = std::move(detail);
  return c;
}

// The rejected entry of an option that produced no qualifying plan; nullopt when it had one, or
// when it was only outranked (skipped as worse than the plans found).
std::optional<Rejection> rejection_of(const Workload& w, const Option& o, const Tally& t) {
  if (t.feasible > 0 || t.outranked > 0) return std::nullopt;
  Rejection r{o.hardware.instance.id, o.hardware.gpu.id, {}};
  const Constraints& c = w.constraints;
  // The reasons that come closest to a plan first: a constraint missed, then memory.
  std::vector<Rejection::Count> near;
  if (t.deadline > 0) {
    // A bound is said as one: no plan of this machine is that fast, the search stopped there.
    auto n = reason_count(
        Reason::deadline, t.deadline,
        words(t.best_hours_bound ? "no plan under %.1f h (the search's lower bound)" : "fastest plan %.1f h",
              t.best_hours) +
            words(" against the %g h deadline", c.deadline_hours.value_or(0)));
    n.best_hours = t.best_hours;
    near.push_back(std::move(n));
  }
  if (t.budget > 0) {
    auto n =
        reason_count(Reason::budget, t.budget,
                     (t.best_cost_bound ? "no plan under " + text::dollars(t.best_cost) + " (the search's lower bound)"
                                        : "cheapest plan " + text::dollars(t.best_cost)) +
                         " against the " + text::dollars(c.budget_usd.value_or(0)) + " budget");
    n.best_cost_usd = t.best_cost;
    near.push_back(std::move(n));
  }
  if (t.latency > 0) {
    auto n = reason_count(Reason::latency_target, t.latency,
                          words("lowest time per output token %.1f ms", t.best_tpot_ms) +
                              words(" against the %g ms target", w.job.latency_target_ms.value_or(0)));
    n.best_tpot_ms = t.best_tpot_ms;
    near.push_back(std::move(n));
  }
  std::stable_sort(near.begin(), near.end(), [](const auto& a, const auto& b) { return a.count > b.count; });
  r.reasons = std::move(near);
  if (t.memory > 0) {
    std::string detail = "does not fit in memory";
    const double short_by = units::bytes_to_gb(t.min_total - t.capacity);
    if (t.min_total < kInf)
      detail = words("needs at least %.1f GB", units::bytes_to_gb(t.min_total)) +
               words(" (%.1f GiB) per GPU", units::bytes_to_gib(t.min_total)) +
               words(", %.1f GB", units::bytes_to_gb(t.capacity)) +
               words(" (%.1f GiB) available", units::bytes_to_gib(t.capacity)) +
               // the shortfall itself, which the rounding above can hide ("85.4 of 85.4")
               words(short_by < 1     ? ": short by %.2f GB"
                     : short_by < 100 ? ": short by %.1f GB"
                                      : ": short by %.0f GB",
                     short_by);
    if (t.min_host < kInf)
      detail =
          (t.min_total < kInf ? detail + "; " : std::string()) +
          words("host memory: the offloaded states need at least %.0f GiB per node", units::bytes_to_gib(t.min_host)) +
          words(", the instance has %.0f GiB", units::bytes_to_gib(t.host_capacity));
    if (t.kv_pool_empty > 0)
      detail = (t.min_total < kInf || t.min_host < kInf ? detail + "; " : std::string()) +
               "the serving engine's KV pool cannot hold one sequence of prompt_len + output_len tokens on " +
               std::to_string(t.kv_pool_empty) + " layout" + (t.kv_pool_empty == 1 ? "" : "s");
    r.reasons.push_back(reason_count(Reason::memory, t.memory, std::move(detail)));
  }
  if (r.reasons.empty()) {
    // Nothing was evaluated, outranked or turned down: no layout of the job splits over the node
    // counts tried. Said, never left out of the answer.
    std::string counts;
    for (int n : o.node_counts) counts += (counts.empty() ? "" : ", ") + std::to_string(n);
    r.reasons.push_back(reason_count(Reason::constraint, 1,
                                     "no layout of this job splits over the node counts tried (" +
                                         (counts.empty() ? std::string("none") : counts) + " of " +
                                         std::to_string(o.prepared.gpus_per_node) +
                                         " GPUs): the global batch, layers and heads do not divide over them"));
    return r;
  }
  if (!o.prepared.has_network && !(w.nodes && *w.nodes == 1))
    r.reasons.push_back(
        reason_count(Reason::network_unknown, 1, "no stated network bandwidth between nodes: one node only"));
  return r;
}

Rejection single_rejection(HardwareRef hw, Reason reason, std::string detail) {
  return Rejection{hw.instance.id, hw.gpu.id, {reason_count(reason, 1, std::move(detail))}};
}

// Why no machine of the catalog was left to search: the filters together match nothing. Says how
// many instance types each matches alone, so the one to loosen shows.
std::string no_match_words(const Constraints& c, const Catalog& catalog) {
  const auto alone = [&](Constraints one) {
    long long n = 0;
    one.max_nodes = one.min_nodes = one.max_gpus = std::nullopt;
    for (const Instance& in : catalog.instances()) n += unmet_constraints(one, in, 0).empty() ? 1 : 0;
    return std::to_string(n) + (n == 1 ? " instance type" : " instance types");
  };
  std::string out;
  const auto add = [&](const char* field, const std::vector<std::string>& names, Constraints one) {
    if (names.empty()) return;
    out += std::string(out.empty() ? "" : ", ") + field + " [" + text::join(names) + "] (" + alone(std::move(one)) +
           " alone)";
  };
  Constraints only;
  only.providers = c.providers;
  add("constraints.providers", c.providers, only);
  only = {};
  only.gpu_models = c.gpu_models;
  add("constraints.gpu_models", c.gpu_models, only);
  only = {};
  only.instances = c.instances;
  add("constraints.instances", c.instances, only);
  if (out.empty()) return "the catalog has no instance types: nothing was searched";
  return "no instance type of the catalog meets " + out + " together: nothing was searched";
}

// Why every machine searched was turned down, by its main reason ("memory 12, deadline 3").
std::string rejected_words(const std::vector<Rejection>& rejected) {
  std::vector<std::pair<std::string, int>> counts;
  for (const Rejection& r : rejected) {
    if (r.reasons.empty()) continue;
    const std::string name(to_string(r.reasons.front().reason));
    auto at = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == name; });
    if (at == counts.end()) counts.emplace_back(name, 1);
    else ++at->second;
  }
  // One machine: its own main reason in words, which is the whole answer.
  if (rejected.size() == 1 && !rejected.front().reasons.empty() && !rejected.front().reasons.front().detail.empty())
    return "no plan qualifies on " + rejected.front().instance + ": " + rejected.front().reasons.front().detail;
  std::string out;
  for (const auto& [name, n] : counts) out += (out.empty() ? "" : ", ") + name + " " + std::to_string(n);
  return "no plan qualifies on any of the " + std::to_string(rejected.size()) +
         " instance types the constraints allow (by main reason: " + out +
         "); each one's reasons are listed under rejected";
}

}  // namespace

namespace {

constexpr EnumNames<Reason, 8> kReasonNames{{
    {Reason::memory, "memory"},
    {Reason::deadline, "deadline"},
    {Reason::budget, "budget"},
    {Reason::network_unknown, "network_unknown"},
    {Reason::unpriced, "unpriced"},
    {Reason::latency_target, "latency_target"},
    {Reason::constraint, "constraint"},
    {Reason::unsupported, "unsupported"},
}};
constexpr EnumNames<Grouping, 3> kGroupingNames{{
    {Grouping::none, "none"},
    {Grouping::instance, "instance"},
    {Grouping::gpu, "gpu"},
}};

}  // namespace

std::string_view to_string(Reason r) noexcept { return enum_name(kReasonNames, r); }
std::string_view to_string(Grouping g) noexcept { return enum_name(kGroupingNames, g); }

Grouping parse_grouping(std::string_view text, const std::string& field) {
  if (text.empty()) return Grouping::none;  // the parameter left out
  return parse_enum(kGroupingNames, text, field);
}

SearchResult search(const Workload& w, const Catalog& catalog, int top_k, const MeasuredLinks* measured,
                    const SearchOptions& options) {
  if (top_k < kMinTop || top_k > kMaxTop)
    throw_invalid("top", "top must be between " + std::to_string(kMinTop) + " and " + std::to_string(kMaxTop));
  // layout.edp is derived from the sizes the search chooses; plan reads it back to check it, the
  // search would have to ignore it.
  if (w.layout.edp)
    throw_invalid("layout.edp", "layout.edp is derived (tp x cp x dp / (ep x etp)) from the sizes recommend "
                                "searches: leave it out, or fix tp, cp, dp and ep");
  // Hybrid sharding: the search offers the shard group one NVLink domain holds beside full
  // sharding at ZeRO-3 (nvlink_shard_group). A stated dp_shard equal to the stated dp keeps it to
  // full sharding (a plan's layout reads back); any other size is plan's to plan.
  if (w.layout.dp_shard && w.layout.dp != w.layout.dp_shard)
    throw_invalid(
        "layout.dp_shard",
        "layout.dp_shard: recommend offers hybrid sharding itself (at ZeRO-3, the data-parallel ranks one "
        "NVLink domain holds, beside full sharding); state dp_shard equal to layout.dp for full sharding only, "
        "or plan another shard group with `plan`");
  // The workload's own machine without a price: a cost objective has nothing to rank by, so the
  // layouts are ranked by time instead and every plan says so (a machine named on purpose is
  // never a dead end). A budget still needs a price: that search is left to refuse it.
  if (w.hardware && w.constraints.objective != Objective::time && !w.constraints.budget_usd) {
    const Instance& in = w.hardware->instance;
    if (!node_price_usd_per_hour(in, w.constraints.spot)) {
      Workload by_time = w;
      by_time.constraints.objective = Objective::time;
      SearchResult r = search(by_time, catalog, top_k, measured, options);
      const std::string note = std::string("no ") + (w.constraints.spot ? "spot price" : "price") + " for " + in.id +
                               " in the catalog: ranked by time, not " +
                               std::string(to_string(w.constraints.objective));
      for (Plan& p : r.plans) p.warnings.insert(p.warnings.begin(), note);
      return r;
    }
  }
  const PlannerConstants& k = options.constants ? *options.constants : default_constants();
  SearchResult result;
  result.objective = w.constraints.objective;
  const PreparedModel model = prepare_model(w.model, w.job);

  // The machines: the workload's own, or the catalog's filtered by the constraints (seen in place,
  // never copied).
  std::vector<HardwareRef> machines;
  // Rejections keyed by the machine's position, so the summary comes in catalog order.
  std::vector<std::pair<int, Rejection>> rejected;
  bool own_rejected = false;  // the workload's own machine misses its constraints: not searched
  if (w.hardware) {
    machines.emplace_back(*w.hardware);
    // The workload's own machine against its constraints: one it does not meet is rejected with
    // the reason, never searched as if the constraints were not there.
    const std::vector<std::string> unmet = unmet_constraints(w.constraints, w.hardware->instance, w.nodes.value_or(0));
    if (!unmet.empty()) {
      rejected.emplace_back(0, single_rejection(machines.front(), Reason::constraint, text::join(unmet, "; ")));
    }
    own_rejected = !unmet.empty();
  } else {
    machines.reserve(catalog.instances().size());
    for (const Instance& in : catalog.instances()) {
      if (!unmet_constraints(w.constraints, in, 0).empty()) continue;
      const Gpu* gpu = catalog.find_gpu(in.gpu_model);
      if (!gpu) continue;
      machines.emplace_back(in, *gpu, false);
    }
    if (machines.empty()) result.why_no_results = no_match_words(w.constraints, catalog);
  }
  // A probe report measured one machine: over the catalog it stands in for the claims of the
  // machines it describes only, the others keep their claims and their plans say so; a report that
  // describes none of them, or another machine than the workload's own, is refused.
  auto measured_for = [&](const HardwareRef& hw) -> const MeasuredLinks* {
    if (!measured || w.hardware) return measured;  // prepare_hardware refuses a mismatch
    return measured_mismatch(hw, *measured).empty() ? measured : nullptr;
  };
  if (measured && !w.hardware && !machines.empty() &&
      std::none_of(machines.begin(), machines.end(), [&](const HardwareRef& hw) { return measured_for(hw); }))
    throw_invalid("report", measured_mismatch(machines.front(), *measured) +
                                " (nor any other machine of the search: no plan could use the report)");
  std::vector<int> option_machine;
  std::vector<Option> opts;
  opts.reserve(machines.size());
  for (int m = 0; m < int(machines.size()); ++m) {
    const HardwareRef& hw = machines[m];
    if (own_rejected) continue;  // set only when the workload's own hardware is the one machine
    if (const auto mismatch = job_mismatch(hw.gpu, w.job)) {
      result.skipped.push_back(hw.instance.id + ": " + mismatch->reason);
      rejected.emplace_back(m, single_rejection(hw, Reason::unsupported, mismatch->reason));
      continue;
    }
    Option o{hw, {}, {}};
    o.prepared = prepare_hardware(hw, w.job, k, measured_for(hw), w.constraints.spot);
    // A price is needed to rank by cost and to hold to a budget: a budget always filters, so a
    // machine whose cost is unknown cannot be shown as within it.
    if ((w.constraints.objective != Objective::time || w.constraints.budget_usd) &&
        o.prepared.price_per_node_hour < 0) {
      const std::string why = w.constraints.spot ? "no spot price" : "no price";
      result.skipped.push_back(hw.instance.id + ": " + why);
      rejected.emplace_back(m,
                            single_rejection(hw, Reason::unpriced,
                                             why + " in the catalog: " +
                                                 (w.constraints.budget_usd ? "constraints.budget_usd cannot be checked"
                                                                           : "no cost to rank by")));
      continue;
    }
    if (w.nodes) {
      if (*w.nodes > 1 && !o.prepared.has_network) {
        rejected.emplace_back(m, single_rejection(hw, Reason::network_unknown,
                                                  "no stated network bandwidth between nodes: cannot run on " +
                                                      std::to_string(*w.nodes) + " nodes"));
        continue;
      }
      o.node_counts = {*w.nodes};
    } else {
      o.node_counts = candidate_node_counts(w.constraints, hw.instance.gpu_count, o.prepared.has_network);
    }
    if (o.node_counts.empty()) {
      const Constraints& c = w.constraints;
      std::string why = "no node count allowed by the constraints";
      if (c.max_gpus && *c.max_gpus < hw.instance.gpu_count)
        why = "max_gpus " + std::to_string(*c.max_gpus) + " is below its " + std::to_string(hw.instance.gpu_count) +
              " GPUs per node";
      else if (c.min_nodes && *c.min_nodes > 1 && !o.prepared.has_network) {
        rejected.emplace_back(
            m, single_rejection(hw, Reason::network_unknown,
                                "no stated network bandwidth between nodes: one node only, min_nodes is " +
                                    std::to_string(*c.min_nodes)));
        continue;
      }
      rejected.emplace_back(m, single_rejection(hw, Reason::constraint, why));
      continue;
    }
    o.index = int(opts.size());
    option_machine.push_back(m);
    opts.push_back(std::move(o));
  }
  result.hardware_considered = int(opts.size());

  std::vector<Tally> tallies(opts.size());
  const Context cx{w, model, k, options.exhaustive, result, tallies, options.budget};
  auto run = [&](const std::vector<Option>& subset, TopK& top) {
    if (w.job.kind == JobKind::inference) search_inference(cx, subset, top);
    else search_training(cx, subset, top);
  };
  std::vector<Candidate> chosen;  // Candidate::option: an index into opts
  if (options.per == Grouping::none) {
    TopK top(top_k);
    run(opts, top);
    chosen = top.items();
  } else {
    // The best plan of each group (instance type or GPU model): one search per group, ranked.
    std::vector<std::string> keys;
    std::vector<std::vector<Option>> groups;
    for (const Option& o : opts) {
      const std::string& key = options.per == Grouping::instance ? o.hardware.instance.id : o.hardware.gpu.id;
      const auto at = std::find(keys.begin(), keys.end(), key);
      if (at == keys.end()) {
        keys.push_back(key);
        groups.emplace_back();
        groups.back().push_back(o);
      } else groups[at - keys.begin()].push_back(o);
    }
    for (const auto& group : groups) {
      TopK top(1);
      run(group, top);
      if (top.items().empty()) continue;
      Candidate c = top.items().front();
      c.option = group[c.option].index;
      chosen.push_back(c);
    }
    std::sort(chosen.begin(), chosen.end(), better);
    if (int(chosen.size()) > top_k) chosen.resize(top_k);
  }

  for (int i = 0; i < int(opts.size()); ++i)
    if (auto r = rejection_of(w, opts[i], tallies[i])) rejected.emplace_back(option_machine[i], std::move(*r));
  std::stable_sort(rejected.begin(), rejected.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& [m, r] : rejected) result.rejected.push_back(std::move(r));

  if (chosen.empty() && result.why_no_results.empty()) result.why_no_results = rejected_words(result.rejected);
  int rank = 0;
  for (const Candidate& c : chosen) {
    const Option& o = opts[c.option];
    PreparedLinksInfo links;  // the words, for the plans shown only
    const MeasuredLinks* here = measured_for(o.hardware);
    prepare_hardware(o.hardware, w.job, k, here, w.constraints.spot, &links);
    Plan p = describe(w, o.hardware, c.nodes, c.layout, c.estimate, o.prepared, links, k);
    if (measured && !here)
      p.warnings.push_back("probe report not applied, catalog claims used: " +
                           measured_mismatch(o.hardware, *measured));
    p.why = why_words(w, p, ++rank);
    result.plans.push_back(std::move(p));
  }
  return result;
}

}  // namespace linkwise::planner
