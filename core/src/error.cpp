#include "linkwise/error.hpp"

#include <cstdio>

#include "linkwise/enum_names.hpp"

namespace linkwise {

namespace {

constexpr EnumNames<ErrorKind, 10> kErrorKindNames{{
    {ErrorKind::invalid_input, "invalid_input"},
    {ErrorKind::not_found, "not_found"},
    {ErrorKind::unknown_reference, "unknown_reference"},
    {ErrorKind::conflict, "conflict"},
    {ErrorKind::unauthorized, "unauthorized"},
    {ErrorKind::forbidden, "forbidden"},
    {ErrorKind::payload_too_large, "payload_too_large"},
    {ErrorKind::unsupported, "unsupported"},
    {ErrorKind::io, "io"},
    {ErrorKind::internal, "internal"},
}};

}  // namespace

std::string_view to_string(ErrorKind kind) noexcept { return enum_name(kErrorKindNames, kind); }

void throw_unknown_enum(std::string_view field, std::string_view text, const std::string& accepted) {
  throw_invalid(std::string(field),
                std::string(field) + ": unknown value \"" + std::string(text) + "\"; accepted: " + accepted);
}

std::string visible_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", u);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

void throw_invalid(std::string field, std::string message) {
  throw Error(ErrorKind::invalid_input, std::move(message), std::move(field));
}

void throw_not_found(std::string field, std::string message) {
  throw Error(ErrorKind::not_found, std::move(message), std::move(field));
}

void throw_unknown_reference(std::string field, std::string message) {
  throw Error(ErrorKind::unknown_reference, std::move(message), std::move(field));
}

}  // namespace linkwise
