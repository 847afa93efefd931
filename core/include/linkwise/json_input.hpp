// JSON documents from outside (a workload, a probe report, a request body): the one way in for the
// CLI, the REST service and Python, so all three refuse the same inputs with the same messages.
// Every failure is invalid_input naming `field` (the file or "body"); nothing here recurses, so a
// document nested 100,000 deep is an error, never a stack overflow.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace linkwise {

// The deepest array/object nesting any linkwise document needs is 6; 64 leaves room and still
// bounds every recursive walk over a parsed document (dump, comparison, conversion to Python).
inline constexpr int kMaxJsonDepth = 64;

// The largest JSON document linkwise takes in: a REST request body (the server's default cap) and a
// workload, probe report or other JSON file read by the CLI. A probe report with full matrices
// stays well below it.
inline constexpr std::size_t kMaxDocumentBytes = 4 * 1024 * 1024;
// Text files of other kinds (the SkyPilot catalog's vms.csv, a few MB per provider): a generous
// bound that still keeps /dev/zero or a wrong file from taking the machine's memory.
inline constexpr std::size_t kMaxTextFileBytes = 64 * 1024 * 1024;

// Reads a whole file of at most `max_bytes`: a missing file, a directory, an unreadable file or one
// over the bound (read no further than that, so /dev/zero ends) is invalid_input naming `field` and
// the file.
std::string read_text_file(const std::filesystem::path& path, const std::string& field, std::size_t max_bytes);

// Parses `text`: nesting deeper than kMaxJsonDepth, invalid JSON (with the byte offset) and numbers
// beyond the double range (1e309) are invalid_input naming `field`; a key written twice in one
// object ("model" twice: JSON parsers silently keep one) is invalid_input naming the key's path
// ("job.kind", "instances[3].name").
nlohmann::json parse_json_text(std::string_view text, const std::string& field);

// Reads (read_text_file, at most kMaxDocumentBytes) and parses a file: a missing, unreadable or
// too-large file is invalid_input naming `field` (the file was the user's input), then as
// parse_json_text.
nlohmann::json read_json_file(const std::filesystem::path& path, const std::string& field);

// The nesting depth of `text` (brackets inside strings ignored), stopping early past `limit`.
int json_text_depth(std::string_view text, int limit = kMaxJsonDepth);

// Throws invalid_input naming `field` when an already-built document nests deeper than
// kMaxJsonDepth (documents from Python, or built in code). Iterative.
void check_json_depth(const nlohmann::json& document, const std::string& field);

}  // namespace linkwise
