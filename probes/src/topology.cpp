// topology: the GPUs, their links and versions, written into the report's environment.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <nccl.h>

#include <cstdio>
#include <fstream>

#include "cuda_util.hpp"
#include "linkwise/error.hpp"
#include "nvml.hpp"
#include "probe.hpp"
#include "probe_classes.hpp"

namespace linkwise::probe {

namespace {

std::optional<int> read_int_file(const std::string& path) {
  std::ifstream in(path);
  long value = 0;
  if (!(in >> value)) return std::nullopt;
  return static_cast<int>(value);
}

// "16.0 GT/s PCIe" -> 4; the generation from the per-lane rate in /sys.
std::optional<int> generation_from_speed(const std::string& path) {
  std::ifstream in(path);
  double gts = 0;
  if (!(in >> gts)) return std::nullopt;
  if (gts >= 60) return 6;
  if (gts >= 30) return 5;
  if (gts >= 15) return 4;
  if (gts >= 7) return 3;
  if (gts >= 4) return 2;
  if (gts >= 2) return 1;
  return std::nullopt;
}

std::string uuid_text(const cudaUUID_t& uuid) {
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[64];
  std::snprintf(text, sizeof text, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

std::string version_text(int code) {  // CUDA's 12040 -> "12.4"
  return std::to_string(code / 1000) + "." + std::to_string(code % 1000 / 10);
}

}  // namespace

std::vector<Result> Topology::run(RunContext& context) {
  Environment& env = *context.environment;
  const int count = cuda::device_count();  // filter() saw at least one
  Nvml nvml;
  int version = 0;
  if (nvml.available()) {
    env.driver_version = nvml.driver_version();
  } else if (cudaDriverGetVersion(&version) == cudaSuccess) {
    env.driver_version = "CUDA driver API " + version_text(version);
  }
  if (cudaRuntimeGetVersion(&version) == cudaSuccess) env.cuda_runtime_version = version_text(version);
  if (ncclGetVersion(&version) == ncclSuccess) {  // 22809 -> 2.28.9
    env.nccl_version = std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
                       std::to_string(version % 100);
  }

  env.gpus.clear();
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp prop{};
    LW_CUDA(cudaGetDeviceProperties(&prop, d));
    GpuInfo gpu;
    gpu.index = d;
    gpu.name = prop.name;
    gpu.uuid = uuid_text(prop.uuid);
    gpu.pci_bus_id = cuda::pci_bus_id(d);
    gpu.compute_capability = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    gpu.memory_bytes = prop.totalGlobalMem;
    gpu.l2_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
    gpu.sm_count = prop.multiProcessorCount;

    const std::string sys = "/sys/bus/pci/devices/" + *gpu.pci_bus_id + "/";
    if (auto numa = read_int_file(sys + "numa_node"); numa && *numa >= 0) gpu.numa_node = numa;
    gpu.pcie_link_gen = generation_from_speed(sys + "current_link_speed");
    gpu.pcie_link_width = read_int_file(sys + "current_link_width");
    gpu.pcie_max_link_gen = generation_from_speed(sys + "max_link_speed");
    gpu.pcie_max_link_width = read_int_file(sys + "max_link_width");

    const NvmlDeviceFacts facts = nvml.device(*gpu.pci_bus_id);
    gpu.sm_clock_mhz = facts.sm_clock_mhz;
    gpu.memory_clock_mhz = facts.memory_clock_mhz;
    gpu.power_limit_w = facts.power_limit_w;
    gpu.ecc_enabled = facts.ecc_enabled;
    gpu.nvlink_active_links = facts.nvlink_active_links;
    if (!gpu.pcie_link_gen) gpu.pcie_link_gen = facts.pcie_link_gen;
    if (!gpu.pcie_link_width) gpu.pcie_link_width = facts.pcie_link_width;
    if (!gpu.pcie_max_link_gen) gpu.pcie_max_link_gen = facts.pcie_max_link_gen;
    if (!gpu.pcie_max_link_width) gpu.pcie_max_link_width = facts.pcie_max_link_width;
    if (!gpu.sm_clock_mhz) {
      int khz = 0;
      if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, d) == cudaSuccess) gpu.sm_clock_mhz = khz / 1e3;
    }
    if (!gpu.memory_clock_mhz) {
      int khz = 0;
      if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, d) == cudaSuccess) gpu.memory_clock_mhz = khz / 1e3;
    }
    if (!gpu.ecc_enabled) gpu.ecc_enabled = prop.ECCEnabled != 0;
    env.gpus.push_back(gpu);
    context.say("topology: GPU " + std::to_string(d) + " " + gpu.name + " at " + *gpu.pci_bus_id);
  }

  std::vector<std::vector<bool>> access(count, std::vector<bool>(count, false));
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < count; ++j) {
      int can = 0;
      if (i != j && cudaDeviceCanAccessPeer(&can, i, j) == cudaSuccess) access[i][j] = can != 0;
    }
  }
  env.p2p_access = access;
  return {};  // the topology is the environment; no measurement
}

int count_gpus(std::string& why_none) {
  int count = 0;
  const cudaError_t code = cudaGetDeviceCount(&count);
  if (code == cudaSuccess && count > 0) return count;
  if (code == cudaSuccess) {
    why_none = "cudaGetDeviceCount returned 0 devices";
  } else if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); !driver) {
    why_none = "no NVIDIA driver: libcuda.so.1 is not installed";  // CUDA would say "driver too old"
  } else {
    dlclose(driver);
    why_none = "cudaGetDeviceCount: " + cuda::error_text(code);
  }
  return 0;
}

}  // namespace linkwise::probe
