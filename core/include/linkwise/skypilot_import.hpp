// Price refresh from a SkyPilot catalog vms.csv (github.com/skypilot-org/skypilot-catalog,
// catalogs/v*/<cloud>/vms.csv). Columns are found by name, since their order differs between
// clouds: InstanceType, Price and Region are required; AcceleratorName, AcceleratorCount,
// SpotPrice and AvailabilityZone are used when present; others (vCPUs, MemoryGiB, GpuInfo,
// Generation, ...) are ignored.
//
// A row is used for an instance of the catalog when its InstanceType is the instance's name under
// the chosen provider, it has an on-demand Price, and its accelerator agrees with the catalog
// (same GPU family and, where the name carries one such as "A100-80GB", the same memory; same
// count). Every other row is skipped with its reason.
//
// Which price is kept, per instance, from its rows in many regions (and zones):
//   1. the price region: the instance's current price_region if the file has it, else the region
//      with the cheapest on-demand price (ties: the alphabetically first region);
//   2. price_usd_per_hour: the lowest on-demand price in that region (zones may differ);
//   3. spot_price_usd_per_hour: the lowest spot price in that region, or null if it has none;
//   4. regions: every region of the used rows, sorted;
//   5. price_as_of: the snapshot date given by the caller; the "price" source names the file.
// All price fields are replaced together, so figures of two snapshots are never mixed. An instance
// whose price_as_of is later than the snapshot's date keeps its newer price (reported).
#pragma once

#include <cstddef>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkwise/catalog_db.hpp"

namespace linkwise {

struct SkyPilotImportOptions {
  std::string provider;    // the catalog provider the file is for: "aws", "lambda", ...
  std::string as_of;       // YYYY-MM-DD: the date of the SkyPilot snapshot (commit) read
  std::string source_url;  // where the file came from; default: "SkyPilot catalog vms.csv (<file>)"
};

struct SkippedRow {
  std::size_t line = 0;       // 1-based line in the file
  std::string instance_type;
  std::string region;
  std::string reason;         // one of the kSkip* categories
  std::string detail;         // e.g. "file: A100-80GB x8, catalog: A100-SXM4-40GB x8"
};

inline constexpr std::string_view kSkipUnknownType = "unknown instance type";
inline constexpr std::string_view kSkipNoPrice = "no on-demand price";
inline constexpr std::string_view kSkipAcceleratorMismatch = "accelerator mismatch";
inline constexpr std::string_view kSkipBadValue = "unreadable value";

struct InstancePriceChange {
  std::string instance_id;
  std::optional<double> old_price_usd_per_hour;
  std::optional<std::string> old_price_region;
  PriceUpdate update;
  bool changed = false;  // any price field, the date or the regions differ from the catalog's
};

struct SkyPilotImportReport {
  std::size_t rows_read = 0;
  std::size_t rows_used = 0;
  std::size_t instances_matched = 0;  // catalog instances of the provider found in the file
  std::size_t instances_updated = 0;  // of those, the ones whose figures changed
  std::vector<InstancePriceChange> changes;          // one per matched instance, catalog order
  std::vector<std::string> instances_not_in_file;    // catalog instances of the provider, unmatched
  std::vector<std::string> instances_kept_newer;     // in the file, but their price is more recent
  std::vector<SkippedRow> skipped;
  std::map<std::string, std::size_t> skipped_by_reason;
};

// Computes the price updates of `csv_text` against `catalog` (nothing is written).
// Throws invalid_input for an unknown provider, a bad as_of, a malformed CSV or missing columns.
SkyPilotImportReport plan_skypilot_import(const Catalog& catalog, std::string_view csv_text,
                                          std::string_view source_name, const SkyPilotImportOptions& options);

// Reads `csv_path`, plans against the catalog in `db_path` and applies the updates in one
// transaction (update_prices). Returns the report.
SkyPilotImportReport import_skypilot(const std::filesystem::path& csv_path, const std::filesystem::path& db_path,
                                     const SkyPilotImportOptions& options);

}  // namespace linkwise
