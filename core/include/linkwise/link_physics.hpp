// Link physics, written once: the bus-bandwidth factors of the collectives (the planner's time
// model and the probe statistics both use them) and PCIe bandwidth per generation (the planner's
// PCIe nodes and validate's PCIe claim).
#pragma once

namespace linkwise {

// The collectives as nccl-tests names them (PERFORMANCE.md).
enum class Collective { all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send_recv };

// busbw = algbw x factor, the per-rank link bandwidth the ring algorithm needs, comparable to the
// hardware's one-direction bandwidth (nccl-tests, doc/PERFORMANCE.md): all-reduce 2(n-1)/n;
// all-gather, reduce-scatter, all-to-all (n-1)/n; broadcast, reduce, send-recv 1. Equivalently,
// a ring collective of `bytes` per rank takes factor x bytes / busbw. `ranks` >= 1 (not checked:
// probe::busbw_factor checks what a report says).
constexpr double bus_factor(Collective collective, double ranks) noexcept {
  switch (collective) {
    case Collective::all_reduce: return 2.0 * (ranks - 1.0) / ranks;
    case Collective::all_gather:
    case Collective::reduce_scatter:
    case Collective::all_to_all: return (ranks - 1.0) / ranks;
    case Collective::broadcast:
    case Collective::reduce:
    case Collective::send_recv: return 1.0;
  }
  return 1.0;
}

// PCIe one-direction bandwidth of a link, GB/s: the generation's transfer rate x lanes x the line
// encoding's efficiency / 8 (PCI-SIG base specifications 1.0a-6.0): gen 1-2 8b/10b (2.5, 5 GT/s:
// 4.0 and 8.0 GB/s at x16); gen 3-5 128b/130b (8, 16, 32 GT/s: 15.75, 31.5, 63.0 GB/s at x16);
// gen 6 64 GT/s PAM4 in FLIT mode, 242 of each 256-byte flit carrying TLP/DLLP bytes (121 GB/s at
// x16). Throws invalid_input naming "pcie_gen" for a generation outside 1-6 and "pcie_width" for
// lanes outside 1-32.
double pcie_gbytes_per_s(int generation, int lanes);

}  // namespace linkwise
