#include "server/request.hpp"

#include <httplib.h>
#include <strings.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"

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

// Client text quoted in a message, cut to a readable length.
std::string clip(std::string_view text) {
  constexpr std::size_t kMax = 80;
  return text.size() <= kMax ? std::string(text) : std::string(text.substr(0, kMax)) + "...";
}

}  // namespace

QueryParams::QueryParams(const httplib::Request& req, std::initializer_list<std::string_view> allowed) {
  // cpp-httplib's own parse drops a repeated "name=value" and keeps only the text after the last
  // '=' of a value; the target as sent is split here instead.
  const auto question = req.target.find('?');
  std::string_view query =
      question == std::string::npos ? std::string_view() : std::string_view(req.target).substr(question + 1);
  while (!query.empty()) {
    const auto amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    std::string name = httplib::detail::decode_url(std::string(pair.substr(0, eq)), true);
    std::string value = eq == std::string_view::npos
                            ? std::string()
                            : httplib::detail::decode_url(std::string(pair.substr(eq + 1)), true);
    const std::string shown = clip(name);
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string accepted;
      for (auto a : allowed) accepted += (accepted.empty() ? "" : ", ") + std::string(a);
      throw_invalid(shown, "unknown query parameter \"" + shown + "\"" +
                               (accepted.empty() ? "; this endpoint takes none" : "; accepted: " + accepted));
    }
    if (find(name)) throw_invalid(shown, "query parameter \"" + shown + "\" given more than once");
    params_.emplace_back(std::move(name), std::move(value));
  }
}

const std::string* QueryParams::find(std::string_view name) const {
  for (const auto& [key, value] : params_)
    if (key == name) return &value;
  return nullptr;
}

std::optional<std::string> QueryParams::text(std::string_view name) const {
  const std::string* value = find(name);
  if (!value) return std::nullopt;
  if (value->empty()) throw_invalid(std::string(name), std::string(name) + ": expected a value, got an empty one");
  return *value;
}

std::optional<long long> QueryParams::integer(std::string_view name, long long min, long long max) const {
  auto value = text(name);
  if (!value) return std::nullopt;
  long long parsed = 0;
  const char* end = value->data() + value->size();
  auto [ptr, ec] = std::from_chars(value->data(), end, parsed);
  if (ec == std::errc() && ptr == end && (parsed < min || parsed > max)) {
    throw_invalid(std::string(name), std::string(name) + ": expected an integer from " + std::to_string(min) + " to " +
                                         std::to_string(max) + ", got \"" + clip(*value) + "\"");
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
  if (ec != std::errc() || ptr != end || !std::isfinite(parsed)) {
    throw_invalid(std::string(name),
                  std::string(name) + ": expected a plain finite number (no unit), got \"" + clip(*value) + "\"");
  }
  return parsed;
}

std::optional<bool> QueryParams::boolean(std::string_view name) const {
  auto value = text(name);
  if (!value) return std::nullopt;
  // Any case: Python's requests sends True and False as "True" and "False".
  // 1 and 0 too: the booleans every front end accepts (true/false/1/0, any case).
  if (strcasecmp(value->c_str(), "true") == 0 || *value == "1") return true;
  if (strcasecmp(value->c_str(), "false") == 0 || *value == "0") return false;
  throw_invalid(std::string(name), std::string(name) + ": expected true, false, 1 or 0, got \"" + clip(*value) + "\"");
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
  const nlohmann::json body = parse_json_text(req.body, "body");
  if (!body.is_object()) {
    throw_invalid("body", std::string("body: expected a JSON object, got ") + body.type_name());
  }
  return body;
}

}  // namespace linkwise::server
