// mpi-host-bandwidth: host memory between MPI ranks, no GPU. Rank 0 pairs with every other rank
// in turn (one rank per node measures node 0 against each node); the others wait at a barrier.
//   ping-pong:      0 sends, r returns; one direction at a time: 2 x size / round trip (one-direction)
//   bidirectional:  both MPI_Sendrecv at once: 2 x size / time (both-directions-added)
//   latency:        8-byte ping-pong, half the round trip, in microseconds
#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "mpi_session.hpp"
#include "probe.hpp"
#include "probe_classes.hpp"

namespace linkwise::probe {

namespace {

constexpr int kTag = 7;

// How many round trips make one sample: enough bytes (~64 MiB) that the clock is not the limit.
int iterations_for(std::size_t bytes) {
  return static_cast<int>(std::clamp<std::size_t>((64u << 20) / std::max<std::size_t>(bytes, 1), 4, 1000));
}

// Both ranks of the pair start together: a zero-byte exchange.
void sync_pair(int other) {
  char none = 0;
  MPI_Sendrecv(&none, 0, MPI_BYTE, other, kTag + 1, &none, 0, MPI_BYTE, other, kTag + 1, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
}

// Seconds for `iterations` round trips; rank 0 leads, its partner answers.
double ping_pong(std::vector<char>& send, std::vector<char>& receive, std::size_t bytes, int iterations, int other) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int count = static_cast<int>(bytes);
  sync_pair(other);
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    if (rank == 0) {
      MPI_Send(send.data(), count, MPI_BYTE, other, kTag, MPI_COMM_WORLD);
      MPI_Recv(receive.data(), count, MPI_BYTE, other, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(receive.data(), count, MPI_BYTE, other, kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(send.data(), count, MPI_BYTE, other, kTag, MPI_COMM_WORLD);
    }
  }
  return MPI_Wtime() - start;
}

// Seconds for `iterations` simultaneous exchanges of `bytes` each way.
double exchange(std::vector<char>& send, std::vector<char>& receive, std::size_t bytes, int iterations, int other) {
  const int count = static_cast<int>(bytes);
  sync_pair(other);
  const double start = MPI_Wtime();
  for (int i = 0; i < iterations; ++i) {
    MPI_Sendrecv(send.data(), count, MPI_BYTE, other, kTag, receive.data(), count, MPI_BYTE, other, kTag,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  return MPI_Wtime() - start;
}

}  // namespace

// filter() saw an MPI world of at least 2 ranks.
std::vector<Result> MpiHostBandwidth::run(RunContext& context) {
  const MpiSession& mpi = *context.mpi;
  const std::vector<std::size_t> sizes =
      context.quick ? std::vector<std::size_t>{64u << 10, 1u << 20, 16u << 20}
                    : std::vector<std::size_t>{4u << 10, 64u << 10, 1u << 20, 4u << 20, 16u << 20, 64u << 20};
  const int samples = context.quick ? 5 : 20;
  std::vector<char> send(sizes.back(), 1), receive(sizes.back(), 0);

  std::vector<Result> results;
  for (int peer = 1; peer < mpi.size(); ++peer) {
    const bool in_pair = mpi.rank() == 0 || mpi.rank() == peer;
    const int other = mpi.rank() == 0 ? peer : 0;
    const std::string pair = "0-" + std::to_string(peer);
    const bool same_node = mpi.hostnames()[0] == mpi.hostnames()[peer];
    const std::map<std::string, std::string> base{{"pair", pair}, {"same_node", same_node ? "true" : "false"}};
    if (mpi.rank() == 0) context.say("mpi-host-bandwidth: ranks " + pair + (same_node ? " (same host)" : ""));
    if (in_pair) {
      for (std::size_t bytes : sizes) {
        const int iterations = iterations_for(bytes);
        std::vector<double> one_way, both_ways;
        for (int s = -1; s < samples; ++s) {  // s = -1: warm-up
          const double pp = ping_pong(send, receive, bytes, iterations, other);
          const double bi = exchange(send, receive, bytes, iterations, other);
          if (s < 0) continue;
          const double moved_bytes = 2.0 * static_cast<double>(bytes) * iterations;
          one_way.push_back(moved_bytes / pp / 1e9);
          both_ways.push_back(moved_bytes / bi / 1e9);
        }
        if (mpi.rank() != 0) continue;
        auto labels = base;
        labels["direction"] = "unidirectional";
        results.push_back(Result::make(std::string(metric::mpi_bandwidth), Unit::gbytes_per_s, Counting::one_direction,
                                       bytes, labels, one_way));
        labels["direction"] = "bidirectional";
        results.push_back(Result::make(std::string(metric::mpi_bandwidth), Unit::gbytes_per_s,
                                       Counting::both_directions_added, bytes, labels, both_ways));
      }
      std::vector<double> latency;
      for (int s = -1; s < samples; ++s) {
        const int round_trips = 1000;
        const double t = ping_pong(send, receive, 8, round_trips, other);
        if (s >= 0) latency.push_back(t / round_trips / 2.0 * 1e6);
      }
      if (mpi.rank() == 0) {
        results.push_back(
            Result::make(std::string(metric::mpi_latency), Unit::microseconds, std::nullopt, 8, base, latency));
      }
    }
    mpi.barrier();
  }
  return results;
}

}  // namespace linkwise::probe
