// The one SQLite helper (linkwise/sqlite.hpp): schema versions and migrations of a store that
// shares its file with another, transactions that roll back.
#include <catch2/catch.hpp>

#include "linkwise/sqlite.hpp"

using namespace linkwise;
using Catch::Matchers::Contains;

namespace {

// A toy store "notes": version 1 creates a table, version 2 adds a column.
constexpr sqlite::Migration kNotesMigrations[] = {
    {0, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT NOT NULL)"},
    {1, "ALTER TABLE notes ADD COLUMN author TEXT"},
};
constexpr sqlite::Schema kNotesV1{"notes", "notes_schema_version", 1, std::span(kNotesMigrations).first(1)};
constexpr sqlite::Schema kNotesV2{"notes", "notes_schema_version", 2, kNotesMigrations};
// A second store in the same file, with its own key.
constexpr sqlite::Migration kTagsMigrations[] = {{0, "CREATE TABLE tags (name TEXT PRIMARY KEY)"}};
constexpr sqlite::Schema kTags{"tags", "tags_schema_version", 1, kTagsMigrations};

sqlite::Database memory() { return sqlite::Database("test database"); }

bool has_column(sqlite::Database& db, const std::string& table, const std::string& column) {
  sqlite::Statement columns(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", "read columns");
  columns.bind(1, table).bind(2, column);
  return columns.step();
}

}  // namespace

TEST_CASE("a new file is brought to the current version by every step", "[sqlite]") {
  auto db = memory();
  CHECK(sqlite::stored_version(db, kNotesV2) == 0);
  CHECK(sqlite::migrate(db, kNotesV2) == 0);
  CHECK(sqlite::stored_version(db, kNotesV2) == 2);
  CHECK(has_column(db, "notes", "author"));
  CHECK(sqlite::migrate(db, kNotesV2) == 2);  // current: nothing to do
}

TEST_CASE("an older file runs only the steps it lacks and keeps its rows", "[sqlite]") {
  auto db = memory();
  sqlite::migrate(db, kNotesV1);
  sqlite::Statement insert(db, "INSERT INTO notes (text) VALUES (?1)", "insert a note");
  insert.bind(1, "kept");
  insert.run();
  CHECK_FALSE(has_column(db, "notes", "author"));
  CHECK(sqlite::migrate(db, kNotesV2) == 1);
  CHECK(has_column(db, "notes", "author"));
  sqlite::Statement text(db, "SELECT text FROM notes", "read a note");
  REQUIRE(text.step());
  CHECK(text.text(0) == "kept");
}

TEST_CASE("two stores version themselves independently in one file", "[sqlite]") {
  auto db = memory();
  sqlite::migrate(db, kNotesV1);
  sqlite::migrate(db, kTags);
  sqlite::migrate(db, kNotesV2);
  CHECK(sqlite::stored_version(db, kNotesV2) == 2);
  CHECK(sqlite::stored_version(db, kTags) == 1);
}

TEST_CASE("a file from a newer linkwise is refused and left as it is", "[sqlite]") {
  auto db = memory();
  sqlite::migrate(db, kNotesV2);
  try {
    sqlite::migrate(db, kNotesV1);
    FAIL("migrated a newer file");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unsupported);
    CHECK_THAT(e.what(), Contains("notes schema version 2") && Contains("upgrade linkwise"));
  }
  CHECK(sqlite::stored_version(db, kNotesV2) == 2);
}

TEST_CASE("a missing step or a bad stored version is an error, and the migration rolls back", "[sqlite]") {
  auto db = memory();
  constexpr sqlite::Schema gap{"notes", "notes_schema_version", 2, std::span(kNotesMigrations).first(1)};
  try {
    sqlite::migrate(db, gap);
    FAIL("migrated past a missing step");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::internal);
    CHECK_THAT(e.what(), Contains("from version 1"));
  }
  CHECK_FALSE(db.has_table("notes"));  // the first step was rolled back with the rest
  CHECK(sqlite::stored_version(db, gap) == 0);

  sqlite::set_version(db, kNotesV2, 1);
  db.exec("UPDATE meta SET value = 'two' WHERE key = 'notes_schema_version'", "spoil the version");
  try {
    sqlite::stored_version(db, kNotesV2);
    FAIL("read a bad version");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::invalid_input);
    CHECK_THAT(e.what(), Contains("notes_schema_version") && Contains("two"));
  }
}

TEST_CASE("in_transaction returns the body's value and rolls back on an exception", "[sqlite]") {
  auto db = memory();
  sqlite::migrate(db, kNotesV2);
  const std::int64_t id = sqlite::in_transaction(db, "adding a note", [&] {
    sqlite::Statement insert(db, "INSERT INTO notes (text) VALUES ('a')", "insert a note");
    insert.run();
    return db.last_insert_rowid();
  });
  CHECK(id == 1);
  CHECK_THROWS_AS(sqlite::in_transaction(db, "a failing write",
                                         [&] {
                                           sqlite::Statement insert(db, "INSERT INTO notes (text) VALUES ('b')",
                                                                    "insert a note");
                                           insert.run();
                                           throw Error(ErrorKind::internal, "stop");
                                         }),
                  Error);
  sqlite::Statement count(db, "SELECT count(*) FROM notes", "count notes");
  REQUIRE(count.step());
  CHECK(count.integer64(0) == 1);
}
