#include "server/request.hpp"

#include <httplib.h>
#include <strings.h>

#include <algorithm>
#include <charconv>

#include "linkwise/error.hpp"

namespace linkwise::server {
namespace {

bool media_type_is_json(std::string_view content_type) {
  const auto semicolon = content_type.find(';');
  std::string_view type = content_type.substr(0, semicolon);
  while (!type.empty() && type.back() == ' ') type.remove_suffix(1);
  while (!type.empty() && type.front() == ' ') type.remove_prefix(1);
  constexpr std::string_view kJson = "application/json";
  return type.size() == kJson.size() && strncasecmp(type.data(), kJson.data(), kJson.size()) == 0;
}

// Depth of the deepest array/object nesting, ignoring brackets inside strings.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

// Client text quoted in a message, cut to a readable length.
std::string clip(std::string_view text) {
  constexpr std::size_t kMax = 80;
  return text.size() <= kMax ? std::string(text) : std::string(text.substr(0, kMax)) + "...";
}

}  // namespace

QueryParams::QueryParams(const httplib::Request& req, std::initializer_list<std::string_view> allowed)
    : req_(req) {
  for (auto it = req.params.begin(); it != req.params.end(); ++it) {
    const std::string name = clip(it->first);
    if (std::find(allowed.begin(), allowed.end(), it->first) == allowed.end()) {
      std::string accepted;
      for (auto a : allowed) accepted += (accepted.empty() ? "" : ", ") + std::string(a);
      throw_invalid(name, "unknown query parameter \"" + name + "\"" +
                              (accepted.empty() ? "; this endpoint takes none" : "; accepted: " + accepted));
    }
    if (req.params.count(it->first) > 1) throw_invalid(name, "query parameter \"" + name + "\" given more than once");
  }
}

std::optional<std::string> QueryParams::text(std::string_view name) const {
  const std::string key(name);
  if (!req_.has_param(key)) return std::nullopt;
  std::string value = req_.get_param_value(key);
  if (value.empty()) throw_invalid(key, key + ": expected a value, got an empty one");
  return value;
}

std::optional<long long> QueryParams::integer(std::string_view name, long long min, long long max) const {
  auto value = text(name);
  if (!value) return std::nullopt;
  long long parsed = 0;
  const char* end = value->data() + value->size();
  auto [ptr, ec] = std::from_chars(value->data(), end, parsed);
  if (ec == std::errc() && ptr == end && (parsed < min || parsed > max)) {
    throw_invalid(std::string(name), std::string(name) + ": expected an integer from " + std::to_string(min) +
                                         " to " + std::to_string(max) + ", got \"" + clip(*value) + "\"");
  }
  if (ec != std::errc() || ptr != end) {
    throw_invalid(std::string(name), std::string(name) + ": expected an integer, got \"" + clip(*value) + "\"");
  }
  return parsed;
}

std::optional<double> QueryParams::number(std::string_view name) const {
  auto value = text(name);
  if (!value) return std::nullopt;
  double parsed = 0;
  const char* end = value->data() + value->size();
  auto [ptr, ec] = std::from_chars(value->data(), end, parsed);
  if (ec != std::errc() || ptr != end) {
    throw_invalid(std::string(name), std::string(name) + ": expected a plain number (no unit), got \"" +
                                         clip(*value) + "\"");
  }
  return parsed;
}

std::optional<bool> QueryParams::boolean(std::string_view name) const {
  auto value = text(name);
  if (!value) return std::nullopt;
  if (*value == "true") return true;
  if (*value == "false") return false;
  throw_invalid(std::string(name), std::string(name) + ": expected true or false, got \"" + clip(*value) + "\"");
}

void require_json_content_type(const httplib::Request& req) {
  const std::string content_type = req.get_header_value("Content-Type");
  if (!media_type_is_json(content_type)) {
    throw UnsupportedMediaType{content_type.empty() ? "Content-Type: missing; send the body as application/json"
                                                    : "Content-Type: \"" + clip(content_type) +
                                                          "\" is not accepted; send application/json"};
  }
}

nlohmann::json json_body(const httplib::Request& req) {
  require_json_content_type(req);
  if (req.body.find_first_not_of(" \t\r\n") == std::string::npos) {
    throw_invalid("body", "body: expected a JSON object, got an empty body");
  }
  if (nesting_depth(req.body) > kMaxJsonDepth) {
    throw_invalid("body", "body: JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  nlohmann::json body;
  try {
    body = nlohmann::json::parse(req.body);
  } catch (const nlohmann::json::parse_error& e) {
    throw_invalid("body", "body: not valid JSON (at byte " + std::to_string(e.byte) + ")");
  }
  if (!body.is_object()) {
    throw_invalid("body", std::string("body: expected a JSON object, got ") + body.type_name());
  }
  return body;
}

}  // namespace linkwise::server
