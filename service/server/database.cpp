#include "server/database.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string_view>
#include <vector>
#include <ctime>

#include "linkwise/error.hpp"

namespace linkwise::server {
namespace {

[[noreturn]] void throw_sqlite(sqlite3* db, std::string_view what) {
  throw Error(ErrorKind::io, std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

}  // namespace

void check_database_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return;  // a new file: created below
  if (std::filesystem::is_directory(status)) throw Error(ErrorKind::invalid_input, path.string() + " is a directory, not a database file", "db");
  if (!std::filesystem::is_regular_file(status)) throw Error(ErrorKind::invalid_input, path.string() + " is not a regular file", "db");
  if (::access(path.c_str(), R_OK | W_OK) != 0)
    throw Error(ErrorKind::invalid_input, path.string() + " is not readable and writable by this user (read-only?)", "db");
  if (std::filesystem::file_size(path, ec) == 0) return;  // an empty file is an empty database

  sqlite3* db = nullptr;
  const auto close = [&] { sqlite3_close(db); };
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    const std::string message = db ? sqlite3_errmsg(db) : "out of memory";
    close();
    throw Error(ErrorKind::invalid_input, "cannot open " + path.string() + ": " + message, "db");
  }
  // Reading the schema fails on a file that is not SQLite ("file is not a database") or is damaged.
  std::vector<std::string> tables;
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table'", -1, &stmt, nullptr);
  if (rc == SQLITE_OK) {
    while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
      tables.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)));
  }
  sqlite3_finalize(stmt);
  if (rc != SQLITE_DONE) {
    const std::string message = sqlite3_errmsg(db);
    close();
    throw Error(ErrorKind::invalid_input, path.string() + " is not a linkwise database (" + message + ")", "db");
  }
  if (std::find(tables.begin(), tables.end(), "service_schema") != tables.end() &&
      sqlite3_prepare_v2(db, "SELECT max(version) FROM service_schema", -1, &stmt, nullptr) == SQLITE_OK) {
    const int version = sqlite3_step(stmt) == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : 0;
    sqlite3_finalize(stmt);
    if (version > kServiceSchemaVersion) {
      close();
      throw Error(ErrorKind::unsupported,
                  path.string() + " holds service schema version " + std::to_string(version) + ", newer than this linkwise (" +
                      std::to_string(kServiceSchemaVersion) + "): upgrade linkwise",
                  "db");
    }
  }
  close();
  // A database of someone else's: neither the service's tables nor a linkwise catalog in it.
  const auto has = [&](std::string_view name) { return std::find(tables.begin(), tables.end(), name) != tables.end(); };
  if (!tables.empty() && !has("service_schema") && !has("meta"))
    throw Error(ErrorKind::invalid_input,
                path.string() + " holds tables of another application (" + tables.front() + ", ...): not a linkwise database",
                "db");
}

Database::Database(const std::filesystem::path& path) : path_(path) {
  check_database_file(path);
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    std::string message = "cannot open database " + path.string() + ": " +
                          (db_ ? sqlite3_errmsg(db_) : "out of memory");
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(ErrorKind::io, message, "db");
  }
  try {
    // A `linkwise keys` command and the server may write at the same moment: wait, do not fail.
    sqlite3_busy_timeout(db_, 5000);
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=FULL");  // fsync the WAL at every commit: a 201 is on disk
    exec("PRAGMA foreign_keys=ON");
    migrate();
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

Database::~Database() {
  if (db_) sqlite3_close(db_);  // checkpoints the WAL when this is the last connection
}

void Database::exec(std::string_view sql) {
  char* message = nullptr;
  const std::string text(sql);
  if (sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string error = "SQLite: " + std::string(message ? message : sqlite3_errmsg(db_)) + " in: " + text;
    sqlite3_free(message);
    throw Error(ErrorKind::io, error);
  }
}

void Database::migrate() {
  std::lock_guard lock(mutex_);
  transaction([&] {
    exec("CREATE TABLE IF NOT EXISTS service_schema (version INTEGER NOT NULL)");
    int version = 0;
    {
      Statement read(*this, "SELECT version FROM service_schema");
      if (read.step()) version = static_cast<int>(read.column_int(0));
    }
    if (version > kServiceSchemaVersion) {
      throw Error(ErrorKind::unsupported,
                  path_.string() + " holds service schema version " + std::to_string(version) +
                      ", newer than this linkwise (" + std::to_string(kServiceSchemaVersion) +
                      "): upgrade linkwise",
                  "db");
    }
    if (version < 1) {
      exec(R"sql(
        CREATE TABLE api_keys (
          name        TEXT PRIMARY KEY,
          key_sha256  BLOB NOT NULL UNIQUE,  -- SHA-256 of the key; the key itself is never stored
          created_at  TEXT NOT NULL,
          revoked_at  TEXT
        );
        CREATE TABLE probe_reports (
          id           INTEGER PRIMARY KEY AUTOINCREMENT,
          instance_id  TEXT NOT NULL,
          received_at  TEXT NOT NULL,
          key_name     TEXT NOT NULL,
          report       TEXT NOT NULL,  -- the report as uploaded (JSON)
          validation   TEXT NOT NULL   -- the check against the catalog when it was received (JSON)
        );
        CREATE INDEX probe_reports_by_instance ON probe_reports (instance_id, id);
        DELETE FROM service_schema;
        INSERT INTO service_schema (version) VALUES (1);
      )sql");
    }
  });
}

Statement::Statement(Database& db, std::string_view sql) : db_(db.handle()) {
  if (sqlite3_prepare_v2(db_, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK) {
    throw_sqlite(db_, "SQLite prepare");
  }
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

Statement& Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK) {
    throw_sqlite(db_, "SQLite bind");
  }
  return *this;
}

Statement& Statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(stmt_, index, value) != SQLITE_OK) throw_sqlite(db_, "SQLite bind");
  return *this;
}

Statement& Statement::bind_blob(int index, const void* data, std::size_t size) {
  if (sqlite3_bind_blob(stmt_, index, data, static_cast<int>(size), SQLITE_TRANSIENT) != SQLITE_OK) {
    throw_sqlite(db_, "SQLite bind");
  }
  return *this;
}

Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(stmt_, index) != SQLITE_OK) throw_sqlite(db_, "SQLite bind");
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  throw_sqlite(db_, "SQLite step");
}

void Statement::run() {
  while (step()) {
  }
}

std::int64_t Statement::column_int(int index) const { return sqlite3_column_int64(stmt_, index); }

std::string Statement::column_text(int index) const {
  const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, index));
  return text ? std::string(text, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, index))) : std::string();
}

std::optional<std::string> Statement::column_optional_text(int index) const {
  if (sqlite3_column_type(stmt_, index) == SQLITE_NULL) return std::nullopt;
  return column_text(index);
}

std::string Statement::column_blob(int index) const {
  const auto* data = static_cast<const char*>(sqlite3_column_blob(stmt_, index));
  return data ? std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, index))) : std::string();
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
