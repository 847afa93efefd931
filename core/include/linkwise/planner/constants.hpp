// Every tunable number of the planner's memory and time models in one place. The defaults
// (default_constants(), core/src/planner/constants.cpp) cite where each comes from: a published
// reference, or the calibration fit on the published runs in tests/calibration/ (DATA.md).
#pragma once

namespace linkwise::planner {

struct PlannerConstants {
  // --- memory ---
  double capacity_reserve_gb = 0;  // subtracted from the card's capacity: driver/ECC reserve nvidia-smi never offers
  // CUDA context, kernel images, cuBLAS/cuDNN workspaces per process, by generation (what nvidia-smi
  // shows before the first tensor)
  double cuda_context_gb_volta = 0, cuda_context_gb_ampere = 0, cuda_context_gb_hopper = 0, cuda_context_gb_other = 0;
  double nccl_gb_per_communicator = 0;    // NCCL channel buffers of one communicator at Ampere's channel count
  double allocator_dynamic_fraction = 0;  // caching-allocator reserve over short-lived tensors (activations, logits)
  double allocator_static_fraction = 0;   // ... over long-lived ones (weights, gradients, optimizer states)
  double memory_error_band = 0;  // how far a measured peak may exceed the prediction (p90 on the check set): `tight`

  // --- compute (GEMM roofline with shape-dependent terms) ---
  double gemm_efficiency_ampere = 0;  // achievable fraction of dense peak for large 16-bit GEMMs
  double gemm_efficiency_hopper = 0;
  double gemm_efficiency_other = 0;      // generations without calibration data
  double gemm_efficiency_cdna = 0;       // AMD Instinct (CDNA 3/4): fit on AMD's published runs (--fit-cdna)
  double gemm_efficiency_blackwell = 0;  // Blackwell (B200, B300, GB200, GB300): fit on its own set (--fit-blackwell)
  // GB300's 16-bit and FP8 tensor-core work (GEMMs, attention) relative to the Blackwell fit: it runs
  // the same jobs as GB200 faster at the same datasheet peaks (1,400 W vs 1,200 W). Fit on
  // GB300/GB200 pairs (--fit-gb300; gb300_tensor_ratio applies it); 1 leaves GB300 as Blackwell's fit.
  double gemm_efficiency_ratio_gb300 = 1;
  double fp8_gemm_efficiency_ratio = 0;  // fp8 GEMM efficiency relative to 16-bit, same generation
  // ... on AMD Instinct, by generation (hipBLASLt's FP8 GEMMs): fit with gemm_efficiency_cdna (--fit-cdna)
  double fp8_gemm_efficiency_ratio_cdna3 = 0, fp8_gemm_efficiency_ratio_cdna4 = 0;
  double attention_efficiency_ampere = 0;  // FlashAttention forward+backward, fraction of 16-bit dense peak
  double attention_efficiency_hopper = 0;  // (FlashAttention-2 does not use Hopper's wgmma/TMA: lower)
  double attention_efficiency_other = 0;
  double fp8_cast_passes = 0;  // fp8: casts of each GEMM input (read 16-bit, write 8-bit) per token
  double fp8_gemm_overhead_s =
      0;                      // fp8: fixed cost per linear GEMM per pass (amax reduction, scale update, cast launches)
  double hbm_efficiency = 0;  // achievable fraction of HBM peak (claimed)
  double elementwise_passes = 0;  // memory passes of norm/activation/rotary/residual per token per layer
  double layer_overhead_s = 0;    // fixed per-layer per-pass time (kernel launches, syncs)

  // --- links: achievable fraction of the claimed bandwidth for NCCL collectives (busbw) ---
  double nvswitch_busbw_fraction = 0;
  double nvlink_busbw_fraction = 0;  // point-to-point NVLink meshes and bridges
  double infinity_fabric_busbw_fraction = 0;
  double pcie_busbw_fraction = 0;
  double p2p_fraction = 0;  // one-direction copy over NVLink/PCIe
  double infiniband_fraction = 0;
  double efa_fraction = 0;
  double roce_fraction = 0;
  double tcpxo_fraction = 0;
  double tcpx_fraction = 0;
  double ethernet_fraction = 0;
  double latency_intra_s = 0;  // per collective inside a node (NVLink/NVSwitch)
  double latency_pcie_s = 0;   // per collective over PCIe
  double latency_inter_s = 0;  // per collective between nodes
  // NCCL's latency model for scale effects (collectives.cpp, NCCL src/graph/tuning.cc): base
  // latency of a collective, latency per ring step on NVLink and on the network, per tree level,
  // the tree's bandwidth relative to the ring's, the per-rank chunk at which a ring step reaches
  // half its bandwidth, and the gradient bucket of DDP / ZeRO-1/2 reductions.
  double nccl_base_latency_s = 0;
  double nccl_hop_latency_nvlink_s = 0;
  double nccl_hop_latency_net_s = 0;
  double nccl_tree_hop_latency_nvlink_s = 0;
  double nccl_tree_hop_latency_net_s = 0;
  double nccl_tree_bandwidth_fraction = 1;
  double nccl_half_bandwidth_bytes = 0;
  double grad_bucket_params = 0;

