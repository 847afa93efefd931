// Store functions shared by catalog_store.cpp, catalog_embedded.cpp and skypilot_import.cpp;
// private to core/.
#pragma once

#include <cstddef>
#include <filesystem>
#include <span>
#include <vector>

#include "linkwise/catalog_db.hpp"
#include "linkwise/sqlite.hpp"

namespace linkwise {

// schema_version of an open catalog database; throws if it is not one or is newer than this build.
int migrate_check_readable(sqlite::Database& db);
// The whole catalog of an open database at the current schema version.
Catalog read_catalog(sqlite::Database& db);
// update_prices() on an open database (one transaction).
void apply_price_updates(sqlite::Database& db, const std::vector<PriceUpdate>& updates);
// Writes `bytes` to a temporary file beside `path`, then renames it to `path`.
void write_file_atomically(const std::filesystem::path& path, std::span<const std::byte> bytes);

}  // namespace linkwise
