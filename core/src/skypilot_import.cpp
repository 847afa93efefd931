// SkyPilot vms.csv -> price updates. The rules are documented in skypilot_import.hpp.
#include "linkwise/skypilot_import.hpp"
#include "linkwise/text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>

#include "linkwise/csv.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"

namespace linkwise {
namespace {

using text::upper;

// The family of a GPU name: the token before the first '-' ("A100-80GB" -> "A100").
std::string family(std::string_view name) { return upper(name.substr(0, name.find('-'))); }

// A finite number >= 0 written plainly; nullopt for anything else (nan, inf, 1e999, "12 USD").
std::optional<double> parse_number(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || !std::isfinite(value) || value < 0) return std::nullopt;
  return value;
}

// The memory a SkyPilot accelerator name carries ("A100-80GB" -> 80, "V100-32GB" -> 32), if any.
std::optional<double> memory_in_name(std::string_view name) {
  const std::string text = upper(name);
  const std::size_t gb = text.rfind("GB");
  if (gb == std::string::npos || gb + 2 != text.size()) return std::nullopt;
  std::size_t start = gb;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(text[start - 1]))) --start;
  if (start == gb || (start > 0 && text[start - 1] != '-')) return std::nullopt;
  return parse_number(text.substr(start, gb - start));
}

std::string format(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// A column every SkyPilot vms.csv has; invalid_input naming it (and the file's columns) if missing.
std::size_t required_column(const CsvTable& table, std::string_view name, std::string_view source_name) {
  const auto index = table.column(name);
  if (!index) {
    std::string columns;
    for (const auto& column : table.header) columns += (columns.empty() ? "" : ", ") + column;
    throw Error(
        ErrorKind::invalid_input,
        std::string(source_name) + ": no column \"" + std::string(name) +
            "\" (a SkyPilot vms.csv has InstanceType, AcceleratorName, Price, Region, ...); columns: " + columns,
        std::string(name));
  }
  return *index;
}

void require_known_provider(const std::string& provider) {
  const auto& providers = known_providers();
  if (std::find(providers.begin(), providers.end(), provider) == providers.end()) {
    throw_invalid("provider", "unknown provider \"" + provider + "\"");
  }
}

// The rows kept for one instance, per region: the lowest on-demand and spot prices.
struct RegionPrices {
  double on_demand = 0;
  std::optional<double> spot;
};

}  // namespace

