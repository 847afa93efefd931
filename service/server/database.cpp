#include "server/database.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <string_view>
#include <vector>

#include "linkwise/error.hpp"

namespace linkwise::server {
namespace {

// Version 1: API keys and probe reports. The step from 0 also adopts a file of the linkwise that
// kept this version in a table of its own (service_schema): its tables are already there.
constexpr sqlite::Migration kServiceMigrations[] = {
    {0, R"sql(
      CREATE TABLE IF NOT EXISTS api_keys (
        name        TEXT PRIMARY KEY,
        key_sha256  BLOB NOT NULL UNIQUE,  -- SHA-256 of the key; the key itself is never stored
        created_at  TEXT NOT NULL,
        revoked_at  TEXT
      );
      CREATE TABLE IF NOT EXISTS probe_reports (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        instance_id  TEXT NOT NULL,
        received_at  TEXT NOT NULL,
        key_name     TEXT NOT NULL,
        report       TEXT NOT NULL,  -- the report as uploaded (JSON)
        validation   TEXT NOT NULL   -- the check against the catalog when it was received (JSON)
      );
      CREATE INDEX IF NOT EXISTS probe_reports_by_instance ON probe_reports (instance_id, id);
      DROP TABLE IF EXISTS service_schema;
    )sql"},
};

}  // namespace

constexpr sqlite::Schema kServiceSchema{"service", "service_schema_version", kServiceSchemaVersion, kServiceMigrations};

void check_database_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return;  // a new file: created below
  if (std::filesystem::is_directory(status))
    throw Error(ErrorKind::invalid_input, path.string() + " is a directory, not a database file", "db");
  if (!std::filesystem::is_regular_file(status))
    throw Error(ErrorKind::invalid_input, path.string() + " is not a regular file", "db");
  if (::access(path.c_str(), R_OK | W_OK) != 0)
    throw Error(ErrorKind::invalid_input, path.string() + " is not readable and writable by this user (read-only?)",
                "db");
  if (std::filesystem::file_size(path, ec) == 0) return;  // an empty file is an empty database

  try {
    sqlite::Database db(path.string(), SQLITE_OPEN_READONLY, path.string());
    // Reading the schema fails on a file that is not SQLite ("file is not a database") or is damaged.
    std::vector<std::string> tables;
    {
      sqlite::Statement names(db, "SELECT name FROM sqlite_master WHERE type = 'table'",
                              "read the tables (not a linkwise database?)");
      while (names.step()) tables.push_back(names.text(0));
    }
    const auto has = [&](std::string_view name) {
      return std::find(tables.begin(), tables.end(), name) != tables.end();
    };
    // A database of someone else's: neither the service's tables nor a linkwise catalog in it.
    if (!tables.empty() && !has("service_schema") && !has("meta") && !has("api_keys")) {
      throw Error(ErrorKind::invalid_input,
                  path.string() + " holds tables of another application (" + tables.front() +
                      ", ...): not a linkwise database",
                  "db");
    }
    sqlite::refuse_newer(db, kServiceSchema, sqlite::stored_version(db, kServiceSchema));
  } catch (const Error& e) {
    // Whatever stops the read (not SQLite, damaged, another application's, newer) refuses --db.
    throw Error(e.kind() == ErrorKind::io ? ErrorKind::invalid_input : e.kind(), e.message(), "db");
  }
}

namespace {

// check_database_file() before the connection is opened: a refused file is never touched.
std::string checked(const std::filesystem::path& path) {
  check_database_file(path);
  return path.string();
}

}  // namespace

Database::Database(const std::filesystem::path& path)
    : path_(path),
      sql_(checked(path), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, path.string()) {
  sql_.exec("PRAGMA journal_mode=WAL", "switch to WAL");
  sql_.exec("PRAGMA synchronous=FULL", "set synchronous=FULL");  // fsync the WAL at every commit: a 201 is on disk
  sql_.exec("PRAGMA foreign_keys=ON", "turn foreign keys on");
  std::lock_guard lock(mutex_);
  sqlite::migrate(sql_, kServiceSchema);
}

std::string utc_now_rfc3339() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

}  // namespace linkwise::server
