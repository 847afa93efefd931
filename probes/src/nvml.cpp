#include "nvml.hpp"

#include <dlfcn.h>

namespace linkwise::probe {

namespace {

// The few NVML entry points used, declared from NVML's public API (nvml.h is not needed).
using nvmlReturn = int;  // NVML_SUCCESS == 0
using nvmlDevice = void*;
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2;
constexpr unsigned kNvmlMaxNvLinks = 18;

template <typename F>
F symbol(void* library, const char* name) {
  return library ? reinterpret_cast<F>(dlsym(library, name)) : nullptr;
}

}  // namespace

Nvml::Nvml() {
  library_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  auto init = symbol<nvmlReturn (*)()>(library_, "nvmlInit_v2");
  initialised_ = init && init() == 0;
}

Nvml::~Nvml() {
  if (initialised_) {
    if (auto shutdown = symbol<nvmlReturn (*)()>(library_, "nvmlShutdown")) shutdown();
  }
  if (library_) dlclose(library_);
}

std::optional<std::string> Nvml::driver_version() const {
  auto get = symbol<nvmlReturn (*)(char*, unsigned)>(library_, "nvmlSystemGetDriverVersion");
  char text[96] = {};
  if (!initialised_ || !get || get(text, sizeof text) != 0) return std::nullopt;
  return std::string(text);
}

NvmlDeviceFacts Nvml::device(const std::string& pci_bus_id) const {
  NvmlDeviceFacts facts;
  auto by_bus = symbol<nvmlReturn (*)(const char*, nvmlDevice*)>(library_, "nvmlDeviceGetHandleByPciBusId_v2");
  nvmlDevice device = nullptr;
  if (!initialised_ || !by_bus || by_bus(pci_bus_id.c_str(), &device) != 0) return facts;

  unsigned value = 0;
  if (auto clock = symbol<nvmlReturn (*)(nvmlDevice, int, unsigned*)>(library_, "nvmlDeviceGetMaxClockInfo")) {
    if (clock(device, kNvmlClockSm, &value) == 0) facts.sm_clock_mhz = value;
    if (clock(device, kNvmlClockMem, &value) == 0) facts.memory_clock_mhz = value;
  }
  if (auto power = symbol<nvmlReturn (*)(nvmlDevice, unsigned*)>(library_, "nvmlDeviceGetEnforcedPowerLimit")) {
    if (power(device, &value) == 0) facts.power_limit_w = value / 1000.0;  // milliwatts
  }
  if (auto ecc = symbol<nvmlReturn (*)(nvmlDevice, int*, int*)>(library_, "nvmlDeviceGetEccMode")) {
    int current = 0, pending = 0;
    if (ecc(device, &current, &pending) == 0) facts.ecc_enabled = current != 0;
  }
  auto read_int = [&](const char* name, std::optional<int>& out) {
    if (auto get = symbol<nvmlReturn (*)(nvmlDevice, unsigned*)>(library_, name)) {
      if (get(device, &value) == 0) out = static_cast<int>(value);
    }
  };
  read_int("nvmlDeviceGetCurrPcieLinkGeneration", facts.pcie_link_gen);
  read_int("nvmlDeviceGetCurrPcieLinkWidth", facts.pcie_link_width);
  read_int("nvmlDeviceGetMaxPcieLinkGeneration", facts.pcie_max_link_gen);
  read_int("nvmlDeviceGetMaxPcieLinkWidth", facts.pcie_max_link_width);
  if (auto state = symbol<nvmlReturn (*)(nvmlDevice, unsigned, int*)>(library_, "nvmlDeviceGetNvLinkState")) {
    int active = 0;
    bool any_answer = false;
    for (unsigned link = 0; link < kNvmlMaxNvLinks; ++link) {
      int is_active = 0;
      if (state(device, link, &is_active) == 0) {
        any_answer = true;
        active += is_active != 0;
      }
    }
    facts.nvlink_active_links = any_answer ? active : 0;
  }
  return facts;
}

}  // namespace linkwise::probe
