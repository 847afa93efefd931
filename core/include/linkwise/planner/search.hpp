// The search behind recommend(): instances x node counts x tp x pp x (cp) x micro-batch x virtual
// stages, and for each such parallel layout the ZeRO stage and recompute mode that make it
// fastest while fitting. Results are distinct parallel layouts ranked by the objective
// (cost: USD per token; time: seconds per token; cost_within_deadline: cost among those meeting
// the deadline). Deadline, budget and latency target always filter when given.
//
// Pruning is exact: a subtree is skipped only when its smallest possible memory does not fit or a
// lower bound on its objective (step_lower_bound, time_model.cpp) is worse than the k-th result;
// tests/core/test_planner_search.cpp checks that the pruned search returns what the exhaustive one does.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/links.hpp"
#include "linkwise/planner/plan.hpp"

namespace linkwise::planner {

// How many results recommend returns: the same default and bounds in the CLI (--top), REST (?top=)
// and Python (top=).
inline constexpr int kDefaultTop = 5, kMinTop = 1, kMaxTop = 100;

// How results are grouped: none = the global top K layouts; instance / gpu = the best plan of each
// instance type / GPU model, the groups ranked by it (top K groups).
enum class Grouping { none, instance, gpu };
std::string_view to_string(Grouping g) noexcept;
Grouping parse_grouping(std::string_view text, const std::string& field);  // "", "none", "instance", "gpu"

// A bound on one search's work, for a front end that serves many clients at once (the REST
// service): a pathological workload (thousands of layers, 100000 nodes) evaluates ~10^8 layouts,
// seconds of CPU that every other planner request would wait behind. Plain values, no clock: the
// same request gets the same answer (or the same refusal) on any machine. The CLI and Python
// leave it unbounded: their caller waits for their own search only.
struct SearchBudget {
  // At most this many layouts evaluated (SearchResult::evaluated); 0: no bound. Past it the search
  // throws payload_too_large naming constraints.max_nodes (with what else narrows it).
  long long max_evaluated = 0;
  // Polled every few thousand layouts (evaluated or pruned subtrees); returning true abandons the
  // search with SearchStopped, e.g. when the client that asked has gone.
  std::function<bool()> stop;
};

// Thrown when SearchBudget::stop says so: nobody is waiting for the answer.
struct SearchStopped : Error {
  SearchStopped() : Error(ErrorKind::io, "the search was stopped before it finished (the caller left)") {}
};

struct SearchOptions {
  bool exhaustive = false;                      // evaluate everything (tests)
  const PlannerConstants* constants = nullptr;  // default_constants() when null
  Grouping per = Grouping::none;
  SearchBudget budget;  // unbounded by default
};

// One instance type with no qualifying plan, and why: per reason class the number of layouts (or,
// for unpriced / network_unknown / constraint, 1: the instance itself) turned down for it.
struct Rejection {
  struct Count {
    Reason reason = Reason::memory;
    long long count = 0;
    std::string detail;  // in words, e.g. "fastest plan 1795.2 h against the 504 h deadline"
    // deadline / budget: the shortest job time / cheapest job found; where the search skipped the
    // machine's layouts once even their lower bound broke it, that bound (detail says so)
    std::optional<double> best_hours;
    std::optional<double> best_cost_usd;
    std::optional<double> best_tpot_ms;  // latency_target: the lowest time per output token found
  };
  std::string instance, gpu_model;
  std::vector<Count> reasons;  // the main reason first
};

struct SearchResult {
  std::vector<Plan> plans;  // best first
  // Layouts whose memory was estimated; their time too when they fit and could still rank (a plan
  // inside the memory band is not timed once it cannot enter: it ranks after every sure plan).
  long long evaluated = 0;
  long long feasible = 0;  // of those timed, meeting the constraints
  long long pruned_subtrees = 0;
  int hardware_considered = 0;       // instances (or the custom machine) after the constraint filters
  std::vector<std::string> skipped;  // instances left out, with why (no price, no fp8, ...)
  std::vector<Rejection> rejected;   // instance types with no qualifying plan, with why (catalog order)
  // Empty when plans were found; otherwise why none: the constraint filters matched no instance
  // type (each filter's count alone), or every one considered was rejected (counts by reason).
  std::string why_no_results;
  // What the plans are ranked by: the workload's objective, or time when the workload names its own
  // machine and it has no price for a cost objective to use.
  Objective objective = Objective::cost;
};

SearchResult search(const Workload& w, const Catalog& catalog, int top_k, const MeasuredLinks* measured = nullptr,
                    const SearchOptions& options = {});

// Node counts tried when the workload does not fix them: 1, 2, 3, 4, 6, 8, 12, ... (powers of two
// and 1.5x them) up to max_nodes and max_gpus, from min_nodes (itself tried first). Without
// max_nodes: up to 64 nodes, or as many as max_gpus or min_nodes allow where that is more.
std::vector<int> candidate_node_counts(const Constraints& c, int gpus_per_node, bool has_network);

// A lower bound on the training step time of any layout with this tp, pp, cp, dp on `nodes` nodes
// (any micro-batch of at least min_micro_batch sequences, ZeRO stage, recompute, up to
// max_virtual_stages; 0 for DualPipe, whose bubble the bound leaves out). Never above estimate().step.
// megatron: the layouts under Megatron-Core's runtime (true) or the others (false) only, for a
// framework whose runtime depends on the ZeRO stage (auto); unset: any layout.
double step_lower_bound(const PreparedModel& m, const PreparedHardware& hw, int nodes, int tp, int pp, int cp, int dp,
                        int max_virtual_stages, bool sequence_parallel_possible, const PlannerConstants& k,
                        int min_micro_batch = 1, std::optional<bool> megatron = std::nullopt,
                        bool tp_comm_overlap_possible = true) noexcept;

// A lower bound on the exposed expert all-to-all of a training step with this layout's tp, pp,
// cp, dp, ep and etp (any micro-batch and recompute): every dispatch and combine of the step's
// rows at the links' bandwidth plus one latency each; 0 with overlap_a2a or without experts. It
// adds to step_lower_bound (which leaves the all-to-all out). Never above estimate().ep_exposed.
double a2a_lower_bound(const PreparedModel& m, const PreparedHardware& hw, int nodes, const Layout& l) noexcept;

}  // namespace linkwise::planner
