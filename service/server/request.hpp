// Reading what a client sent: query parameters (strictly: an unknown or repeated parameter is an
// error naming it) and JSON bodies (Content-Type checked, nesting bounded). Every failure is a
// linkwise::Error naming the parameter or field, so problem.cpp turns it into a 400/415.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace httplib {
struct Request;
}

namespace linkwise::server {

class QueryParams {
 public:
  // Throws invalid_input naming the first parameter not in `allowed`, or one given twice.
  QueryParams(const httplib::Request& req, std::initializer_list<std::string_view> allowed);

  std::optional<std::string> text(std::string_view name) const;
  std::optional<long long> integer(std::string_view name, long long min, long long max) const;
  // Any number, as written (nan and inf included): ranges are the business of whoever uses it.
  std::optional<double> number(std::string_view name) const;
  std::optional<bool> boolean(std::string_view name) const;                // "true" / "false"

 private:
  const httplib::Request& req_;
};

// Nesting deeper than this is refused before parsing (the parser and the writers recurse).
inline constexpr int kMaxJsonDepth = 64;

// Throws UnsupportedMediaType unless Content-Type is application/json. POST handlers call it
// first: cpp-httplib reads a form-encoded body into the query parameters, which must not be
// judged as query parameters.
void require_json_content_type(const httplib::Request& req);

// The request body as a JSON object. Throws unsupported_media_type (as a 415 problem, see
// problem.hpp) unless Content-Type is application/json, invalid_input naming "body" for an empty
// body, bad JSON (with the byte offset), nesting over kMaxJsonDepth or a non-object.
nlohmann::json json_body(const httplib::Request& req);

// Thrown by json_body for a wrong Content-Type; answered with 415.
struct UnsupportedMediaType {
  std::string detail;
};

}  // namespace linkwise::server
