#include "server/report_store.hpp"

#include "linkwise/error.hpp"

namespace linkwise::server {
namespace {

constexpr const char* kColumns = "id, instance_id, received_at, key_name, report, validation";

StoredReport read_row(const Statement& row) {
  StoredReport stored;
  stored.id = row.integer64(0);
  stored.instance_id = row.text(1);
  stored.received_at = row.text(2);
  stored.key_name = row.text(3);
  try {
    stored.report = nlohmann::json::parse(row.text(4));
    stored.validation = nlohmann::json::parse(row.text(5));
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(ErrorKind::io,
                "probe report " + std::to_string(stored.id) + " is damaged in the database: " + e.what());
  }
  return stored;
}

}  // namespace

StoredReport ReportStore::add(const std::string& instance_id, const std::string& key_name, const nlohmann::json& report,
                              const nlohmann::json& validation) {
  StoredReport stored{0, instance_id, utc_now_rfc3339(), key_name, report, validation};
  std::lock_guard lock(db_.mutex());
  db_.transaction("storing a report", [&] {
    Statement insert(db_.sql(),
                     "INSERT INTO probe_reports (instance_id, received_at, key_name, report, validation) "
                     "VALUES (?, ?, ?, ?, ?)",
                     "store a report");
    insert.bind(1, instance_id).bind(2, stored.received_at).bind(3, key_name);
    insert.bind(4, report.dump()).bind(5, validation.dump());
    insert.run();
    stored.id = db_.sql().last_insert_rowid();
  });
  return stored;
}

std::optional<StoredReport> ReportStore::get(std::int64_t id) {
  std::lock_guard lock(db_.mutex());
  Statement select(db_.sql(), std::string("SELECT ") + kColumns + " FROM probe_reports WHERE id = ?", "read a report");
  select.bind(1, id);
  if (!select.step()) return std::nullopt;
  return read_row(select);
}

ReportStore::Page ReportStore::list(const std::optional<std::string>& instance_id, std::int64_t limit,
                                    std::int64_t offset) {
  Page page;
  std::lock_guard lock(db_.mutex());
  const std::string where = instance_id ? " WHERE instance_id = ?1" : "";
  {
    Statement count(db_.sql(), "SELECT count(*) FROM probe_reports" + where, "count reports");
    if (instance_id) count.bind(1, *instance_id);
    count.step();
    page.total = count.integer64(0);
  }
  Statement select(
      db_.sql(), std::string("SELECT ") + kColumns + " FROM probe_reports" + where + " ORDER BY id LIMIT ?2 OFFSET ?3",
      "list reports");
  if (instance_id) select.bind(1, *instance_id);
  select.bind(2, limit).bind(3, offset);
  while (select.step()) page.items.push_back(read_row(select));
  return page;
}

std::vector<StoredReport> ReportStore::all_for(const std::string& instance_id) {
  std::lock_guard lock(db_.mutex());
  Statement select(db_.sql(),
                   std::string("SELECT ") + kColumns + " FROM probe_reports WHERE instance_id = ? ORDER BY id",
                   "read the reports of an instance");
  select.bind(1, instance_id);
  std::vector<StoredReport> reports;
  while (select.step()) reports.push_back(read_row(select));
  return reports;
}

std::vector<nlohmann::json> ReportStore::validations_for(const std::string& instance_id) {
  std::vector<std::string> texts;
  {
    // The lock covers the read of the rows only; parsing happens after it is released.
    std::lock_guard lock(db_.mutex());
    Statement select(db_.sql(), "SELECT validation FROM probe_reports WHERE instance_id = ? ORDER BY id",
                     "read the validations of an instance");
    select.bind(1, instance_id);
    while (select.step()) texts.push_back(select.text(0));
  }
  std::vector<nlohmann::json> validations;
  validations.reserve(texts.size());
  for (const auto& text : texts) {
    try {
      validations.push_back(nlohmann::json::parse(text));
    } catch (const nlohmann::json::parse_error& e) {
      throw Error(ErrorKind::io, "a stored validation of " + instance_id + " is damaged in the database: " + e.what());
    }
  }
  return validations;
}

std::int64_t ReportStore::count() {
  std::lock_guard lock(db_.mutex());
  Statement count(db_.sql(), "SELECT count(*) FROM probe_reports", "count reports");
  count.step();
  return count.integer64(0);
}

}  // namespace linkwise::server
