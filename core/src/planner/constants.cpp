// The planner's constants, with where each comes from. The compute constants are set by the
// calibration fit (tests/calibration/calibrate.cpp on tests/calibration/training_runs.json, see
// README "Planner" / "Calibration"): rerun `build/bin/linkwise_calibrate --fit` after changing the
// time model and paste its output here.
#include "linkwise/planner/constants.hpp"

namespace linkwise::planner {

void derive_uncalibrated_efficiencies(PlannerConstants& k) noexcept {
  k.gemm_efficiency_other = 0.5 * (k.gemm_efficiency_ampere + k.gemm_efficiency_hopper);
  k.attention_efficiency_other = 0.5 * (k.attention_efficiency_ampere + k.attention_efficiency_hopper);
}

const PlannerConstants& default_constants() {
  static const PlannerConstants k = [] {
    PlannerConstants c;
    // Memory (framework_memory.cpp). The card keeps ~0.5 GB nvidia-smi never offers (an "80 GB"
    // A100 shows 81920 MiB total, ~81000 usable). CUDA context, kernels and library workspaces, as
    // nvidia-smi shows them before the first tensor: 1271 MiB on V100-32GB and 1573 MiB on
    // A100-40GB (BigScience tr11-176B-ml chronicles-prequel.md); Hopper with CUDA 12's lazy module
    // loading and cuBLAS/cuDNN workspaces is taken as Ampere's (no published figure found).
    c.capacity_reserve_gb = 0.5;
    c.cuda_context_gb_volta = 1.33;
    c.cuda_context_gb_ampere = 1.65;
    c.cuda_context_gb_hopper = 1.65;
    c.cuda_context_gb_other = 1.65;
    // Fit by `linkwise_calibrate --fit-memory` on the memory fit set (tests/calibration/memory_runs.json,
    // set "fit"); checked on its "check" rows and the torchtitan peaks of check_runs.json.
    c.nccl_gb_per_communicator = 0.35;
    c.allocator_dynamic_fraction = 0.25;
    c.allocator_static_fraction = 0.03;
    // `tight`'s band: how far a measured peak may sit above the prediction, the p90 over the memory
    // check set (rows never fitted: BigScience tr11 check rows, litgpt LoRA/QLoRA, torchtitan peaks,
    // full fine-tunes of tests/calibration/memory_workload_runs.json) of measured / predicted - 1 (0
    // where the prediction is higher), 0.271 over 100 rows, rounded up to the whole percent. The fit
    // set's p90 (0.079) is small by construction. ctest planner_calibration_memory holds the constant
    // to the data (--memory-band); docs/calibration.md "The memory error band".
    c.memory_error_band = 0.28;

    // Compute: fit by `linkwise_calibrate --fit` (tests/calibration/calibrate.cpp) on all 246 runs
    // of tests/calibration/training_runs.json (MosaicML llm-foundry benchmark tables on
    // A100-40GB/80GB and H100 bf16/fp8, NVIDIA NeMo 24.07 H100 fp8 results, Megatron-LM v1 README
    // scaling runs), every source/GPU/precision group weighted equally; loss 0.086 (mean
    // |log(predicted/measured)|), median |error| 3.7%. Checked, never fit, on the 48 usable runs of
    // tests/calibration/check_runs.json (Narayanan et al. 2021, Korthikanti et al. 2022,
    // Megatron-Bridge 25.11/26.02, torchtitan on A100 and H100): median |error| 6.4%. The fit is
    // bounded by published kernel figures (calibrate.cpp cites them); layer_overhead_s and
    // fp8_gemm_overhead_s sit at their 1 us floors. Hopper attention at 0.17 of the 16-bit peak is
    // what PyTorch stacks (FlashAttention-2 through SDPA or flash-attn, MosaicML, torchtitan) reach
    // end to end at long sequences; Megatron-Core with cuDNN fused attention is faster (README).
    c.gemm_efficiency_ampere = 0.8261;
    c.gemm_efficiency_hopper = 0.7066;
    c.fp8_gemm_efficiency_ratio = 1.0;
    c.attention_efficiency_ampere = 0.3165;
    c.attention_efficiency_hopper = 0.174;
    derive_uncalibrated_efficiencies(c);  // Volta, Ada: no data (and Blackwell's attention)
    // AMD Instinct (CDNA 3 and 4): ROCm's GEMMs (hipBLASLt) and kernels reach a smaller share of the
    // dense peak than the NVIDIA generations' fit, and CDNA 3's FP8 GEMMs a smaller share of the FP8
    // peak still. Fit by `linkwise_calibrate --cdna-fit-set tests/calibration/cdna_fit_runs.json
    // --fit-cdna`, every other constant held: the 16-bit ceiling on AMD's published MI325X Llama 3.1
    // 70B BF16 pre-training (FSDP, 64 GPUs, 1,174 tokens/s per GPU; ROCm performance results,
    // rocm/primus v26.1), the FP8 ratios on the 23 single-node MI300X, MI325X (CDNA 3) and MI355X
    // (CDNA 4) submissions of MLPerf Training v5.0/v5.1's Llama 2 70B LoRA (AMD and 9 partners;
    // the benchmark's NVIDIA H200/B200 submissions are predicted within 5% by the NVIDIA-fit
    // constants). MI300X (750 W) stays 17% slower than the fit, MI325X (1000 W) within 2%: one CDNA 3
    // ratio for both. Checked, never fit, on AMD's MI325X FP8 pre-training rows and its MLPerf
    // Training v5.1 MI355X Llama 3.1 8B runs (check_runs.json; docs/calibration.md "AMD Instinct").
    c.gemm_efficiency_cdna = 0.5857;
    c.fp8_gemm_efficiency_ratio_cdna3 = 0.7143;
    c.fp8_gemm_efficiency_ratio_cdna4 = 0.9329;
    // Blackwell (B200, B300, GB200, GB300): fit by `linkwise_calibrate --blackwell-fit-set
    // tests/calibration/blackwell_fit_runs.json --fit-blackwell` on NVIDIA's 12 published dense FP8
    // pre-training rows of the NeMo 25.02 (DGX-B200) and 25.04 (DGX-GB200) performance tables, every
    // other constant held; checked, never fit, on MLPerf Training's Blackwell runs and Megatron
    // Bridge 25.11's B200 rows (docs/calibration.md "Blackwell's GEMM efficiency"). Refit (0.528 ->
    // 0.496) when the interleaved schedule's pipeline sends began to hide behind compute, which made
    // the fit rows' predictions faster (docs/calibration.md "Pipeline sends under the interleaved
    // schedule"); the MoE constants were held (same section). Refit again (0.496 -> 0.478) when
    // Transformer Engine's TP overlap was modelled, which 7 of the fit rows' recipes turn on
    // (docs/calibration.md "TP communication overlap").
    c.gemm_efficiency_blackwell = 0.4779;
    // GB300 (Blackwell Ultra, 1,400 W) has GB200's datasheet FP8 and 16-bit peaks (data/gpus.json)
    // but runs the same jobs faster: in Megatron Bridge's tables its rows beat the GB200 rows of the
    // same job by 8-25%, where the model, at one Blackwell efficiency, predicted 0-16% (layouts
    // differ within some pairs). Its 16-bit and FP8 tensor-core work (GEMMs, attention; not FP4, whose
    // GB300 peak the datasheet already raises) is scaled by this ratio (gb300_tensor_ratio, prepare.cpp),
    // fit by `linkwise_calibrate --gb300-pair-fit-set tests/calibration/gb300_pair_fit_runs.json
    // --moe-fit-set tests/calibration/moe_fit_runs.json --fit-gb300` on 7 GB300/GB200 pairs (26.06
    // SFT/LoRA, 25.11 MoE; a pair with a row predicted not to fit is left out): the median of
    // log(measured / predicted GB300-to-GB200 ratio) is zero. Checked, never fit, on the GB300
    // pre-training rows of check_runs.json and moe_check_runs.json (docs/calibration.md "GB300"); ctest
    // fails when the fit no longer gives it. B300 (1,100 W) keeps Blackwell's constant: its rows show
    // no such gap.
    c.gemm_efficiency_ratio_gb300 = 1.172;
    c.fp8_cast_passes = 1.258;
    c.fp8_gemm_overhead_s = 1e-6;
    c.elementwise_passes = 7.737;
    c.layer_overhead_s = 1e-6;
    c.hbm_efficiency = 0.80;  // not fit: STREAM-like copies reach ~80-90% of HBM peak

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
    // CPU offload's optimizer step (ZeRO-Offload: Ren et al., USENIX ATC 2021, arXiv 2101.06840,
    // Table 4 "Adam latency (s) for PyTorch (PT) and CPU-Adam": CPU-Adam 0.22 s for 1 billion
    // parameters, 2.41 s for 8, 2.57 s for 10; Table 2: the DGX-2's host, 2 x Intel Xeon Platinum 8168,
    // 48 cores and 96 hardware threads, DDR4-2666). The 10-billion row, the size of a node's shards:
    // 3.9e9 updates/s for the whole host, which every GPU's process of the node shares. A host with
    // fewer hardware threads gets its share of that; more threads are not assumed faster (at ~28
    // bytes read and written per update the step is near the host's DRAM bandwidth, ~110 GB/s here).
    c.cpu_adam_params_per_s = 10e9 / 2.57;
    c.cpu_adam_reference_vcpus = 96;
    // Scale effects (collectives.cpp). NCCL's tuning table (src/graph/tuning.cc, Simple protocol,
    // the one large messages use): ring base 8.4 us, 5.7 us per NVLink step, 6.6 us per network
    // step; tree (LL128, the protocol its mid-size messages use) 1.9 us per NVLink level, 7.5 us
    // per network level, at 0.85 of the ring's bandwidth (LL128's ceiling, ll128MaxBw). A ring
    // step reaches half its bandwidth at 64 KiB per rank: an assumption (nccl-tests all_gather
    // curves flatten above ~1 MiB per rank). Buckets: Megatron-Core's DDP default, 40M
    // gradients (distributed/distributed_data_parallel_config.py bucket_size).
    c.nccl_base_latency_s = 8.4e-6;
    c.nccl_hop_latency_nvlink_s = 5.7e-6;
    c.nccl_hop_latency_net_s = 10.65e-6;
    c.nccl_tree_hop_latency_nvlink_s = 1.9e-6;
    c.nccl_tree_hop_latency_net_s = 7.5e-6;
    c.nccl_tree_bandwidth_fraction = 0.85;
    c.nccl_half_bandwidth_bytes = 738e3;
    c.grad_bucket_params = 40e6;

    // Overlap. zero3_overlap was a fit parameter and stayed at its start 0.8 (the runs barely
    // constrain it); dp_overlap is not fit (Megatron overlaps the gradient reduction with backward).
    c.dp_overlap = 0.8;
    c.zero3_overlap = 0.8;
    c.cp_overlap = 0.8;
    // Megatron-Core and NeMo run Transformer Engine's cuDNN fused attention, which on Hopper reaches
    // about twice FlashAttention-2's fraction of peak (Shah et al. 2024, FlashAttention-3, Fig. 5-6:
    // FA2 ~35%, FA3/cuDNN ~60-75% of H100 bf16). Not fit: the NeMo and Megatron-Bridge runs check it.
    c.te_attention_speedup = 2.0;
    // Eager PyTorch on Llama-family blocks, counted from the model code (torchtitan
    // models/llama/model.py, the same ops in IBM's foundation-model-stack): RMSNorm
    // x.float() (read 2, write 4), pow (4, 4), mean (4), x * rsqrt (4, 4), type_as (4, 2), * weight
    // (2, 2) = 36 bytes per element against a fused norm's 4; RoPE xq.float() (2, 4), complex
    // multiply (4, 4), type_as (4, 2) = 20 bytes per Q and K element, where the fit's MPT runs use
    // ALiBi inside the attention kernel; SwiGLU silu (2, 2) and product (4, 2) = 10 per ffn element
    // against GELU's 4. Not fit: published compile gains bound it (torchtitan H100 Llama 3 8B +16%,
    // benchmarks/llama3_h100_202412; fms-fsdp Llama 2 7B +23% A100 / +28% H100, README 2024-03 vs
    // 2024-05), and the fit set has no gated PyTorch-stack runs, so its figures do not move.
    c.eager_rmsnorm_extra_bytes_per_element = 32.0;
    c.eager_rope_extra_bytes_per_element = 20.0;
    c.eager_swiglu_extra_bytes_per_element = 6.0;

    // Mixture-of-experts. Load imbalance: the busiest expert-parallel rank receives this many times
    // the mean routed tokens. An assumption, not a fit: balanced routers (auxiliary loss, or
    // DeepSeek-V3's auxiliary-loss-free bias, arXiv 2412.19437 section 2.1.2 and Wang et al. 2024,
    // arXiv 2408.15664, who measure the violation as MaxVio) keep a rank's load, summed over its
    // E/ep experts, near the mean; 1.1 leaves 10% for the straggler. A workload's
    // model.moe.capacity_factor replaces it (tokens beyond it are dropped). Not fit: the MoE fit set's
    // runs are force-balanced or token-dropping (capacity 1.0), so they do not constrain it.
    c.moe_load_imbalance = 1.1;
    // Permutation: Megatron-Core's token permute and unpermute each read and write the routed rows
    // once (moe/moe_utils.py permute/unpermute): 4 passes at least; fit below, see there.
    // Grouped expert GEMMs, the MoE layer's host time and the permutation (time_model.cpp; serving
    // reuses moe_gemm_half_dim at the expert's width and moe_permute_passes, not the host time,
    // serving_grouped_gemm_efficiency; never fit on serving rows): fit by `linkwise_calibrate
    // --moe-fit-set tests/calibration/moe_fit_runs.json --fit-moe`
    // on the MoE fit set (36 runs: 22 Megatron-Bridge 25.11/25.09 performance-summary rows and 14 of
    // Megatron-Core's own published recipes, Megatron-MoE-ModelZoo and the DeepSeek-V3 GB200 guide:
    // DeepSeek-V3, Qwen3-30B-A3B, Qwen3-235B-A22B, Mixtral-8x22B, gpt-oss-120b on H100/B200/GB200/
    // GB300; tests/calibration/DATA.md), the dense constants above held fixed; loss 0.187, median
    // |error| 12.9% on that set (refit after Blackwell's GEMM efficiency was fit, which these
    // constants had absorbed on the Blackwell rows). Checked, never fit, on moe_check_runs.json
    // (Megatron-Bridge 26.02 and its 26.02.01 patch release, NeMo, NeMo AutoModel): 14.2% over its
    // 48 runs (docs/calibration.md "Blackwell's GEMM efficiency").
    // moe_gemm_half_dim: a grouped GEMM whose smallest dimension n (rows per local expert, expert
    // width, hidden) is n runs at n / (n + 1236) of the dense ceiling: 0.38 for Qwen3-30B-A3B's
    // 768-wide experts, 0.62 for DeepSeek-V3's 2048, 0.77 for Mixtral's 4096.
    // moe_layer_overhead_s: 0.70 ms of host time per MoE layer per pass per micro-batch (router,
    // permute and dispatcher kernels, the dropless dispatcher's host sync), of which a pass with
    // moe_host_hide_s = 2.6 ms of GPU work hides half (time_model.cpp moe_host_exposed_s; Megatron-
    // LM's DeepSeek-V3 GB200 guide names this host overhead and the sync). moe_permute_passes: 5.2
    // memory passes over the routed rows, about permute and unpermute's own 4.
    c.moe_permute_passes = 5.2;
    c.moe_gemm_half_dim = 1236;
    c.moe_layer_overhead_s = 0.6998e-3;
    c.moe_host_hide_s = 2.609e-3;
    // Serving (inference jobs) only, MoE layers only (time_model.cpp, inference branch). Fit by
    // `linkwise_calibrate_inference --fit` on the MoE serving fit set, the TensorRT-LLM 1.2-era perf
    // overview's MoE table (106 rows; the engine profiles held at their dense fit), a split declared
    // after every MoE serving row had been seen as a check row; checked, never fit, on the 1.0 table
    // (110 rows) and 0.17's Mixtral table (126): 17.0% -> 13.4% median |error| (docs/calibration.md
    // "MoE serving fit set"; refit with the engines' own KV pool rules, "Engine KV pools", and after
    // the training MoE refit, "Blackwell's GEMM efficiency"). Since 2026-12-02 the fit also holds
    // InferenceX's 31 TensorRT-LLM gpt-oss-120b B200 fit rows and alternates with TensorRT-LLM's
    // per-layer step time (docs/calibration.md "Per-layer step time of the serving engines"):
    // 22.5 ns unchanged, 0.235 -> 0.2325 ms. Dense models never pay them.
    // moe_serving_routed_row_s: 22.5 ns per routed token row on the busiest expert-parallel rank per
    // MoE layer in every engine step (prefill chunks and decode batches): the serving engine's work
    // per routed row that the GEMMs, moe_permute_passes and the all-to-all do not price (router
    // top-k, per-row FP8/FP4 activation quantisation, gather, the combine's weighted sum) in short
    // kernels far from the HBM roofline.
    // moe_serving_ep_layer_sync_s: 0.2325 ms per MoE layer per engine step when the experts are spread
    // over ranks (ep > 1, attention data parallelism in the rows): each rank waits at the layer's
    // exchange for the slowest (a different batch, context lengths, a prefill chunk), and the
    // exchange's small kernels cost more than the collective's latency. A mean, not a model of the
    // wait: it should grow with the ranks and the chunk, which the fit set cannot separate.
    c.moe_serving_routed_row_s = 22.5e-9;
    c.moe_serving_ep_layer_sync_s = 0.2325e-3;
    // DeepSpeed's pipeline engine: fit by `linkwise_calibrate --deepspeed-fit-set
    // tests/calibration/deepspeed_fit_runs.json --fit-deepspeed` (median log error zero), every other
    // constant held, on BigScience tr11 prequel rows (Megatron-DeepSpeed, 2022, Jean Zay A100): the
    // chronicle's tables of four dates, a split declared before the fit, 64 of their 65 rows (one is
    // predicted not to fit in memory). Checked, never fit, on the other four dates' 54 rows, BLOOM-176B's
    // final run, Megatron-Turing NLG 530B on Selene and GLM-130B (docs/calibration.md "DeepSpeed's
    // pipeline engine"). A time per layer pass that does not shrink with the GPU's share of the layer
    // points at the host or the TP ranks' synchronisation; the sources do not isolate it.
    // Megatron-DeepSpeed's 2023 runs lose far less (check rows): this is the 2021-2022 engine's
    // figure, and every plan under it says how much of its step it is.
    c.deepspeed_pipeline_layer_overhead_s = 5.16e-3;
    return c;
  }();
  return k;
}

}  // namespace linkwise::planner
