// Preparing a workload for the engine: the model's and job's constants, and the hardware's
// effective peaks and link bandwidths (claimed by the catalog x achievable fractions, or measured).
#include <algorithm>
#include <cmath>
#include <string>

#include "linkwise/error.hpp"
#include "linkwise/link_physics.hpp"
#include "linkwise/planner/engine.hpp"
#include "linkwise/text.hpp"
#include "linkwise/units.hpp"

namespace linkwise::planner {

PreparedModel prepare_model(const ModelShape& s, const Job& job) {
  PreparedModel m;
  m.kind = job.kind;
  m.precision = job.precision;
  m.layers = s.layers;
  m.hidden = s.hidden;
  m.heads = s.heads;
  m.kv_heads = s.kv_heads;
  m.head_dim = s.head_dim();
  m.ffn = s.ffn_hidden;
  m.vocab = s.vocab;
  m.kv_width = double(s.kv_heads) * s.head_dim();
  m.mlp_in_width = (s.gated_mlp ? 2.0 : 1.0) * s.ffn_hidden;
  m.gated = s.gated_mlp;
  m.tied = s.tied_embeddings;
  m.dropout = s.dropout;
  m.flash = job.flash_attention;
  m.layer_params = s.layer_params();
  m.embedding_params = s.embedding_params();
  m.total_params = s.total_params();
  const double h = s.hidden, f = s.ffn_hidden, r = job.lora_rank;
  // LoRA adapters on every linear layer (or the attention's four, job.lora_targets): A (in x r) and
  // B (r x out).
  const double attention_adapters = (h + h) + 2 * (h + m.kv_width) + (h + h);
  m.lora_params_per_layer =
      r * (attention_adapters + (job.lora_attention_only ? 0.0 : (s.gated_mlp ? 2 : 1) * (h + f) + (f + h)));
  m.lora_frozen_mlp = job.kind == JobKind::lora && job.lora_attention_only;
  m.seq_len = job.seq_len;
  m.global_batch = job.global_batch;

  // Attention widths; for classic MHA/GQA q_width = o_width = attention_width = hidden.
  m.mla = s.attention == AttentionKind::mla;
  m.qk_head_dim = s.qk_head_dim();
  m.v_head_dim = s.v_head_dim();
  m.q_width = double(s.heads) * s.head_dim();
  m.o_width = double(s.heads) * s.v_head_dim();
  m.attention_width = double(s.heads) * (m.qk_head_dim + m.v_head_dim) / 2.0;
  m.q_lora = s.q_lora_rank;
  m.kv_lora = s.kv_lora_rank;
  m.rope_dim = s.rope_head_dim;
  m.kv_elements = s.kv_elements_per_token_layer();
  m.kv_split_by_tp = !m.mla;  // vLLM/SGLang keep MLA's latent whole on every TP rank
  m.kv_bytes = job.kv_cache_precision == Precision::fp8 ? 1.0 : 2.0;
  m.window = s.attention_window;
  m.windowed_share = s.layers > 0 ? double(s.windowed_layers()) / s.layers : 0.0;

  // Mixture-of-experts.
  m.moe = s.moe.enabled();
  const double mlp_matrices = s.gated_mlp ? 2.0 : 1.0;
  if (m.moe) {
    m.experts = s.moe.experts;
    m.top_k = s.moe.top_k;
    m.log_expert_miss = std::log1p(-m.top_k / m.experts);
    m.expert_ffn = s.moe.expert_ffn_hidden;
    m.expert_in_width = mlp_matrices * s.moe.expert_ffn_hidden;
    m.shared_ffn = double(s.moe.shared_experts) * s.moe.expert_ffn_hidden;
    m.shared_in_width = mlp_matrices * m.shared_ffn;
    m.moe_layers = s.moe_layers();
    m.expert_params = s.expert_params();
    m.moe_base_params = s.moe_layer_base_params();
    m.load_imbalance = s.moe.capacity_factor ? *s.moe.capacity_factor : default_constants().moe_load_imbalance;
  }
  m.dense_mlp_layers = s.dense_mlp_layers();
  m.active_linear_params = m.dense_mlp_layers * (m.layer_params - 2 * h) +
                           m.moe_layers * (m.moe_base_params - 2 * h + m.top_k * m.expert_params) + h * s.vocab;

  m.bytes_per_weight = 2.0;
  if (job.kind == JobKind::inference && job.precision == Precision::fp8) m.bytes_per_weight = 1.0;
  // NVFP4: 4-bit elements with one fp8 scale per 16 (4.5 bits); MXFP4 one 8-bit scale per 32 (4.25):
  // the larger, 4.5 bits (NVIDIA "Introducing NVFP4", 2025; OCP Microscaling spec v1.0).
  if (job.kind == JobKind::inference && job.precision == Precision::fp4) m.bytes_per_weight = 4.5 / 8.0;
  // QLoRA NF4 with double quantization: 4.127 bits per parameter (Dettmers et al. 2023, section 3).
  if (is_qlora(job)) m.bytes_per_weight = 4.127 / 8.0;
  if (job.kind == JobKind::lora && job.lora_base == LoraBase::fp8) m.bytes_per_weight = 1.0;
  m.gemm_element_bytes = job.precision == Precision::fp8 ? 1.0 : job.precision == Precision::fp4 ? 4.5 / 8.0 : 2.0;
  // Serving keeps the experts as the checkpoint stores them (ModelShape::MoeShape::expert_weights)
  // where that is smaller than the job's precision; training dequantises them.
  m.expert_bytes_per_weight = m.bytes_per_weight;
  if (job.kind == JobKind::inference && s.moe.expert_weights == "mxfp4")
    m.expert_bytes_per_weight = std::min(m.bytes_per_weight, kMxfp4BytesPerWeight);
  m.prompt_len = job.prompt_len;
  m.output_len = job.output_len;
  m.concurrent = job.concurrent;
  m.concurrent_max = job.concurrent_max;
  m.dequant_4bit = is_qlora(job);
  m.framework = job.framework;
  // Llama-family blocks (gated MLP: RMSNorm and RoPE come with it in every such preset) run op by
  // op in the PyTorch stacks unless compiled (eager_llama_block, framework_memory.hpp).
  m.uncompiled_llama_block = s.gated_mlp && !job.torch_compile;
  m.optimizer = job.optimizer;
  m.offload = job.offload;
  m.grad_reduce_bf16 = job.grad_reduce_bf16;
  m.grad_reduce_stated = job.grad_reduce_stated;
  m.fused_loss = job.fused_loss;
  return m;
}

namespace {

double network_fraction(NetworkType type, const PlannerConstants& k) {
  switch (type) {
    case NetworkType::infiniband: return k.infiniband_fraction;
    case NetworkType::efa: return k.efa_fraction;
    case NetworkType::roce: return k.roce_fraction;
    case NetworkType::gpudirect_tcpxo: return k.tcpxo_fraction;
    case NetworkType::gpudirect_tcpx: return k.tcpx_fraction;
    case NetworkType::ethernet: return k.ethernet_fraction;
  }
  return k.ethernet_fraction;
}

std::string source_of(const Sources& sources, std::initializer_list<const char*> keys) {
  for (const char* key : keys) {
    const auto it = sources.find(key);
    if (it != sources.end()) return it->second.url;
  }
  return {};
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

std::string measured_mismatch(HardwareRef hw, const MeasuredLinks& measured) {
  // A report without a GPU (host-only MPI runs) measured no GPU figure; only its instance can differ.
  if (!measured.gpu_name.empty()) {
    if (!measured.gpu_model) {
      return "the probe report's GPU \"" + measured.gpu_name +
             "\" is no single catalog GPU, so it cannot be told to be " + hw.gpu.id +
             "; a report measures only the machine it ran on";
    }
    if (text::lower(*measured.gpu_model) != text::lower(hw.gpu.id)) {
      return "the probe report measured " + *measured.gpu_model + " (\"" + measured.gpu_name + "\"), not " + hw.gpu.id +
             " of " + hw.instance.id + "; a report measures only the machine it ran on";
    }
  }
  if (measured.instance && !hw.custom && text::lower(*measured.instance) != text::lower(hw.instance.id)) {
    return "the probe report measured " + *measured.instance + ", not " + hw.instance.id +
           "; a report measures only the machine it ran on";
  }
  return {};
}

double fp8_gemm_efficiency_ratio(Architecture architecture, const PlannerConstants& k) noexcept {
  if (architecture == Architecture::cdna3) return k.fp8_gemm_efficiency_ratio_cdna3;
  if (architecture == Architecture::cdna4) return k.fp8_gemm_efficiency_ratio_cdna4;
  return k.fp8_gemm_efficiency_ratio;
}

std::optional<JobMismatch> job_mismatch(const Gpu& gpu, const Job& job) {
  if (!supports_precision(gpu, job.precision))
    return JobMismatch{"job.precision", missing_peak_reason(gpu, job.precision)};
  if (job.kind == JobKind::inference)
    if (std::string why = engine_unavailable_reason(job.engine, gpu); !why.empty())
      return JobMismatch{"job.engine", std::move(why)};
  return std::nullopt;
}

bool is_gb300(const Gpu& gpu) noexcept { return gpu.id == "GB300"; }  // data/gpus.json: the GB300 NVL72's GPU

double gb300_tensor_ratio(const Gpu& gpu, Precision gemm_precision, const PlannerConstants& k) noexcept {
  return is_gb300(gpu) && gemm_precision != Precision::fp4 ? k.gemm_efficiency_ratio_gb300 : 1.0;
}

PreparedHardware prepare_hardware(HardwareRef hw, const Job& job, const PlannerConstants& k,
                                  const MeasuredLinks* measured, bool spot, PreparedLinksInfo* info) {
  if (measured) {
    if (std::string why = measured_mismatch(hw, *measured); !why.empty()) throw_invalid("report", why);
  }
  const Gpu& gpu = hw.gpu;
  const Instance& in = hw.instance;
  PreparedHardware p;
  p.gpus_per_node = in.gpu_count;

  // Compute peaks and the GEMM ceiling for this generation.
  const double bf16 = gpu.bf16_dense_tflops.value_or(gpu.fp16_dense_tflops.value_or(0));
  const double fp16 = gpu.fp16_dense_tflops.value_or(bf16);
  if (const auto mismatch = job_mismatch(gpu, job))  // a missing peak's reason does not name the GPU
    throw_invalid(mismatch->field,
                  (mismatch->field == "job.precision" ? "GPU " + gpu.id + ": " : std::string()) + mismatch->reason);
  if (job.kind == JobKind::inference) {
    p.engine = resolve(job.engine, gpu);
    p.engine_profile = with_batch_limit(engine_profile(p.engine), job.engine_batch_limit);
  }
  double peak_tflops = bf16;
  if (job.precision == Precision::fp16) peak_tflops = fp16;
  if (job.precision == Precision::fp8) peak_tflops = *gpu.fp8_dense_tflops;
  if (job.precision == Precision::fp4) peak_tflops = *gpu.fp4_dense_tflops;
  p.peak_flops = peak_tflops * units::kFlopsPerTflop;
  p.attention_peak_flops = (job.precision == Precision::fp16 ? fp16 : bf16) * units::kFlopsPerTflop;
  double eta = k.gemm_efficiency_other;
  p.attention_efficiency = k.attention_efficiency_other;
  if (gpu.architecture == Architecture::ampere) {
    eta = k.gemm_efficiency_ampere;
    p.attention_efficiency = k.attention_efficiency_ampere;
  }
  p.architecture = gpu.architecture;
  p.fp4_tensor_cores = supports_precision(gpu, Precision::fp4);
  if (gpu.architecture == Architecture::hopper) {
    eta = k.gemm_efficiency_hopper;
    p.attention_efficiency = k.attention_efficiency_hopper;
  }
  if (gpu.architecture == Architecture::cdna3 || gpu.architecture == Architecture::cdna4) eta = k.gemm_efficiency_cdna;
  if (gpu.architecture == Architecture::blackwell) eta = k.gemm_efficiency_blackwell;
  // GB300's 16-bit and FP8 tensor-core work above the Blackwell fit (gb300_tensor_ratio); its HBM is
  // GB200's 8 TB/s. Attention and the output layer run 16-bit whatever the job's precision.
  const double ratio_16bit = gb300_tensor_ratio(gpu, Precision::bf16, k);
  p.attention_efficiency *= ratio_16bit;
  // Megatron-Core's runtime uses cuDNN fused attention where the GPU has it (Hopper on); which
  // layouts run it is the time model's to ask (megatron_runtime: under auto it depends on ZeRO).
  p.fused_attention_efficiency = p.attention_efficiency;
  if (gpu.architecture != Architecture::ampere && gpu.architecture != Architecture::volta)
    p.fused_attention_efficiency = std::min(0.75, p.attention_efficiency * k.te_attention_speedup);
  // fp8 runs only the transformer's linear layers in fp8 (Transformer Engine, torchao float8); the
  // output layer, attention, norms and activations stay 16-bit.
  p.logits_flops = p.attention_peak_flops * eta * ratio_16bit;
  if (job.precision == Precision::fp8 || job.precision == Precision::fp4)
    eta *= fp8_gemm_efficiency_ratio(gpu.architecture, k);
  p.gemm_efficiency = eta * gb300_tensor_ratio(gpu, job.precision, k);

  // Memory.
  const double nominal_gb = in.gpu_memory_gb > 0 ? in.gpu_memory_gb : gpu.memory_gb;
  p.capacity_bytes = units::gpu_capacity_bytes(nominal_gb) - units::gb_to_bytes(k.capacity_reserve_gb);
  double context_gb = k.cuda_context_gb_other;
  if (gpu.architecture == Architecture::volta) context_gb = k.cuda_context_gb_volta;
  if (gpu.architecture == Architecture::ampere) context_gb = k.cuda_context_gb_ampere;
  if (gpu.architecture == Architecture::hopper) context_gb = k.cuda_context_gb_hopper;
  p.context_bytes = units::gb_to_bytes(context_gb);
  // NCCL opens more channels where a GPU has more NVLinks (NVLink 4/5: 18 links vs Ampere's 12).
  p.nccl_channel_factor = gpu.nvlink_generation.value_or(3) >= 4 ? 1.5 : 1.0;
  const bool hbm_measured = measured && measured->hbm_gbytes_per_s;
  p.hbm_bytes_per_s = hbm_measured ? *measured->hbm_gbytes_per_s * units::kBytesPerGB
                                   : gpu.hbm_gbytes_per_s * k.hbm_efficiency * units::kBytesPerGB;

  // Inside the node: NVLink is quoted per GPU with both directions added; collectives move data
  // in one direction per link at a time, so the per-direction figure is the base.
  const double nvlink_both = in.nvlink_gbytes_per_s.value_or(gpu.nvlink_gbytes_per_s.value_or(0));
  // A GPU whose host link the catalog does not state (Grace superchips attach over NVLink-C2C; some
  // SXM records leave it null) is timed as PCIe Gen4 x16, and plans that use the link say so.
  const int pcie_gen = gpu.pcie_gen.value_or(4);
  p.pcie_gen = gpu.pcie_gen.value_or(0);
  const double pcie_per_direction = pcie_gbytes_per_s(pcie_gen, 16);  // link_physics.hpp
  p.pcie_bytes_per_s = pcie_per_direction * units::kBytesPerGB;
  p.host_memory_bytes = in.memory_gib ? units::gib_to_bytes(*in.memory_gib) : 0.0;
  p.host_vcpus = in.vcpus.value_or(0);
  const bool nvlink_fabric = nvlink_both > 0 && links_gpus(in.intra_node_fabric);
  double intra_base = pcie_per_direction, intra_fraction = k.pcie_busbw_fraction;
  p.intra_latency_s = k.latency_pcie_s;
  if (nvlink_fabric) {
    intra_base = nvlink_both / 2.0;
    intra_fraction = in.intra_node_fabric == Fabric::nvswitch ? k.nvswitch_busbw_fraction
                     : in.intra_node_fabric == Fabric::nvlink ? k.nvlink_busbw_fraction
                                                              : k.infinity_fabric_busbw_fraction;
    p.intra_latency_s = k.latency_intra_s;
  }
  p.intra_busbw = intra_base * intra_fraction * units::kBytesPerGB;
  // NVLink domain: the catalog's (72 on GB200 NVL72 trays), else the node on NVLink, else 1 GPU. A
  // bridged node whose links join only pairs or quads (nvlink_domain_gpus below gpu_count, which the
  // loader allows on "nvlink" and "infinity_fabric") counts as one domain: its partial links are
  // what the lower nvlink_busbw_fraction of those fabrics prices.
  p.nvidia_nvlink =
      nvlink_fabric && (in.intra_node_fabric == Fabric::nvlink || in.intra_node_fabric == Fabric::nvswitch);
  p.nvlink_domain_gpus =
      nvlink_fabric ? std::max(in.gpu_count, in.nvlink_domain_gpus.value_or(in.gpu_count)) : in.gpu_count;
  p.intra_p2p = intra_base * k.p2p_fraction * units::kBytesPerGB;
  const bool intra_measured = measured && measured->intra_node_allreduce_busbw_gbytes_per_s;
  if (intra_measured) p.intra_busbw = *measured->intra_node_allreduce_busbw_gbytes_per_s * units::kBytesPerGB;
  if (measured && measured->p2p_unidirectional_gbytes_per_s)
    p.intra_p2p = *measured->p2p_unidirectional_gbytes_per_s * units::kBytesPerGB;

  // Between nodes: the instance's total network (Gbit/s) shared by its GPUs.
  const double net_gbits = in.network_gbits_per_s.value_or(0);
  const double net_fraction = network_fraction(in.network_type, k);
  p.inter_latency_s = k.latency_inter_s;
  p.has_network = net_gbits > 0;
  p.nic_per_gpu = units::gbits_to_gbytes(net_gbits) * net_fraction * units::kBytesPerGB / std::max(1, in.gpu_count);
  const bool inter_measured = measured && measured->inter_node_allreduce_busbw_gbytes_per_s;
  if (inter_measured) {
    p.nic_per_gpu = *measured->inter_node_allreduce_busbw_gbytes_per_s * units::kBytesPerGB / std::max(1, in.gpu_count);
    p.has_network = true;
  }

  // Price per node-hour.
  if (const auto price = node_price_usd_per_hour(in, spot)) p.price_per_node_hour = *price;

  if (!info) return p;

  // Where each bandwidth comes from, in words (only for plans that are shown).
  if (intra_measured) {
    info->intra_node = "measured: " + measured->source + " (all-reduce busbw " +
                       fmt(*measured->intra_node_allreduce_busbw_gbytes_per_s) + " GB/s)";
  } else {
    const std::string intra_words =
        nvlink_fabric
            ? std::string(to_string(in.intra_node_fabric)) + " " + fmt(nvlink_both) + " GB/s per GPU (" +
                  fmt(intra_base) + " GB/s per direction)"
            : "PCIe Gen" + std::to_string(pcie_gen) + " x16 (" + fmt(pcie_per_direction) + " GB/s per direction)";
    // A link figure the instance record lacks is the GPU's (nvlink_both above): cite the GPU's source.
    const bool gpu_figure = nvlink_fabric && !in.nvlink_gbytes_per_s;
    info->intra_node =
        (hw.custom ? std::string("claimed: custom hardware in the workload")
         : gpu_figure
             ? "claimed: catalog GPU " + gpu.id + " " + source_of(gpu.sources, {"interconnect", "spec", "specs"})
             : "claimed: catalog " + source_of(in.sources, {"interconnect", "spec", "specs", "gpu"})) +
        ", " + intra_words + " x " + fmt(intra_fraction) + " achievable busbw fraction";
  }
  if (inter_measured) {
    info->inter_node = "measured: " + measured->source + " (all-reduce busbw " +
                       fmt(*measured->inter_node_allreduce_busbw_gbytes_per_s) + " GB/s across nodes)";
  } else if (net_gbits > 0) {
    info->inter_node = (hw.custom ? std::string("claimed: custom hardware in the workload")
                                  : "claimed: catalog " + source_of(in.sources, {"network", "specs"})) +
                       ", " + std::string(to_string(in.network_type)) + " " + fmt(net_gbits) + " Gbit/s per node x " +
                       fmt(net_fraction) + " achievable fraction";
  } else {
    info->inter_node = "none: the catalog states no network bandwidth between nodes";
  }
  info->hbm = hbm_measured ? "measured: " + measured->source
                           : "claimed: catalog " + source_of(gpu.sources, {"spec", "gpu", "specs", "memory"}) + ", " +
                                 fmt(gpu.hbm_gbytes_per_s) + " GB/s x " + fmt(k.hbm_efficiency);
  if (job.kind == JobKind::inference) {
    // Serving streams weights and KV cache at its engine's fitted fraction of the peak (time_model.cpp),
    // not at the STREAM efficiency above: say which.
    const EngineProfile& eng = p.engine_profile;
    const double fraction = eng.decode_hbm_fraction * engine_gpu_terms(eng, p.architecture).fraction_scale;
    info->hbm += "; decode at " + std::string(to_string(p.engine)) + "'s fitted " + fmt(fraction) + " of the peak" +
                 (hbm_measured ? " (the measurement over the STREAM efficiency)" : "");
  }
  return p;
}

}  // namespace linkwise::planner