SkyPilotImportReport plan_skypilot_import(const Catalog& catalog, std::string_view csv_text,
                                          std::string_view source_name, const SkyPilotImportOptions& options) {
  require_known_provider(options.provider);
  if (!is_valid_date(options.as_of)) {
    throw_invalid("as_of", "expected the snapshot date as YYYY-MM-DD, got \"" + options.as_of + "\"");
  }

  const CsvTable table = parse_csv(csv_text, source_name);
  const std::size_t type_column = required_column(table, "InstanceType", source_name);
  const std::size_t price_column = required_column(table, "Price", source_name);
  const std::size_t region_column = required_column(table, "Region", source_name);
  const auto accelerator_column = table.column("AcceleratorName");
  const auto count_column = table.column("AcceleratorCount");
  const auto spot_column = table.column("SpotPrice");

  // Instances of this provider by name.
  std::map<std::string, const Instance*> by_name;
  for (const Instance& instance : catalog.instances()) {
    if (instance.provider == options.provider) by_name.emplace(instance.name, &instance);
  }

  SkyPilotImportReport report;
  std::map<std::string, std::map<std::string, RegionPrices>> prices;  // instance id -> region -> prices
  auto skip = [&](std::size_t row, std::string_view reason, std::string detail = {}) {
    report.skipped.push_back({table.row_lines[row], table.rows[row][type_column], table.rows[row][region_column],
                              std::string(reason), std::move(detail)});
    ++report.skipped_by_reason[std::string(reason)];
  };

  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    ++report.rows_read;
    const auto found = by_name.find(row[type_column]);
    if (found == by_name.end()) {
      skip(r, kSkipUnknownType);
      continue;
    }
    const Instance& instance = *found->second;

    // The accelerator must be the catalog's GPU: same family, same memory if named, same count.
    const std::string accelerator = accelerator_column ? row[*accelerator_column] : std::string();
    const std::string count_text = count_column ? row[*count_column] : std::string();
    if (accelerator_column) {
      const Gpu& gpu = catalog.gpu(instance.gpu_model);
      const auto count = parse_number(count_text);
      const auto memory = memory_in_name(accelerator);
      const bool same = !accelerator.empty() && family(accelerator) == family(gpu.id) &&
                        (!memory || *memory == gpu.memory_gb) &&
                        (!count_column || (count && *count == instance.gpu_count));
      if (!same) {
        skip(r, kSkipAcceleratorMismatch,
             "file: " + (accelerator.empty() ? std::string("none") : accelerator) + " x" +
                 (count_text.empty() ? "?" : count_text) + ", catalog: " + instance.gpu_model + " x" +
                 std::to_string(instance.gpu_count));
        continue;
      }
    }

    const std::string& price_text = row[price_column];
    if (price_text.empty()) {
      skip(r, kSkipNoPrice);
      continue;
    }
    const auto price = parse_number(price_text);
    const std::string spot_text = spot_column ? row[*spot_column] : std::string();
    const auto spot = spot_text.empty() ? std::nullopt : parse_number(spot_text);
    const std::string& region = row[region_column];
    // A price of zero is no price: it would rank a machine as free.
    if (!price || *price <= 0 || (!spot_text.empty() && (!spot || *spot <= 0)) || region.empty()) {
      skip(r, kSkipBadValue,
           "Price \"" + price_text + "\", SpotPrice \"" + spot_text + "\", Region \"" + region + "\"");
      continue;
    }

    ++report.rows_used;
    auto& regions = prices[instance.id];
    const auto existing = regions.find(region);
    if (existing == regions.end()) {
      regions.emplace(region, RegionPrices{*price, spot});
    } else {
      existing->second.on_demand = std::min(existing->second.on_demand, *price);
      if (spot) existing->second.spot = existing->second.spot ? std::min(*existing->second.spot, *spot) : *spot;
    }
  }

  const std::string url = options.source_url.empty() ? "SkyPilot catalog vms.csv (" +
                                                           std::filesystem::path(source_name).filename().string() + ")"
                                                     : options.source_url;
  for (const Instance& instance : catalog.instances()) {
    if (instance.provider != options.provider) continue;
    const auto found = prices.find(instance.id);
    if (found == prices.end()) {
      report.instances_not_in_file.push_back(instance.id);
      continue;
    }
    if (instance.price_as_of && *instance.price_as_of > options.as_of) {  // ISO dates compare as text
      report.instances_kept_newer.push_back(instance.id);
      continue;
    }
    const auto& regions = found->second;
    // Rule 1: keep the current price region if the file has it, else the cheapest region.
    std::string chosen;
    if (instance.price_region && regions.contains(*instance.price_region)) {
      chosen = *instance.price_region;
    } else {
      for (const auto& [region, region_prices] : regions) {  // map order: ties go to the first name
        if (chosen.empty() || region_prices.on_demand < regions.at(chosen).on_demand) chosen = region;
      }
    }
    const RegionPrices& kept = regions.at(chosen);

    InstancePriceChange change;
    change.instance_id = instance.id;
    change.old_price_usd_per_hour = instance.price_usd_per_hour;
    change.old_price_region = instance.price_region;
    PriceUpdate& update = change.update;
    update.instance_id = instance.id;
    update.price_usd_per_hour = kept.on_demand;
    update.price_region = chosen;
    update.price_as_of = options.as_of;
    update.spot_price_usd_per_hour = kept.spot;
    for (const auto& entry : regions) update.regions.push_back(entry.first);
    update.price_source =
        SourceRef{url, options.as_of,
                  "on-demand " + format(kept.on_demand) + " USD/h in " + chosen +
                      (kept.spot ? ", spot " + format(*kept.spot) : std::string(", no spot price")) +
                      "; linkwise import-skypilot rule: the previous price region if listed, else the cheapest region; "
                      "regions: every region listed"};
    change.changed = update.price_usd_per_hour != instance.price_usd_per_hour ||
                     update.price_region != instance.price_region || update.price_as_of != instance.price_as_of ||
                     update.spot_price_usd_per_hour != instance.spot_price_usd_per_hour ||
                     update.regions != instance.regions;
    ++report.instances_matched;
    if (change.changed) ++report.instances_updated;
    report.changes.push_back(std::move(change));
  }
  return report;
}

void apply_skypilot_import(const std::filesystem::path& db_path, const SkyPilotImportReport& report) {
  std::vector<PriceUpdate> updates;
  for (const auto& change : report.changes) {
    if (change.changed) updates.push_back(change.update);
  }
  update_prices(db_path, updates);
}

