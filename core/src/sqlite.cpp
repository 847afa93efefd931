// The one SQLite helper (linkwise/sqlite.hpp).
#include "linkwise/sqlite.hpp"

#include <algorithm>

namespace linkwise::sqlite {

Database::Database(const std::string& path, int flags, std::string label) : label_(std::move(label)) {
  const int rc = sqlite3_open_v2(path.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error(ErrorKind::io, label_ + ": cannot open SQLite database: " + message);
  }
  sqlite3_extended_result_codes(db_, 1);
  // Other connections (the service in WAL mode) may hold the file briefly: wait, do not fail.
  sqlite3_busy_timeout(db_, 5000);
}

Database::Database(std::string label)
    : Database(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, std::move(label)) {}

Database::~Database() { sqlite3_close(db_); }

void Database::exec(const std::string& sql, std::string_view purpose, ErrorKind kind) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw Error(kind, label_ + ": " + std::string(purpose) + ": " + message);
  }
}

void Database::fail(std::string_view purpose, ErrorKind kind) const {
  throw Error(kind, label_ + ": " + std::string(purpose) + ": " + sqlite3_errmsg(db_));
}

bool Database::has_table(std::string_view name) {
  Statement statement(*this, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", "look up a table");
  statement.bind(1, name);
  return statement.step();
}

Statement::Statement(Database& db, const std::string& sql, std::string_view purpose) : db_(db), purpose_(purpose) {
  if (sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &statement_, nullptr) != SQLITE_OK) {
    db.fail(purpose_);
  }
}

Statement::~Statement() { sqlite3_finalize(statement_); }

Statement& Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) != SQLITE_OK) {
    db_.fail(purpose_);
  }
  return *this;
}
Statement& Statement::bind(int index, double value) {
  if (sqlite3_bind_double(statement_, index, value) != SQLITE_OK) db_.fail(purpose_);
  return *this;
}
Statement& Statement::bind(int index, int value) {
  if (sqlite3_bind_int(statement_, index, value) != SQLITE_OK) db_.fail(purpose_);
  return *this;
}
Statement& Statement::bind(int index, std::int64_t value) {
  if (sqlite3_bind_int64(statement_, index, value) != SQLITE_OK) db_.fail(purpose_);
  return *this;
}
Statement& Statement::bind(int index, const std::optional<std::string>& value) {
  return value ? bind(index, std::string_view(*value)) : bind_null(index);
}
Statement& Statement::bind(int index, const std::optional<double>& value) {
  return value ? bind(index, *value) : bind_null(index);
}
Statement& Statement::bind(int index, const std::optional<int>& value) {
  return value ? bind(index, *value) : bind_null(index);
}
Statement& Statement::bind(int index, const std::optional<bool>& value) {
  return value ? bind(index, *value ? 1 : 0) : bind_null(index);
}
Statement& Statement::bind_blob(int index, std::span<const std::byte> bytes) {
  if (sqlite3_bind_blob(statement_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT) !=
      SQLITE_OK) {
    db_.fail(purpose_);
  }
  return *this;
}
Statement& Statement::bind_null(int index) {
  if (sqlite3_bind_null(statement_, index) != SQLITE_OK) db_.fail(purpose_);
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(statement_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  db_.fail(purpose_);
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() {
  sqlite3_reset(statement_);
  sqlite3_clear_bindings(statement_);
}

bool Statement::is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

std::string Statement::text(int column) const {
  const auto* text = sqlite3_column_text(statement_, column);
  return text ? std::string(reinterpret_cast<const char*>(text),
                            static_cast<std::size_t>(sqlite3_column_bytes(statement_, column)))
              : std::string();
}
double Statement::real(int column) const { return sqlite3_column_double(statement_, column); }
int Statement::integer(int column) const { return sqlite3_column_int(statement_, column); }
std::int64_t Statement::integer64(int column) const { return sqlite3_column_int64(statement_, column); }
std::string Statement::blob(int column) const {
  const auto* data = static_cast<const char*>(sqlite3_column_blob(statement_, column));
  return data ? std::string(data, static_cast<std::size_t>(sqlite3_column_bytes(statement_, column))) : std::string();
}
std::optional<std::string> Statement::optional_text(int column) const {
  return is_null(column) ? std::nullopt : std::optional<std::string>(text(column));
}
std::optional<double> Statement::optional_real(int column) const {
  return is_null(column) ? std::nullopt : std::optional<double>(real(column));
}
std::optional<int> Statement::optional_integer(int column) const {
  return is_null(column) ? std::nullopt : std::optional<int>(integer(column));
}

// ---- Schema versions ----

int stored_version(Database& db, const Schema& schema) {
  if (!db.has_table("meta")) return 0;
  Statement statement(db, "SELECT value FROM meta WHERE key = ?1", "read " + std::string(schema.version_key));
  statement.bind(1, schema.version_key);
  if (!statement.step()) return 0;
  const std::string text = statement.text(0);
  const bool digits = !text.empty() && text.size() <= 9 &&
                      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || std::stoi(text) < 1) {
    throw Error(ErrorKind::invalid_input,
                db.label() + ": bad " + std::string(schema.version_key) + " \"" + text + "\" in meta");
  }
  return std::stoi(text);
}

void refuse_newer(const Database& db, const Schema& schema, int stored) {
  if (stored > schema.version) {
    throw Error(ErrorKind::unsupported, db.label() + ": " + std::string(schema.store) + " schema version " +
                                            std::to_string(stored) +
                                            " was written by a newer linkwise; this build reads versions up to " +
                                            std::to_string(schema.version) + ": upgrade linkwise");
  }
}

void set_version(Database& db, const Schema& schema, int version) {
  db.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)", "create meta");
  Statement statement(db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, ?2)",
                      "write " + std::string(schema.version_key));
  statement.bind(1, schema.version_key).bind(2, std::to_string(version));
  statement.run();
}

int migrate(Database& db, const Schema& schema) {
  // Read once outside a transaction (a current file needs no write lock), then again inside it:
  // another process may have migrated the file in between.
  const int seen = stored_version(db, schema);
  refuse_newer(db, schema, seen);
  if (seen == schema.version) return seen;
  in_transaction(db, std::string(schema.store) + " schema migration", [&] {
    const int found = stored_version(db, schema);
    refuse_newer(db, schema, found);
    for (int v = found; v < schema.version; ++v) {
      const auto step = std::find_if(schema.migrations.begin(), schema.migrations.end(),
                                     [&](const Migration& m) { return m.from_version == v; });
      if (step == schema.migrations.end()) {
        throw Error(ErrorKind::internal, db.label() + ": no migration of the " + std::string(schema.store) +
                                             " schema from version " + std::to_string(v));
      }
      db.exec(step->sql, "migrate the " + std::string(schema.store) + " schema from version " + std::to_string(v));
    }
    set_version(db, schema, schema.version);
  });
  return seen;
}

}  // namespace linkwise::sqlite
