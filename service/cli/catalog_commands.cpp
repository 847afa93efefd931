// `linkwise instances`, `linkwise gpus` and `linkwise catalog ...`: the catalog on the command line.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "linkwise/catalog_db.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/skypilot_import.hpp"

namespace linkwise::cli {
namespace {

using nlohmann::ordered_json;

// A figure as a person reads it: no trailing zeros, at most 3 decimals (prices like 1.006).
std::string number(double value) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f", value);
  std::string out = text;
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out;
}
std::string number(const std::optional<double>& value) { return value ? number(*value) : "-"; }
std::string number(const std::optional<int>& value) { return value ? std::to_string(*value) : "-"; }
std::string yes_no(const std::optional<bool>& value) { return value ? (*value ? "yes" : "no") : "-"; }

// An aligned text table: text columns left-aligned, figures right-aligned.
class Table {
 public:
  struct Column {
    std::string header;
    bool right_aligned;
  };
  explicit Table(std::vector<Column> columns) : columns_(std::move(columns)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

  // Keeps only the columns at these indices, in this order (--columns).
  void select(const std::vector<std::size_t>& keep) {
    std::vector<Column> columns;
    for (std::size_t k : keep) columns.push_back(columns_[k]);
    for (auto& row : rows_) {
      std::vector<std::string> cells;
      for (std::size_t k : keep) cells.push_back(row[k]);
      row = std::move(cells);
    }
    columns_ = std::move(columns);
  }

  void print(std::ostream& out) const {
    std::vector<std::size_t> widths;
    for (const Column& column : columns_) widths.push_back(column.header.size());
    for (const auto& row : rows_) {
      for (std::size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
    }
    auto print_row = [&](const std::vector<std::string>& cells) {
      std::string line;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        const std::string padding(widths[c] - cells[c].size(), ' ');
        line += columns_[c].right_aligned ? padding + cells[c] : cells[c] + padding;
        if (c + 1 < cells.size()) line += "  ";
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << "\n";
    };
    std::vector<std::string> headers;
    for (const Column& column : columns_) headers.push_back(column.header);
    print_row(headers);
    for (const auto& row : rows_) print_row(row);
  }

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// RFC 4180 quoting for one CSV field.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// A JSON scalar as CSV text: null is empty, strings unquoted, arrays joined with ';'.
std::string csv_value(const ordered_json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_array()) {
    std::string out;
    for (const auto& item : value) {
      if (!out.empty()) out += ';';
      out += item.get<std::string>();
    }
    return out;
  }
  return value.dump();
}

// The REST answer's shape without its paging fields: {"total", "excluded_unknown", "items"}, so a
// script reads the same field names from the CLI, REST and Python.
void print_instances_json(const InstanceMatches& matches) {
  ordered_json items = ordered_json::array();
  for (const Instance* instance : matches.instances) items.push_back(*instance);
  ordered_json out = matches_summary_json(matches);
  out["items"] = std::move(items);
  std::cout << out.dump(2) << "\n";
}

// Every field but `sources` (nested), in the contract's order; regions joined with ';'.
void print_instances_csv(const std::vector<const Instance*>& instances) {
  bool header = true;
  for (const Instance* instance : instances) {
    ordered_json row = *instance;
    row.erase("sources");
    if (header) {
      std::string line;
      for (const auto& [key, value] : row.items()) {
        if (!line.empty()) line += ',';
        line += csv_field(key);
      }
      std::cout << line << "\n";
      header = false;
    }
    std::string line;
    bool first = true;
    for (const auto& [key, value] : row.items()) {
      if (!first) line += ',';
      line += csv_field(csv_value(value));
      first = false;
    }
    std::cout << line << "\n";
  }
}

// "12 instances hidden: gpudirect_rdma unknown", or with several fields each one's count; empty
// when the filters hid nothing for want of a value.
std::string hidden_line(const InstanceMatches& matches) {
  if (matches.excluded_unknown_instances == 0) return {};
  const std::size_t hidden = matches.excluded_unknown_instances;
  std::string out = std::to_string(hidden) + (hidden == 1 ? " instance" : " instances") + " hidden: ";
  bool first = true;
  for (const auto& [field, count] : matches.excluded_unknown) {
    if (!first) out += ", ";
    out += field + " unknown";
    if (matches.excluded_unknown.size() > 1) out += " (" + std::to_string(count) + ")";
    first = false;
  }
  return out;
}

// The table's columns by their contract field names, for --columns: one per column of
// print_instances_table, in its order (a test checks the count); the first kDefaultColumns are
// shown by default, the rest on request.
constexpr std::size_t kDefaultColumns = 13;
const std::vector<std::string>& instance_table_fields() {
  static const std::vector<std::string> fields = {"id",
                                                  "gpu_model",
                                                  "gpu_count",
                                                  "gpu_memory_gb",
                                                  "price_usd_per_gpu_hour",
                                                  "intra_node_fabric",
                                                  "nvlink_gbytes_per_s",
                                                  "nvlink_domain_gpus",
                                                  "network_type",
                                                  "network_gbits_per_s",
                                                  "gpudirect_rdma",
                                                  "price_usd_per_hour",
                                                  "price_region",
                                                  "provider",
                                                  "name",
                                                  "vcpus",
                                                  "memory_gib",
                                                  "network_nics",
                                                  "network_nic_gbits_per_s",
                                                  "frontend_network_gbits_per_s",
                                                  "price_as_of",
                                                  "spot_price_usd_per_hour",
                                                  "regions"};
  return fields;
}

// "id,price_usd_per_hour" -> column indices; an unknown name is bad input naming the choices.
std::vector<std::size_t> parse_columns(const std::string& text) {
  if (text.empty()) throw_invalid("--columns", "--columns: name at least one column (default: leave the option out)");
  std::vector<std::size_t> out;
  const auto& fields = instance_table_fields();
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const auto at = std::find(fields.begin(), fields.end(), name);
    if (at == fields.end()) {
      std::string known;
      for (const auto& f : fields) known += (known.empty() ? "" : ", ") + f;
      throw_invalid("--columns", "--columns: unknown column \"" + name + "\"; known: " + known);
    }
    out.push_back(static_cast<std::size_t>(at - fields.begin()));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

void print_instances_table(const InstanceMatches& matches, const std::string& columns, bool columns_given) {
  const auto& instances = matches.instances;
  // Per-GPU price first after the GPU columns: the figure compared across instance sizes.
  Table table({{"ID", false},
               {"GPU", false},
               {"GPUS", true},
               {"GPU MEM (GB)", true},
               {"PRICE/GPU ($/h)", true},
               {"FABRIC", false},
               {"NVLINK (GB/s)", true},
               {"NVL DOMAIN", true},
               {"NETWORK", false},
               {"NET (Gbit/s)", true},
               {"RDMA", false},
               {"PRICE ($/h)", true},
               {"PRICE REGION", false},
               {"PROVIDER", false},
               {"NAME", false},
               {"VCPUS", true},
               {"MEMORY (GiB)", true},
               {"NICS", true},
               {"NIC (Gbit/s)", true},
               {"FRONT-END (Gbit/s)", true},
               {"PRICE AS OF", false},
               {"SPOT ($/h)", true},
               {"REGIONS", false}});
  for (const Instance* i : instances) {
    std::string regions;
    for (const auto& r : i->regions) regions += (regions.empty() ? "" : ",") + r;
    table.add({i->id,
               i->gpu_model,
               std::to_string(i->gpu_count),
               number(i->gpu_memory_gb),
               number(i->price_usd_per_gpu_hour()),
               std::string(to_string(i->intra_node_fabric)),
               number(i->nvlink_gbytes_per_s),
               number(i->nvlink_domain_gpus),
               std::string(to_string(i->network_type)),
               number(i->network_gbits_per_s),
               yes_no(i->gpudirect_rdma),
               number(i->price_usd_per_hour),
               i->price_region.value_or("-"),
               i->provider,
               i->name,
               number(i->vcpus),
               number(i->memory_gib),
               number(i->network_nics),
               number(i->network_nic_gbits_per_s),
               number(i->frontend_network_gbits_per_s),
               i->price_as_of.value_or("-"),
               number(i->spot_price_usd_per_hour),
               regions.empty() ? "-" : regions});
  }
  std::vector<std::size_t> shown;
  for (std::size_t k = 0; k < kDefaultColumns; ++k) shown.push_back(k);
  table.select(columns_given ? parse_columns(columns) : shown);
  table.print(std::cout);
  if (const std::string hidden = hidden_line(matches); !hidden.empty()) std::cout << hidden << "\n";
  std::cout << "(" << instances.size() << " instance" << (instances.size() == 1 ? "" : "s") << " from "
            << chosen_db_description() << ")\n";
}

void print_sources(const Sources& sources) {
  std::cout << "sources:\n";
  for (const auto& [group, source] : sources) {
    std::cout << "  " << group << ": " << source.url << " (as of " << source.as_of << ")\n";
    if (source.note) std::cout << "    " << *source.note << "\n";
  }
}

void print_instance_details(const Instance& i) {
  const auto line = [](std::string_view name, const std::string& value) {
    std::cout << name << std::string(name.size() < 30 ? 30 - name.size() : 1, ' ') << value << "\n";
  };
  line("id", i.id);
  line("provider", i.provider);
  line("name", i.name);
  line("gpu_model", i.gpu_model);
  line("gpu_count", std::to_string(i.gpu_count));
  line("gpu_memory_gb", number(i.gpu_memory_gb) + " GB per GPU");
  line("vcpus", number(i.vcpus));
  line("memory_gib", i.memory_gib ? number(i.memory_gib) + " GiB" : "-");
  line("intra_node_fabric", std::string(to_string(i.intra_node_fabric)));
  line("nvlink_gbytes_per_s",
       i.nvlink_gbytes_per_s ? number(i.nvlink_gbytes_per_s) + " GB/s per GPU, both directions" : "-");
  line("nvlink_domain_gpus", i.nvlink_domain_gpus ? number(i.nvlink_domain_gpus) + " GPUs per NVLink domain" : "-");
  line("network_type", std::string(to_string(i.network_type)));
  line("network_gbits_per_s", i.network_gbits_per_s ? number(i.network_gbits_per_s) + " Gbit/s GPU fabric" : "-");
  line("network_nics", number(i.network_nics));
  line("network_nic_gbits_per_s",
       i.network_nic_gbits_per_s ? number(i.network_nic_gbits_per_s) + " Gbit/s per NIC" : "-");
  line("frontend_network_gbits_per_s",
       i.frontend_network_gbits_per_s ? number(i.frontend_network_gbits_per_s) + " Gbit/s front end" : "-");
  line("gpudirect_rdma", yes_no(i.gpudirect_rdma));
  line("price_usd_per_hour", i.price_usd_per_hour ? number(i.price_usd_per_hour) + " USD/h on demand" : "-");
  line("price_usd_per_gpu_hour", i.price_usd_per_hour ? number(i.price_usd_per_gpu_hour()) + " USD/h per GPU" : "-");
  line("price_region", i.price_region.value_or("-"));
  line("price_as_of", i.price_as_of.value_or("-"));
  line("spot_price_usd_per_hour", i.spot_price_usd_per_hour ? number(i.spot_price_usd_per_hour) + " USD/h" : "-");
  std::string regions;
  for (const auto& region : i.regions) {
    if (!regions.empty()) regions += ", ";
    regions += region;
  }
  line("regions", regions.empty() ? "-" : regions);
  print_sources(i.sources);
}

void print_gpus_table(const std::vector<Gpu>& gpus) {
  Table table({{"ID", false},
               {"VENDOR", false},
               {"ARCH", false},
               {"MEM (GB)", true},
               {"HBM (GB/s)", true},
               {"BF16 (TFLOPS)", true},
               {"FP16 (TFLOPS)", true},
               {"FP8 (TFLOPS)", true},
               {"FP4 (TFLOPS)", true},
               {"NVLINK (GB/s)", true},
               {"NVLINK GEN", true},
               {"NVL DOMAIN MAX", true},
               {"PCIE GEN", true},
               {"TDP (W)", true}});
  for (const Gpu& g : gpus) {
    table.add({g.id, g.vendor, std::string(to_string(g.architecture)), number(g.memory_gb), number(g.hbm_gbytes_per_s),
               number(g.bf16_dense_tflops), number(g.fp16_dense_tflops), number(g.fp8_dense_tflops),
               number(g.fp4_dense_tflops), number(g.nvlink_gbytes_per_s), number(g.nvlink_generation),
               number(g.nvlink_domain_max_gpus), number(g.pcie_gen), number(g.tdp_w)});
  }
  table.print(std::cout);
}

struct InstancesOptions {
  std::string provider, gpu, fabric, region, sort = "id";
  int min_gpus = 0;
  double min_gpu_memory = 0, min_nvlink = 0, min_network = 0, max_price = 0;
  bool rdma = false, no_rdma = false, json = false, csv = false;
  std::string columns;
  std::string show_id;
  bool show_json = false;
};

void register_instances(CLI::App& app) {
  auto options = std::make_shared<InstancesOptions>();
  CLI::App* instances = app.add_subcommand("instances", "List GPU instance types, filtered and sorted");
  instances->add_option("--provider", options->provider, "Provider: aws, gcp, azure, oci, lambda, ...");
  instances->add_option("--gpu", options->gpu,
                        "GPU id or family: H100 matches every H100 variant, H100-SXM5-80GB only that one");
  // The bounds are core's (validate(InstanceFilter)): the same words as REST and Python, never
  // CLI11's range message with DBL_MAX written out.
  instances->add_option("--min-gpus", options->min_gpus, "At least this many GPUs");
  instances->add_option("--min-gpu-memory", options->min_gpu_memory, "At least this much memory per GPU, GB");
  std::string fabrics;
  for (auto name : fabric_names()) {
    if (!fabrics.empty()) fabrics += ", ";
    fabrics += name;
  }
  instances->add_option("--fabric", options->fabric, "Intra-node fabric: " + fabrics);
  instances->add_option("--min-nvlink", options->min_nvlink, "At least this NVLink GB/s per GPU (both directions)");
  instances->add_option("--min-network", options->min_network, "At least this GPU fabric between instances, Gbit/s");
  auto* rdma = instances->add_flag("--rdma", options->rdma, "Only instances with GPUDirect RDMA");
  auto* no_rdma = instances->add_flag("--no-rdma", options->no_rdma, "Only instances without GPUDirect RDMA");
  rdma->excludes(no_rdma);
  instances->add_option("--max-price", options->max_price, "At most this on-demand price, USD per hour");
  auto* region = instances->add_option("--region", options->region, "Offered in this region");
  instances->add_option("--sort", options->sort,
                        "Sort by a field's JSON name, '-' prefix for descending (e.g. price_usd_per_gpu_hour, "
                        "-nvlink_gbytes_per_s)");
  auto* json = instances->add_flag("--json", options->json,
                                   "Print JSON as GET /v1/instances answers it: {total, excluded_unknown, items}");
  auto* csv = instances->add_flag("--csv", options->csv, "Print CSV (every field but sources)");
  json->excludes(csv);
  auto* columns = instances->add_option(
      "--columns", options->columns,
      "The table's columns, by field name, comma-separated (e.g. id,gpu_count,vcpus,price_usd_per_hour): any "
      "field of the contract but sources; default: id to price_region");

  CLI::App* show = instances->add_subcommand("show", "Every field and source of one instance");
  show->add_option("id", options->show_id, "Instance id, provider:name (e.g. aws:p5.48xlarge)")->required();
  show->add_flag("--json", options->show_json, "Print JSON");
  instances->require_subcommand(0, 1);

  show->callback([options] {
    const Catalog catalog = load_chosen_catalog();
    const Instance& instance = catalog.instance(options->show_id);
    if (options->show_json) {
      std::cout << ordered_json(instance).dump(2) << "\n";
    } else {
      print_instance_details(instance);
    }
  });

  instances->callback(
      [options, instances, show, provider = instances->get_option("--provider"), gpu = instances->get_option("--gpu"),
       min_gpus = instances->get_option("--min-gpus"), min_mem = instances->get_option("--min-gpu-memory"),
       min_nvlink = instances->get_option("--min-nvlink"), min_net = instances->get_option("--min-network"),
       max_price = instances->get_option("--max-price"), region, columns] {
        if (show->parsed()) return;
        InstanceFilter filter;
        // Given, even empty: an empty name names nothing and is refused (as REST and Python refuse it).
        if (provider->count()) filter.provider = options->provider;
        if (gpu->count()) filter.gpu = options->gpu;
        if (min_gpus->count()) filter.min_gpus = options->min_gpus;
        if (min_mem->count()) filter.min_gpu_memory_gb = options->min_gpu_memory;
        if (!options->fabric.empty()) filter.fabric = parse_fabric(options->fabric, "--fabric");
        if (min_nvlink->count()) filter.min_nvlink_gbytes_per_s = options->min_nvlink;
        if (min_net->count()) filter.min_network_gbits_per_s = options->min_network;
        if (options->rdma) filter.rdma = true;
        if (options->no_rdma) filter.rdma = false;
        if (max_price->count()) filter.max_price = options->max_price;
        if (region->count()) filter.region = options->region;
        const InstanceSort sort = InstanceSort::parse(options->sort);

        const Catalog catalog = load_chosen_catalog();
        const InstanceMatches found = catalog.match(filter, sort);
        if (options->json) {
          print_instances_json(found);
        } else if (options->csv) {
          print_instances_csv(found.instances);
          // stdout stays the CSV scripts read; what was hidden goes beside it, to stderr.
          if (const std::string hidden = hidden_line(found); !hidden.empty()) std::cerr << hidden << "\n";
        } else {
          print_instances_table(found, options->columns, columns->count() > 0);
        }
      });
}

void register_gpus(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* gpus = app.add_subcommand("gpus", "List GPU models with memory, compute and NVLink figures");
  gpus->add_flag("--json", *json, "Print JSON as GET /v1/gpus answers it: {total, items}");
  gpus->callback([json] {
    const Catalog catalog = load_chosen_catalog();
    if (*json) {
      std::cout << gpus_json(catalog.gpus()).dump(2) << "\n";
    } else {
      print_gpus_table(catalog.gpus());
    }
  });
}

std::string summary(const Catalog& catalog) {
  std::vector<std::string> providers;
  for (const Instance& instance : catalog.instances()) {
    if (std::find(providers.begin(), providers.end(), instance.provider) == providers.end()) {
      providers.push_back(instance.provider);
    }
  }
  std::ostringstream out;
  out << catalog.gpus().size() << " GPUs, " << catalog.instances().size() << " instances from " << providers.size()
      << " providers";
  return out.str();
}

void register_import_skypilot(CLI::App& group);  // below
void register_coverage(CLI::App& group);         // below

void register_catalog_group(CLI::App& app) {
  CLI::App* group = app.add_subcommand("catalog", "Check and build catalog databases, refresh prices");
  group->require_subcommand(1);

  auto check_dir = std::make_shared<std::string>("data");
  CLI::App* check = group->add_subcommand("check", "Validate the catalog data files (exit 2 on the first error)");
  check->add_option("--data", *check_dir, "Data directory with gpus.json and instances/")->capture_default_str();
  check->callback([check_dir] {
    const Catalog catalog = Catalog::load_data_dir(*check_dir);
    std::cout << *check_dir << ": ok: " << summary(catalog) << "\n";
  });

  auto build_dir = std::make_shared<std::string>("data");
  auto build_out = std::make_shared<std::string>();
  CLI::App* build = group->add_subcommand("build-db", "Load the data files into a SQLite catalog database");
  build->add_option("--data", *build_dir, "Data directory with gpus.json and instances/")->capture_default_str();
  build->add_option("--out", *build_out, "Database file to write (replaced atomically)")->required();
  build->callback([build_dir, build_out] {
    const Catalog catalog = Catalog::load_data_dir(*build_dir);
    save_catalog(catalog, *build_out);
    std::cout << "wrote " << summary(catalog) << " to " << *build_out << "\n";
  });

  register_import_skypilot(*group);
  register_coverage(*group);
}

// Today's date in UTC, YYYY-MM-DD: the default snapshot date of an import.
std::string today_utc() {
  const auto days = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  const std::chrono::year_month_day date{days};
  char text[16];
  std::snprintf(text, sizeof text, "%04d-%02u-%02u", static_cast<int>(date.year()), static_cast<unsigned>(date.month()),
                static_cast<unsigned>(date.day()));
  return text;
}

void print_import_report(const SkyPilotImportReport& report, const std::string& file, const std::string& provider,
                         const std::string& db, bool dry_run) {
  std::cout << "read " << report.rows_read << " rows of " << file << " for provider " << provider << "\n";
  std::cout << "used " << report.rows_used << " rows; skipped " << report.skipped.size() << ":\n";
  for (const auto& [reason, count] : report.skipped_by_reason) {
    std::cout << "  " << count << " " << reason << "\n";
  }
  // Rows of catalog instances that were refused are worth reading one by one.
  for (const SkippedRow& row : report.skipped) {
    if (row.reason == kSkipUnknownType) continue;
    std::cout << "    line " << row.line << ": " << row.instance_type << " in " << row.region << ": " << row.reason
              << (row.detail.empty() ? "" : " (" + row.detail + ")") << "\n";
  }
  std::cout << "matched " << report.instances_matched << " catalog instances; "
            << (dry_run ? "would update " : "updated ") << report.instances_updated << " in " << db << "\n";
  for (const InstancePriceChange& change : report.changes) {
    if (!change.changed) continue;
    std::cout << "  " << change.instance_id << ": " << number(change.old_price_usd_per_hour) << " ("
              << change.old_price_region.value_or("-") << ") -> " << number(change.update.price_usd_per_hour)
              << " USD/h (" << change.update.price_region.value_or("-") << ")\n";
  }
  if (!report.instances_kept_newer.empty()) {
    std::cout << "kept (their price is more recent than the file):";
    for (const auto& id : report.instances_kept_newer) std::cout << " " << id;
    std::cout << "\n";
  }
  if (!report.instances_not_in_file.empty()) {
    std::cout << "not in the file (unchanged):";
    for (const auto& id : report.instances_not_in_file) std::cout << " " << id;
    std::cout << "\n";
  }
}

struct ImportOptions {
  std::string file;
  SkyPilotImportOptions import;
  bool dry_run = false;
};

void register_import_skypilot(CLI::App& group) {
  auto options = std::make_shared<ImportOptions>();
  options->import.as_of = today_utc();
  CLI::App* command = group.add_subcommand(
      "import-skypilot",
      "Refresh prices and regions from a SkyPilot catalog vms.csv into the --db database (created from the "
      "embedded catalog if missing)");
  command->add_option("file", options->file, "SkyPilot vms.csv")->required()->check(CLI::ExistingFile);
  command->add_option("--provider", options->import.provider, "Catalog provider the file is for (aws, gcp, ...)")
      ->required();
  command->add_option("--as-of", options->import.as_of, "Date of the SkyPilot snapshot, YYYY-MM-DD")
      ->capture_default_str();
  command->add_option("--source", options->import.source_url,
                      "Where the file came from, e.g. its GitHub URL at a commit (recorded as the price source)");
  command->add_flag("--dry-run", options->dry_run, "Report what would change; write nothing");
  command->callback([options] {
    const auto db = chosen_db_path();
    if (!db) {
      throw_invalid("db", "import-skypilot writes a database: give --db PATH (or set LINKWISE_DB); the embedded "
                          "catalog is read-only");
    }
    // Planned once, before anything is written: a bad file, provider or --as-of is refused first,
    // and a missing database is created (from the embedded catalog the plan read) only for an
    // import that will happen.
    const std::string text = read_text_file(options->file, "file", kMaxTextFileBytes);
    const bool db_exists = std::filesystem::exists(*db);
    const SkyPilotImportReport report = plan_skypilot_import(db_exists ? Catalog::open(*db) : Catalog::embedded(), text,
                                                             options->file, options->import);
    if (!options->dry_run) {
      if (ensure_catalog_db(*db)) std::cout << "created " << db->string() << " from the embedded catalog\n";
      apply_skypilot_import(*db, report);
    }
    print_import_report(report, options->file, options->import.provider, db->string(), options->dry_run);
  });
}

struct CoverageOptions {
  std::string file;
  std::string provider;
  bool json = false;
};

void print_coverage(const SkyPilotCoverageReport& report, const std::string& file) {
  std::cout << file << " (" << report.provider << "): " << report.gpu_types << " GPU instance types, " << report.covered
            << " in the catalog, " << report.missing.size() << " missing\n";
  if (!report.missing.empty()) {
    Table table({{"INSTANCE TYPE", false},
                 {"ACCELERATOR", false},
                 {"COUNT", true},
                 {"REGIONS", true},
                 {"CHEAPEST ($/h)", true},
                 {"LINE", true}});
    for (const SkyPilotTypeOffer& offer : report.missing) {
      table.add({offer.instance_type, offer.accelerator.empty() ? "(built in)" : offer.accelerator,
                 offer.accelerator_count.empty() ? "-" : offer.accelerator_count, std::to_string(offer.regions),
                 number(offer.min_price_usd_per_hour), std::to_string(offer.line)});
    }
    table.print(std::cout);
  }
  const auto list = [](std::string_view title, const std::vector<std::string>& names) {
    if (names.empty()) return;
    std::cout << title << " (" << names.size() << "):";
    for (const auto& name : names) std::cout << " " << name;
    std::cout << "\n";
  };
  list("not GPUs, left out", report.non_gpu_types);
  list("accelerators without an instance type (attached to a machine type)", report.attached_accelerators);
  list("in the catalog, not in the file", report.catalog_not_in_file);
}

ordered_json coverage_json(const SkyPilotCoverageReport& report) {
  const auto text_or_null = [](const std::string& text) { return text.empty() ? ordered_json() : ordered_json(text); };
  ordered_json missing = ordered_json::array();
  for (const SkyPilotTypeOffer& offer : report.missing) {
    missing.push_back({{"instance_type", offer.instance_type},
                       {"accelerator", text_or_null(offer.accelerator)},
                       {"accelerator_count", text_or_null(offer.accelerator_count)},
                       {"regions", offer.regions},
                       {"min_price_usd_per_hour",
                        offer.min_price_usd_per_hour ? ordered_json(*offer.min_price_usd_per_hour) : ordered_json()},
                       {"line", offer.line}});
  }
  return {{"provider", report.provider},
          {"rows_read", report.rows_read},
          {"gpu_types", report.gpu_types},
          {"covered", report.covered},
          {"missing", std::move(missing)},
          {"non_gpu_types", report.non_gpu_types},
          {"attached_accelerators", report.attached_accelerators},
          {"catalog_not_in_file", report.catalog_not_in_file}};
}

void register_coverage(CLI::App& group) {
  auto options = std::make_shared<CoverageOptions>();
  CLI::App* command = group.add_subcommand(
      "coverage", "List the GPU instance types a SkyPilot catalog vms.csv names that the catalog lacks");
  command->add_option("--skypilot", options->file, "SkyPilot vms.csv (catalogs/v*/<cloud>/vms.csv)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("--provider", options->provider,
                      "Catalog provider the file is for (default: the file's cloud folder, e.g. .../aws/vms.csv)");
  command->add_flag("--json", options->json, "Print the report as JSON");
  command->callback([options] {
    std::string provider = options->provider;
    if (provider.empty()) {
      const auto inferred = skypilot_provider_of(options->file);
      if (!inferred) {
        throw_invalid("provider", "cannot tell the provider from the path " + options->file +
                                      " (not .../<cloud>/vms.csv of a known provider): give --provider");
      }
      provider = *inferred;
    }
    const std::string text = read_text_file(options->file, "--skypilot", kMaxTextFileBytes);
    const Catalog catalog = load_chosen_catalog();
    const SkyPilotCoverageReport report = skypilot_coverage(catalog, text, options->file, provider);
    if (options->json) {
      std::cout << coverage_json(report).dump(2) << "\n";
    } else {
      print_coverage(report, options->file);
    }
  });
}

}  // namespace

void register_catalog_commands(CLI::App& app) {
  add_global_db_option(app);
  register_instances(app);
  register_gpus(app);
  register_catalog_group(app);
}

}  // namespace linkwise::cli
