// Fuzz target: the CSV reader and the SkyPilot price import (planned against the embedded catalog
// for every provider it holds; nothing is written). linkwise::Error is the expected answer to a bad
// file; anything else is a finding, and so is a price update that is not a finite positive price.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "fuzz_check.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/csv.hpp"
#include "linkwise/error.hpp"
#include "linkwise/skypilot_import.hpp"

namespace {

void require_price(const std::optional<double>& price, std::string_view what) {
  if (price && !(std::isfinite(*price) && *price > 0)) linkwise::fuzz::finding(what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace linkwise;
  static const Catalog catalog = Catalog::embedded();
  static const std::set<std::string> providers = [] {
    std::set<std::string> names;
    for (const auto& instance : catalog.instances()) names.insert(instance.provider);
    return names;
  }();
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const CsvTable table = parse_csv(text, "vms.csv");
    if (table.rows.size() != table.row_lines.size()) fuzz::finding("parse_csv: rows and row_lines differ in size");
    for (const auto& row : table.rows) {
      if (row.size() != table.header.size()) fuzz::finding("parse_csv: a row with another field count than the header");
    }
  } catch (const Error&) {
    return 0;
  }
  for (const std::string& provider : providers) {
    try {
      const SkyPilotImportReport report =
          plan_skypilot_import(catalog, text, "vms.csv", SkyPilotImportOptions{provider, "2026-01-01", ""});
      for (const auto& change : report.changes) {
        require_price(change.update.price_usd_per_hour, "import: an on-demand price that is not finite and > 0");
        require_price(change.update.spot_price_usd_per_hour, "import: a spot price that is not finite and > 0");
        if (change.update.price_usd_per_hour && !change.update.price_region) {
          fuzz::finding("import: a price without its region");
        }
      }
      if (report.rows_used > report.rows_read) fuzz::finding("import: more rows used than read");
    } catch (const Error&) {
    }
  }
  return 0;
}
