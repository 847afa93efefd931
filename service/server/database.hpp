// The service's SQLite connection: the same database file as the catalog, with the service's own
// tables (API keys, probe reports), versioned as the service store through core's one SQLite
// helper (linkwise/sqlite.hpp: meta.service_schema_version). Opened in WAL mode with
// synchronous=FULL, so a committed write survives a kill -9 or a power cut, and a `linkwise keys`
// command can write while the server reads.
#pragma once

#include <filesystem>
#include <mutex>
#include <string>
#include <utility>

#include "linkwise/sqlite.hpp"

namespace linkwise::server {

inline constexpr int kServiceSchemaVersion = 1;

using sqlite::Statement;

// Everything that can be known about a database file without writing to it: a directory, a file
// that is not readable and writable, not SQLite, damaged, another application's, or of a newer
// service schema is refused (invalid_input or unsupported naming "db"), and the file is left
// exactly as it was. A missing or empty file passes (it becomes a new database).
void check_database_file(const std::filesystem::path& path);

class Database {
 public:
  // Opens (creating if need be) `path` and brings the service tables to kServiceSchemaVersion.
  // A file written by a newer linkwise (higher service schema version) is refused.
  explicit Database(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  // The connection, for Statement and in_transaction.
  sqlite::Database& sql() { return sql_; }

  // One connection is shared by the server's threads: hold this lock from the first statement of
  // a transaction to its commit.
  std::mutex& mutex() { return mutex_; }

  // Runs `fn` inside BEGIN IMMEDIATE ... COMMIT, rolling back if it throws. Caller holds mutex().
  template <typename Fn>
  auto transaction(std::string_view what, Fn&& fn) {
    return sqlite::in_transaction(sql_, what, std::forward<Fn>(fn));
  }

 private:
  std::filesystem::path path_;
  sqlite::Database sql_;
  std::mutex mutex_;
};

// The current time in UTC as RFC 3339 with seconds: "2025-06-01T12:00:00Z".
std::string utc_now_rfc3339();

}  // namespace linkwise::server
