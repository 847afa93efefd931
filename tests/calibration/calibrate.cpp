// Calibration of the planner against published training runs (tests/calibration/training_runs.json,
// transcribed from MosaicML llm-foundry's benchmark tables, NVIDIA NeMo 24.07's performance page
// and the Megatron-LM v1 README; see DATA.md).
//
//   linkwise_calibrate [--runs FILE] [--check-set FILE] [--data DIR] [--table] [--fit] [--fit-on
//   all|half-a|half-b|mosaicml]
//                      [--check MAX_FIT_MEDIAN MAX_HOLDOUT_MEDIAN]
//
// Every run is mapped to a workload on custom hardware (DGX-like nodes of the run's GPU, from
// data/gpus.json) and its layout (FSDP FULL_SHARD = ZeRO-3, SHARD_GRAD_OP = ZeRO-2, Megatron's
// distributed optimizer = ZeRO-1), then planned; predicted tokens/s per GPU is compared with the
// measured figure. --fit refits the efficiency constants on the fit set and prints them for
// core/src/planner/constants.cpp. The fit set is every run (--fit-on all, the default: the shipped
// constants), one of two complementary halves of every source's runs (--fit-on half-a | half-b, by a
// hash of the run id: two-fold cross-validation), or MosaicML alone (--fit-on mosaicml, holding out
// NeMo and Megatron-LM entirely). Errors are reported for the fit set and the held-out runs.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linkwise/error.hpp"
#include "linkwise/planner.hpp"
#include "linkwise/planner/framework_memory.hpp"
#include "linkwise/planner/uncertainty.hpp"

using namespace linkwise;
using nlohmann::json;

