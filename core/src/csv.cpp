#include "linkwise/csv.hpp"

#include "linkwise/error.hpp"

namespace linkwise {

std::optional<std::size_t> CsvTable::column(std::string_view name) const {
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == name) return i;
  }
  return std::nullopt;
}

namespace {

[[noreturn]] void fail_at(std::string_view source, std::size_t line, const std::string& what) {
  throw Error(ErrorKind::invalid_input, std::string(source) + ":" + std::to_string(line) + ": " + what,
              "line " + std::to_string(line));
}

}  // namespace

CsvTable parse_csv(std::string_view text, std::string_view source) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);

  CsvTable table;
  std::vector<std::string> record;
  std::string field;
  std::size_t line = 1;
  std::size_t record_line = 1;
  bool quoted = false;         // inside a quoted field
  bool after_quote = false;    // a quoted field just closed: only a separator may follow
  bool field_started = false;  // the current record has content (to skip empty lines)

  auto end_field = [&] {
    record.push_back(std::move(field));
    field.clear();
    after_quote = false;
  };
  auto end_record = [&] {
    end_field();
    const bool empty_line = record.size() == 1 && record[0].empty() && !field_started;
    if (!empty_line) {
      if (table.header.empty()) {
        table.header = std::move(record);
      } else {
        if (record.size() != table.header.size()) {
          fail_at(source, record_line,
                  "expected " + std::to_string(table.header.size()) + " fields as in the header, got " +
                      std::to_string(record.size()));
        }
        table.rows.push_back(std::move(record));
        table.row_lines.push_back(record_line);
      }
    }
    record.clear();
    field_started = false;
  };

  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
          after_quote = true;
        }
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == ',') {
      end_field();
      field_started = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      end_record();
      ++line;
      record_line = line;
    } else if (after_quote) {
      fail_at(source, line, std::string("unexpected '") + c + "' after a closing quote");
    } else if (c == '"') {
      if (!field.empty()) fail_at(source, line, "a quote inside an unquoted field");
      quoted = true;
      field_started = true;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (quoted) fail_at(source, record_line, "a quoted field is not closed before the end of the file");
  if (field_started || !field.empty() || !record.empty()) end_record();
  if (table.header.empty()) fail_at(source, 1, "no header line");
  return table;
}

}  // namespace linkwise
