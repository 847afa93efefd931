// `linkwise probe` (measure this instance's links) and `linkwise validate` (the catalog's claims
// against a probe report). Everything about probes (names, modes, what this build has and why not)
// comes from the probes library's one header.
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
#include "cli/db_option.hpp"
#include "linkwise/error.hpp"
#include "linkwise/probe_report.hpp"
#include "linkwise/probes.hpp"

namespace linkwise::cli {
namespace {

struct ProbeArgs {
  bool quick = false;
  std::string only;
  bool list = false;
  bool multi_node = false;
  std::string out;
};

struct ValidateArgs {
  std::vector<std::string> reports;
  std::string instance;
  bool json = false;
  bool fleet = false;
  bool include_synthetic = false;
};

std::string fixed(const std::optional<double>& value, int decimals = 1) {
  if (!value) return "-";
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, *value);
  return text;
}

// One line per probe; a probe this build lacks is "skipped", with the reason on the next line.
void print_probe_list() {
  for (const probe::ProbeInfo& p : probe::all_probes()) {
    std::printf("%-20s %-12s %-8s %s\n", p.name.c_str(), std::string(probe::to_string(p.mode)).c_str(),
                p.built() ? "built" : "skipped", p.description.c_str());
    if (p.unavailable) std::printf("%-20s skipped: %s\n", "", p.unavailable->c_str());
  }
}

void write_report(const nlohmann::json& report, const std::string& out) {
  const std::string text = report.dump(2) + "\n";
  if (out.empty()) {
    std::cout << text;
    return;
  }
  std::ofstream file(out);
  if (!file || !(file << text)) throw Error(ErrorKind::io, "cannot write the report to " + out, "out");
  std::cerr << "linkwise probe: wrote " << out << "\n";
}

void run_probe(const ProbeArgs& args) {
  if (args.list) {
    print_probe_list();
    return;
  }
  probe::ProbeOptions options;
  options.quick = args.quick;
  options.only = probe::split_names(args.only);
  options.multi_node = args.multi_node;
  options.progress = [](std::string_view line) { std::cerr << "linkwise probe: " << line << std::endl; };
  const nlohmann::json report = probe::run_probes(options);
  if (!report.is_null()) write_report(report, args.out);  // null on MPI ranks other than 0
}

// "below" in red on a terminal (not when piped, nor with NO_COLOR set).
std::string verdict_words(probe::Verdict verdict) {
  const std::string words(probe::to_string(verdict));
  if (verdict != probe::Verdict::below || !isatty(STDOUT_FILENO) || std::getenv("NO_COLOR")) return words;
  return "\033[31m" + words + "\033[0m";
}

void print_validation(const probe::Validation& v) {
  const auto& m = v.instance;
  std::cout << "instance: " << m.instance_id.value_or("(not identified)")
            << (m.gpu_model ? "  gpu: " + *m.gpu_model : std::string()) << "  (" << m.detected_by << ": " << m.reason
            << ")\n\n";
  std::printf("%-8s  %10s  %-9s  %10s  %10s  %-7s  %-12s  %s\n", "claim", "claimed", "unit", "expected", "measured",
              "unit", "efficiency", "verdict");
  for (const auto& c : v.verdicts) {
    const std::string efficiency = c.efficiency ? fixed(*c.efficiency * 100, 0) + "%" : "-";
    const std::string needed = fixed(c.min_efficiency * 100, 0) + "%";
    std::printf("%-8s  %10s  %-9s  %10s  %10s  %-7s  %-12s  %s\n", c.claim.c_str(),
                fixed(c.claimed, c.claimed_unit == "PCIe gen" ? 0 : 1).c_str(), c.claimed_unit.c_str(),
                fixed(c.expected).c_str(), fixed(c.measured).c_str(), c.unit.c_str(),
                (efficiency + " (>=" + needed + ")").c_str(), verdict_words(c.verdict).c_str());
  }
  std::cout << "\n";
  for (const auto& c : v.verdicts) {
    std::cout << c.claim << ": " << c.reason;
    if (!c.measurement.empty()) std::cout << " [" << c.measurement << "]";
    std::cout << "\n";
  }
}

void print_fleet(const probe::FleetValidation& fleet) {
  std::cout << "instance: " << fleet.instance_id << "  reports: " << fleet.reports
            << (fleet.synthetic_reports && !fleet.synthetic_included
                    ? " (" + std::to_string(fleet.synthetic_reports) + " synthetic left out)"
                    : std::string())
            << "\n\n";
  std::printf("%-8s  %10s  %-9s  %10s  %10s  %-7s  %-14s  %s\n", "claim", "claimed", "unit", "expected", "median",
              "unit", "median share", "verdict");
  for (const auto& c : fleet.claims) {
    const auto& v = c.claim;
    std::optional<double> median, share;
    if (!c.measured.empty()) median = probe::compute_stats(c.measured).median;
    if (!c.shares.empty()) share = probe::compute_stats(c.shares).median;
    const std::string shown =
        (share ? fixed(*share * 100, 0) + "%" : std::string("-")) + " (>=" + fixed(v.min_efficiency * 100, 0) + "%)";
    std::printf("%-8s  %10s  %-9s  %10s  %10s  %-7s  %-14s  %s\n", v.claim.c_str(),
                fixed(v.claimed, v.claimed_unit == "PCIe gen" ? 0 : 1).c_str(), v.claimed_unit.c_str(),
                fixed(v.expected).c_str(), fixed(median).c_str(), v.unit.c_str(), shown.c_str(),
                verdict_words(c.verdict).c_str());
  }
}

// --fleet: the fleet verdict over every report given (probe::validate_fleet, as the service's
// GET /v1/instances/{id}/validation).
void run_validate_fleet(const ValidateArgs& args, const Catalog& catalog, const std::optional<std::string>& instance) {
  std::vector<probe::ProbeReport> reports;
  for (const auto& path : args.reports) reports.push_back(probe::load_report(path));
  const probe::FleetValidation fleet = probe::validate_fleet(reports, catalog, instance, args.include_synthetic);
  if (args.json) {
    std::cout << probe::to_json(fleet).dump(2) << "\n";
  } else {
    print_fleet(fleet);
  }
  std::cout.flush();
  if (probe::any_below(fleet)) throw CLI::RuntimeError(1);  // exit 1: the fleet does not meet a claim
}

void run_validate(const ValidateArgs& args) {
  const Catalog catalog = load_chosen_catalog();
  std::optional<std::string> instance;
  if (!args.instance.empty()) instance = args.instance;
  if (args.fleet) return run_validate_fleet(args, catalog, instance);
  if (args.reports.size() != 1) {
    throw_invalid("report", "validate takes one report; several are a fleet: add --fleet");
  }
  const probe::ProbeReport report = probe::load_report(args.reports.front());
  const probe::Validation validation = probe::validate(report, catalog, instance);
  if (args.json) {
    std::cout << probe::to_json(validation).dump(2) << "\n";
  } else {
    print_validation(validation);
  }
  std::cout.flush();
  if (validation.any_below()) throw CLI::RuntimeError(1);  // exit 1: a claim is not met
}

}  // namespace

