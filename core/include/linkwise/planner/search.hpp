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

#include <vector>

#include "linkwise/catalog_db.hpp"
#include "linkwise/links.hpp"
#include "linkwise/planner/plan.hpp"

namespace linkwise::planner {

struct SearchOptions {
  bool exhaustive = false;                      // evaluate everything (tests)
  const PlannerConstants* constants = nullptr;  // default_constants() when null
};

struct SearchResult {
  std::vector<Plan> plans;     // best first
  long long evaluated = 0;     // layouts whose memory (and, when it fits, time) was estimated
  long long feasible = 0;      // of those, fitting and meeting the constraints
  long long pruned_subtrees = 0;
  int hardware_considered = 0;  // instances (or the custom machine) after the constraint filters
  std::vector<std::string> skipped;  // instances left out, with why (no price, no fp8, ...)
};

SearchResult search(const Workload& w, const Catalog& catalog, int top_k, const MeasuredLinks* measured = nullptr,
                    const SearchOptions& options = {});

// Node counts tried when the workload does not fix them: 1, 2, 3, 4, 6, 8, 12, ... (powers of two
// and 1.5x them) up to max_nodes (default 64) and max_gpus.
std::vector<int> candidate_node_counts(const Constraints& c, int gpus_per_node, bool has_network);

// A lower bound on the training step time of any layout with this tp, pp, cp, dp on `nodes` nodes
// (any micro-batch, ZeRO stage, recompute, up to max_virtual_stages; 0 for DualPipe, whose bubble
// the bound leaves out). Never above estimate().step.
double step_lower_bound(const PreparedModel& m, const PreparedHardware& hw, int nodes, int tp, int pp, int cp, int dp,
                        int max_virtual_stages, bool sequence_parallel_possible, const PlannerConstants& k) noexcept;

}  // namespace linkwise::planner
