// The service's SQLite connection: the same database file as the catalog, with the service's own
// tables (API keys, probe reports) and their own schema version (table service_schema). Opened in
// WAL mode with synchronous=FULL, so a committed write survives a kill -9 or a power cut, and a
// `linkwise keys` command can write while the server reads.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

namespace linkwise::server {

inline constexpr int kServiceSchemaVersion = 1;

// Everything that can be known about a database file without writing to it: a directory, a file
// that is not readable and writable, not SQLite, damaged, another application's, or of a newer
// service schema is refused (invalid_input or unsupported naming "db"), and the file is left
// exactly as it was. A missing or empty file passes (it becomes a new database).
void check_database_file(const std::filesystem::path& path);

class Statement;

class Database {
 public:
  // Opens (creating if need be) `path` and brings the service tables to kServiceSchemaVersion.
  // A file written by a newer linkwise (higher service schema version) is refused.
  explicit Database(const std::filesystem::path& path);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::filesystem::path& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  // One connection is shared by the server's threads: hold this lock from the first statement of
  // a transaction to its commit.
  std::mutex& mutex() { return mutex_; }

  void exec(std::string_view sql);  // statements without results; throws io with the SQLite message

  // Runs `fn` inside BEGIN IMMEDIATE ... COMMIT, rolling back if it throws. Caller holds mutex().
  template <typename Fn>
  auto transaction(Fn&& fn) {
    exec("BEGIN IMMEDIATE");
    try {
      if constexpr (std::is_void_v<decltype(fn())>) {
        fn();
        exec("COMMIT");
      } else {
        auto result = fn();
        exec("COMMIT");
        return result;
      }
    } catch (...) {
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

 private:
  void migrate();

  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  std::mutex mutex_;
};

// A prepared statement; bind() indices start at 1 as in SQLite, column() indices at 0.
class Statement {
 public:
  Statement(Database& db, std::string_view sql);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, std::int64_t value);
  Statement& bind_blob(int index, const void* data, std::size_t size);
  Statement& bind_null(int index);

  bool step();  // true while a row is available; throws io on failure
  void run();   // steps to completion, for writes

  std::int64_t column_int(int index) const;
  std::string column_text(int index) const;
  std::optional<std::string> column_optional_text(int index) const;
  std::string column_blob(int index) const;

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// The current time in UTC as RFC 3339 with seconds: "2025-06-01T12:00:00Z".
std::string utc_now_rfc3339();

}  // namespace linkwise::server
