// PCIe bandwidth per generation (link_physics.hpp says where each figure comes from).
#include "linkwise/link_physics.hpp"

#include <string>

#include "linkwise/error.hpp"

namespace linkwise {

namespace {

struct PcieGeneration {
  double gigatransfers_per_s;  // per lane
  double encoding;             // payload bits per line bit
};

// Index = generation - 1.
constexpr PcieGeneration kPcie[] = {
    {2.5, 8.0 / 10.0},     {5.0, 8.0 / 10.0},     {8.0, 128.0 / 130.0},
    {16.0, 128.0 / 130.0}, {32.0, 128.0 / 130.0}, {64.0, 242.0 / 256.0},
};

}  // namespace

double pcie_gbytes_per_s(int generation, int lanes) {
  if (generation < 1 || generation > int(std::size(kPcie))) {
    throw_invalid("pcie_gen", "expected a PCIe generation 1 to 6, got " + std::to_string(generation));
  }
  if (lanes < 1 || lanes > 32) {
    throw_invalid("pcie_width", "expected 1 to 32 lanes, got " + std::to_string(lanes));
  }
  const PcieGeneration& g = kPcie[generation - 1];
  return g.gigatransfers_per_s * g.encoding * lanes / 8.0;
}

}  // namespace linkwise
