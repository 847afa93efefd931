// Route registration, one function per resource family (handlers_*.cpp).
#pragma once

#include <memory>
#include <string>

#include <httplib.h>

#include "server/context.hpp"
#include "server/router.hpp"

namespace linkwise::server {

void add_system_routes(Router& router, Context& ctx);   // /healthz, /metrics, /openapi.json
void add_catalog_routes(Router& router, Context& ctx);  // /v1/instances, /v1/gpus
void add_planner_routes(Router& router, Context& ctx);  // /v1/plans, /v1/recommendations
void add_report_routes(Router& router, Context& ctx);   // /v1/probe-reports, /v1/instances/{id}/validation

inline void send_json(httplib::Response& res, std::string body, int status = 200) {
  res.status = status;
  res.set_content(std::move(body), "application/json");
}

// Sends a body that outlives the response (the catalog's pre-serialized JSON, a cached body)
// without copying it into the response.
inline void send_shared_json(httplib::Response& res, std::shared_ptr<const std::string> body) {
  res.status = 200;
  const std::size_t size = body->size();
  res.set_content_provider(size, "application/json",
                           [body = std::move(body)](std::size_t offset, std::size_t length, httplib::DataSink& sink) {
                             return sink.write(body->data() + offset, length);
                           });
}

// The OpenAPI 3.1 document (service/openapi.json, embedded at build time).
const std::string& openapi_document();

}  // namespace linkwise::server
