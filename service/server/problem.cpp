#include "server/problem.hpp"

#include <httplib.h>

#include <cstdio>
#include <string_view>

#include <nlohmann/json.hpp>

namespace linkwise::server {

int http_status(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_input: return 400;
    case ErrorKind::not_found: return 404;
    case ErrorKind::unknown_reference: return 422;
    case ErrorKind::conflict: return 409;
    case ErrorKind::unauthorized: return 401;
    case ErrorKind::forbidden: return 403;
    case ErrorKind::payload_too_large: return 413;
    case ErrorKind::unsupported: return 501;
    case ErrorKind::io: return 500;
    case ErrorKind::internal: return 500;
  }
  return 500;
}

namespace {

std::string_view title_for(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 413: return "Content Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 422: return "Unprocessable Content";
    case 408: return "Request Timeout";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return status >= 500 ? "Internal Server Error" : "Bad Request";
  }
}

std::string_view kind_for(int status) {
  switch (status) {
    case 400: return "invalid_input";
    case 401: return "unauthorized";
    case 403: return "forbidden";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 409: return "conflict";
    case 411: return "length_required";
    case 413: return "payload_too_large";
    case 414: return "uri_too_long";
    case 415: return "unsupported_media_type";
    case 416: return "range_not_satisfiable";
    case 422: return "unknown_reference";
    case 408: return "request_timeout";
    case 431: return "header_fields_too_large";
    case 501: return "unsupported";
    case 503: return "unavailable";
    default: return status >= 500 ? "internal" : "invalid_input";
  }
}

}  // namespace

Problem problem_from(const Error& error) {
  Problem p;
  p.status = http_status(error.kind());
  p.kind = std::string(to_string(error.kind()));
  p.title = std::string(title_for(p.status));
  p.detail = error.message();  // not what(): that stops at a NUL inside a client's value
  p.field = error.field();
  // A bug or an I/O failure is logged in full; the client learns only that it happened.
  if (p.status >= 500 && error.kind() != ErrorKind::unsupported) p.detail = "internal error; see the server log";
  return p;
}

Problem problem_for_status(int status, std::string detail, std::string field) {
  Problem p;
  p.status = status;
  p.kind = std::string(kind_for(status));
  p.title = std::string(title_for(status));
  p.detail = std::move(detail);
  p.field = std::move(field);
  return p;
}

void write_problem(httplib::Response& res, const Problem& problem, std::string_view instance) {
  nlohmann::ordered_json body;
  body["type"] = "urn:linkwise:problem:" + problem.kind;
  body["title"] = problem.title;
  body["status"] = problem.status;
  body["detail"] = visible_text(problem.detail);
  body["instance"] = std::string(instance);
  body["field"] =
      problem.field.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(visible_text(problem.field));
  res.status = problem.status;
  // Invalid UTF-8 in a client's value must not turn an error report into a second error.
  res.set_content(body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace),
                  "application/problem+json");
}

}  // namespace linkwise::server