SkyPilotImportReport import_skypilot(const std::filesystem::path& csv_path, const std::filesystem::path& db_path,
                                     const SkyPilotImportOptions& options) {
  const std::string text = read_text_file(csv_path, "file", kMaxTextFileBytes);
  SkyPilotImportReport report = plan_skypilot_import(Catalog::open(db_path), text, csv_path.string(), options);
  apply_skypilot_import(db_path, report);
  return report;
}

namespace {

bool is_non_gpu_accelerator(std::string_view name) {
  const std::string text = upper(name);
  return std::any_of(std::begin(kNonGpuAccelerators), std::end(kNonGpuAccelerators),
                     [&](std::string_view prefix) { return text.rfind(upper(prefix), 0) == 0; });
}

// GCP's accelerator-optimized machine families: the GPUs come with the machine type, and SkyPilot's
// gcp/vms.csv lists them without an AcceleratorName.
bool is_gcp_gpu_machine_type(std::string_view type) {
  static constexpr std::string_view kFamilies[] = {"a2-", "a3-", "a4-", "a4x-", "g2-", "g4-"};
  return std::any_of(std::begin(kFamilies), std::end(kFamilies),
                     [&](std::string_view family) { return type.substr(0, family.size()) == family; });
}

}  // namespace

SkyPilotCoverageReport skypilot_coverage(const Catalog& catalog, std::string_view csv_text,
                                         std::string_view source_name, const std::string& provider) {
  require_known_provider(provider);
  const CsvTable table = parse_csv(csv_text, source_name);
  const std::size_t type_column = required_column(table, "InstanceType", source_name);
  const std::size_t accelerator_column = required_column(table, "AcceleratorName", source_name);
  const auto count_column = table.column("AcceleratorCount");
  const auto price_column = table.column("Price");
  const auto region_column = table.column("Region");

  std::set<std::string> catalog_names;
  for (const Instance& instance : catalog.instances()) {
    if (instance.provider == provider) catalog_names.insert(instance.name);
  }

  SkyPilotCoverageReport report;
  report.provider = provider;
  std::map<std::string, SkyPilotTypeOffer> offers;  // GPU instance type -> what the file says
  std::map<std::string, std::set<std::string>> regions;
  std::set<std::string> non_gpu, attached, named;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const auto& row = table.rows[r];
    ++report.rows_read;
    const std::string& type = row[type_column];
    const std::string& accelerator = row[accelerator_column];
    if (!type.empty()) named.insert(type);
    if (type.empty()) {
      if (!accelerator.empty()) attached.insert(accelerator);
      continue;
    }
    const bool gpu_row =
        accelerator.empty() ? provider == "gcp" && is_gcp_gpu_machine_type(type) : !is_non_gpu_accelerator(accelerator);
    if (!gpu_row) {
      if (!accelerator.empty()) non_gpu.insert(type);
      continue;
    }
    auto [offer, inserted] = offers.try_emplace(type);
    if (inserted) {
      offer->second.instance_type = type;
      offer->second.accelerator = accelerator;
      offer->second.accelerator_count = count_column ? row[*count_column] : std::string();
      offer->second.line = table.row_lines[r];
    }
    if (region_column && !row[*region_column].empty()) regions[type].insert(row[*region_column]);
    if (price_column) {
      if (const auto price = parse_number(row[*price_column])) {
        auto& best = offer->second.min_price_usd_per_hour;
        best = best ? std::min(*best, *price) : *price;
      }
    }
  }

  report.gpu_types = offers.size();
  for (auto& [type, offer] : offers) {
    if (catalog_names.contains(type)) {
      ++report.covered;
      continue;
    }
    offer.regions = regions[type].size();
    report.missing.push_back(std::move(offer));
  }
  report.non_gpu_types.assign(non_gpu.begin(), non_gpu.end());
  report.attached_accelerators.assign(attached.begin(), attached.end());
  for (const Instance& instance : catalog.instances()) {
    if (instance.provider == provider && !named.contains(instance.name)) {
      report.catalog_not_in_file.push_back(instance.id);
    }
  }
  return report;
}

std::optional<std::string> skypilot_provider_of(const std::filesystem::path& csv_path) {
  const std::string cloud = std::filesystem::absolute(csv_path).parent_path().filename().string();
  const std::string provider = cloud == "do" ? "digitalocean" : cloud;
  const auto& providers = known_providers();
  if (std::find(providers.begin(), providers.end(), provider) == providers.end()) return std::nullopt;
  return provider;
}

}  // namespace linkwise
