// JSON documents from outside (a workload, a probe report, a request body): the one way in for the
// CLI, the REST service and Python, so all three refuse the same inputs with the same messages.
// Every failure is invalid_input naming `field` (the file or "body"); nothing here recurses, so a
// document nested 100,000 deep is an error, never a stack overflow.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace linkwise {

// The deepest array/object nesting any linkwise document needs is 6; 64 leaves room and still
// bounds every recursive walk over a parsed document (dump, comparison, conversion to Python).
inline constexpr int kMaxJsonDepth = 64;

// Parses `text`: nesting deeper than kMaxJsonDepth, invalid JSON (with the byte offset) and numbers
// beyond the double range (1e309) are invalid_input naming `field`; a key written twice in one
// object ("model" twice: JSON parsers silently keep one) is invalid_input naming the key's path
// ("job.kind", "instances[3].name").
nlohmann::json parse_json_text(std::string_view text, const std::string& field);

// Reads and parses a file: a missing file, a directory or an unreadable file is invalid_input
// naming `field` (the file was the user's input), then as parse_json_text.
nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& field);

// The nesting depth of `text` (brackets inside strings ignored), stopping early past `limit`.
int json_text_depth(std::string_view text, int limit = kMaxJsonDepth);

// Throws invalid_input naming `field` when an already-built document nests deeper than
// kMaxJsonDepth (documents from Python, or built in code). Iterative.
void check_json_depth(const nlohmann::json& document, const std::string& field);

}  // namespace linkwise
