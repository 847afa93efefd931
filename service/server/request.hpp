// Reading what a client sent: query parameters (strictly: an unknown or repeated parameter is an
// error naming it, read from the request target itself so that repeats and values holding '=' are
// seen as sent) and JSON bodies (Content-Type checked, nesting bounded). Every failure is a
// linkwise::Error naming the parameter or field, so problem.cpp turns it into a 400/415.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace httplib {
struct Request;
}

namespace linkwise::server {

class QueryParams {
 public:
  // Throws invalid_input naming the first parameter not in `allowed`, or one given twice (even with
  // the same value).
  QueryParams(const httplib::Request& req, std::initializer_list<std::string_view> allowed);

  std::optional<std::string> text(std::string_view name) const;
  std::optional<long long> integer(std::string_view name, long long min, long long max) const;
  // A finite number (nan, inf and values beyond the double range are refused); other ranges are
  // the business of whoever uses it.
  std::optional<double> number(std::string_view name) const;
  std::optional<bool> boolean(std::string_view name) const;  // "true" / "false" (any case), "1" / "0"

 private:
  const std::string* find(std::string_view name) const;
  std::vector<std::pair<std::string, std::string>> params_;  // decoded, in the order sent
};

// Throws UnsupportedMediaType unless Content-Type is application/json. POST handlers call it
// first: cpp-httplib reads a form-encoded body into the query parameters, which must not be
// judged as query parameters.
void require_json_content_type(const httplib::Request& req);

// The request body as a JSON object. Throws unsupported_media_type (as a 415 problem, see
// problem.hpp) unless Content-Type is application/json, invalid_input naming "body" for an empty
// body, bad JSON (with the byte offset), nesting over kMaxJsonDepth (core's json_input.hpp) or a non-object.
nlohmann::json json_body(const httplib::Request& req);

// Thrown by json_body for a wrong Content-Type; answered with 415.
struct UnsupportedMediaType {
  std::string detail;
};

}  // namespace linkwise::server
