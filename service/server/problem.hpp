// RFC 9457 problem+json responses. This is the one place where linkwise::ErrorKind becomes an
// HTTP status; every handler error and every transport error (404, 405, 413, 415) leaves the
// server through here, so all error bodies have the same shape:
//   {"type": "urn:linkwise:problem:<kind>", "title": ..., "status": ..., "detail": ...,
//    "instance": "<request path>", "field": "<field at fault>" | null}
#pragma once

#include <string>
#include <string_view>

#include "linkwise/error.hpp"

namespace httplib {
struct Response;
}

namespace linkwise::server {

struct Problem {
  int status = 500;
  std::string kind;    // "invalid_input", "method_not_allowed", ...: the tail of the type URN
  std::string title;   // short and fixed per kind
  std::string detail;  // what went wrong with this request, naming the field and what was expected
  std::string field;   // the field at fault; empty when none
};

// The HTTP status for an error kind (400, 404, 409, 401, 403, 413, 501, 500).
int http_status(ErrorKind kind) noexcept;

Problem problem_from(const Error& error);
// Transport-level problems that have no ErrorKind: the status alone decides kind and title.
Problem problem_for_status(int status, std::string detail, std::string field = {});

// Writes the problem as the response body with Content-Type application/problem+json.
void write_problem(httplib::Response& res, const Problem& problem, std::string_view instance);

}  // namespace linkwise::server
