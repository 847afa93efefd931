// Statistics over a result's samples, and the collective bandwidth formulas of nccl-tests.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "linkwise/enum_names.hpp"
#include "linkwise/error.hpp"
#include "linkwise/probe_report.hpp"

namespace linkwise::probe {

namespace {

// Percentile of sorted values with linear interpolation between closest ranks (numpy's default):
// position p/100 * (n - 1).
double percentile_of_sorted(const std::vector<double>& sorted, double p) {
  const double position = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(position));
  const auto upper = std::min(lower + 1, sorted.size() - 1);
  const double fraction = position - static_cast<double>(lower);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction;
}

}  // namespace

Stats compute_stats(std::span<const double> samples, std::string_view field) {
  if (samples.empty()) {
    throw_invalid(std::string(field), "expected at least one sample, got none");
  }
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (!std::isfinite(samples[i])) {
      throw_invalid(std::string(field) + "[" + std::to_string(i) + "]",
                    "expected a finite number, got " + std::to_string(samples[i]));
    }
  }
  std::vector<double> sorted(samples.begin(), samples.end());
  std::sort(sorted.begin(), sorted.end());

  Stats stats;
  stats.count = static_cast<int>(sorted.size());
  stats.min = sorted.front();
  stats.max = sorted.back();
  stats.median = percentile_of_sorted(sorted, 50.0);
  stats.p5 = percentile_of_sorted(sorted, 5.0);
  stats.p95 = percentile_of_sorted(sorted, 95.0);
  stats.mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
  if (sorted.size() > 1) {
    double squares = 0;
    for (double value : sorted) squares += (value - stats.mean) * (value - stats.mean);
    stats.stddev = std::sqrt(squares / static_cast<double>(sorted.size() - 1));
  }
  stats.spread = stats.median != 0 ? (stats.max - stats.min) / stats.median : 0.0;
  return stats;
}

namespace {

constexpr EnumNames<Collective, 7> kCollectiveNames{{
    {Collective::all_reduce, "all-reduce"},
    {Collective::all_gather, "all-gather"},
    {Collective::reduce_scatter, "reduce-scatter"},
    {Collective::all_to_all, "all-to-all"},
    {Collective::broadcast, "broadcast"},
    {Collective::reduce, "reduce"},
    {Collective::send_recv, "send-recv"},
}};

}  // namespace

std::string_view to_string(Collective collective) noexcept { return enum_name(kCollectiveNames, collective); }

Collective parse_collective(std::string_view text, std::string_view field) {
  return parse_enum(kCollectiveNames, text, field);
}

double busbw_factor(Collective collective, int ranks) {
  if (ranks < 1) throw_invalid("ranks", "expected at least 1 rank, got " + std::to_string(ranks));
  return bus_factor(collective, ranks);
}

double algbw_gbytes_per_s(double bytes, double seconds) {
  if (!(seconds > 0)) throw_invalid("seconds", "expected a positive time, got " + std::to_string(seconds));
  if (!(bytes >= 0)) throw_invalid("bytes", "expected a byte count >= 0, got " + std::to_string(bytes));
  return bytes / seconds / 1e9;
}

double busbw_gbytes_per_s(Collective collective, int ranks, double bytes, double seconds) {
  return algbw_gbytes_per_s(bytes, seconds) * busbw_factor(collective, ranks);
}

}  // namespace linkwise::probe
