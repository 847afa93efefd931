// What the handlers share: the catalog snapshot (read once at startup, never changed while
// serving, so reads take no lock), the database with the keys and reports in it, and the metrics.
#pragma once

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "linkwise/catalog_db.hpp"
#include "server/auth.hpp"
#include "server/compute_gate.hpp"
#include "server/database.hpp"
#include "server/metrics.hpp"
#include "server/report_store.hpp"
#include "server/response_cache.hpp"

namespace linkwise::server {

inline constexpr unsigned kMaxQueuedSearches = 16;
// The most layouts one POST /v1/recommendations may evaluate (planner/search.hpp: SearchBudget).
// Real workloads evaluate up to ~30 thousand (DeepSeek-V3 pre-training over the catalog, 1024
// nodes); 5 million is about half a second of one core. A workload of thousands of layers over
// 100000 nodes evaluated ~10^8 (10 s) and, eight at once, kept every other search waiting.
inline constexpr long long kMaxSearchLayouts = 5'000'000;

struct Context {
  Context(Catalog catalog_snapshot, Database& database);

  const Catalog catalog;
  // Each instance's JSON, serialized once; index i belongs to catalog.instances()[i].
  std::vector<std::shared_ptr<const EncodedBody>> instance_json;
  std::shared_ptr<const EncodedBody> gpus_body;      // the whole GET /v1/gpus response
  ResponseCache instance_queries{32 * 1024 * 1024};  // GET /v1/instances bodies by target
  // Planner answers by target and SHA-256 of the workload: a pure function of the request, the
  // catalog snapshot and a stored report (reports never change once stored).
  ResponseCache planner_answers{32 * 1024 * 1024};
  // One search per core at a time; at most 16 more wait (a quarter of the default 64 workers), so
  // at least 48 workers stay free for everything else whatever the planner load.
  ComputeGate planner_gate{std::thread::hardware_concurrency(), kMaxQueuedSearches};

  Database& db;
  KeyStore keys;
  ReportStore reports;
  Metrics metrics;

  const std::shared_ptr<const EncodedBody>& json_of(const Instance& instance) const {
    return instance_json[static_cast<std::size_t>(&instance - catalog.instances().data())];
  }
};

}  // namespace linkwise::server
