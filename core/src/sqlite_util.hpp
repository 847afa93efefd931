// Thin RAII helpers over the SQLite C API, private to core/. Every failure becomes a linkwise::Error
// naming the database and the statement's purpose.
#pragma once

#include <sqlite3.h>

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "linkwise/error.hpp"

namespace linkwise::sqlite {

class Database {
 public:
  // Opens `path` with sqlite3_open_v2 `flags`; `label` names it in messages.
  Database(const std::string& path, int flags, std::string label);
  // An in-memory connection (for sqlite3_deserialize).
  explicit Database(std::string label);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  sqlite3* get() const { return db_; }
  const std::string& label() const { return label_; }

  void exec(const std::string& sql, std::string_view purpose);
  [[noreturn]] void fail(std::string_view purpose, ErrorKind kind = ErrorKind::io) const;
  bool has_table(std::string_view name);

 private:
  sqlite3* db_ = nullptr;
  std::string label_;
};

class Statement {
 public:
  Statement(Database& db, const std::string& sql, std::string_view purpose);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Binds parameter `index` (1-based); nullopt binds NULL.
  void bind(int index, std::string_view text);
  void bind(int index, const std::string& text) { bind(index, std::string_view(text)); }
  void bind(int index, const char* text) { bind(index, std::string_view(text)); }
  void bind(int index, double value);
  void bind(int index, int value);
  void bind(int index, const std::optional<std::string>& value);
  void bind(int index, const std::optional<double>& value);
  void bind(int index, const std::optional<int>& value);
  void bind(int index, const std::optional<bool>& value);

  bool step();   // true while a row is available
  void run();    // step to completion, then reset for the next use
  void reset();

  bool is_null(int column) const;
  std::string text(int column) const;
  double real(int column) const;
  int integer(int column) const;
  std::optional<std::string> optional_text(int column) const;
  std::optional<double> optional_real(int column) const;
  std::optional<int> optional_integer(int column) const;

 private:
  Database& db_;
  sqlite3_stmt* statement_ = nullptr;
  std::string purpose_;
};

// Runs `body` between BEGIN IMMEDIATE and COMMIT; an exception from it (or from COMMIT) rolls the
// transaction back and propagates. `what` names the transaction in messages ("the price update").
template <typename Body>
void in_transaction(Database& db, std::string_view what, Body&& body) {
  db.exec("BEGIN IMMEDIATE", "begin " + std::string(what));
  try {
    body();
    db.exec("COMMIT", "commit " + std::string(what));
  } catch (...) {
    sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

}  // namespace linkwise::sqlite
