// The one SQLite helper of linkwise: a connection, prepared statements, transactions and schema
// versions, over the SQLite C API. Used by the catalog store (core/src/catalog_store.cpp) and by
// the service's key and report stores (service/server/database.cpp), which share one database file.
// Every failure becomes a linkwise::Error naming the database and what was being done.
//
// Schema versions: each store (a set of tables versioned together: "catalog", "service") keeps its
// version as one row of the table meta(key, value), under its own key, and brings a file up to
// date with its own list of migrations (migrate()). A file written by a newer linkwise is refused.
#pragma once

#include <sqlite3.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "linkwise/error.hpp"

namespace linkwise::sqlite {

class Database {
 public:
  // Opens `path` with sqlite3_open_v2 `flags`; `label` names it in messages (usually the path).
  Database(const std::string& path, int flags, std::string label);
  // An in-memory connection (for sqlite3_deserialize).
  explicit Database(std::string label);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* get() const { return db_; }
  const std::string& label() const { return label_; }

  // Statements without results (several may be separated by ';'); throws `kind` on failure.
  void exec(const std::string& sql, std::string_view purpose, ErrorKind kind = ErrorKind::io);
  [[noreturn]] void fail(std::string_view purpose, ErrorKind kind = ErrorKind::io) const;
  bool has_table(std::string_view name);
  int changes() const { return sqlite3_changes(db_); }  // rows changed by the last statement
  std::int64_t last_insert_rowid() const { return sqlite3_last_insert_rowid(db_); }

 private:
  sqlite3* db_ = nullptr;
  std::string label_;
};

// A prepared statement; bind() indices start at 1 as in SQLite, column indices at 0.
class Statement {
 public:
  Statement(Database& db, const std::string& sql, std::string_view purpose);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds parameter `index`; nullopt binds NULL.
  Statement& bind(int index, std::string_view text);
  Statement& bind(int index, const std::string& text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, const char* text) { return bind(index, std::string_view(text)); }
  Statement& bind(int index, double value);
  Statement& bind(int index, int value);
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, const std::optional<std::string>& value);
  Statement& bind(int index, const std::optional<double>& value);
  Statement& bind(int index, const std::optional<int>& value);
  Statement& bind(int index, const std::optional<bool>& value);
  Statement& bind_blob(int index, std::span<const std::byte> bytes);
  Statement& bind_null(int index);

  bool step();  // true while a row is available
  void run();   // step to completion, then reset for the next use
  void reset();

  bool is_null(int column) const;
  std::string text(int column) const;
  double real(int column) const;
  int integer(int column) const;
  std::int64_t integer64(int column) const;
  std::string blob(int column) const;  // the bytes, as a string
  std::optional<std::string> optional_text(int column) const;
  std::optional<double> optional_real(int column) const;
  std::optional<int> optional_integer(int column) const;

 private:
  Database& db_;
  sqlite3_stmt* statement_ = nullptr;
  std::string purpose_;
};

// Runs `body` between BEGIN IMMEDIATE and COMMIT and returns what it returns; an exception from it
// (or from COMMIT) rolls the transaction back and propagates. `what` names the transaction in
// messages ("the price update"). A connection shared by threads needs its caller's lock around it.
template <typename Body>
auto in_transaction(Database& db, std::string_view what, Body&& body) {
  db.exec("BEGIN IMMEDIATE", "begin " + std::string(what));
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      db.exec("COMMIT", "commit " + std::string(what));
    } else {
      auto result = body();
      db.exec("COMMIT", "commit " + std::string(what));
      return result;
    }
  } catch (...) {
    sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

// ---- Schema versions ----

// One step of a store's schema: `sql` brings a file from `from_version` to from_version + 1.
struct Migration {
  int from_version;
  const char* sql;
};

// A store's tables in a shared file: its name (in messages), its row in meta, the version this
// build writes, and the steps from older versions (0: the store's tables are not there yet).
struct Schema {
  std::string_view store;        // "catalog", "service"
  std::string_view version_key;  // the key of its row in meta
  int version;                   // the current version
  std::span<const Migration> migrations;
};

// The store's version in the open file: 0 when it has no row (or no meta table); throws
// invalid_input for a value that is not a positive whole number. Reads only.
int stored_version(Database& db, const Schema& schema);
// Throws unsupported ("upgrade linkwise") when `stored` is newer than schema.version.
void refuse_newer(const Database& db, const Schema& schema, int stored);
// Writes the store's row in meta (creating the table if need be).
void set_version(Database& db, const Schema& schema, int version);
// Brings the store from its stored version to schema.version in one transaction, refusing a newer
// file; returns the version it found. A step missing from schema.migrations is an internal error.
int migrate(Database& db, const Schema& schema);

}  // namespace linkwise::sqlite
