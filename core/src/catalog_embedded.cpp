// The catalog database built into the library at build time (see core/tools/build_db.cpp), opened
// in memory with sqlite3_deserialize, read-only.
#include <sqlite3.h>

#include "catalog_store_internal.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/sqlite.hpp"

namespace linkwise {

namespace detail {
// Defined in the generated embedded_catalog_db.cpp.
extern const unsigned char kEmbeddedCatalogDb[];
extern const std::size_t kEmbeddedCatalogDbSize;
}  // namespace detail

std::span<const std::byte> embedded_catalog_db_bytes() {
  return {reinterpret_cast<const std::byte*>(detail::kEmbeddedCatalogDb), detail::kEmbeddedCatalogDbSize};
}

namespace {

Catalog read_embedded() {
  sqlite::Database db("embedded catalog");
  const auto bytes = embedded_catalog_db_bytes();
  // READONLY: SQLite reads the static bytes in place and never writes or frees them.
  auto* data = const_cast<unsigned char*>(reinterpret_cast<const unsigned char*>(bytes.data()));
  const auto size = static_cast<sqlite3_int64>(bytes.size());
  if (sqlite3_deserialize(db.get(), "main", data, size, size, SQLITE_DESERIALIZE_READONLY) != SQLITE_OK) {
    db.fail("open the embedded catalog", ErrorKind::internal);
  }
  return read_catalog(db);
}

}  // namespace

Catalog Catalog::embedded() {
  static const Catalog catalog = read_embedded();
  return catalog;
}

void write_embedded_db(const std::filesystem::path& db_path) {
  if (std::filesystem::exists(db_path)) {
    throw Error(ErrorKind::conflict, db_path.string() + ": already exists; not overwriting it", "db");
  }
  write_file_atomically(db_path, embedded_catalog_db_bytes());
}

bool ensure_catalog_db(const std::filesystem::path& db_path) {
  if (std::filesystem::exists(db_path)) return false;
  write_embedded_db(db_path);
  return true;
}

}  // namespace linkwise
