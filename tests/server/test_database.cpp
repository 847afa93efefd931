// The service's store (service/server/database.cpp) in the catalog's file: one schema-version
// mechanism for both (meta, through linkwise/sqlite.hpp), the older service_schema table adopted.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "server/auth.hpp"
#include "server/database.hpp"

using namespace linkwise;
using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {

class ScratchFile {
 public:
  ScratchFile() {
    std::string pattern = (fs::temp_directory_path() / "linkwise-db-test-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
  }
  ~ScratchFile() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  fs::path path() const { return dir_ / "linkwise.db"; }

 private:
  fs::path dir_;
};

std::string meta_value(const fs::path& path, const std::string& key) {
  // Read-write, as the service opens it: a read-only connection to a WAL file leaves its -wal behind.
  sqlite::Database db(path.string(), SQLITE_OPEN_READWRITE, path.string());
  sqlite::Statement value(db, "SELECT value FROM meta WHERE key = ?1", "read meta");
  value.bind(1, key);
  return value.step() ? value.text(0) : "";
}

}  // namespace

TEST_CASE("the service and the catalog version their tables side by side in one file", "[server][database]") {
  ScratchFile file;
  write_embedded_db(file.path());
  {
    server::Database db(file.path());
    server::KeyStore(db).create("ci");
  }
  CHECK(meta_value(file.path(), "service_schema_version") == std::to_string(server::kServiceSchemaVersion));
  CHECK(meta_value(file.path(), "schema_version") == std::to_string(kCatalogSchemaVersion));
  // A new catalog written over the file (the service stopped) keeps the service's tables and its
  // version row. Reading the file first must not leave a -wal behind (the service left it in WAL
  // mode), or save_catalog would think another process has it open.
  save_catalog(Catalog::open(file.path()), file.path());
  CHECK_FALSE(fs::exists(file.path().string() + "-wal"));
  CHECK(meta_value(file.path(), "service_schema_version") == std::to_string(server::kServiceSchemaVersion));
  server::Database reopened(file.path());
  CHECK(server::KeyStore(reopened).list().size() == 1);
}

TEST_CASE("a file with the older service_schema table is adopted with its keys", "[server][database]") {
  ScratchFile file;
  {
    sqlite::Database old(file.path().string(), SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, "old file");
    old.exec(R"sql(
      CREATE TABLE service_schema (version INTEGER NOT NULL);
      INSERT INTO service_schema (version) VALUES (1);
      CREATE TABLE api_keys (name TEXT PRIMARY KEY, key_sha256 BLOB NOT NULL UNIQUE, created_at TEXT NOT NULL,
                             revoked_at TEXT);
      INSERT INTO api_keys VALUES ('old-key', x'00', '2026-01-01T00:00:00Z', NULL);
      CREATE TABLE probe_reports (id INTEGER PRIMARY KEY AUTOINCREMENT, instance_id TEXT NOT NULL,
                                  received_at TEXT NOT NULL, key_name TEXT NOT NULL, report TEXT NOT NULL,
                                  validation TEXT NOT NULL);
    )sql",
             "write a file as the older linkwise did");
  }
  server::Database db(file.path());
  const auto keys = server::KeyStore(db).list();
  REQUIRE(keys.size() == 1);
  CHECK(keys[0].name == "old-key");
  CHECK_FALSE(db.sql().has_table("service_schema"));
  CHECK(meta_value(file.path(), "service_schema_version") == "1");
}

TEST_CASE("a file of a newer service schema is refused untouched", "[server][database]") {
  ScratchFile file;
  { server::Database db(file.path()); }
  {
    sqlite::Database db(file.path().string(), SQLITE_OPEN_READWRITE, "file");
    db.exec("UPDATE meta SET value = '" + std::to_string(server::kServiceSchemaVersion + 1) +
                "' WHERE key = 'service_schema_version'",
            "pretend a newer linkwise wrote it");
  }
  try {
    server::check_database_file(file.path());
    FAIL("accepted a newer service schema");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::unsupported);
    CHECK(e.field() == "db");
    CHECK_THAT(e.what(), Contains("upgrade linkwise"));
  }
  CHECK_THROWS_AS(server::Database(file.path()), Error);
}
