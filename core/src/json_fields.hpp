// JSON fields, internal to core. Reading: the type checks and messages shared by the workload
// parser (planner/workload.cpp) and the probe report reader (probe/report_json.cpp); each throws
// invalid_input naming the field's full path ("job.seq_len", "results[2].bytes"), with the message
// "<path>: expected <what>, got <the value as written>". Whether a field is required or may be
// null is each reader's own rule, not decided here. Writing: optionals as null, never omitted.
#pragma once

#include <cmath>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"

namespace linkwise::json_fields {

using nlohmann::json;

[[noreturn]] inline void fail(const std::string& field, std::string_view expected, const json& value) {
  std::string shown = value.dump();
  if (shown.size() > 80) shown = shown.substr(0, 77) + "...";
  throw_invalid(field, field + ": expected " + std::string(expected) + ", got " + shown);
}

// The member's value, or nullptr where the key is absent or its value is null.
inline const json* member_or_null(const json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

inline std::string string(const json& value, const std::string& field) {
  if (!value.is_string()) fail(field, "a string", value);
  return value.get<std::string>();
}

inline bool boolean(const json& value, const std::string& field) {
  if (!value.is_boolean()) fail(field, "true or false", value);
  return value.get<bool>();
}

// A finite number.
inline double number(const json& value, const std::string& field) {
  if (!value.is_number()) fail(field, "a number", value);
  const double x = value.get<double>();
  if (!std::isfinite(x)) fail(field, "a finite number", value);
  return x;
}

// A JSON integer (no fraction, no exponent) of at least `minimum`.
inline long long integer(const json& value, const std::string& field, long long minimum) {
  if (!value.is_number_integer()) fail(field, "an integer", value);
  const long long x = value.get<long long>();
  if (x < minimum) fail(field, "an integer >= " + std::to_string(minimum), value);
  return x;
}

// An optional as JSON: its value, or null (the contract writes every field, null where unset).
template <typename Json = nlohmann::json, typename T>
Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

}  // namespace linkwise::json_fields
