#include "linkwise/error.hpp"

namespace linkwise {

std::string_view to_string(ErrorKind kind) noexcept {
  switch (kind) {
    case ErrorKind::invalid_input: return "invalid_input";
    case ErrorKind::not_found: return "not_found";
    case ErrorKind::unknown_reference: return "unknown_reference";
    case ErrorKind::conflict: return "conflict";
    case ErrorKind::unauthorized: return "unauthorized";
    case ErrorKind::forbidden: return "forbidden";
    case ErrorKind::payload_too_large: return "payload_too_large";
    case ErrorKind::unsupported: return "unsupported";
    case ErrorKind::io: return "io";
    case ErrorKind::internal: return "internal";
  }
  return "internal";
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