  // --- CPU offload's optimizer step, on the host ---
  double cpu_adam_params_per_s = 0;     // DeepSpeed CPU-Adam updates per second on the reference host
  double cpu_adam_reference_vcpus = 0;  // that host's hardware threads (a host with fewer gets its share)

  // --- overlap the frameworks achieve ---
  double dp_overlap = 0;     // fraction of the last micro-batch's backward that hides the gradient reduction
  double zero3_overlap = 0;  // fraction of each micro-batch's compute that hides ZeRO-3 gathers
  double cp_overlap = 0;     // fraction of attention compute that hides context-parallel ring exchanges

  // --- mixture-of-experts ---
  double moe_load_imbalance = 1;    // busiest expert-parallel rank's routed tokens over the mean (no capacity factor)
  double moe_permute_passes = 0;    // memory passes over the routed rows (permute, unpermute, gather of probs)
  double moe_gemm_half_dim = 0;     // grouped expert GEMMs (training): the smallest GEMM dimension (rows per expert,
                                    // expert width, hidden) at which they reach half the dense GEMM ceiling
  double moe_layer_overhead_s = 0;  // host time per MoE layer per pass per micro-batch (router top-k, permute
                                    // index kernels, dispatcher and its host sync), training; exposed in part:
  double moe_host_hide_s = 0;       // GPU time of a MoE layer's pass at which half of that host time hides
                                    // behind it (0: never hidden)
  // Serving only (inference jobs): time per routed token row on the busiest expert-parallel rank per
  // MoE layer in every engine step, prefill and decode, beyond the GEMMs, permutation bytes and
  // all-to-all priced above (router top-k, the routed rows' activation quantisation, gather and
  // the combine's weighted sum as a serving engine runs them); fit on the MoE serving fit set.
  double moe_serving_routed_row_s = 0;
  // Serving only: time per MoE layer per engine step where the experts are spread over ranks (ep > 1;
  // attention data parallelism): every rank waits at the layer's exchange for the slowest one (its
  // own batch, context lengths and prefill chunk) and pays the exchange's fixed cost beyond the
  // collective's latency; fit on the MoE serving fit set.
  double moe_serving_ep_layer_sync_s = 0;
  // --- framework profiles (job.framework) ---
  double te_attention_speedup = 0;  // Megatron-Core / NeMo on Hopper+: cuDNN fused attention vs FlashAttention-2
  // Eager PyTorch (fsdp, torchtitan, hf-accelerate without job.torch_compile) on Llama-family
  // blocks (RMSNorm, RoPE, SwiGLU): HBM bytes per element per token beyond what the fused kernels
  // of the fit's runs (MosaicML MPT: fused LayerNorm, GELU, ALiBi) move, forward; backward twice.
  double eager_rmsnorm_extra_bytes_per_element = 0;  // per norm, per hidden element
  double eager_rope_extra_bytes_per_element = 0;     // per Q and K element
  double eager_swiglu_extra_bytes_per_element = 0;   // per ffn element
  // DeepSpeed's pipeline engine (job.framework deepspeed with pp > 1, as Megatron-DeepSpeed ran it):
  // time per transformer layer per pass (forward, backward, recomputed forward) per micro-batch
  // beyond the GPU work priced above, whatever the layer's width or TP; fit on its own set (--fit-deepspeed).
  double deepspeed_pipeline_layer_overhead_s = 0;
};

const PlannerConstants& default_constants();

// Sets the `_other` efficiencies, those of the generations without calibration data (Volta, Ada;
// Blackwell's attention), to the mean of Ampere's and Hopper's; default_constants() and the
// calibration fit both use it.
void derive_uncalibrated_efficiencies(PlannerConstants& k) noexcept;

}  // namespace linkwise::planner
