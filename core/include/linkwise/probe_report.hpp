// The probe report: what `linkwise probe` measured on an instance, and how it is checked against
// the catalog's claims. One JSON document (data/schema/probe-report.schema.json describes it):
//
//   { "schema_version": 1, "environment": {...}, "probes": [ {"name": "host-device", "results": [
//       {"metric": "h2d", "unit": "GB/s", "counting": "one-direction", "bytes": 1073741824,
//        "labels": {"gpu": "0", "memory": "pinned"}, "samples": [...], "stats": {...}} ]} ] }
//
// Every number carries its unit; every bandwidth says how its bytes were counted. This header is
// CPU-only: the CUDA probes (probes/) write reports, validate and the planner read them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "linkwise/link_physics.hpp"
#include "linkwise/links.hpp"

namespace linkwise {
class Catalog;
}

namespace linkwise::probe {

inline constexpr int kReportSchemaVersion = 1;

// ---------------------------------------------------------------------------------------------
// Statistics over a result's samples.

struct Stats {
  int count = 0;
  double median = 0, min = 0, max = 0, mean = 0;
  double stddev = 0;       // sample standard deviation (n - 1); 0 for a single sample
  double p5 = 0, p95 = 0;  // percentiles, linear interpolation between closest ranks
  double spread = 0;       // (max - min) / median: how much the run wandered
};

// Throws invalid_input naming `field` when `samples` is empty or holds a non-finite value.
Stats compute_stats(std::span<const double> samples, std::string_view field = "samples");

// ---------------------------------------------------------------------------------------------
// Collective bandwidths as nccl-tests defines them (PERFORMANCE.md):
//   algbw = bytes / time, where `bytes` is nccl-tests' "size": the whole buffer of one rank
//           (all-gather: the gathered output; reduce-scatter: the input; all-to-all: one rank's send)
//   busbw = algbw * factor, the factor of link_physics.hpp (bus_factor), shared with the planner.

using linkwise::Collective;

std::string_view to_string(Collective collective) noexcept;  // "all-reduce", ...
Collective parse_collective(std::string_view text, std::string_view field = "collective");

double busbw_factor(Collective collective, int ranks);    // throws invalid_input when ranks < 1
double algbw_gbytes_per_s(double bytes, double seconds);  // throws invalid_input when seconds <= 0
double busbw_gbytes_per_s(Collective collective, int ranks, double bytes, double seconds);

// ---------------------------------------------------------------------------------------------
// The report model.

enum class Unit { gbytes_per_s, microseconds };  // "GB/s" (10^9 bytes/s), "us"

// How a bandwidth's bytes were counted.
enum class Counting {
  one_direction,          // bytes moved one way (H2D, one peer copy, a collective's busbw)
  both_directions_added,  // two opposite transfers at once, their bytes added (bidirectional)
  read_plus_write,        // device memory: bytes read plus bytes written (copy, triad)
  read,                   // device memory: bytes read only
  write,                  // device memory: bytes written only
};

std::string_view to_string(Unit unit) noexcept;
std::string_view to_string(Counting counting) noexcept;
Unit parse_unit(std::string_view text, std::string_view field = "unit");
Counting parse_counting(std::string_view text, std::string_view field = "counting");

// Metric names the probes write and validate / measured_links read: one spelling, here.
namespace metric {
inline constexpr std::string_view h2d = "h2d";                           // GB/s, one-direction
inline constexpr std::string_view d2h = "d2h";                           // GB/s, one-direction
inline constexpr std::string_view h2d_d2h = "h2d+d2h";                   // GB/s, both-directions-added
inline constexpr std::string_view device_copy = "device-copy";           // GB/s, read+write
inline constexpr std::string_view device_read = "device-read";           // GB/s, read
inline constexpr std::string_view device_write = "device-write";         // GB/s, write
inline constexpr std::string_view device_triad = "device-triad";         // GB/s, read+write
inline constexpr std::string_view p2p_bandwidth = "p2p-bandwidth";       // GB/s, per labels.direction
inline constexpr std::string_view p2p_latency = "p2p-latency";           // us
inline constexpr std::string_view nccl_algbw = "nccl-algbw";             // GB/s, one-direction
inline constexpr std::string_view nccl_busbw = "nccl-busbw";             // GB/s, one-direction
inline constexpr std::string_view mpi_bandwidth = "mpi-host-bandwidth";  // GB/s
inline constexpr std::string_view mpi_latency = "mpi-host-latency";      // us, half round trip
}  // namespace metric

// One measured quantity: all its samples, their statistics, and what exactly was measured.
struct Result {
  std::string metric;
  Unit unit = Unit::gbytes_per_s;
  std::optional<Counting> counting;    // required for GB/s, absent for latencies
  std::optional<std::uint64_t> bytes;  // size of one transfer: buffer, copy or message (a sample may repeat it)
  // What the figure is about: "gpu", "src", "dst", "memory" (pinned|pageable), "method"
  // (copy-engine|sm), "direction" (unidirectional|bidirectional), "p2p" (on|off), "collective",
  // "ranks", "nodes", "pair", "same_node" (true|false), "scope" (one-gpu|all-gpus).
  std::map<std::string, std::string> labels;
  std::vector<double> samples;
  Stats stats;  // always compute_stats(samples); parse_report checks that it is

