// JSON fields, internal to core. Reading: the type checks and messages shared by the workload
// parser (planner/workload.cpp) and the probe report reader (probe/report_json.cpp); each throws
// invalid_input naming the field's full path ("job.seq_len", "results[2].bytes"), with the message
// "<path>: expected <what>, got <the value as written>". Whether a field is required or may be
// null is each reader's own rule, not decided here. Writing: optionals as null, never omitted.
#pragma once

#include <cmath>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"

namespace linkwise::json_fields {

using nlohmann::json;

// A value as quoted in a message: scalars as written (cut to 80 characters); arrays and objects by
// their kind and size, never dumped, so a value nested 100,000 deep cannot exhaust the stack here.
inline std::string shown(const json& value) {
  if (value.is_array()) return "an array of " + std::to_string(value.size()) + " item(s)";
  if (value.is_object()) return "an object with " + std::to_string(value.size()) + " field(s)";
  std::string text = value.dump();
  if (text.size() > 80) text = text.substr(0, 77) + "...";
  return text;
}

[[noreturn]] inline void fail(const std::string& field, std::string_view expected, const json& value) {
  throw_invalid(field, field + ": expected " + std::string(expected) + ", got " + shown(value));
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

// A whole number in [minimum, maximum]: a JSON integer, or a float with no fraction (2e3). The range
// is part of the message, so a client sees the bound it broke.
inline long long integer_in(const json& value, const std::string& field, long long minimum, long long maximum) {
  const std::string range = "an integer from " + std::to_string(minimum) + " to " + std::to_string(maximum);
  if (value.is_number_integer()) {
    // Unsigned values above 2^63 do not fit a long long: out of every range linkwise has.
    if (value.is_number_unsigned() && value.get<unsigned long long>() > (unsigned long long)maximum)
      fail(field, range, value);
    const long long x = value.get<long long>();
    if (x < minimum || x > maximum) fail(field, range, value);
    return x;
  }
  if (!value.is_number_float()) fail(field, range, value);
  const double d = value.get<double>();
  if (!std::isfinite(d) || std::floor(d) != d || d < double(minimum) || d > double(maximum)) fail(field, range, value);
  return static_cast<long long>(d);
}

// A finite number in [minimum, maximum] (exclusive of zero where minimum is 0 and positive is set).
inline double number_in(const json& value, const std::string& field, double minimum, double maximum,
                        bool zero_allowed = true) {
  char range[96];
  std::snprintf(range, sizeof range, zero_allowed ? "a number from %g to %g" : "a number above %g, at most %g", minimum,
                maximum);
  if (!value.is_number()) fail(field, range, value);
  const double x = value.get<double>();
  if (!std::isfinite(x) || x < minimum || x > maximum || (!zero_allowed && x <= minimum)) fail(field, range, value);
  return x;
}

// An optional as JSON: its value, or null (the contract writes every field, null where unset).
template <typename Json = nlohmann::json, typename T>
Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

}  // namespace linkwise::json_fields
