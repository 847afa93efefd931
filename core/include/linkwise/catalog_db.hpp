// The catalog's SQLite store (catalog_store.cpp): save, the embedded database, price updates.
// The Catalog class itself (open, load, query) is in catalog.hpp, included here for convenience.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "linkwise/catalog.hpp"

namespace linkwise {

// One database file holds the catalog tables (meta, gpus, instances, instance_regions, sources);
// front ends may add their own tables to the same file and linkwise never drops them. The schema is
// versioned in meta.schema_version: an older file is migrated when opened for writing, a newer one
// is refused with an error that says to upgrade linkwise.
inline constexpr int kCatalogSchemaVersion = 2;

// Writes `catalog` to `db_path` atomically: a temporary file in the same directory is filled and
// renamed over `db_path`, so a failure leaves no file (or the previous one, untouched). Tables of an
// existing file that are not catalog tables are carried over into the new file.
void save_catalog(const Catalog& catalog, const std::filesystem::path& db_path);

// The catalog database built into this binary, as raw SQLite file bytes.
std::span<const std::byte> embedded_catalog_db_bytes();
// Creates `db_path` (atomically) as a copy of the embedded catalog database. Throws conflict if the
// file exists. The service's `--db PATH` calls ensure_catalog_db() before it opens PATH.
void write_embedded_db(const std::filesystem::path& db_path);
// Creates `db_path` from the embedded catalog if it does not exist; returns true if it did so.
bool ensure_catalog_db(const std::filesystem::path& db_path);

// New prices for one instance, as the SkyPilot import computes them. Every price field is replaced
// (a null stays null): the figures come from one snapshot and must not be mixed with older ones.
struct PriceUpdate {
  std::string instance_id;
  std::optional<double> price_usd_per_hour;
  std::optional<std::string> price_region;
  std::optional<std::string> price_as_of;
  std::optional<double> spot_price_usd_per_hour;
  std::vector<std::string> regions;
  SourceRef price_source;  // stored as the instance's "price" source
};
// Applies the updates to the database in one transaction: all or nothing. An unknown instance id
// fails with not_found and nothing is written.
void update_prices(const std::filesystem::path& db_path, const std::vector<PriceUpdate>& updates);

}  // namespace linkwise
