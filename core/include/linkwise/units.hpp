// One source of truth for units. Names carry their unit everywhere in linkwise:
//   *_gb            10^9 bytes              *_gib           2^30 bytes
//   *_gbytes_per_s  10^9 bytes per second   *_gbits_per_s   10^9 bits per second
//   *_tflops        10^12 FLOP per second   *_s / *_hours   seconds / hours
// GPU memory sizes in the catalog are the vendor's nominal figure ("80 GB"); HBM and GDDR
// capacities are binary, so an "80 GB" H100 holds 80 GiB = 85.9 GB. gpu_capacity_bytes() is the
// only place that conversion happens.
#pragma once

namespace linkwise::units {

inline constexpr double kBytesPerGB = 1e9;
inline constexpr double kBytesPerGiB = 1073741824.0;
inline constexpr double kFlopsPerTflop = 1e12;
inline constexpr double kSecondsPerHour = 3600.0;

constexpr double gb_to_bytes(double gb) { return gb * kBytesPerGB; }
constexpr double bytes_to_gb(double bytes) { return bytes / kBytesPerGB; }
constexpr double gib_to_bytes(double gib) { return gib * kBytesPerGiB; }
constexpr double bytes_to_gib(double bytes) { return bytes / kBytesPerGiB; }
constexpr double gib_to_gb(double gib) { return gib * kBytesPerGiB / kBytesPerGB; }

// Network links are quoted in bits, memory and NVLink in bytes.
constexpr double gbits_to_gbytes(double gbits) { return gbits / 8.0; }
constexpr double gbytes_to_gbits(double gbytes) { return gbytes * 8.0; }

// A GPU's nominal memory ("80 GB" on the spec sheet) is binary: this many bytes exist on the card.
constexpr double gpu_capacity_bytes(double nominal_memory_gb) { return gib_to_bytes(nominal_memory_gb); }

}  // namespace linkwise::units