void register_probe_commands(CLI::App& app) {
  auto probe_args = std::make_shared<ProbeArgs>();
  CLI::App* probe = app.add_subcommand("probe", "Measure this instance's links and write a probe report (JSON)");
  probe->add_flag("--quick", probe_args->quick, "Fewer samples and sizes: under 60 s on an 8-GPU node");
  probe->add_option("--only", probe_args->only, "Comma-separated probe names (see --list)");
  probe->add_flag("--list", probe_args->list, "List the probes: built, or skipped with the reason");
  probe->add_flag("--multi-node", probe_args->multi_node,
                  "Run the multi-node probes; start every rank with mpirun (see --list for each probe's ranks)");
  probe->add_option("--out", probe_args->out, "Write the report here instead of standard output");
  probe->callback([probe_args] { run_probe(*probe_args); });

  auto validate_args = std::make_shared<ValidateArgs>();
  CLI::App* validate = app.add_subcommand(
      "validate",
      "Check the catalog's claims (NVLink, network, HBM, PCIe) against a probe report; exit 1 when one is below");
  validate
      ->add_option("report", validate_args->reports,
                   "Probe report (JSON) from `linkwise probe`; with --fleet, every report of the instance type")
      ->required()
      ->check(CLI::ExistingFile);
  validate->add_option("--instance", validate_args->instance,
                       "Catalog instance id (\"aws:p5.48xlarge\"); default: detected from the report");
  validate->add_flag("--json", validate_args->json, "Print the verdicts as JSON");
  validate->add_flag("--fleet", validate_args->fleet,
                     "The fleet verdict over all the reports given: per claim, the median report's share of the "
                     "claim (as GET /v1/instances/{id}/validation)");
  validate->add_flag("--include-synthetic", validate_args->include_synthetic,
                     "With --fleet: count synthetic test reports too");
  validate->callback([validate_args] { run_validate(*validate_args); });
}

}  // namespace linkwise::cli
