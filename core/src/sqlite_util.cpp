#include "sqlite_util.hpp"

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

Database::Database(std::string label) : Database(":memory:", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE,
                                                 std::move(label)) {}

Database::~Database() { sqlite3_close(db_); }

void Database::exec(const std::string& sql, std::string_view purpose) {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string message = error ? error : sqlite3_errmsg(db_);
    sqlite3_free(error);
    throw Error(ErrorKind::io, label_ + ": " + std::string(purpose) + ": " + message);
  }
}

void Database::fail(std::string_view purpose, ErrorKind kind) const {
  throw Error(kind, label_ + ": " + std::string(purpose) + ": " + sqlite3_errmsg(db_));
}

bool Database::has_table(std::string_view name) {
  Statement statement(*this, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
                      "look up a table");
  statement.bind(1, name);
  return statement.step();
}

Statement::Statement(Database& db, const std::string& sql, std::string_view purpose)
    : db_(db), purpose_(purpose) {
  if (sqlite3_prepare_v2(db.get(), sql.c_str(), -1, &statement_, nullptr) != SQLITE_OK) {
    db.fail(purpose_);
  }
}

Statement::~Statement() { sqlite3_finalize(statement_); }

void Statement::bind(int index, std::string_view text) {
  if (sqlite3_bind_text(statement_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT) !=
      SQLITE_OK) {
    db_.fail(purpose_);
  }
}
void Statement::bind(int index, double value) {
  if (sqlite3_bind_double(statement_, index, value) != SQLITE_OK) db_.fail(purpose_);
}
void Statement::bind(int index, int value) {
  if (sqlite3_bind_int(statement_, index, value) != SQLITE_OK) db_.fail(purpose_);
}
void Statement::bind(int index, const std::optional<std::string>& value) {
  if (value) return bind(index, std::string_view(*value));
  if (sqlite3_bind_null(statement_, index) != SQLITE_OK) db_.fail(purpose_);
}
void Statement::bind(int index, const std::optional<double>& value) {
  if (value) return bind(index, *value);
  if (sqlite3_bind_null(statement_, index) != SQLITE_OK) db_.fail(purpose_);
}
void Statement::bind(int index, const std::optional<int>& value) {
  if (value) return bind(index, *value);
  if (sqlite3_bind_null(statement_, index) != SQLITE_OK) db_.fail(purpose_);
}
void Statement::bind(int index, const std::optional<bool>& value) {
  if (value) return bind(index, *value ? 1 : 0);
  if (sqlite3_bind_null(statement_, index) != SQLITE_OK) db_.fail(purpose_);
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
std::optional<std::string> Statement::optional_text(int column) const {
  return is_null(column) ? std::nullopt : std::optional<std::string>(text(column));
}
std::optional<double> Statement::optional_real(int column) const {
  return is_null(column) ? std::nullopt : std::optional<double>(real(column));
}
std::optional<int> Statement::optional_integer(int column) const {
  return is_null(column) ? std::nullopt : std::optional<int>(integer(column));
}

}  // namespace linkwise::sqlite