namespace {

struct Run {
  std::string id, group, subgroup;  // subgroup: group + GPU + precision
  planner::Workload workload;
  double measured = 0;  // tokens/s per GPU
  bool fit_set = false;
  bool moe_fit = false;  // in the MoE fit set (--moe-fit-set): fits the MoE constants only (--fit-moe)
  // In a one-constant fit set: a generation's (--cdna-fit-set, --blackwell-fit-set, fitting its GEMM
  // efficiency only with --fit-cdna, --fit-blackwell), GB300's pairs (--gb300-pair-fit-set) or
  // DeepSpeed's pipeline profile (--deepspeed-fit-set, --fit-deepspeed); the label ("cdna",
  // "blackwell", "gb300 pair", "deepspeed") names the set.
  std::string generation_fit;
  // The card's memory where the row's GPU states one the catalog's model does not have (torchtitan's
  // Grand Teton H100 96GB HBM2e, timed as the catalog's H100-SXM5-80GB): the memory verdict is taken
  // against the card that ran. 0: the catalog's.
  double card_memory_gib = 0;
  // False where the row says why its memory verdict is no evidence (`memory_verdict_not_evidence`:
  // the source states neither the card's memory nor what the plan would need, e.g. MegaScale's
  // "Ampere GPUs", GLM-130B's unstated ZeRO stage): it is not counted among the runs called `no`.
  bool memory_evidence = true;
};

// A row's hardware, prepared; on the card that ran where the row states one the catalog's GPU does
// not have (its memory only, so the capacity follows prepare_hardware's own rule).
planner::PreparedHardware prepared_for(const planner::Workload& w, double card_memory_gib,
                                       const planner::PlannerConstants& k) {
  planner::Hardware hw = *w.hardware;
  if (card_memory_gib > 0) hw.instance.gpu_memory_gb = card_memory_gib;
  return planner::prepare_hardware(hw, w.job, k, nullptr, false);
}

// "NNGB" in a row's GPU text, where it differs from the catalog GPU the row is timed on.
double stated_card_memory_gib(const std::string& gpu_text, const Gpu& catalog_gpu) {
  static const std::regex size(R"((\d+)\s*GB)");
  std::smatch m;
  if (!std::regex_search(gpu_text, m, size)) return 0;
  const double stated = std::stod(m[1].str());
  return std::fabs(stated - catalog_gpu.memory_gb) > 1 ? stated : 0;
}

struct Node {
  const char* gpu_model;
  int gpus_per_node;
  double nvlink;
  double network_gbits;
  int nvlink_domain_gpus = 0;  // beyond the node: the rack-scale NVLink domain (NVL72)
  const char* fabric = "nvswitch";
  const char* network = "infiniband";
};

// The run's GPU as a DGX-like node. Interconnects the tables do not state are those of the NVIDIA
// DGX reference systems: DGX-2 (16 V100, NVSwitch, 8 x 100 Gbit/s EDR), DGX A100 (8 x 200 Gbit/s
// HDR), DGX H100 (8 x 400 Gbit/s NDR).
std::optional<Node> node_for(const std::string& gpu) {
  if (gpu.find("V100") != std::string::npos) return Node{"V100-SXM2-32GB", 16, 300, 800};
  // AMD Instinct platforms (8 GPUs on Infinity Fabric, as the catalog's MI300X/MI355X instances) over
  // 8 x 400 Gbit/s RoCE, the scale-out network of the catalog's MI300X/MI355X instances (OCI, Azure):
  // AMD's published runs do not state theirs.
  if (gpu.find("MI355X") != std::string::npos) return Node{"MI355X", 8, 1075.2, 3200, 0, "infinity-fabric", "roce"};
  if (gpu.find("MI325X") != std::string::npos) return Node{"MI325X", 8, 896, 3200, 0, "infinity-fabric", "roce"};
  if (gpu.find("MI300X") != std::string::npos) return Node{"MI300X", 8, 896, 3200, 0, "infinity-fabric", "roce"};
  // DGX GB200 / GB300 NVL72: trays of 4 GPUs in one 72-GPU NVLink domain, 4 x 400 (ConnectX-7) or
  // 4 x 800 Gbit/s (ConnectX-8) per tray, as the catalog's GB200/GB300 trays; DGX B300: 8 x 800.
  if (gpu.find("GB300") != std::string::npos) return Node{"GB300", 4, 1800, 3200, 72};
  if (gpu.find("GB200") != std::string::npos) return Node{"GB200", 4, 1800, 1600, 72};
  if (gpu.find("B300") != std::string::npos) return Node{"B300-SXM-288GB", 8, 1800, 6400};
  if (gpu.find("B200") != std::string::npos) return Node{"B200-SXM-180GB", 8, 1800, 3200};  // DGX B200: 8 x 400 Gbit/s
  if (gpu.find("H200") != std::string::npos) return Node{"H200-SXM-141GB", 8, 900, 3200};   // HGX H200, 8 x 400 Gbit/s
  if (gpu.find("H100") != std::string::npos) return Node{"H100-SXM5-80GB", 8, 900, 3200};
  if (gpu.find("A100-80GB") != std::string::npos) return Node{"A100-SXM4-80GB", 8, 600, 1600};
  if (gpu.find("A100") != std::string::npos) return Node{"A100-SXM4-40GB", 8, 600, 1600};
  return std::nullopt;
}

int vocab_for(const json& r) {
  if (r["vocab"].is_number()) return r["vocab"].get<int>();
  const std::string model = r["model"].get<std::string>();
  if (model.find("LLAMA3") != std::string::npos) return 128256;
  if (model.find("LLAMA2") != std::string::npos) return 32000;
  if (model.find("Nemotron") != std::string::npos) return 256000;
  return 50257;  // GPT-3 BPE
}

template <class T>
T get_or(const json& r, const char* key, T fallback) {
  return r.contains(key) && !r[key].is_null() ? r[key].get<T>() : fallback;
}

// Builds the workload JSON of a run; returns a reason when the run cannot be used.
std::string to_workload(const json& r, json& out) {
  const auto node = node_for(r["gpu"].get<std::string>());
  if (!node) return "GPU not mapped";
  const double measured = r["measured"].value("tokens_per_sec_per_gpu", 0.0);
  const int gpus = r["num_gpus"].get<int>();
  const int tp = get_or(r, "tp", 1), pp = get_or(r, "pp", 1), cp = get_or(r, "cp", 1);
  const int dp = get_or(r, "dp", gpus / (tp * pp * cp));
  const int global_batch = r["global_batch_seqs"].get<int>();
  const int hidden = r["hidden"].get<int>();
  const int ffn = get_or(r, "ffn_hidden", 4 * hidden);
  const std::string group = r["source_group"].get<std::string>();
  const std::string sharding = get_or<std::string>(r, "sharding", "");
  const std::string precision_text = r["precision"].get<std::string>();
  const std::string recompute_text = get_or<std::string>(r, "activation_recompute", "");
  const std::string task = r["task"].get<std::string>();
  if (measured <= 0 && !r["measured"].contains("iteration_time_ms")) return "no throughput";

  json model = {{"layers", r["layers"]},
                {"hidden", hidden},
                {"heads", r["heads"]},
                {"kv_heads", get_or(r, "kv_heads", r["heads"].get<int>())},
                {"ffn_hidden", ffn},
                {"vocab", vocab_for(r)},
                {"gated_mlp", ffn != 4 * hidden},
                {"name", r["model"]}};
  // Mixture-of-experts runs name the model by its preset (config.json shape, experts and MLA).
  if (r.contains("preset")) model = {{"preset", r["preset"]}};
  if (group == "mosaicml_llm_foundry") model["tied_embeddings"] = true;  // MPT ties its embeddings
  json job = {{"kind", task == "sft"    ? "finetune"
                       : task == "lora" ? "lora"
                                        : "pretrain"},
              {"seq_len", r["seq_len"]},
              {"global_batch", global_batch}};
  if (task == "lora") {
    if (r.contains("lora_rank") && r["lora_rank"].is_number()) job["lora_rank"] = r["lora_rank"];
    // MLPerf's Llama 2 70B LoRA adapts the fused QKV and the output projections (the rows' notes).
    if (group == "mlperf_training_lora_amd") job["lora_targets"] = "attention";
    // Megatron Bridge's LoRA recipes adapt linear_qkv only (peft.target_modules); the planner's
    // nearest choice, "attention", adapts Q, K, V and the output projection (a little more work).
    if (group.rfind("megatron_bridge", 0) == 0) job["lora_targets"] = "attention";
    // "FP8 params": Transformer Engine keeps the base weights in FP8.
    if (precision_text.find("FP8 params") != std::string::npos) job["lora_base"] = "fp8";
  }
  std::string precision_lower = precision_text;
  for (char& c : precision_lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  job["precision"] = precision_lower.find("fp4") != std::string::npos    ? "fp4"
                     : precision_lower.find("fp8") != std::string::npos  ? "fp8"
                     : precision_lower.find("fp16") != std::string::npos ? "fp16"
                                                                         : "bf16";
  int zero = 0;
  std::string recompute = "none";
  bool sequence_parallel = false;
  // Megatron-LM before FlashAttention (2020-2022 papers and README): fused softmax, dropout on.
  const bool pre_flash =
      group == "megatron_v1_2020" || group == "narayanan2021_a100" || group == "korthikanti2022_a100";
  const bool megatron_core = group.rfind("nemo", 0) == 0 || group.rfind("megatron_bridge", 0) == 0;
  if (group == "mosaicml_llm_foundry") {
    // MPT's loss is flash-attn's fused cross-entropy unless the yaml names another (llm-foundry
    // modeling_mpt.py at the benchmark's commit 49521837: om_model_config.get('loss_fn',
    // 'fused_crossentropy'); the pretrain yamls name none).
    job["loss"] = "fused";
    zero = sharding.find("FULL_SHARD") != std::string::npos ? 3 : 2;
    recompute = recompute_text == "full" ? "full" : "none";
  } else if (group == "megatron_v1_2020") {
    recompute = "full";  // Megatron-LM v1 checkpointed every layer
  } else {
    // Sharding: FSDP (PyTorch FSDP2, Megatron FSDP) = ZeRO-3; Megatron-Core's distributed optimizer = ZeRO-1.
    // The sources' tables say "FSDP 0" for the latter, which the rows quote in three spellings.
    const bool fsdp_off = sharding.find("FSDP column 0") != std::string::npos ||
                          sharding.find("FSDP=0") != std::string::npos || sharding.find("no FSDP") != std::string::npos;
    if (sharding.find("FSDP") != std::string::npos && !fsdp_off) zero = 3;
    else if (megatron_core || sharding.find("distributed optimizer") != std::string::npos) zero = 1;
    if (recompute_text.rfind("full", 0) == 0) recompute = "full";
    else if (recompute_text.rfind("selective", 0) == 0) recompute = "selective";
    // Layer-selective checkpointing (fms-fsdp's selective_checkpointing p, torchtitan's
    // selective_ac_option k): full recompute of that share of the layers.
    if (r.contains("recompute_layer_fraction") && r["recompute_layer_fraction"].is_number()) recompute = "full";
    // Megatron-Core and torchtitan shard norms and dropout along the sequence whenever TP > 1.
    sequence_parallel = get_or(r, "sequence_parallel", tp > 1 && !pre_flash);
  }
  // The framework, where the source states it (job.framework selects its documented profile).
  if (r.contains("planner_framework") && r["planner_framework"].is_string()) job["framework"] = r["planner_framework"];
  else if (group.rfind("nemo", 0) == 0) job["framework"] = "nemo";
  else if (group.rfind("megatron_bridge", 0) == 0) {
    job["framework"] = "megatron-core";
    // Megatron Bridge's performance recipes reduce gradients in bf16: grad_reduce_in_fp32 false in
    // every scripts/performance YAML since 2025-08 (commit 568b3a3e; cac49dcd for the MoE models) and
    // in _benchmark_common and _perf_precision since (src/megatron/bridge/perf_recipes/_common.py).
    if (task != "lora") job["grad_reduce_dtype"] = "bf16";  // a LoRA job's adapter gradients are 16-bit anyway
  } else if (group == "mosaicml_llm_foundry" || group.rfind("ibm_fms_fsdp", 0) == 0 || group.rfind("automodel", 0) == 0)
    job["framework"] = "fsdp";  // PyTorch FSDP stacks (NeMo AutoModel: FSDP2 with Transformer Engine kernels)
  else if (group.rfind("torchtitan", 0) == 0) job["framework"] = "torchtitan";
  else job["framework"] = "megatron-core";
  // torch.compile where the source says so (torchtitan's table, fms-fsdp's later table).
  const std::string framework_text = get_or<std::string>(r, "framework", "");
  // Transformer Engine's fused norm and attention kernels (NeMo AutoModel) are not the eager op-by-op
  // block the planner's `fsdp` assumes without compile either: the same fused-block cost model.
  // The flag exists for the PyTorch stacks only (Megatron-Core and NeMo always run fused kernels).
  const bool pytorch_stack = job["framework"] == "fsdp" || job["framework"] == "torchtitan";
  if (pytorch_stack &&
      (framework_text.find("torch.compile") != std::string::npos ||
       framework_text.find("Transformer Engine") != std::string::npos || get_or(r, "torch_compile", false)))
    job["torch_compile"] = true;
  if (pre_flash) {
    job["flash_attention"] = false;
    model["dropout"] = true;
  }
  // What a row states outright overrides what its group implies: attention without FlashAttention
  // (runs from before it), dropout, and the ZeRO stage its sharding amounts to where the words do
  // not say it in the terms read above (fairscale's FSDP without resharding, Meta's ZeRO-2-like FSDP).
  if (r.contains("flash_attention") && r["flash_attention"].is_boolean()) job["flash_attention"] = r["flash_attention"];
  if (r.contains("dropout") && r["dropout"].is_boolean()) model["dropout"] = r["dropout"];
  if (r.contains("tied_embeddings") && r["tied_embeddings"].is_boolean() && !r.contains("preset"))
    model["tied_embeddings"] = r["tied_embeddings"];
  if (r.contains("zero_stage") && r["zero_stage"].is_number_integer()) zero = r["zero_stage"].get<int>();
  if (r.contains("grad_reduce_dtype") && r["grad_reduce_dtype"].is_string())
    job["grad_reduce_dtype"] = r["grad_reduce_dtype"];
  // Micro-batch not stated: one sequence per micro-batch with a pipeline (what Megatron runs), the
  // whole local batch without one.
  // torchtitan splits the local batch into as many micro-batches as pipeline stages unless told
  // otherwise (experimental.pipeline_parallel_microbatches defaults to the PP degree).
  const bool torchtitan = group.rfind("torchtitan", 0) == 0;
  const int micro_batch =
      get_or(r, "micro_batch", pp > 1 ? (torchtitan ? std::max(1, global_batch / dp / pp) : 1) : global_batch / dp);
  json layout = {{"tp", tp},
                 {"pp", pp},
                 {"cp", cp},
                 {"dp", dp},
                 {"micro_batch", micro_batch},
                 {"zero", zero},
                 {"recompute", recompute},
                 {"sequence_parallel", sequence_parallel},
                 {"virtual_stages", get_or(r, "vp", 1)}};
  // Hybrid sharding where the source states it (FSDP's HYBRID_SHARD within a node, MiCS's group).
  if (r.contains("dp_shard") && r["dp_shard"].is_number_integer()) layout["dp_shard"] = r["dp_shard"];
  if (get_or(r, "ep", 1) > 1) layout["ep"] = r["ep"];
  if (get_or(r, "etp", 1) > 1) layout["etp"] = r["etp"];
  // The EP all-to-all overlapped with another micro-batch's compute, where the source says so
  // (Megatron-Core's --overlap-moe-expert-parallel-comm, "1f1b overlap", A2A_OVERLAP=1).
  if (get_or(r, "overlap_a2a", false)) layout["overlap_a2a"] = true;
  // Transformer Engine's TP communication overlap as the run's recipe states it (true or false);
  // unstated, the planner's default (on wherever Megatron-Core's runtime can run it).
  if (r.contains("tp_comm_overlap") && r["tp_comm_overlap"].is_boolean())
    layout["tp_comm_overlap"] = r["tp_comm_overlap"];
  // The interleaved schedule's sends overlapped with compute: false where the run's Megatron-LM
  // predates the option (it blocked on every send); unstated, the planner's default.
  if (r.contains("overlap_p2p_comm") && r["overlap_p2p_comm"].is_boolean())
    layout["overlap_p2p_comm"] = r["overlap_p2p_comm"];
  // Megatron-Core's DDP overlap of the gradient reduction: false where the run's Megatron-LM ran
  // its local DDP (the reduction after the backward; before commit 2d5220a424 and its default since).
  if (r.contains("overlap_grad_reduce") && r["overlap_grad_reduce"].is_boolean())
    layout["overlap_grad_reduce"] = r["overlap_grad_reduce"];
  if (r.contains("recompute_layer_fraction") && r["recompute_layer_fraction"].is_number())
    layout["recompute_layer_fraction"] = r["recompute_layer_fraction"];
  const int per_node = std::min(gpus, node->gpus_per_node);
  // A network the source states (per node) replaces the DGX reference's.
  const double network_gbits = get_or(r, "network_gbits_per_node", node->network_gbits);
  json custom = {{"gpu_model", node->gpu_model},      {"gpu_count", per_node},
                 {"intra_node_fabric", node->fabric}, {"nvlink_gbytes_per_s", node->nvlink},
                 {"network_type", node->network},     {"network_gbits_per_s", network_gbits}};
  // And the kind of network it names (RoCE, AWS EFA), each at its own achievable fraction.
  if (r.contains("network_type") && r["network_type"].is_string()) custom["network_type"] = r["network_type"];
  if (per_node == 1) {  // a one-GPU run: no GPU link inside the node (the catalog's rule for such machines)
    custom["intra_node_fabric"] = "none";
    custom.erase("nvlink_gbytes_per_s");
  }
  if (node->nvlink_domain_gpus > per_node) custom["nvlink_domain_gpus"] = node->nvlink_domain_gpus;
  out = {{"model", model},
         {"job", job},
         {"hardware", {{"custom", custom}, {"nodes", (gpus + per_node - 1) / per_node}}},
         {"layout", layout}};
  return {};
}

double measured_tokens_per_gpu(const json& r) {
  const json& m = r["measured"];
  if (m.contains("tokens_per_sec_per_gpu") && m["tokens_per_sec_per_gpu"].is_number())
    return m["tokens_per_sec_per_gpu"].get<double>();
  // Megatron-LM v1 reports iteration time: tokens per iteration / time / GPUs.
  return r["global_batch_seqs"].get<double>() * r["seq_len"].get<double>() /
         (m["iteration_time_ms"].get<double>() / 1000.0) / r["num_gpus"].get<double>();
}

double predict(const Run& run, const planner::PlannerConstants& k, bool* fits = nullptr) {
  const planner::Workload& w = run.workload;
  const planner::Hardware& hw = *w.hardware;
  const int nodes = *w.nodes;
  const planner::Layout l = planner::complete_layout(w, nodes * hw.instance.gpu_count);
  const auto prepared = prepared_for(w, run.card_memory_gib, k);
  const auto e = planner::estimate(planner::prepare_model(w.model, w.job), prepared, nodes, l, k);
  if (fits) *fits = e.fits;
  return e.tokens_per_s / l.gpus();
}

void apply_row_routing(const json& r, planner::Workload& w);

// Micro-batch not stated, without a pipeline: to_workload takes the whole local batch. A run that
// ran held its micro-batch in memory, so where the memory model says the whole batch does not fit,
// the largest divisor of the local batch it says fits; the whole batch where none does. Shipped
// constants: the choice does not move with a fit of the time constants. Such a row's memory
// verdict then says only whether any micro-batch fits: `no` where none does (still evidence).
void choose_unstated_micro_batch(const json& r, const Catalog& catalog, json& workload) {
  if (r.contains("micro_batch") && !r["micro_batch"].is_null()) return;
  if (workload["layout"]["pp"].get<int>() != 1) return;
  const int local = workload["layout"]["micro_batch"].get<int>();
  if (local <= 1) return;
  try {
    for (int mb = local; mb >= 1; --mb) {
      if (local % mb != 0) continue;
      json trial = workload;
      trial["layout"]["micro_batch"] = mb;
      Run run;
      run.workload = planner::parse_workload(trial, catalog);
      apply_row_routing(r, run.workload);
      run.card_memory_gib = stated_card_memory_gib(r["gpu"].get<std::string>(), run.workload.hardware->gpu);
      bool fits = false;
      predict(run, planner::default_constants(), &fits);
      if (fits) {
        workload["layout"]["micro_batch"] = mb;
        return;
      }
    }
  } catch (const Error&) {
    // Left as it was: the loader below reports the row's problem (a trial differs from the row's
    // own workload only in its micro-batch).
  }
}

// FNV-1a: a hash that is the same on every platform, so the fit/held-out split is too.
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Mean over fit subgroups of the mean |log(predicted / measured)|: every GPU/precision counts equally.
// moe: the MoE fit set's runs instead of the dense fit set's.
// The routing a MoE row states: benchmarks that force-balance the tokens over the experts
// (Megatron-Bridge's MoE rows) run without the load imbalance the planner assumes by default
// (capacity 1.0, as the source states); token-dropping runs at the capacity factor the row states
// (or assumes, see its derived_fields).
void apply_row_routing(const json& r, planner::Workload& w) {
  if (!w.model.moe.enabled()) return;
  if (get_or(r, "force_balanced", false)) w.model.moe.capacity_factor = 1.0;
  if (r.contains("capacity_factor") && r["capacity_factor"].is_number())
    w.model.moe.capacity_factor = r["capacity_factor"].get<double>();
}

// One fitted constant: where it lives and its physically plausible bounds.
struct FitParam {
  const char* name;
  double* value;
  double lo, hi;
};

// Coordinate descent shared by every fit: each parameter in turn is scaled up and down by a
// step that halves from 30% to 0.2%, clamped to its bounds, kept when the loss falls. Returns the
// final loss.
template <typename Loss>
double coordinate_descent(std::vector<FitParam>& params, Loss loss) {
  for (FitParam& p : params) *p.value = std::clamp(*p.value, p.lo, p.hi);
  double best = loss();
  for (double step = 0.3; step > 0.002; step *= 0.5) {
    for (int round = 0; round < 20; ++round) {
      bool improved = false;
      for (FitParam& p : params) {
        for (double dir : {1.0 + step, 1.0 / (1.0 + step)}) {
          const double old = *p.value;
          *p.value = std::clamp(old * dir, p.lo, p.hi);
          const double l = loss();
          if (l < best - 1e-9) {
            best = l;
            improved = true;
          } else *p.value = old;
        }
      }
      if (!improved) break;
    }
  }
  return best;
}

double loss(const std::vector<Run>& runs, const planner::PlannerConstants& k, bool moe = false) {
  std::map<std::string, std::pair<double, int>> by;
  for (const Run& r : runs) {
    if (moe ? !r.moe_fit : !r.fit_set) continue;
    const double err = std::fabs(std::log(predict(r, k) / r.measured));
    by[r.subgroup].first += err;
    by[r.subgroup].second += 1;
  }
  double total = 0;
  for (const auto& [name, s] : by) total += s.first / s.second;
  return total / static_cast<double>(by.size());
}

void fit(const std::vector<Run>& runs, planner::PlannerConstants& k) {
  std::vector<FitParam> params = {
      // Bounds keep each constant physically plausible: cuBLAS GEMMs reach 50-95% of dense peak,
      // FlashAttention 2/3 30-75%, a layer launches tens of kernels of a few microseconds.
      {"gemm_efficiency_ampere", &k.gemm_efficiency_ampere, 0.5, 0.95},
      {"gemm_efficiency_hopper", &k.gemm_efficiency_hopper, 0.4, 0.95},
      {"fp8_gemm_efficiency_ratio", &k.fp8_gemm_efficiency_ratio, 0.4, 1.0},
      // FlashAttention-2 forward+backward reaches ~50-70% of A100 peak (Dao 2023, Fig. 4-6) and
      // ~30-37% of H100's (Shah et al. 2024, FlashAttention-3 paper, Fig. 5-6); FA3/cuDNN up to ~75%.
      {"attention_efficiency_ampere", &k.attention_efficiency_ampere, 0.3, 0.75},
      {"attention_efficiency_hopper", &k.attention_efficiency_hopper, 0.15, 0.75},
      {"fp8_cast_passes", &k.fp8_cast_passes, 0.0, 8.0},
      {"elementwise_passes", &k.elementwise_passes, 2.0, 40.0},
      {"layer_overhead_s", &k.layer_overhead_s, 1e-6, 100e-6},
      {"zero3_overlap", &k.zero3_overlap, 0.3, 1.0},
      // fp8 bookkeeping per GEMM: an amax reduction and a scale update are a few small kernels.
      {"fp8_gemm_overhead_s", &k.fp8_gemm_overhead_s, 1e-6, 100e-6},
      // Scale effects (collectives.cpp): NCCL's per-step network latency from its tuning table's
      // 6.6 us (Simple) up to 3x; the per-rank chunk at which a ring step reaches half its
      // bandwidth, 16 KiB to 4 MiB (nccl-tests curves flatten between 256 KiB and 4 MiB per rank).
      {"nccl_hop_latency_net_s", &k.nccl_hop_latency_net_s, 6.6e-6, 20e-6},
      {"nccl_half_bandwidth_bytes", &k.nccl_half_bandwidth_bytes, 16384, 4194304},
  };
  // A fixed start (the pre-calibration guesses), so the fit does not depend on the shipped values.
  k.gemm_efficiency_ampere = 0.80;
  k.gemm_efficiency_hopper = 0.70;
  k.fp8_gemm_efficiency_ratio = 0.75;
  k.attention_efficiency_ampere = 0.45;
  k.attention_efficiency_hopper = 0.35;
  k.fp8_cast_passes = 1.0;
  k.elementwise_passes = 12.0;
  k.layer_overhead_s = 20e-6;
  k.zero3_overlap = 0.8;
  k.fp8_gemm_overhead_s = 10e-6;
  k.nccl_hop_latency_net_s = 6.6e-6;
  k.nccl_half_bandwidth_bytes = 65536;
  const double best = coordinate_descent(params, [&] { return loss(runs, k); });
  planner::derive_uncalibrated_efficiencies(k);
  std::printf("\nfitted (loss %.4f = mean |log(pred/meas)| over GPU/precision groups):\n", best);
  for (const FitParam& p : params) std::printf("    c.%s = %.4g;\n", p.name, *p.value);
}

// The MoE constants alone, on the MoE fit set (--moe-fit-set), the dense constants held at their
// shipped values: coordinate descent as fit() from fixed starts within physical bounds.
void fit_moe(const std::vector<Run>& runs, planner::PlannerConstants& k) {
  std::vector<FitParam> params = {
      // Grouped GEMMs at half the dense ceiling for a smallest dimension of 64 to 4096: cuBLAS/CUTLASS
      // tiles are 64-256 wide, so a GEMM only a few tiles wide leaves SMs idle in its last wave.
      {"moe_gemm_half_dim", &k.moe_gemm_half_dim, 64, 4096},
      // A MoE layer launches tens of small kernels per pass (router, top-k, permute, unpermute,
      // dispatcher) and, dropless, waits on the host for the tokens per expert: 10 us to 5 ms.
      {"moe_layer_overhead_s", &k.moe_layer_overhead_s, 10e-6, 5e-3},
      // The GPU time of a MoE layer's pass that hides half of that host time: 10 us (a few kernels)
      // to 100 ms (never hidden in practice).
      {"moe_host_hide_s", &k.moe_host_hide_s, 10e-6, 100e-3},
      // Permutation: at least its 4 passes (read + write, permute and unpermute), up to 4x that.
      {"moe_permute_passes", &k.moe_permute_passes, 4.0, 16.0},
  };
  k.moe_gemm_half_dim = 256;
  k.moe_layer_overhead_s = 100e-6;
  k.moe_host_hide_s = 1e-3;
  k.moe_permute_passes = 4.0;
  const double best = coordinate_descent(params, [&] { return loss(runs, k, true); });
  std::printf(
      "\nfitted MoE constants (loss %.4f = mean |log(pred/meas)| over the MoE fit set's GPU/precision groups):\n",
      best);
  for (const FitParam& p : params) std::printf("    c.%s = %.4g;\n", p.name, *p.value);
}

// Memory against Korthikanti et al. 2022 Figure 1 (Megatron-LM, tp 8, first pipeline stage,
// no FlashAttention, dropout) and Megatron-LM PR 482's measured peaks (Llama 2 7B, sequence length
// not stated: 2048 and 4096 both shown).
void memory_report(const Catalog& catalog) {
  // 175B and 530B ran the interleaved schedule; 3 virtual stages reproduce their figures.
  struct Case {
    const char* name;
    int layers, hidden, heads, pp, v, micro_batch;
    double states_gib, act_none_gib, act_seqsel_gib;
  };
  const Case fig1[] = {{"22B", 48, 6144, 64, 1, 1, 4, 45.5625, 59.25, 9.5625},
                       {"175B", 96, 12288, 96, 8, 3, 1, 45.5625, 66.84375, 12.3515625},
                       {"530B", 105, 20480, 128, 35, 3, 1, 31.640625, 114.0234375, 23.076171875},
                       {"1T", 128, 25600, 160, 64, 1, 1, 32.958984375, 131.25, 26.5625}};
  const planner::PlannerConstants& k = planner::default_constants();
  const Gpu* a100 = catalog.find_gpu("A100-SXM4-80GB");
  if (!a100) return;
  Instance in;
  in.gpu_model = a100->id;
  in.gpu_count = 8;
  in.gpu_memory_gb = 80;
  in.intra_node_fabric = Fabric::nvswitch;
  in.nvlink_gbytes_per_s = 600;
  const planner::Hardware hw{in, *a100, true};
  std::printf("\nmemory per GPU, GiB: Korthikanti et al. 2022 Figure 1 (tp 8; 175B and 530B with 3 virtual stages)\n");
  std::printf("%-6s %-26s %9s %9s %7s\n", "model", "what", "published", "predicted", "error");
  for (const Case& c : fig1) {
    planner::ModelShape m;
    m.name = c.name;
    m.layers = c.layers;
    m.hidden = c.hidden;
    m.heads = c.heads;
    m.kv_heads = c.heads;
    m.ffn_hidden = 4 * c.hidden;
    m.vocab = 51200;
    m.dropout = true;
    m.tied_embeddings = true;
    planner::Job job;
    job.seq_len = 2048;
    job.global_batch = c.micro_batch * c.pp * 4;
    job.flash_attention = false;
    const auto pm = planner::prepare_model(m, job);
    const auto ph = planner::prepare_hardware(hw, job, k, nullptr, false);
    planner::Layout l;
    l.tp = 8;
    l.pp = c.pp;
    l.virtual_stages = c.v;
    l.micro_batch = c.micro_batch;
    l.zero = 0;
    auto gib = [](double bytes) { return bytes / 1073741824.0; };
    planner::Estimate none, seqsel;
    planner::estimate_memory(pm, ph, l, k, none);
    l.sequence_parallel = true;
    l.recompute = planner::Recompute::selective;
    planner::estimate_memory(pm, ph, l, k, seqsel);
    const double states = gib(none.weights + none.gradients + none.optimizer);
    std::printf("%-6s %-26s %9.2f %9.2f %+6.1f%%\n", c.name, "weights+grads+optimizer", c.states_gib, states,
                100 * (states / c.states_gib - 1));
    std::printf("%-6s %-26s %9.2f %9.2f %+6.1f%%\n", c.name, "activations, none", c.act_none_gib, gib(none.activations),
                100 * (gib(none.activations) / c.act_none_gib - 1));
    std::printf("%-6s %-26s %9.2f %9.2f %+6.1f%%\n", c.name, "activations, SP+selective", c.act_seqsel_gib,
                gib(seqsel.activations), 100 * (gib(seqsel.activations) / c.act_seqsel_gib - 1));
  }
  struct Pr {
    const char* name;
    int tp, pp, dp, micro_batch;
    double measured_gb;
  };
  const Pr pr482[] = {{"dp8 pp1 tp1 mbs2", 1, 1, 8, 2, 69.1},
                      {"dp4 pp1 tp2 mbs4", 2, 1, 4, 4, 55.7},
                      {"dp4 pp2 tp1 mbs2", 1, 2, 4, 2, 49.8},
                      {"dp1 pp1 tp8 mbs4", 8, 1, 1, 4, 28.8}};
  std::printf("\nmemory per GPU, GB: Megatron-LM PR 482 measured peaks (Llama 2 7B, distributed optimizer = ZeRO-1)\n");
  std::printf("%-18s %9s %12s %12s\n", "layout", "measured", "pred s=2048", "pred s=4096");
  for (const Pr& c : pr482) {
    double pred[2];
    for (int i = 0; i < 2; ++i) {
      planner::Job job;
      job.seq_len = i == 0 ? 2048 : 4096;
      job.global_batch = 2048;
      const auto pm = planner::prepare_model(planner::preset("llama2-7b"), job);
      const auto ph = planner::prepare_hardware(hw, job, k, nullptr, false);
      planner::Layout l;
      l.tp = c.tp;
      l.pp = c.pp;
      l.dp = c.dp;
      l.micro_batch = c.micro_batch;
      l.zero = 1;
      planner::Estimate e;
      planner::estimate_memory(pm, ph, l, k, e);
      pred[i] = e.total / 1e9;
    }
    std::printf("%-18s %9.1f %12.1f %12.1f\n", c.name, c.measured_gb, pred[0], pred[1]);
  }
}

// --- measured peak memory (tests/calibration/memory_runs.json and check_runs.json peaks) ---

struct MemRun {
  std::string id, group;
  bool fit_set = false, oom = false;
  // What the figure counts: nvidia-smi (everything on the card) or PyTorch's max_memory_reserved
  // (torchtitan's log), which leaves out the CUDA context and NCCL's buffers outside the caching allocator.
  bool torch_reserved = false;
  // torch.cuda.max_memory_allocated (litgpt's "Memory used"): the live tensors only, without the
  // caching allocator's reserve either.
  bool torch_allocated = false;
  double card_memory_gib = 0;  // as Run::card_memory_gib: the card that ran, where the catalog's differs
  planner::Workload workload;
  double measured_bytes = 0;  // 0 for an OOM report
};

std::vector<MemRun> load_memory_runs(const std::string& path, const std::string& peft_path,
                                     const std::string& workload_path, const std::string& check_set_path,
                                     const Catalog& catalog) {
  std::vector<MemRun> out;
  std::set<std::string> ids;  // one row, one id: a figure quoted twice under one id would count twice unnoticed
  auto add = [&](const json& r, json workload, const std::string& group, bool fit, bool oom, double bytes,
                 bool torch_reserved = false, bool torch_allocated = false) {
    if (!ids.insert(r["id"].get<std::string>()).second)
      throw std::runtime_error("memory run id " + r["id"].get<std::string>() + " appears twice");
    MemRun run;
    run.torch_reserved = torch_reserved;
    run.torch_allocated = torch_allocated;
    run.id = r["id"].get<std::string>();
    run.group = group;
    run.fit_set = fit;
    run.oom = oom;
    run.measured_bytes = bytes;
    try {
      run.workload = planner::parse_workload(workload, catalog);
      apply_row_routing(r, run.workload);
    } catch (const Error& e) {
      std::fprintf(stderr, "memory run %s unusable: %s\n", run.id.c_str(), e.what());
      return;
    }
    out.push_back(std::move(run));
  };
  if (std::ifstream in(path); in) {
    const json doc = json::parse(in);
    for (const json& r : doc["runs"]) {
      const auto node = node_for(r["gpu"].get<std::string>());
      const int gpus = r["tp"].get<int>() * r["pp"].get<int>() * r["dp"].get<int>();
      const int per_node = std::min(gpus, node->gpus_per_node);
      json model = {{"layers", r["layers"]},
                    {"hidden", r["hidden"]},
                    {"heads", r["heads"]},
                    {"kv_heads", r["heads"]},
                    {"ffn_hidden", 4 * r["hidden"].get<int>()},
                    {"vocab", r["vocab"]},
                    {"gated_mlp", false},
                    {"tied_embeddings", r["tied_embeddings"]},
                    {"dropout", r["dropout"]},
                    {"name", r["id"]}};
      json job = {{"kind", "pretrain"},
                  {"seq_len", r["seq_len"]},
                  {"global_batch", r["global_batch"]},
                  {"precision", r["precision"]},
                  {"flash_attention", r["flash_attention"]},
                  {"framework", r["framework"]}};
      json layout = {{"tp", r["tp"]},
                     {"pp", r["pp"]},
                     {"dp", r["dp"]},
                     {"micro_batch", r["micro_batch"]},
                     {"zero", r["zero"]},
                     {"recompute", r["recompute"]},
                     {"sequence_parallel", false}};
      json custom = {{"gpu_model", node->gpu_model},    {"gpu_count", per_node},
                     {"intra_node_fabric", "nvswitch"}, {"nvlink_gbytes_per_s", node->nvlink},
                     {"network_type", "infiniband"},    {"network_gbits_per_s", node->network_gbits}};
      json w = {{"model", model},
                {"job", job},
                {"hardware", {{"custom", custom}, {"nodes", (gpus + per_node - 1) / per_node}}},
                {"layout", layout}};
      const bool oom = r["oom"].get<bool>();
      // nvidia-smi's MiB figures, written as "GB" in the source: read as GiB.
      add(r, w, r["source_group"].get<std::string>(), r["set"] == "fit", oom,
          oom ? 0.0 : r["measured_gb"].get<double>() * 1073741824.0);
    }
  }
  // LoRA / QLoRA peaks (memory_peft_runs.json): presets on one GPU, as the rows state them.
  if (!peft_path.empty()) {
    std::ifstream in(peft_path);
    if (!in) throw std::runtime_error("cannot read " + peft_path);
    const json doc = json::parse(in);
    for (const json& r : doc["runs"]) {
      json job = {{"kind", "lora"},
                  {"seq_len", r["seq_len"]},
                  {"global_batch", r["micro_batch"]},
                  {"precision", r["precision"]},
                  {"framework", r["framework"]},
                  {"lora_rank", r["lora_rank"]},
                  {"lora_targets", r["lora_targets"]}};
      if (r["lora_base"].is_string()) job["lora_base"] = r["lora_base"];
      json w = {
          {"model", {{"preset", r["preset"]}}},
          {"job", job},
          {"hardware",
           {{"custom", {{"gpu_model", r["gpu"]}, {"gpu_count", 1}, {"intra_node_fabric", "none"}}}, {"nodes", 1}}},
          {"layout",
           {{"tp", 1},
            {"pp", 1},
            {"dp", 1},
            {"micro_batch", r["micro_batch"]},
            {"zero", r["zero"]},
            {"recompute", r["recompute"]}}}};
      const bool oom = r["oom"].get<bool>();
      add(r, w, "check: " + r["source_group"].get<std::string>() + " (allocated)", false, oom,
          oom ? 0.0 : r["measured_gb"].get<double>() * 1e9, false, true);
    }
  }
  // Full fine-tunes as planner workloads (memory_workload_runs.json): the row's own workload, the
  // figure compared like with like by what it counts.
  if (!workload_path.empty()) {
    std::ifstream in(workload_path);
    if (!in) throw std::runtime_error("cannot read " + workload_path);
    const json doc = json::parse(in);
    for (const json& r : doc["runs"]) {
      const std::string kind = r["measured_kind"].get<std::string>();
      if (kind != "max_memory_reserved" && kind != "max_memory_allocated" && kind != "nvidia-smi" && kind != "unknown")
        throw std::runtime_error("memory run " + r["id"].get<std::string>() + ": measured_kind " + kind);
      const bool oom = r["oom"].get<bool>();
      add(r, r["workload"], "check: " + r["source_group"].get<std::string>(), r["set"] == "fit", oom,
          oom ? 0.0 : r["measured_gib"].get<double>() * 1073741824.0, kind == "max_memory_reserved",
          kind == "max_memory_allocated");
    }
  }
  if (!check_set_path.empty()) {
    std::ifstream in(check_set_path);
    const json doc = json::parse(in);
    for (const json& r : doc["runs"]) {
      if (!r.contains("peak_memory_gb_per_gpu") || !r["peak_memory_gb_per_gpu"].is_number()) continue;
      json w;
      if (!to_workload(r, w).empty()) continue;
      // torchtitan's H100 runs were on 96 GB cards (the catalog's H100 holds 80, the most a custom
      // H100 may claim); it reports max reserved memory in GiB.
      if (r["gpu"].get<std::string>().find("H100") != std::string::npos) w["hardware"]["custom"]["gpu_memory_gb"] = 80;
      w["job"]["framework"] = "torchtitan";
      add(r, w, "check: " + r["source_group"].get<std::string>() + " (peak)", false, false,
          r["peak_memory_gb_per_gpu"].get<double>() * 1073741824.0, true);
      if (!out.empty() && out.back().id == r["id"].get<std::string>())
        out.back().card_memory_gib =
            stated_card_memory_gib(r["gpu"].get<std::string>(), out.back().workload.hardware->gpu);
    }
  }
  return out;
}

struct MemPrediction {
  double total = 0;
  bool fits = false, tight = false;
};

MemPrediction predict_memory(const MemRun& run, const planner::PlannerConstants& k) {
  const planner::Workload& w = run.workload;
  const planner::Hardware& hw = *w.hardware;
  const planner::Layout l = planner::complete_layout(w, *w.nodes * hw.instance.gpu_count);
  const auto prepared = prepared_for(w, run.card_memory_gib, k);
  planner::Estimate e;
  const auto model = planner::prepare_model(w.model, w.job);
  planner::estimate_memory(model, prepared, l, k, e);
  double compared = e.total;
  // Like with like: PyTorch's reserved pool holds neither the context nor NCCL's buffers; its
  // allocated bytes not the allocator's reserve either.
  if (run.torch_reserved || run.torch_allocated) compared -= e.context_and_nccl;
  if (run.torch_allocated) compared -= e.allocator_reserve;
  return {compared, e.fits, e.tight};
}

double memory_loss(const std::vector<MemRun>& runs, const planner::PlannerConstants& k) {
  double total = 0;
  int n = 0;
  for (const MemRun& r : runs) {
    if (!r.fit_set || r.oom) continue;
    total += std::fabs(std::log(predict_memory(r, k).total / r.measured_bytes));
    ++n;
  }
  return n ? total / n : 0.0;
}

void fit_memory(const std::vector<MemRun>& runs, planner::PlannerConstants& k) {
  // NCCL: 4 MiB Simple + LL/LL128 buffers per channel per peer, 8-32 channels: 0.1-1 GB per
  // communicator; the caching allocator's reserve over live short-lived tensors 0-50%.
  std::vector<FitParam> params = {{"nccl_gb_per_communicator", &k.nccl_gb_per_communicator, 0.1, 1.0},
                                  {"allocator_dynamic_fraction", &k.allocator_dynamic_fraction, 0.0, 0.5},
                                  {"allocator_static_fraction", &k.allocator_static_fraction, 0.0, 0.1}};
  k.nccl_gb_per_communicator = 0.3;
  k.allocator_dynamic_fraction = 0.2;
  k.allocator_static_fraction = 0.02;
  const double best = coordinate_descent(params, [&] { return memory_loss(runs, k); });
  std::printf("\nmemory fit (loss %.4f = mean |log(pred/meas)| on the fit rows):\n", best);
  for (const FitParam& p : params) std::printf("    c.%s = %.4g;\n", p.name, *p.value);
}

// Prints per-group memory errors and OOM verdicts; returns false when a check threshold fails.
bool memory_report_runs(const std::vector<MemRun>& runs, const planner::PlannerConstants& k, bool table,
                        double max_check_median, int max_oom_fits, double max_group_median,
                        const std::map<std::string, double>& group_limits, double band_tolerance) {
  std::map<std::string, std::vector<double>> abs_err, signed_err;
  std::vector<double> fit_over, check_over;
  int ooms = 0, oom_fits = 0, oom_tight = 0;
  if (table)
    std::printf("\n%-64s %5s %9s %9s %7s %s\n", "memory run", "set", "measured", "predicted", "error", "verdict");
  for (const MemRun& r : runs) {
    const MemPrediction p = predict_memory(r, k);
    const char* verdict = !p.fits ? "no" : p.tight ? "tight" : "fits";
    if (r.oom) {
      ++ooms;
      oom_fits += p.fits && !p.tight;
      oom_tight += p.tight;
      if (table)
        std::printf("%-64s %5s %9s %9.1f %7s %s\n", r.id.c_str(), r.fit_set ? "fit" : "check", "OOM",
                    p.total / 1073741824.0, "", verdict);
      continue;
    }
    const double err = p.total / r.measured_bytes - 1.0;
    const std::string g = (r.fit_set ? "fit: " : (r.group.rfind("check: ", 0) == 0 ? "" : "check: ")) + r.group;
    abs_err[g].push_back(std::fabs(err));
    signed_err[g].push_back(err);
    abs_err[r.fit_set ? "ALL memory fit set" : "ALL memory check set"].push_back(std::fabs(err));
    // How far the measured peak sits above the prediction (0 where the prediction is higher): the
    // side of the error that runs a job out of memory, which is what `tight` guards.
    (r.fit_set ? fit_over : check_over).push_back(std::max(0.0, r.measured_bytes / p.total - 1.0));
    if (table)
      std::printf("%-64s %5s %9.1f %9.1f %+6.1f%% %s\n", r.id.c_str(), r.fit_set ? "fit" : "check",
                  r.measured_bytes / 1073741824.0, p.total / 1073741824.0, 100 * err, verdict);
  }
  std::printf("\n%-52s %4s %10s %10s\n", "peak memory per GPU (GiB)", "runs", "median|e|", "median e");
  for (const auto& [g, v] : abs_err)
    std::printf("%-52s %4zu %9.1f%% %+9.1f%%\n", g.c_str(), v.size(), 100 * median(v),
                signed_err.count(g) ? 100 * median(signed_err[g]) : 0.0);
  // The band `tight` stands for is the error measured where the model was not fitted: the p90, over
  // the check rows, of how far the measured peak exceeds the prediction (measured / predicted - 1,
  // 0 where the prediction is higher), rounded up to the whole percent (a safety margin is never
  // rounded down). The fit rows' p90 is printed beside it; it is smaller by construction.
  auto p90 = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v[size_t(0.9 * double(v.size() - 1))];
  };
  const double check_band = std::ceil(100.0 * p90(check_over) - 1e-9) / 100.0;
  std::printf("memory error band (p90 of measured / predicted - 1, at least 0): check set %.3f (rounded up: %.2f), "
              "fit set %.3f (constants: %.3f)\n",
              p90(check_over), check_band, p90(fit_over), k.memory_error_band);
  std::printf("published OOMs: %d; predicted fits %d, tight %d, no %d\n", ooms, oom_fits, oom_tight,
              ooms - oom_fits - oom_tight);
  bool ok = true;
  if (band_tolerance >= 0 && !(std::fabs(check_band - k.memory_error_band) <= band_tolerance)) {
    std::printf("FAIL: memory_error_band %.3f is not the check set's p90 excess rounded up, %.2f (within %.3f)\n",
                k.memory_error_band, check_band, band_tolerance);
    ok = false;
  }
  if (max_check_median >= 0) {
    const double m = median(abs_err["ALL memory check set"]);
    if (!(m <= max_check_median)) {
      std::printf("FAIL: memory check-set median %.3f above %.3f\n", m, max_check_median);
      ok = false;
    }
    if (oom_fits > max_oom_fits) {
      std::printf("FAIL: %d published OOM(s) predicted to fit\n", oom_fits);
      ok = false;
    }
  }
  for (const auto& [g, limit] : group_limits)  // a ceiling for a group that is not there checks nothing
    if (!abs_err.count(g)) {
      std::printf("FAIL: --memory-group-limit names no memory group: %s\n", g.c_str());
      ok = false;
    }
  if (max_group_median >= 0)
    for (const auto& [g, v] : abs_err) {  // every check-set source group, or its named ceiling
      if (g.rfind("check: ", 0) != 0) continue;
      const auto named = group_limits.find(g);
      const double limit = named != group_limits.end() ? named->second : max_group_median;
      if (!(median(v) <= limit)) {
        std::printf("FAIL: memory check-set group %s median %.3f above %.3f\n", g.c_str(), median(v), limit);
        ok = false;
      }
    }
  return ok;
}

// Scale effects: ZeRO-3 / FSDP without model parallelism at a fixed global batch on DGX A100 nodes
// (8 x 200 Gbit/s HDR: 200 Gbit/s per GPU) as the DP group grows, predicted step over its compute
// alone. Published runs in this regime fall 1.6-5x below a compute-bound prediction at hundreds to
// thousands of GPUs (issue 11; Fernandez et al. 2024, arXiv 2411.13055: -37% per GPU from 128 to
// 2048 H100 with FSDP). Returns false when the largest group's slowdown leaves [lo, hi].
bool scale_report(const Catalog& catalog, const planner::PlannerConstants& k, double lo, double hi) {
  struct Case {
    const char* name;
    int layers, hidden, heads, ffn;
    int seq, global_batch;
  };
  const Case cases[] = {{"Llama-2 7B, seq 4096, batch 1024", 32, 4096, 32, 11008, 4096, 1024},
                        {"Llama-2 13B, seq 4096, batch 1024", 40, 5120, 40, 13824, 4096, 1024},
                        {"GPT 1.3B, seq 2048, batch 1024", 24, 2048, 16, 8192, 2048, 1024}};
  bool ok = true;
  std::printf("\nZeRO-3 without model parallelism, A100-80GB, 200 Gbit/s per GPU, fixed global batch:\n");
  std::printf("%-36s %6s %5s %10s %10s %9s %10s\n", "model", "GPUs", "mbs", "tok/s/GPU", "compute", "slowdown",
              "exposed dp");
  double worst = 0;
  for (const Case& c : cases) {
    for (int gpus : {64, 128, 256, 512, 1024}) {
      json model = {{"layers", c.layers},
                    {"hidden", c.hidden},
                    {"heads", c.heads},
                    {"kv_heads", c.heads},
                    {"ffn_hidden", c.ffn},
                    {"vocab", 32000},
                    {"gated_mlp", c.ffn != 4 * c.hidden},
                    {"name", c.name}};
      json job = {{"kind", "pretrain"},
                  {"seq_len", c.seq},
                  {"global_batch", c.global_batch},
                  {"precision", "bf16"},
                  {"framework", "fsdp"}};
      json custom = {{"gpu_model", "A100-SXM4-80GB"},   {"gpu_count", 8},
                     {"intra_node_fabric", "nvswitch"}, {"nvlink_gbytes_per_s", 600},
                     {"network_type", "infiniband"},    {"network_gbits_per_s", 1600}};
      json layout = {{"tp", 1}, {"pp", 1}, {"dp", gpus}, {"micro_batch", 1}, {"zero", 3}, {"recompute", "full"}};
      json w = {
          {"model", model}, {"job", job}, {"hardware", {{"custom", custom}, {"nodes", gpus / 8}}}, {"layout", layout}};
      const planner::Workload wl = planner::parse_workload(w, catalog);
      const planner::Layout l = planner::complete_layout(wl, gpus);
      const auto e =
          planner::estimate(planner::prepare_model(wl.model, wl.job),
                            planner::prepare_hardware(*wl.hardware, wl.job, k, nullptr, false), gpus / 8, l, k);
      const double slowdown = e.step / e.compute;
      std::printf("%-36s %6d %5d %10.0f %9.2fs %8.2fx %9.2fs\n", c.name, gpus, l.micro_batch, e.tokens_per_s / gpus,
                  e.compute, slowdown, e.dp_exposed);
      if (gpus == 1024) worst = std::max(worst, slowdown);
    }
  }
  if (lo > 0 && !(worst >= lo && worst <= hi)) {
    std::printf("FAIL: largest slowdown at 1024 GPUs %.2fx outside [%.2f, %.2f]\n", worst, lo, hi);
    ok = false;
  }
  return ok;
}

// One generation's GEMM ceiling alone (and, for AMD Instinct, the FP8 share of it of CDNA 3 and of
// CDNA 4), on that generation's fit set, every other constant held at its shipped value: no other
// generation's run depends on them, and no other constant is fit on these runs. The ceiling's
// bounds (0.3 to 0.9 of the dense peak) leave the fit room on both sides: hipBLASLt's large BF16
// GEMMs reach 0.3 to 0.9 of the MI300X/MI325X peak in published microbenchmarks, and the NVIDIA
// generations' fit values are 0.71 (Hopper) and 0.83 (Ampere). An FP8 ratio (0.4 to 1.2 of the
// 16-bit share) is fit only where the set holds FP8 runs of its architecture.
struct Fp8Ratio {
  Architecture architecture;
  double planner::PlannerConstants::*ratio;
  const char* name;
};

void fit_generation(const std::vector<Run>& runs, const std::string& generation,
                    double planner::PlannerConstants::*ceiling, const char* ceiling_name,
                    const std::vector<Fp8Ratio>& fp8_ratios, planner::PlannerConstants& k) {
  std::vector<FitParam> params = {{ceiling_name, &(k.*ceiling), 0.3, 0.9}};
  for (const Fp8Ratio& f : fp8_ratios) {
    const bool has_fp8 = std::any_of(runs.begin(), runs.end(), [&](const Run& r) {
      return r.generation_fit == generation && r.workload.job.precision == planner::Precision::fp8 &&
             r.workload.hardware->gpu.architecture == f.architecture;
    });
    if (has_fp8) params.push_back({f.name, &(k.*f.ratio), 0.4, 1.2});
  }
  auto generation_loss = [&] {
    double total = 0;
    int n = 0;
    for (const Run& r : runs) {
      if (r.generation_fit != generation) continue;
      total += std::fabs(std::log(predict(r, k) / r.measured));
      ++n;
    }
    return n ? total / n : 0.0;
  };
  const double final_loss = coordinate_descent(params, generation_loss);
  std::printf("%s fit: loss %.4f\n", generation.c_str(), final_loss);
  for (const FitParam& p : params) std::printf("    c.%s = %.4g;\n", p.name, *p.value);
}

// The root of f on [lo, hi], where f falls from above zero at lo to below zero at hi, by bisection;
// NaN where it does not (no root in the range, or the wrong way round).
double root_of(const std::function<double(double)>& f, double lo, double hi) {
  if (!(f(lo) > 0 && f(hi) < 0)) return NAN;
  for (int i = 0; i < 50; ++i) {
    const double mid = 0.5 * (lo + hi);
    (f(mid) > 0 ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// GB300's ratio (gemm_efficiency_ratio_gb300): over the pairs of rows of the same job on the two GPUs
// (a GB300 row and the GB200 row of the same id, in the GB300 pair and MoE fit sets, each in the
// layout its table states, which the predicted ratio accounts for), the median of
// log(measured GB300/GB200 / predicted GB300/GB200) is set to zero. Pairs cancel what a release's
// software adds on both GPUs. A pair where either row is predicted not to fit in memory is left out:
// its published layout is not one the planner can time as stated. The predicted ratio grows with
// the constant, so bisection finds it. Returns the fitted value; NaN when no pair or no root.
double fit_gb300(const std::vector<Run>& runs, planner::PlannerConstants& k) {
  std::map<std::string, const Run*> by_id;
  for (const Run& r : runs)
    if (r.generation_fit == "gb300 pair" || r.moe_fit) by_id[r.id] = &r;
  std::vector<std::pair<const Run*, const Run*>> pairs;
  for (const auto& [id, run] : by_id) {
    const auto at = id.find("GB300");
    if (at == std::string::npos) continue;
    std::string partner = id;
    partner.replace(at, 5, "GB200");
    const auto it = by_id.find(partner);
    if (it == by_id.end()) continue;
    bool fits_gb300 = false, fits_gb200 = false;
    predict(*run, k, &fits_gb300);
    predict(*it->second, k, &fits_gb200);
    if (!fits_gb300 || !fits_gb200) {
      std::printf("gb300 fit: pair %s left out (predicted not to fit in memory)\n", id.c_str());
      continue;
    }
    pairs.emplace_back(run, it->second);
  }
  auto median_gap = [&](double ratio) {
    k.gemm_efficiency_ratio_gb300 = ratio;
    std::vector<double> gaps;
    for (const auto& [gb300, gb200] : pairs)
      gaps.push_back(std::log((gb300->measured / gb200->measured) / (predict(*gb300, k) / predict(*gb200, k))));
    return median(gaps);
  };
  const double lo = 0.8, hi = 1.6;
  const double fitted = pairs.empty() ? NAN : root_of(median_gap, lo, hi);
  if (std::isnan(fitted)) {
    std::fprintf(stderr, "error: gb300 fit: %zu pairs, no ratio in [%.1f, %.1f] fits them\n", pairs.size(), lo, hi);
    return NAN;
  }
  k.gemm_efficiency_ratio_gb300 = fitted;
  std::printf("gb300 fit: %zu GB300/GB200 pairs\n", pairs.size());
  for (const auto& [gb300, gb200] : pairs)
    std::printf("    %-58s measured %.3f predicted %.3f\n", gb300->id.c_str(), gb300->measured / gb200->measured,
                predict(*gb300, k) / predict(*gb200, k));
  std::printf("    c.gemm_efficiency_ratio_gb300 = %.4g;\n", fitted);
  return fitted;
}

// DeepSpeed's pipeline engine (deepspeed_pipeline_layer_overhead_s): over the DeepSpeed fit set's
// rows predicted to fit in memory, the median of log(measured / predicted) is set to zero. The
// prediction falls as the constant grows, so bisection finds it. Returns the fitted value; NaN when
// no row or no root.
double fit_deepspeed(const std::vector<Run>& runs, planner::PlannerConstants& k) {
  std::vector<const Run*> rows;
  for (const Run& r : runs) {
    if (r.generation_fit != "deepspeed") continue;
    bool fits = false;
    predict(r, k, &fits);
    if (fits) rows.push_back(&r);
    else std::printf("deepspeed fit: %s left out (predicted not to fit in memory)\n", r.id.c_str());
  }
  auto median_gap = [&](double overhead_s) {
    k.deepspeed_pipeline_layer_overhead_s = overhead_s;
    std::vector<double> gaps;
    for (const Run* r : rows) gaps.push_back(std::log(r->measured / predict(*r, k)));
    return median(gaps);
  };
  const double lo = 0, hi = 0.05;  // the gap grows with the constant: its root is the negated gap's
  const double fitted = rows.empty() ? NAN : root_of([&](double s) { return -median_gap(s); }, lo, hi);
  if (std::isnan(fitted)) {
    std::fprintf(stderr, "error: deepspeed fit: %zu rows, no overhead in [%g, %g] s fits them\n", rows.size(), lo, hi);
    return NAN;
  }
  k.deepspeed_pipeline_layer_overhead_s = fitted;
  std::printf("deepspeed fit: %zu rows\n    c.deepspeed_pipeline_layer_overhead_s = %.3g;\n", rows.size(), fitted);
  return fitted;
}

}  // namespace

int main(int argc, char** argv) {
  std::string runs_path = LINKWISE_CALIBRATION_DIR "/training_runs.json";
  std::string check_set_path;  // held-out runs from other sources (tests/calibration/check_runs.json)
  std::string moe_fit_path;    // MoE fit set (tests/calibration/moe_fit_runs.json), fit by --fit-moe only
  bool do_fit_moe = false;
  // Generation fit sets: AMD Instinct (tests/calibration/cdna_fit_runs.json) and Blackwell
  // (tests/calibration/blackwell_fit_runs.json), each fitting its GEMM efficiency only (--fit-cdna,
  // --fit-blackwell).
  std::string cdna_fit_path, blackwell_fit_path;
  bool do_fit_cdna = false, do_fit_blackwell = false;
  // GB300/GB200 pairs (tests/calibration/gb300_pair_fit_runs.json): fit gemm_efficiency_ratio_gb300
  // only (--fit-gb300), with the MoE fit set's pairs where it is given.
  std::string gb300_pair_fit_path;
  bool do_fit_gb300 = false;
  double gb300_tolerance = -1;  // --check-gb300: the shipped ratio within this of what the fit gives
  // DeepSpeed's pipeline engine (tests/calibration/deepspeed_fit_runs.json): fit
  // deepspeed_pipeline_layer_overhead_s only (--fit-deepspeed); --check-deepspeed TOL: the shipped
  // constant within TOL (relative) of what the fit gives.
  std::string deepspeed_fit_path;
  bool do_fit_deepspeed = false;
  double deepspeed_tolerance = -1;
  double deepspeed_overhead_s = -1;  // --deepspeed-overhead S: the profile's constant set to S (0: without it)
  std::string data_dir = LINKWISE_DATA_DIR;
  bool table = false, do_fit = false, do_fit_memory = false, bands = false;
  std::string memory_runs_path = LINKWISE_CALIBRATION_DIR "/memory_runs.json";
  std::string memory_peft_runs_path = LINKWISE_CALIBRATION_DIR "/memory_peft_runs.json";
  std::string memory_workload_runs_path = LINKWISE_CALIBRATION_DIR "/memory_workload_runs.json";
  double max_memory_median = -1;
  int max_oom_fits = 0;
  double memory_band_tolerance =
      -1;  // --memory-band TOL: memory_error_band within TOL of the check set's p90 excess, rounded up
  int max_ran_not_fitting = -1;         // --max-ran-no: published runs (they ran) the memory model calls `no`
  double max_memory_group_median = -1;  // --memory-groups: every memory check-set group's median |error|
  std::map<std::string, double> memory_group_limits;  // --memory-group-limit NAME MAX: a named group's own ceiling
  std::string fit_on = "all";  // all | half-a | half-b (complementary halves of every source) | mosaicml
  double max_fit_median = -1, max_holdout_median = -1;
  double max_group_median = -1;  // --check-groups: every check-set source group's median |error|
  std::map<std::string, double>
      group_limits;  // --group-limit NAME MAX: a named group's own ceiling (what is still off)
  bool scale = false;
  double scale_lo = -1, scale_hi = -1;
  // --write-held-out FILE: each held-out run's id and |error|, one per line (tab-separated), for
  // linkwise_calibrate_inference --moe-training-check to pool with its MoE serving check rows.
  std::string held_out_path;
  // --workload ID: print that run's workload JSON (to plan it with `linkwise plan` and read its step).
  std::string workload_id;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) runs_path = argv[++i];
    else if (!std::strcmp(argv[i], "--check-set") && i + 1 < argc) check_set_path = argv[++i];
    else if (!std::strcmp(argv[i], "--moe-fit-set") && i + 1 < argc) moe_fit_path = argv[++i];
    else if (!std::strcmp(argv[i], "--fit-moe")) do_fit_moe = true;
    else if (!std::strcmp(argv[i], "--cdna-fit-set") && i + 1 < argc) cdna_fit_path = argv[++i];
    else if (!std::strcmp(argv[i], "--fit-cdna")) do_fit_cdna = true;
    else if (!std::strcmp(argv[i], "--blackwell-fit-set") && i + 1 < argc) blackwell_fit_path = argv[++i];
    else if (!std::strcmp(argv[i], "--fit-blackwell")) do_fit_blackwell = true;
    else if (!std::strcmp(argv[i], "--gb300-pair-fit-set") && i + 1 < argc) gb300_pair_fit_path = argv[++i];
    else if (!std::strcmp(argv[i], "--fit-gb300")) do_fit_gb300 = true;
    else if (!std::strcmp(argv[i], "--check-gb300") && i + 1 < argc) gb300_tolerance = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--deepspeed-fit-set") && i + 1 < argc) deepspeed_fit_path = argv[++i];
    else if (!std::strcmp(argv[i], "--fit-deepspeed")) do_fit_deepspeed = true;
    else if (!std::strcmp(argv[i], "--check-deepspeed") && i + 1 < argc) deepspeed_tolerance = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--deepspeed-overhead") && i + 1 < argc) deepspeed_overhead_s = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--data") && i + 1 < argc) data_dir = argv[++i];
    else if (!std::strcmp(argv[i], "--table")) table = true;
    else if (!std::strcmp(argv[i], "--fit")) do_fit = true;
    else if (!std::strcmp(argv[i], "--fit-memory")) do_fit_memory = true;
    else if (!std::strcmp(argv[i], "--bands")) bands = true;
    else if (!std::strcmp(argv[i], "--memory-runs") && i + 1 < argc) memory_runs_path = argv[++i];
    else if (!std::strcmp(argv[i], "--memory-peft-runs") && i + 1 < argc) memory_peft_runs_path = argv[++i];
    else if (!std::strcmp(argv[i], "--memory-workload-runs") && i + 1 < argc) memory_workload_runs_path = argv[++i];
    else if (!std::strcmp(argv[i], "--memory-check") && i + 2 < argc) {
      max_memory_median = std::atof(argv[++i]);
      max_oom_fits = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--memory-groups") && i + 1 < argc) max_memory_group_median = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--memory-band") && i + 1 < argc) memory_band_tolerance = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--memory-group-limit") && i + 2 < argc) {
      const std::string name = argv[++i];
      memory_group_limits["check: " + name] = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--fit-on") && i + 1 < argc) fit_on = argv[++i];
    else if (!std::strcmp(argv[i], "--check-groups") && i + 1 < argc) max_group_median = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--group-limit") && i + 2 < argc) {
      const std::string name = argv[++i];
      group_limits["check: " + name] = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--write-held-out") && i + 1 < argc) held_out_path = argv[++i];
    else if (!std::strcmp(argv[i], "--workload") && i + 1 < argc) workload_id = argv[++i];
    else if (!std::strcmp(argv[i], "--scale")) scale = true;
    else if (!std::strcmp(argv[i], "--max-ran-no") && i + 1 < argc) max_ran_not_fitting = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--scale-check") && i + 2 < argc) {
      scale = true;
      scale_lo = std::atof(argv[++i]);
      scale_hi = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--check") && i + 2 < argc) {
      max_fit_median = std::atof(argv[++i]);
      max_holdout_median = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: %s [--runs FILE] [--check-set FILE] [--moe-fit-set FILE] [--cdna-fit-set FILE] "
                   "[--blackwell-fit-set FILE] [--gb300-pair-fit-set FILE] [--data DIR] [--table] [--fit] [--fit-moe] "
                   "[--fit-cdna] [--fit-blackwell] [--fit-gb300] [--check-gb300 TOL] [--deepspeed-fit-set FILE] "
                   "[--fit-deepspeed] [--check-deepspeed TOL] [--deepspeed-overhead S] [--fit-on "
                   "all|half-a|half-b|mosaicml] [--check FIT "
                   "HOLDOUT] [--max-ran-no N] [--write-held-out FILE] [--workload ID] [--memory-runs FILE] "
                   "[--memory-peft-runs FILE] [--memory-workload-runs FILE] [--fit-memory] [--memory-check MEDIAN "
                   "OOM_FITS] [--memory-band TOL] [--memory-groups MAX] "
                   "[--memory-group-limit NAME MAX] [--scale-check LO HI] [--bands]\n",
                   argv[0]);
      return 2;
    }
  }
  const Catalog catalog = Catalog::load_data_dir(data_dir);
  std::vector<Run> runs;
  std::map<std::string, int> unusable;
  // Runs of the check set are never fit: they are held out whatever --fit-on says. The MoE fit
  // set's runs fit the MoE constants only (--fit-moe) and are reported apart ("moe fit: ").
  // A generation fit set's runs fit that generation's GEMM efficiency only (--fit-cdna,
  // --fit-blackwell), reported as "cdna fit: " and "blackwell fit: "; the GB300 pair fit set's fit
  // gemm_efficiency_ratio_gb300 only (--fit-gb300), reported as "gb300 pair fit: ".
  enum class Set { fit, check, moe_fit, cdna_fit, blackwell_fit, gb300_pair_fit, deepspeed_fit };
  std::vector<std::pair<std::string, Set>> files = {{runs_path, Set::fit}};
  if (!check_set_path.empty()) files.push_back({check_set_path, Set::check});
  if (!moe_fit_path.empty()) files.push_back({moe_fit_path, Set::moe_fit});
  if (!cdna_fit_path.empty()) files.push_back({cdna_fit_path, Set::cdna_fit});
  if (!blackwell_fit_path.empty()) files.push_back({blackwell_fit_path, Set::blackwell_fit});
  if (!gb300_pair_fit_path.empty()) files.push_back({gb300_pair_fit_path, Set::gb300_pair_fit});
  if (!deepspeed_fit_path.empty()) files.push_back({deepspeed_fit_path, Set::deepspeed_fit});
  for (const auto& [path, set] : files) {
    const bool check_set = set == Set::check;
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 2;
    }
    const json doc = json::parse(in);
    for (const json& r : doc["runs"]) {
      json workload;
      const std::string reason = to_workload(r, workload);
      if (!reason.empty()) {
        ++unusable[reason];
        continue;
      }
      choose_unstated_micro_batch(r, catalog, workload);
      if (!workload_id.empty() && r["id"] == workload_id) {
        std::printf("%s\n", workload.dump(2).c_str());
        return 0;
      }
      Run run;
      run.id = r["id"].get<std::string>();
      run.group = r["source_group"].get<std::string>();
      run.subgroup = run.group + " " + workload["hardware"]["custom"]["gpu_model"].get<std::string>() + " " +
                     workload["job"]["precision"].get<std::string>();
      run.measured = measured_tokens_per_gpu(r);
      // Halves: a fixed split of every source by a hash of the run id.
      if (fit_on == "mosaicml") run.fit_set = run.group == "mosaicml_llm_foundry";
      else if (fit_on == "half-a") run.fit_set = fnv1a(run.id) % 2 == 0;
      else if (fit_on == "half-b") run.fit_set = fnv1a(run.id) % 2 == 1;
      else run.fit_set = true;
      if (check_set) {
        run.fit_set = false;
        run.group = "check: " + run.group;
        run.subgroup = "check: " + run.subgroup;
      }
      if (set == Set::moe_fit) {
        run.fit_set = false;
        run.moe_fit = true;
        run.group = "moe fit: " + run.group;
        run.subgroup = "moe fit: " + run.subgroup;
      }
      if (set == Set::cdna_fit || set == Set::blackwell_fit || set == Set::gb300_pair_fit ||
          set == Set::deepspeed_fit) {
        run.fit_set = false;
        run.generation_fit = set == Set::cdna_fit        ? "cdna"
                             : set == Set::blackwell_fit ? "blackwell"
                             : set == Set::deepspeed_fit ? "deepspeed"
                                                         : "gb300 pair";
        run.group = run.generation_fit + " fit: " + run.group;
        run.subgroup = run.generation_fit + " fit: " + run.subgroup;
      }
      try {
        run.workload = planner::parse_workload(workload, catalog);
        apply_row_routing(r, run.workload);
        run.card_memory_gib = stated_card_memory_gib(r["gpu"].get<std::string>(), run.workload.hardware->gpu);
        run.memory_evidence = !r.contains("memory_verdict_not_evidence");
        planner::validate_layout(
            run.workload,
            planner::complete_layout(run.workload, *run.workload.nodes * run.workload.hardware->instance.gpu_count),
            run.workload.hardware->instance.gpu_count, *run.workload.nodes);
      } catch (const Error& e) {
        ++unusable[std::string("invalid: ") + e.what()];
        continue;
      }
      runs.push_back(std::move(run));
    }
  }

  if (!workload_id.empty()) {  // printed and returned above when found
    std::fprintf(stderr, "error: no usable run with id %s in the sets given\n", workload_id.c_str());
    return 2;
  }
  planner::PlannerConstants k = planner::default_constants();
  if (deepspeed_overhead_s >= 0) k.deepspeed_pipeline_layer_overhead_s = deepspeed_overhead_s;
  if (do_fit) fit(runs, k);
  if (do_fit_moe) fit_moe(runs, k);
  if (do_fit_cdna)
    fit_generation(runs, "cdna", &planner::PlannerConstants::gemm_efficiency_cdna, "gemm_efficiency_cdna",
                   {{Architecture::cdna3, &planner::PlannerConstants::fp8_gemm_efficiency_ratio_cdna3,
                     "fp8_gemm_efficiency_ratio_cdna3"},
                    {Architecture::cdna4, &planner::PlannerConstants::fp8_gemm_efficiency_ratio_cdna4,
                     "fp8_gemm_efficiency_ratio_cdna4"}},
                   k);
  if (do_fit_blackwell)
    fit_generation(runs, "blackwell", &planner::PlannerConstants::gemm_efficiency_blackwell,
                   "gemm_efficiency_blackwell", {}, k);
  if (do_fit_gb300 || gb300_tolerance >= 0) {
    // --check-gb300 TOL: the shipped ratio must be what the fit gives today, within TOL.
    const double shipped = k.gemm_efficiency_ratio_gb300;
    const double fitted = fit_gb300(runs, k);
    if (std::isnan(fitted)) return 1;
    if (gb300_tolerance >= 0) {
      if (!(std::fabs(fitted - shipped) <= gb300_tolerance)) {
        std::printf("FAIL: the GB300 pair fit gives %.4f, the shipped constant is %.4f\n", fitted, shipped);
        return 1;
      }
      k.gemm_efficiency_ratio_gb300 = shipped;  // the check judges the shipped constant
    }
  }
  if (do_fit_deepspeed || deepspeed_tolerance >= 0) {
    const double shipped = k.deepspeed_pipeline_layer_overhead_s;
    const double fitted = fit_deepspeed(runs, k);
    if (std::isnan(fitted)) return 1;
    if (deepspeed_tolerance >= 0) {
      if (!(std::fabs(fitted / shipped - 1.0) <= deepspeed_tolerance)) {
        std::printf("FAIL: the DeepSpeed fit gives %.4g s, the shipped constant is %.4g s\n", fitted, shipped);
        return 1;
      }
      k.deepspeed_pipeline_layer_overhead_s = shipped;  // the check judges the shipped constant
    }
  }

  std::map<std::string, std::vector<double>> abs_err, signed_err;
  int not_fitting = 0;
  std::ofstream held_out;
  if (!held_out_path.empty()) {
    held_out.open(held_out_path);
    if (!held_out) {
      std::fprintf(stderr, "error: cannot write %s\n", held_out_path.c_str());
      return 2;
    }
  }
  if (table) std::printf("%-62s %9s %9s %7s %s\n", "run", "measured", "predicted", "error", "fits");
  for (const Run& r : runs) {
    bool fits = false;
    const double pred = predict(r, k, &fits);
    const double err = pred / r.measured - 1.0;
    if (held_out && !r.fit_set && !r.moe_fit && r.generation_fit.empty())
      held_out << r.id << '\t' << std::fabs(err) << '\n';
    not_fitting += !fits && r.memory_evidence;
    for (const std::string& g : {r.group, r.subgroup}) {
      abs_err[g].push_back(std::fabs(err));
      signed_err[g].push_back(err);
    }
    abs_err[r.moe_fit                          ? "ALL MoE fit set"
            : r.generation_fit == "cdna"       ? "ALL AMD Instinct fit set"
            : r.generation_fit == "blackwell"  ? "ALL Blackwell fit set"
            : r.generation_fit == "gb300 pair" ? "ALL GB300 pair fit set"
            : r.generation_fit == "deepspeed"  ? "ALL DeepSpeed fit set"
            : r.fit_set                        ? "ALL fit set"
                                               : "ALL held out"]
        .push_back(std::fabs(err));
    if (table)
      std::printf("%-62s %9.0f %9.0f %+6.1f%% %s\n", r.id.c_str(), r.measured, pred, 100 * err, fits ? "yes" : "NO");
  }
  std::printf("\n%-52s %4s %10s %10s %10s\n", "group (tokens/s per GPU)", "runs", "median|e|", "mean|e|", "median e");
  for (const auto& [g, v] : abs_err) {
    double mean = 0;
    for (double x : v) mean += x;
    std::printf("%-52s %4zu %9.1f%% %9.1f%% %+9.1f%%\n", g.c_str(), v.size(), 100 * median(v),
                100 * mean / double(v.size()), signed_err.count(g) ? 100 * median(signed_err[g]) : 0.0);
  }
  std::printf("\n%zu runs used; %d predicted not to fit in memory (of those whose verdict is evidence); unusable:",
              runs.size(), not_fitting);
  for (const auto& [why, n] : unusable) std::printf(" %d (%s)", n, why.c_str());
  std::printf("\n");
  // Every run here ran: a `no` is a layout the planner would refuse that its publisher trained. Many
  // are recipe options a workload cannot state (activation CPU offload, a fused cross-entropy loss,
  // 16-bit gradient reduction); the count must not grow.
  if (max_ran_not_fitting >= 0 && not_fitting > max_ran_not_fitting) {
    std::printf("FAIL: %d published runs predicted not to fit in memory, above %d\n", not_fitting, max_ran_not_fitting);
    return 1;
  }

  if (table) memory_report(catalog);

  bool memory_ok = true;
  if (table || do_fit_memory || max_memory_median >= 0 || max_memory_group_median >= 0 || memory_band_tolerance >= 0) {
    const std::vector<MemRun> mem =
        load_memory_runs(memory_runs_path, memory_peft_runs_path, memory_workload_runs_path, check_set_path, catalog);
    if (do_fit_memory) fit_memory(mem, k);
    memory_ok = memory_report_runs(mem, k, table, max_memory_median, max_oom_fits, max_memory_group_median,
                                   memory_group_limits, memory_band_tolerance);
  }

  if (bands) {
    // Residuals (measured / predicted tokens/s) of every run, fit and check sets together, by
    // generation x precision class x parallelism family, for core/src/planner/residual_bands.inc.
    std::map<std::string, std::vector<double>> by;
    std::map<std::string, double> best_mfu;
    for (const Run& r : runs) {
      const planner::Workload& w = r.workload;
      const std::string gen(to_string(w.hardware->gpu.architecture));
      const std::string prec(planner::precision_class(w.job.precision));
      const std::string fam = w.layout.zero.value_or(1) == 3 ? "fsdp" : "3d";
      const double ratio = r.measured / predict(r, k);
      // Mixture-of-experts runs make a family of their own (the MoE check and fit sets), never mixed
      // into the dense rows: a MoE plan's interval is the MoE runs' error.
      const std::vector<std::string> keys =
          w.model.moe.enabled() ? std::vector<std::string>{gen + "|" + prec + "|moe", gen + "|*|moe", "*|*|moe"}
                                : std::vector<std::string>{gen + "|" + prec + "|" + fam, gen + "|" + prec + "|*",
                                                           gen + "|*|*", "*|" + prec + "|*", "*|*|*"};
      for (const std::string& key : keys) by[key].push_back(ratio);
    }
    std::printf("\n// generation, precision, family, p10, p90, runs\n");
    for (auto& [key, v] : by) {
      std::sort(v.begin(), v.end());
      auto q = [&](double f) { return v[size_t(std::lround(f * double(v.size() - 1)))]; };
      std::string a = key.substr(0, key.find('|')), rest = key.substr(key.find('|') + 1);
      std::string b = rest.substr(0, rest.find('|')), c = rest.substr(rest.find('|') + 1);
      std::printf("{\"%s\", \"%s\", \"%s\", %.3f, %.3f, %zu},\n", a.c_str(), b.c_str(), c.c_str(), q(0.1), q(0.9),
                  v.size());
    }
  }

  bool groups_ok = true;
  if (max_group_median >= 0)
    for (const auto& [g, v] : abs_err) {
      // Source groups of the check set ("check: NAME", not the GPU/precision subgroups).
      if (g.rfind("check: ", 0) != 0 || g.find(' ', 7) != std::string::npos) continue;
      const double limit = group_limits.count(g) ? group_limits[g] : max_group_median;
      if (!(median(v) <= limit)) {
        std::printf("FAIL: check-set group %s median %.3f above %.3f\n", g.c_str(), median(v), limit);
        groups_ok = false;
      }
    }
  if (scale && !scale_report(catalog, k, scale_lo, scale_hi)) groups_ok = false;
  if (!groups_ok) return 1;

  if (max_fit_median >= 0) {
    const double fit_median = median(abs_err["ALL fit set"]);
    const double holdout_median = abs_err.count("ALL held out") ? median(abs_err["ALL held out"]) : 0.0;
    if (!(fit_median <= max_fit_median) || !(holdout_median <= max_holdout_median)) {
      std::printf("FAIL: median errors %.3f (fit) / %.3f (held out) above %.3f / %.3f\n", fit_median, holdout_median,
                  max_fit_median, max_holdout_median);
      return 1;
    }
  }
  return memory_ok ? 0 : 1;
}
