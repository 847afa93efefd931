// The host part of a report's environment: when, where, and whether the machine is virtual.
// Needs no CUDA, so the host-only MPI test writes it too.
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "probe.hpp"

#ifndef LINKWISE_VERSION
#define LINKWISE_VERSION "unknown"
#endif

namespace linkwise::probe {

namespace {

std::optional<std::string> read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  while (!line.empty() && (line.back() == ' ' || line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (line.empty()) return std::nullopt;
  return line;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

// CPUID leaf 1, ECX bit 31 is set by every mainstream hypervisor; leaf 0x40000000 names it.
void detect_hypervisor(Environment& env) {
#if defined(__x86_64__) || defined(__i386__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return;
  const bool hypervisor = (ecx >> 31) & 1u;
  env.virtual_machine = hypervisor;
  if (!hypervisor) return;
  __cpuid(0x40000000, eax, ebx, ecx, edx);
  char vendor[13] = {};
  std::memcpy(vendor + 0, &ebx, 4);
  std::memcpy(vendor + 4, &ecx, 4);
  std::memcpy(vendor + 8, &edx, 4);
  std::string name(vendor);
  if (name == "KVMKVMKVM") name = "KVM";
  else if (name == "Microsoft Hv") name = "Hyper-V";
  else if (name == "VMwareVMware") name = "VMware";
  else if (name == "XenVMMXenVMM") name = "Xen";
  if (!name.empty()) env.hypervisor = name;
#else
  (void)env;
#endif
}

// DMI names the cloud on the big providers; AWS also writes the instance type.
void detect_cloud(Environment& env) {
  const std::string dmi = "/sys/class/dmi/id/";
  env.dmi_sys_vendor = read_line(dmi + "sys_vendor");
  env.dmi_product_name = read_line(dmi + "product_name");
  const auto asset_tag = read_line(dmi + "chassis_asset_tag");
  const std::string vendor = env.dmi_sys_vendor.value_or("");
  if (vendor == "Amazon EC2") {
    env.cloud_provider = "aws";
    env.cloud_instance_type = env.dmi_product_name;  // "p4d.24xlarge"
  } else if (vendor == "Google") {
    env.cloud_provider = "gcp";  // the machine type is only in the metadata server
  } else if (asset_tag && *asset_tag == "7783-7084-3265-9085-8269-3286-77") {
    env.cloud_provider = "azure";  // Azure's fixed chassis asset tag
  } else if (asset_tag && *asset_tag == "OracleCloud.com") {
    env.cloud_provider = "oci";
  }
}

}  // namespace

void fill_host_environment(Environment& env) {
  env.created_at = utc_now();
  char host[256] = {};
  env.hostname = gethostname(host, sizeof host - 1) == 0 ? host : "unknown";
  env.linkwise_version = LINKWISE_VERSION;
  detect_hypervisor(env);
  detect_cloud(env);
}

}  // namespace linkwise::probe
