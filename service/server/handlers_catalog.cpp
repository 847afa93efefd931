// GET /v1/instances (filters, sort, paging), GET /v1/instances/{id}, GET /v1/gpus, GET /v1/models: answered from
// the in-memory catalog snapshot with each instance's JSON serialized once at startup.
#include <limits>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner.hpp"
#include "server/handlers.hpp"
#include "server/request.hpp"

namespace linkwise::server {
namespace {

constexpr long long kDefaultLimit = 100;
constexpr long long kMaxLimit = 1000;

// The query parameters carry InstanceFilter's field names, as the CLI's options do, so the
// errors of core's validate(InstanceFilter) (bounds >= 0, finite) name the parameter as sent.
InstanceFilter filter_from(const QueryParams& query) {
  InstanceFilter filter;
  filter.provider = query.text("provider");
  filter.gpu = query.text("gpu");
  if (auto v = query.integer("min_gpus", std::numeric_limits<int>::min(), std::numeric_limits<int>::max())) {
    filter.min_gpus = static_cast<int>(*v);
  }
  filter.min_gpu_memory_gb = query.number("min_gpu_memory_gb");
  if (auto v = query.text("fabric")) filter.fabric = parse_fabric(*v, "fabric");
  filter.min_nvlink_gbytes_per_s = query.number("min_nvlink_gbytes_per_s");
  filter.min_network_gbits_per_s = query.number("min_network_gbits_per_s");
  filter.rdma = query.boolean("rdma");
  filter.max_price = query.number("max_price");
  filter.region = query.text("region");
  return filter;
}

}  // namespace

void add_catalog_routes(Router& router, Context& ctx) {
  router.add("GET", "/v1/instances", [&ctx](const httplib::Request& req, httplib::Response& res, const PathParams&) {
    if (auto cached = ctx.instance_queries.find(req.target)) return send_encoded(req, res, std::move(cached));
    const QueryParams query(req,
                            {"provider", "gpu", "min_gpus", "min_gpu_memory_gb", "fabric", "min_nvlink_gbytes_per_s",
                             "min_network_gbits_per_s", "rdma", "max_price", "region", "sort", "limit", "offset"});
    const InstanceFilter filter = filter_from(query);
    const InstanceSort sort = InstanceSort::parse(query.text("sort").value_or("id"));
    const long long limit = query.integer("limit", 0, kMaxLimit).value_or(kDefaultLimit);
    const long long offset = query.integer("offset", 0, 1'000'000'000).value_or(0);

    const InstanceMatches found = ctx.catalog.match(filter, sort);
    const auto& matches = found.instances;
    const auto first = std::min<std::size_t>(matches.size(), static_cast<std::size_t>(offset));
    const auto last = std::min<std::size_t>(matches.size(), first + static_cast<std::size_t>(limit));
    // The core's envelope (total, excluded_unknown) plus this page's bounds; the items are appended
    // as their cached encodings, so the object is closed by hand.
    nlohmann::ordered_json head = matches_summary_json(found);
    head["limit"] = limit;
    head["offset"] = offset;
    std::string body = head.dump();
    body.pop_back();  // the closing '}'
    body += R"(,"items":[)";
    std::size_t size = body.size() + 2;
    for (std::size_t i = first; i < last; ++i) size += ctx.json_of(*matches[i])->identity().size() + 1;
    body.reserve(size);
    for (std::size_t i = first; i < last; ++i) {
      if (i != first) body += ',';
      body += ctx.json_of(*matches[i])->identity();
    }
    body += "]}";
    auto encoded = encode_body(std::move(body));
    ctx.instance_queries.insert(req.target, encoded);
    send_encoded(req, res, std::move(encoded));
  });

  router.add("GET", "/v1/instances/{id}",
             [&ctx](const httplib::Request& req, httplib::Response& res, const PathParams& params) {
               QueryParams(req, {});
               const std::string& id = params.find("id")->second;
               send_encoded(req, res, ctx.json_of(ctx.catalog.instance(id)));  // not_found "id", with a suggestion
             });

  router.add("GET", "/v1/gpus", [&ctx](const httplib::Request& req, httplib::Response& res, const PathParams&) {
    QueryParams(req, {});
    send_encoded(req, res, ctx.gpus_body);
  });

  // The planner's model presets: fixed at build time, encoded once.
  router.add("GET", "/v1/models", [](const httplib::Request& req, httplib::Response& res, const PathParams&) {
    QueryParams(req, {});
    static const auto body = encode_body(planner::models_json().dump());
    send_encoded(req, res, body);
  });
}

}  // namespace linkwise::server
