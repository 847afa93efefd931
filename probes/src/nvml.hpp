// NVML, loaded at run time with dlopen("libnvidia-ml.so.1") when the driver provides it: clocks,
// power limit, ECC, PCIe link and NVLink state. linkwise neither links nor needs it.
#pragma once

#include <optional>
#include <string>

namespace linkwise::probe {

struct NvmlDeviceFacts {
  std::optional<double> sm_clock_mhz, memory_clock_mhz, power_limit_w;
  std::optional<bool> ecc_enabled;
  std::optional<int> pcie_link_gen, pcie_link_width, pcie_max_link_gen, pcie_max_link_width;
  std::optional<int> nvlink_active_links;
};

class Nvml {
 public:
  Nvml();  // loads and initialises NVML; available() is false when it is not there
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  bool available() const { return initialised_; }
  std::optional<std::string> driver_version() const;
  NvmlDeviceFacts device(const std::string& pci_bus_id) const;  // empty facts when unknown

 private:
  void* library_ = nullptr;
  bool initialised_ = false;
};

}  // namespace linkwise::probe
