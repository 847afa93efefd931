// One string table per enum: every enum <-> JSON spelling conversion of linkwise goes through a
// constexpr array of {value, "name"} and these functions, so a new value is one line in one table
// and every parser, writer, help text and error message follows it.
//
//   constexpr EnumNames<Fabric, 2> kFabricNames{{{Fabric::nvswitch, "nvswitch"}, {Fabric::pcie, "pcie"}}};
//   to_string(f) -> enum_name(kFabricNames, f);  parse -> parse_enum(kFabricNames, text, "field")
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkwise/error.hpp"

namespace linkwise {

template <typename Enum>
struct EnumName {
  Enum value;
  std::string_view name;
};

template <typename Enum, std::size_t N>
using EnumNames = std::array<EnumName<Enum>, N>;

// The spelling of `value`; every value of the enum is in its table (a test checks each table).
template <typename Enum, std::size_t N>
constexpr std::string_view enum_name(const EnumNames<Enum, N>& names, Enum value) noexcept {
  for (const auto& entry : names) {
    if (entry.value == value) return entry.name;
  }
  return "?";
}

// The value spelt `text`, or nullopt.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> find_enum(const EnumNames<Enum, N>& names, std::string_view text) noexcept {
  for (const auto& entry : names) {
    if (entry.name == text) return entry.value;
  }
  return std::nullopt;
}

// Every spelling in table order, for help texts: "\"a\", \"b\", \"c\"".
template <typename Enum, std::size_t N>
std::string quoted_enum_names(const EnumNames<Enum, N>& names) {
  std::string out;
  for (const auto& entry : names) {
    if (!out.empty()) out += ", ";
    out += '"';
    out += entry.name;
    out += '"';
  }
  return out;
}

template <typename Enum, std::size_t N>
std::vector<std::string_view> enum_names(const EnumNames<Enum, N>& names) {
  std::vector<std::string_view> out;
  for (const auto& entry : names) out.push_back(entry.name);
  return out;
}

// The one message for a spelling no table has: `field: unknown value "x"; accepted: "a", "b"`,
// as invalid_input naming `field`.
[[noreturn]] void throw_unknown_enum(std::string_view field, std::string_view text, const std::string& accepted);

template <typename Enum, std::size_t N>
Enum parse_enum(const EnumNames<Enum, N>& names, std::string_view text, std::string_view field) {
  if (const auto value = find_enum(names, text)) return *value;
  throw_unknown_enum(field, text, quoted_enum_names(names));
}

}  // namespace linkwise
