// Hardware for planner tests: GPUs and nodes with published figures (NVIDIA A100 and H100
// datasheets: dense BF16 312 / 989 TFLOP/s, FP8 1979; HBM 2039 / 3350 GB/s; NVLink 600 / 900 GB/s
// per GPU, both directions; DGX A100 8 x 200 Gbit/s HDR, DGX H100 8 x 400 Gbit/s NDR InfiniBand).
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "linkwise/catalog.hpp"
#include "linkwise/planner/engine.hpp"
#include "linkwise/planner/workload.hpp"

namespace planner_test {

inline linkwise::Gpu a100_80() {
  linkwise::Gpu g;
  g.id = "A100-SXM4-80GB";
  g.vendor = "nvidia";
  g.architecture = linkwise::Architecture::ampere;
  g.memory_gb = 80;
  g.hbm_gbytes_per_s = 2039;
  g.bf16_dense_tflops = 312;
  g.fp16_dense_tflops = 312;
  g.nvlink_gbytes_per_s = 600;
  g.pcie_gen = 4;
  g.sources["gpu"] = {"https://www.nvidia.com/content/dam/en-zz/Solutions/Data-Center/a100/pdf/"
                      "nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf",
                      "2024-01-01", std::nullopt};
  return g;
}

inline linkwise::Gpu h100_80() {
  linkwise::Gpu g;
  g.id = "H100-SXM5-80GB";
  g.vendor = "nvidia";
  g.architecture = linkwise::Architecture::hopper;
  g.memory_gb = 80;
  g.hbm_gbytes_per_s = 3350;
  g.bf16_dense_tflops = 989;
  g.fp16_dense_tflops = 989;
  g.fp8_dense_tflops = 1979;
  g.nvlink_gbytes_per_s = 900;
  g.pcie_gen = 5;
  g.sources["gpu"] = {"https://resources.nvidia.com/en-us-tensor-core/nvidia-tensor-core-gpu-datasheet", "2024-01-01",
                      std::nullopt};
  return g;
}

// AMD Instinct MI300X (AMD's MI300X data sheet: 1307.4 dense BF16 TFLOP/s, 2614.9 FP8, 5.3 TB/s HBM3,
// 192 GB, Infinity Fabric 896 GB/s per GPU).
inline linkwise::Gpu mi300x() {
  linkwise::Gpu g;
  g.id = "MI300X";
  g.vendor = "amd";
  g.architecture = linkwise::Architecture::cdna3;
  g.memory_gb = 192;
  g.hbm_gbytes_per_s = 5300;
  g.bf16_dense_tflops = 1307.4;
  g.fp16_dense_tflops = 1307.4;
  g.fp8_dense_tflops = 2614.9;
  g.nvlink_gbytes_per_s = 896;
  g.pcie_gen = 5;
  g.sources["gpu"] = {"https://www.amd.com/content/dam/amd/en/documents/instinct-tech-docs/data-sheets/"
                      "amd-instinct-mi300x-data-sheet.pdf",
                      "2024-01-01", std::nullopt};
  return g;
}

// A node of `gpu`: 8 GPUs (1 with Fabric::none). `price` (USD/hour) and `network_gbits` are the
// test's inputs, not catalog data: tests use them to rank and to bound, never as published figures.
inline linkwise::Instance node(const linkwise::Gpu& gpu, std::string provider, std::string name,
                               linkwise::Fabric fabric, double network_gbits, double price) {
  linkwise::Instance in;
  in.provider = provider;
  in.name = name;
  in.id = provider + ":" + name;
  in.gpu_model = gpu.id;
  in.gpu_count = fabric == linkwise::Fabric::none ? 1 : 8;
  in.gpu_memory_gb = gpu.memory_gb;
  in.intra_node_fabric = fabric;
  if (fabric == linkwise::Fabric::nvswitch) in.nvlink_gbytes_per_s = gpu.nvlink_gbytes_per_s;
  in.network_type = linkwise::NetworkType::infiniband;
  if (network_gbits > 0) in.network_gbits_per_s = network_gbits;
  in.price_usd_per_hour = price;
  in.sources["interconnect"] = {"test fixture", "2026-11-30", std::nullopt};
  return in;
}

// A catalog of one GPU and one node of it (node()'s test figures).
inline linkwise::Catalog one_node_catalog(const linkwise::Gpu& gpu, std::string provider, std::string name,
                                          double network_gbits, double price) {
  return linkwise::Catalog({gpu}, {node(gpu, provider, name, linkwise::Fabric::nvswitch, network_gbits, price)});
}

// An inference job: `concurrent` sequences of prompt + output tokens.
inline linkwise::planner::Job inference(int prompt_len, int output_len, int concurrent) {
  linkwise::planner::Job job;
  job.kind = linkwise::planner::JobKind::inference;
  job.prompt_len = prompt_len;
  job.output_len = output_len;
  job.concurrent = concurrent;
  job.seq_len = prompt_len + output_len;
  return job;
}

inline linkwise::planner::Hardware dgx(const linkwise::Gpu& gpu, double network_gbits = 1600) {
  return {node(gpu, "custom", "dgx", linkwise::Fabric::nvswitch, network_gbits, 30.0), gpu, true};
}

// Whether one of a plan's warnings contains `words`.
inline bool warns_with(const nlohmann::json& plan, std::string_view words) {
  for (const nlohmann::json& w : plan["warnings"])
    if (w.get<std::string>().find(words) != std::string::npos) return true;
  return false;
}

}  // namespace planner_test
