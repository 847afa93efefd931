// The planner's constants, with where each comes from. "Fit" values are set by the calibration
// fit (tests/calibration/calibrate.cpp on /work/shared/calibration/training_runs.json, MosaicML
// llm-foundry groups only; NeMo 24.07 and Megatron-LM v1 runs are held out): rerun
// `build/bin/linkwise_calibrate --fit` after changing a model and paste its output here.
#include "linkwise/planner/constants.hpp"

namespace linkwise::planner {

const PlannerConstants& default_constants() {
  static const PlannerConstants k = [] {
    PlannerConstants c;
    // Memory. CUDA context, cuBLAS and NCCL workspaces take about 0.5-1 GiB per process before any
    // tensor (PyTorch CUDA semantics notes); we reserve 1 GB of the card.
    c.capacity_reserve_gb = 1.0;
    // Allowance on top of tensors: NCCL buffers and allocator slack; 2 GB plus 5% reproduces
    // Megatron-LM PR 482's measured peaks within a few GB (tests/core/test_planner_memory.cpp).
    c.overhead_fixed_gb = 2.0;
    c.overhead_fraction = 0.05;

    // Compute (fit).
    c.gemm_efficiency_ampere = 0.80;
    c.gemm_efficiency_hopper = 0.70;
    c.gemm_efficiency_other = 0.70;
    c.fp8_gemm_efficiency_ratio = 0.75;
    c.attention_efficiency = 0.45;
    c.hbm_efficiency = 0.80;  // STREAM-like copies reach ~80-90% of HBM peak
    c.elementwise_passes = 12.0;
    c.layer_overhead_s = 20e-6;

    // Links: nccl-tests all-reduce busbw as a fraction of the per-direction link rate. NVSwitch
    // systems reach ~0.8 (DGX A100 ~230 of 300 GB/s, DGX H100 ~360-480 of 450 GB/s with NVLS);
    // PCIe boxes through the host bridge far less.
    c.nvswitch_busbw_fraction = 0.80;
    c.nvlink_busbw_fraction = 0.60;
    c.infinity_fabric_busbw_fraction = 0.70;
    c.pcie_busbw_fraction = 0.40;
    c.p2p_fraction = 0.85;
    c.infiniband_fraction = 0.90;
    c.efa_fraction = 0.80;
    c.roce_fraction = 0.85;
    c.tcpxo_fraction = 0.80;
    c.tcpx_fraction = 0.65;
    c.ethernet_fraction = 0.40;
    c.latency_intra_s = 10e-6;
    c.latency_pcie_s = 25e-6;
    c.latency_inter_s = 30e-6;

    // Overlap (fit where the data constrains it).
    c.dp_overlap = 0.8;
    c.zero3_overlap = 0.8;
    c.tp_overlap = 0.0;  // Megatron runs TP collectives on the critical path by default
    c.cp_overlap = 0.8;
    return c;
  }();
  return k;
}

}  // namespace linkwise::planner
