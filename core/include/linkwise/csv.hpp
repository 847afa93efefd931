// A CSV reader for RFC 4180 files such as SkyPilot's vms.csv: comma-separated, records end with
// CRLF or LF, fields may be quoted with '"' and then hold commas, line breaks and doubled quotes
// ("" for one "). The first record is the header; columns are found by name.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace linkwise {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;  // each with header.size() fields
  std::vector<std::size_t> row_lines;          // the 1-based line each row starts on

  // Index of the column named `name` (exact match), if any.
  std::optional<std::size_t> column(std::string_view name) const;
};

// Parses `text`; `source` names the file in messages. Throws invalid_input naming the line for an
// unterminated quote, a quote inside an unquoted field, text after a closing quote, or a record
// whose field count differs from the header's. A UTF-8 byte order mark and empty lines are skipped.
CsvTable parse_csv(std::string_view text, std::string_view source);

}  // namespace linkwise