  // Builds a result with its stats computed.
  static Result make(std::string metric, Unit unit, std::optional<Counting> counting,
                     std::optional<std::uint64_t> bytes, std::map<std::string, std::string> labels,
                     std::vector<double> samples);
  const std::string* label(std::string_view key) const;  // nullptr when absent
};

enum class ProbeStatus { ok, skipped, failed };
std::string_view to_string(ProbeStatus status) noexcept;

// One probe's run: its results, or why it did not run.
struct ProbeRun {
  std::string name;  // a registry name: "host-device", "nccl", ...
  std::string description;
  ProbeStatus status = ProbeStatus::ok;
  std::optional<std::string> reason;  // required unless ok: "needs 2 GPUs, found 1"
  double duration_s = 0;
  std::vector<Result> results;
};

struct GpuInfo {
  int index = 0;                                  // CUDA device ordinal
  std::string name;                               // "NVIDIA H100 80GB HBM3"
  std::optional<std::string> uuid;                // "GPU-xxxxxxxx-..."
  std::optional<std::string> pci_bus_id;          // "0000:18:00.0"
  std::optional<int> numa_node;                   // from /sys; null when the system reports none
  std::optional<std::string> compute_capability;  // "9.0"
  std::optional<std::uint64_t> memory_bytes;
  std::optional<std::uint64_t> l2_bytes;
  std::optional<int> sm_count;
  std::optional<int> pcie_link_gen;  // current link, from /sys or NVML
  std::optional<int> pcie_link_width;
  std::optional<int> pcie_max_link_gen;  // what the device and slot support
  std::optional<int> pcie_max_link_width;
  std::optional<double> sm_clock_mhz;      // maximum SM clock
  std::optional<double> memory_clock_mhz;  // maximum memory clock
  std::optional<double> power_limit_w;     // NVML enforced power limit
  std::optional<bool> ecc_enabled;
  std::optional<int> nvlink_active_links;  // NVML; null without NVML
};

// Where the report was taken: enough to name the instance and to judge the figures.
struct Environment {
  std::string created_at;  // UTC, "2026-11-30T12:00:00Z"
  std::string hostname;
  std::string linkwise_version;
  bool quick = false;
  int nodes = 1;  // distinct hosts (multi-node runs)
  int ranks = 1;  // MPI ranks (1 without MPI)
  std::optional<std::string> driver_version;
  std::optional<std::string> cuda_runtime_version;
  std::optional<std::string> nccl_version;
  std::optional<std::string> mpi_library_version;
  std::optional<bool> virtual_machine;                       // cpuid hypervisor bit or DMI
  std::optional<std::string> hypervisor;                     // "KVM", "Amazon EC2", ...
  std::optional<std::string> dmi_sys_vendor;                 // /sys/class/dmi/id/sys_vendor
  std::optional<std::string> dmi_product_name;               // /sys/class/dmi/id/product_name
  std::optional<std::string> cloud_provider;                 // "aws", when the DMI data names one
  std::optional<std::string> cloud_instance_type;            // "p4d.24xlarge" (AWS writes it in DMI)
  std::vector<GpuInfo> gpus;                                 // this node's GPUs (rank 0's node)
  std::optional<std::vector<std::vector<bool>>> p2p_access;  // [i][j]: i can access j's memory
};

struct ProbeReport {
  int schema_version = kReportSchemaVersion;
  // Free text about the report; test inputs say "synthetic test input" here. Null from probes.
  std::optional<std::string> note;
  Environment environment;
  std::vector<ProbeRun> probes;
};

// JSON in the schema's field names; nulls written out, never omitted.
nlohmann::json to_json(const ProbeReport& report);
// A synthetic or test report (its note says "synthetic" or "test", any case): stored like any
// other, but left out of fleet verdicts unless asked for.
bool is_synthetic(const ProbeReport& report);
// Validates everything (types, units, counting, stats against samples); throws invalid_input
// naming the field, e.g. "probes[1].results[0].counting".
ProbeReport parse_report(const nlohmann::json& document);
ProbeReport load_report(const std::filesystem::path& path);  // io / invalid_input

// The top-level fields a report must have (the schema's "required"); tests hold the schema to it.
const std::vector<std::string>& required_report_fields();

// ---------------------------------------------------------------------------------------------
// What the planner takes in place of claimed bandwidths (links.hpp). The catalog names the report's
// GPU (gpu_model_from_name), which the planner checks against the hardware it plans.
MeasuredLinks measured_links(const ProbeReport& report, const Catalog& catalog);

// ---------------------------------------------------------------------------------------------
// validate: each catalog claim against the measurement.

enum class Verdict { meets, below, cannot_check };
std::string_view to_string(Verdict verdict) noexcept;  // "meets", "below", "cannot-check"

// One claim of the catalog compared with the report.
struct ClaimVerdict {
  std::string claim;  // "nvlink", "network", "hbm", "pcie"
  Verdict verdict = Verdict::cannot_check;
  std::optional<double> claimed;     // the catalog figure, in claimed_unit
  std::string claimed_unit;          // "GB/s", "Gbit/s", "PCIe gen"
  std::string claim_convention;      // how the catalog counts it
  std::optional<double> expected;    // claimed figure in the measurement's unit and counting
  std::optional<double> measured;    // in "GB/s"/"Gbit/s" as expected
  std::string unit;                  // unit of expected and measured
  std::optional<double> efficiency;  // measured / expected
  double min_efficiency = 0;         // a healthy system reaches at least this
  std::string measurement;           // which result was used
  std::string reason;                // why this verdict, in words
};

struct InstanceMatch {
  std::optional<std::string> instance_id;  // null when the instance could not be named
  std::optional<std::string> gpu_model;    // catalog GPU id, when known
  std::string detected_by;                 // "option", "cloud-metadata", "gpu-name-and-count", "none"
  std::string reason;                      // how, or why not
  // When several catalog instances have the report's GPU and count: their ids. A claim they all
  // share (the same NVLink figure and fabric, the same network figure) is checked without --instance.
  std::vector<std::string> candidates;
};

struct Validation {
  InstanceMatch instance;
  std::vector<ClaimVerdict> verdicts;
  bool any_below() const;
};

// The efficiency thresholds, one per claim (README "Probes" says where each comes from).
struct Thresholds {
  double nvlink_busbw = 0.70;   // NCCL all-reduce busbw / NVLink one-direction per GPU
  double nvlink_copy = 0.70;    // copy-engine peer copy / NVLink one-direction (no NCCL result)
  double network_busbw = 0.70;  // inter-node all-reduce busbw / network one-direction
  double network_mpi = 0.70;    // MPI host pair bandwidth / network one-direction
  double hbm_copy = 0.80;       // device copy (read+write) / HBM peak
  double pcie_h2d = 0.70;       // pinned H2D / PCIe one-direction (x16 assumed)
};

// Names the catalog GPU from a CUDA device name and its memory ("NVIDIA H100 80GB HBM3", 80 GiB)
// or nullopt when none or several fit.
std::optional<std::string> gpu_model_from_name(std::string_view cuda_name, std::optional<std::uint64_t> memory_bytes,
                                               const Catalog& catalog);

// PCIe one-direction bandwidth of a link: link_physics.hpp.
using linkwise::pcie_gbytes_per_s;

// `instance_id` (--instance) names the instance; throws not_found when the catalog lacks it.
Validation validate(const ProbeReport& report, const Catalog& catalog, std::optional<std::string> instance_id,
                    const Thresholds& thresholds = {});
nlohmann::json to_json(const Validation& validation);
nlohmann::json validate_json(const ProbeReport& report, const Catalog& catalog, std::optional<std::string> instance_id);

// ---------------------------------------------------------------------------------------------
// The fleet verdict: the catalog's claims for one instance type against every report of it.
// One rule for the REST service (GET /v1/instances/{id}/validation), `linkwise validate --fleet`
// and Python's linkwise.validate_fleet. Per claim, the verdict is the median report's share of the
// claim (measured / expected) against min_efficiency: "meets" at or above, "below" under,
// "cannot-check" when no report measured it.

// What a report's check leaves for the fleet: to_json(Validation) with "synthetic" added, the
// document the service stores beside each report at upload, so fleet reads parse no report again.
nlohmann::json stored_validation(const ProbeReport& report, const Validation& validation);

struct FleetClaim {
  ClaimVerdict claim;                          // the claim's fixed facts (claimed figure, units, threshold, expected)
  std::vector<double> measured;                // in claim.unit, one per report that measured it
  std::vector<double> shares;                  // measured / expected
  int meets = 0, below = 0, cannot_check = 0;  // the reports' own verdicts
  Verdict verdict = Verdict::cannot_check;     // the fleet's
};

struct FleetValidation {
  std::string instance_id;
  int reports = 0;            // counted in the verdict
  int synthetic_reports = 0;  // stored synthetic reports, counted only when included
  bool synthetic_included = false;
  std::vector<FleetClaim> claims;
};

// From stored validations (stored_validation's documents) of reports of `instance_id`; throws
// not_found naming "id" when the catalog lacks the instance. Synthetic reports count only with
// `include_synthetic`.
FleetValidation validate_fleet(const std::vector<nlohmann::json>& stored, const Catalog& catalog,
                               const std::string& instance_id, bool include_synthetic = false);
// From reports: each is validated for `instance_id` (or its detected instance; every report must
// then name the same one) and the stored rule applies. Throws invalid_input naming "instance" when
// reports name different instances or none.
FleetValidation validate_fleet(const std::vector<ProbeReport>& reports, const Catalog& catalog,
                               std::optional<std::string> instance_id, bool include_synthetic = false);
// {"instance", "reports", "synthetic_reports", "synthetic_included", "claims": [{"claim", "claimed",
// "claimed_unit", "claim_convention", "expected", "unit", "min_efficiency", "reports", "count",
// "median", "min", "max", "median_share_of_claim", "min_share_of_claim", "verdicts": {"meets",
// "below", "cannot-check"}, "verdict"}]}
nlohmann::ordered_json to_json(const FleetValidation& fleet);
bool any_below(const FleetValidation& fleet);

}  // namespace linkwise::probe
