// The one error vocabulary of linkwise. Every front end maps ErrorKind once:
// service/ to HTTP problem+json statuses, bindings/ to Python exceptions, the CLI to exit codes.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace linkwise {

enum class ErrorKind {
  invalid_input,      // a value or document is malformed or out of range (HTTP 400, ValueError, exit 2)
  not_found,          // an id that names nothing (HTTP 404, KeyError, exit 2)
  unknown_reference,  // a request document names something that does not exist, e.g. an unknown
                      // preset or instance id inside a workload (HTTP 422, ValueError, exit 2)
  conflict,           // the write collides with what is stored (HTTP 409)
  unauthorized,       // no or malformed credentials (HTTP 401)
  forbidden,          // credentials that do not allow this (HTTP 403)
  payload_too_large,  // a body or query over its bound (HTTP 413)
  unsupported,        // a capability this build or machine lacks, e.g. no GPU (HTTP 501, exit 2)
  io,                 // a file or database could not be read or written (HTTP 500)
  internal,           // a broken invariant: a bug (HTTP 500)
};

std::string_view to_string(ErrorKind kind) noexcept;

// An error with its kind and, where one is at fault, the field it names ("layout.tp",
// "instances[3].nvlink_gbytes_per_s"). message() is the full human-readable message; what() is
// the same text as a C string, so it ends at the first NUL a client's value may carry (a
// ?gpu=%00 cut the REST detail short): front ends render message().
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, std::string message, std::string field = {})
      : std::runtime_error(message), kind_(kind), message_(std::move(message)), field_(std::move(field)) {}

  ErrorKind kind() const noexcept { return kind_; }
  const std::string& message() const noexcept { return message_; }
  const std::string& field() const noexcept { return field_; }

 private:
  ErrorKind kind_;
  std::string message_;
  std::string field_;
};

// Control characters (a NUL, a newline, an escape sequence) a client's value may carry, shown as
// \u00XX text: a NUL would cut a C string short, and a log line or terminal that prints the
// message would act on the rest. The REST problem and the CLI render messages through it.
std::string visible_text(std::string_view text);

// Shorthands for the common cases; the message should say what was expected.
[[noreturn]] void throw_invalid(std::string field, std::string message);
[[noreturn]] void throw_not_found(std::string field, std::string message);
[[noreturn]] void throw_unknown_reference(std::string field, std::string message);

}  // namespace linkwise
