// GET /healthz, GET /metrics, GET /openapi.json.
#include "server/handlers.hpp"
#include "server/request.hpp"

namespace linkwise::server {

void add_system_routes(Router& router, Context& ctx) {
  router.add("GET", "/healthz", [](const httplib::Request& req, httplib::Response& res, const PathParams&) {
    QueryParams(req, {});
    send_json(res, R"({"status":"ok","version":")" LINKWISE_VERSION R"("})");
  });

  router.add("GET", "/metrics", [&ctx](const httplib::Request& req, httplib::Response& res, const PathParams&) {
    QueryParams(req, {});
    ctx.metrics.set_gauge("linkwise_probe_reports_stored", "Probe reports in the database.",
                          static_cast<double>(ctx.reports.count()));
    res.set_content(ctx.metrics.render(), "text/plain; version=0.0.4; charset=utf-8");
  });

  router.add("GET", "/openapi.json", [](const httplib::Request& req, httplib::Response& res, const PathParams&) {
    QueryParams(req, {});
    send_json(res, openapi_document());
  });
}

}  // namespace linkwise::server
