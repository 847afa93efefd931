// Route registration, one function per resource family (handlers_*.cpp).
#pragma once

#include <memory>
#include <string>

#include <httplib.h>

#include "server/context.hpp"
#include "server/encoded_body.hpp"
#include "server/router.hpp"

namespace linkwise::server {

void add_system_routes(Router& router, Context& ctx);   // /healthz, /metrics, /openapi.json
void add_catalog_routes(Router& router, Context& ctx);  // /v1/instances, /v1/gpus
void add_planner_routes(Router& router, Context& ctx);  // /v1/plans, /v1/recommendations
void add_report_routes(Router& router, Context& ctx);   // /v1/probe-reports, /v1/instances/{id}/validation
void add_web_routes(Router& router, Context& ctx);      // /, /docs, /assets/{name}: the web page

inline void send_json(httplib::Response& res, std::string body, int status = 200) {
  res.status = status;
  res.set_content(std::move(body), "application/json");
}

// The OpenAPI 3.1 document (service/openapi.json, embedded at build time).
const std::string& openapi_document();

}  // namespace linkwise::server
