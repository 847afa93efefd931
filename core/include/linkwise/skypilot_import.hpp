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
  std::size_t line = 0;  // 1-based line in the file
  std::string instance_type;
  std::string region;
  std::string reason;  // one of the kSkip* categories
  std::string detail;  // e.g. "file: A100-80GB x8, catalog: A100-SXM4-40GB x8"
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
  std::size_t instances_matched = 0;               // catalog instances of the provider found in the file
  std::size_t instances_updated = 0;               // of those, the ones whose figures changed
  std::vector<InstancePriceChange> changes;        // one per matched instance, catalog order
  std::vector<std::string> instances_not_in_file;  // catalog instances of the provider, unmatched
  std::vector<std::string> instances_kept_newer;   // in the file, but their price is more recent
  std::vector<SkippedRow> skipped;
  std::map<std::string, std::size_t> skipped_by_reason;
};

// Computes the price updates of `csv_text` against `catalog` (nothing is written). Without
// options.source_url the price source is "SkyPilot catalog vms.csv (<file name of source_name>)".
// Throws invalid_input for an unknown provider, a bad as_of, a malformed CSV or missing columns.
SkyPilotImportReport plan_skypilot_import(const Catalog& catalog, std::string_view csv_text,
                                          std::string_view source_name, const SkyPilotImportOptions& options);

// Writes a planned report's changed figures into the database at `db_path` in one transaction
// (update_prices). The report must have been planned against that database's catalog.
void apply_skypilot_import(const std::filesystem::path& db_path, const SkyPilotImportReport& report);

// Reads `csv_path`, plans against the catalog in `db_path` and applies the updates in one
// transaction (plan_skypilot_import, then apply_skypilot_import). Returns the report.
SkyPilotImportReport import_skypilot(const std::filesystem::path& csv_path, const std::filesystem::path& db_path,
                                     const SkyPilotImportOptions& options);

// ---- Coverage: the GPU instance types a SkyPilot vms.csv names that the catalog lacks ----
//
// A GPU instance type of the file is an InstanceType of a row with an AcceleratorName, unless the
// accelerator is not a GPU (TPUs, AWS Inferentia/Trainium, Habana Gaudi: kNonGpuAccelerators). GCP's
// file lists its accelerator-optimized machine types (a2, a3, a4, a4x, g2, g4: the GPUs come with
// the machine type) without an AcceleratorName, so for "gcp" those families count as GPU types too;
// its rows with an AcceleratorName but no InstanceType are GPUs (and TPUs) attached to a machine
// type, reported apart since they name no instance type. A type is covered when the catalog has an
// instance of the provider with exactly that name.

struct SkyPilotTypeOffer {
  std::string instance_type;
  std::string accelerator;                       // AcceleratorName as written; empty for GCP's built-in GPUs
  std::string accelerator_count;                 // AcceleratorCount as written ("8.0"); empty if none
  std::size_t regions = 0;                       // distinct regions of its rows
  std::optional<double> min_price_usd_per_hour;  // cheapest on-demand Price of its rows, if any
  std::size_t line = 0;                          // its first row's line
};

struct SkyPilotCoverageReport {
  std::string provider;
  std::size_t rows_read = 0;
  std::size_t gpu_types = 0;                       // distinct GPU instance types in the file
  std::size_t covered = 0;                         // of those, in the catalog
  std::vector<SkyPilotTypeOffer> missing;          // the rest, by instance type
  std::vector<std::string> non_gpu_types;          // instance types with a non-GPU accelerator
  std::vector<std::string> attached_accelerators;  // AcceleratorNames of rows without an InstanceType
  std::vector<std::string> catalog_not_in_file;    // catalog ids of the provider the file does not name
};

// Accelerator names (case-insensitive prefixes) that are not GPUs.
inline constexpr std::string_view kNonGpuAccelerators[] = {"tpu", "inferentia", "trainium", "gaudi", "hl-"};

// Compares `csv_text` with the catalog's instances of `provider`. Throws invalid_input for an
// unknown provider, a malformed CSV or a file without InstanceType / AcceleratorName columns.
SkyPilotCoverageReport skypilot_coverage(const Catalog& catalog, std::string_view csv_text,
                                         std::string_view source_name, const std::string& provider);

// The catalog provider of a SkyPilot catalog path, from its cloud folder
// (catalogs/v8/<cloud>/vms.csv; SkyPilot's "do" is "digitalocean"); nullopt when the folder names
// no provider of known_providers().
std::optional<std::string> skypilot_provider_of(const std::filesystem::path& csv_path);

}  // namespace linkwise
