// Parsing and validating the workload JSON (model + job + hardware + layout + constraints).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "../json_fields.hpp"
#include "linkwise/enum_names.hpp"
#include "linkwise/error.hpp"
#include "linkwise/json_input.hpp"
#include "linkwise/planner/workload.hpp"
#include "linkwise/text.hpp"

namespace linkwise::planner {

namespace {

constexpr EnumNames<JobKind, 4> kJobKindNames{{
    {JobKind::pretrain, "pretrain"},
    {JobKind::finetune, "finetune"},
    {JobKind::lora, "lora"},
    {JobKind::inference, "inference"},
}};
constexpr EnumNames<Precision, 4> kPrecisionNames{{
    {Precision::bf16, "bf16"},
    {Precision::fp16, "fp16"},
    {Precision::fp8, "fp8"},
    {Precision::fp4, "fp4"},
}};
constexpr EnumNames<Precision, 3> kKvCachePrecisionNames{{
    // no fp4 KV cache is modelled
    {Precision::bf16, "bf16"},
    {Precision::fp16, "fp16"},
    {Precision::fp8, "fp8"},
}};
// The training stack's optional switches, each a table as every spelling is (enum_names.hpp).
constexpr EnumNames<LoraBase, 3> kLoraBaseNames{{
    {LoraBase::bf16, "bf16"},
    {LoraBase::nf4, "4bit"},
    {LoraBase::fp8, "fp8"},
}};
constexpr EnumNames<bool, 2> kLoraAttentionOnlyNames{{{false, "all"}, {true, "attention"}}};  // job.lora_targets
constexpr EnumNames<bool, 2> kGradReduceBf16Names{{{false, "fp32"}, {true, "bf16"}}};         // job.grad_reduce_dtype
constexpr EnumNames<bool, 2> kFusedLossNames{{{false, "eager"}, {true, "fused"}}};            // job.loss
constexpr EnumNames<Recompute, 3> kRecomputeNames{{
    {Recompute::none, "none"},
    {Recompute::selective, "selective"},
    {Recompute::full, "full"},
}};
constexpr EnumNames<Objective, 3> kObjectiveNames{{
    {Objective::cost, "cost"},
    {Objective::time, "time"},
    {Objective::cost_within_deadline, "cost_within_deadline"},
}};

}  // namespace

std::string grad_reduce_dtype_refusal(const Job& job) {
  // Where the planner holds the gradients as the job's stack does: Megatron-Core's (and NeMo's)
  // gradient buffer, PyTorch FSDP's reduce dtype. fp16 training keeps fp16 gradients, a LoRA job the
  // adapters' 16-bit ones, DeepSpeed's bf16 optimizer and hai-llm fp32 ones (framework_memory.cpp).
  if (job.kind == JobKind::inference) return "job.grad_reduce_dtype is for training jobs";
  if (job.kind == JobKind::lora)
    return "job.grad_reduce_dtype is for full fine-tuning and pre-training: a lora job's adapter gradients are "
           "16-bit";
  if (job.precision == Precision::fp16)
    return "job.grad_reduce_dtype is for bf16, fp8 and fp4 training: fp16 training keeps fp16 gradients (and fp32 "
           "copies with the optimizer)";
  if (job.framework == Framework::deepspeed || job.framework == Framework::hai_llm)
    return "job.grad_reduce_dtype applies to job.framework auto, megatron-core, nemo, torchtitan, fsdp and "
           "hf-accelerate; " +
           std::string(to_string(job.framework)) +
           (job.framework == Framework::deepspeed
                ? " accumulates its gradients in fp32 and reduces them in 16 bits (communication_data_type), as the "
                  "planner holds them"
                : " accumulates and reduces its gradients in fp32, as the planner holds them");
  return "";
}

std::string_view to_string(JobKind kind) noexcept { return enum_name(kJobKindNames, kind); }
std::string_view to_string(Precision p) noexcept { return enum_name(kPrecisionNames, p); }
std::string_view to_string(Recompute r) noexcept { return enum_name(kRecomputeNames, r); }
std::string_view to_string(Objective o) noexcept { return enum_name(kObjectiveNames, o); }

namespace {

using nlohmann::json;

void reject_unknown(const json& obj, const std::string& prefix, std::initializer_list<const char*> known) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok = ok || it.key() == k;
    if (!ok) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      const std::string field = prefix.empty() ? it.key() : prefix + "." + it.key();
      throw_invalid(field, "unknown field '" + field + "'; expected one of: " + list);
    }
  }
}

const json& object_at(const json& doc, const char* key, const std::string& field) {
  const json& v = doc.at(key);
  if (!v.is_object()) json_fields::fail(field, "an object", v);
  return v;
}

// A whole number in [min_value, max_value] (a JSON integer, or a float with no fraction such as
// 2e3); absent or null: unset.
std::optional<int> opt_int(const json& obj, const char* key, const std::string& field, long long min_value,
                           long long max_value) {
  const json* v = json_fields::member_or_null(obj, key);
  if (!v) return std::nullopt;
  return static_cast<int>(json_fields::integer_in(*v, field, min_value, max_value));
}

// A number in (0, max_value] ([0, max_value] with allow_zero); absent or null: unset.
std::optional<double> opt_number(const json& obj, const char* key, const std::string& field, double max_value,
                                 bool allow_zero = false) {
  const json* v = json_fields::member_or_null(obj, key);
  if (!v) return std::nullopt;
  return json_fields::number_in(*v, field, 0, max_value, allow_zero);
}

// A value that must be there and not null (an id, a kind): null is an error naming the field.
const json& required(const json& obj, const char* key, const std::string& field, std::string_view what) {
  const json* v = json_fields::member_or_null(obj, key);
  if (!v) throw_invalid(field, field + " is required (" + std::string(what) + ")");
  return *v;
}

std::optional<bool> opt_bool(const json& obj, const char* key, const std::string& field) {
  const json* v = json_fields::member_or_null(obj, key);
  return v ? std::optional<bool>(json_fields::boolean(*v, field)) : std::nullopt;
}

std::optional<std::string> opt_string(const json& obj, const char* key, const std::string& field) {
  const json* v = json_fields::member_or_null(obj, key);
  return v ? std::optional<std::string>(json_fields::string(*v, field)) : std::nullopt;
}

std::vector<std::string> string_list(const json& obj, const char* key, const std::string& field) {
  std::vector<std::string> out;
  if (!obj.contains(key) || obj[key].is_null()) return out;
  const json& v = obj[key];
  if (v.is_string()) return {v.get<std::string>()};
  if (!v.is_array()) json_fields::fail(field, "a list of strings", v);
  for (std::size_t i = 0; i < v.size(); ++i)
    out.push_back(json_fields::string(v[i], field + "[" + std::to_string(i) + "]"));
  return out;
}

Job parse_job(const json& j) {
  reject_unknown(j, "job", {"kind",         "seq_len",           "global_batch",      "tokens",
                            "precision",    "flash_attention",   "lora_rank",         "lora_base",
                            "prompt_len",   "output_len",        "concurrent",        "latency_target_ms",
                            "framework",    "optimizer",         "offload",           "kv_cache_precision",
                            "engine",       "torch_compile",     "grad_reduce_dtype", "loss",
                            "lora_targets", "engine_batch_limit"});
  Job job;
  const auto kind = opt_string(j, "kind", "job.kind");
  if (!kind) throw_invalid("job.kind", "job.kind is required: pretrain, finetune, lora or inference");
  job.kind = parse_enum(kJobKindNames, *kind, "job.kind");

  const std::string precision = opt_string(j, "precision", "job.precision").value_or("bf16");
  job.precision = parse_enum(kPrecisionNames, precision, "job.precision");
  if (job.precision == Precision::fp4 && job.kind == JobKind::lora)
    throw_invalid("job.precision",
                  "job.precision fp4 is for inference and pre-training/fine-tuning GEMMs (NVFP4 recipes); "
                  "LoRA takes lora_base 4bit for a quantized base");
  if (const auto kv = opt_string(j, "kv_cache_precision", "job.kv_cache_precision")) {
    if (job.kind != JobKind::inference)
      throw_invalid("job.kv_cache_precision", "job.kv_cache_precision is for inference jobs");
    job.kv_cache_precision = parse_enum(kKvCachePrecisionNames, *kv, "job.kv_cache_precision");
  }

  job.tokens = opt_number(j, "tokens", "job.tokens", limits::kJobTokens);
  if (const auto f = opt_string(j, "framework", "job.framework")) job.framework = parse_framework(*f);
  if (const auto o = opt_string(j, "optimizer", "job.optimizer")) job.optimizer = parse_optimizer(*o);
  if (const auto o = opt_string(j, "offload", "job.offload")) job.offload = parse_offload(*o);
  if (const auto g = opt_string(j, "grad_reduce_dtype", "job.grad_reduce_dtype")) {
    job.grad_reduce_bf16 = parse_enum(kGradReduceBf16Names, *g, "job.grad_reduce_dtype");
    job.grad_reduce_stated = true;
  }
  if (const auto loss = opt_string(j, "loss", "job.loss"))
    job.fused_loss = parse_enum(kFusedLossNames, *loss, "job.loss");
  job.flash_attention = opt_bool(j, "flash_attention", "job.flash_attention").value_or(true);
  job.torch_compile = opt_bool(j, "torch_compile", "job.torch_compile").value_or(false);
  if (job.kind == JobKind::inference) {
    // Required, and not null: a null is no length (required() names the field).
    job.prompt_len = static_cast<int>(json_fields::integer_in(required(j, "prompt_len", "job.prompt_len", "inference"),
                                                              "job.prompt_len", 1, limits::kSequenceTokens));
    job.output_len = static_cast<int>(json_fields::integer_in(required(j, "output_len", "job.output_len", "inference"),
                                                              "job.output_len", 1, limits::kSequenceTokens));
    // An integer, or "max": the concurrency that fills the engine's KV pool (max-throughput mode).
    if (j.contains("concurrent") && j["concurrent"].is_string()) {
      if (j["concurrent"].get<std::string>() != "max")
        throw_invalid("job.concurrent", "job.concurrent must be an integer from 1 to " +
                                            std::to_string(limits::kSequences) + " or \"max\"; got '" +
                                            j["concurrent"].get<std::string>() + "'");
      job.concurrent_max = true;
      job.concurrent = 1;  // replaced per layout by the KV pool's capacity (Estimate::sequences)
    } else {
      job.concurrent = opt_int(j, "concurrent", "job.concurrent", 1, limits::kSequences).value_or(1);
    }
    if (const auto e = opt_string(j, "engine", "job.engine")) job.engine = parse_engine(*e);
    job.engine_batch_limit = opt_int(j, "engine_batch_limit", "job.engine_batch_limit", 1, limits::kSequences);
    job.latency_target_ms = opt_number(j, "latency_target_ms", "job.latency_target_ms", limits::kLatencyMs);
    job.seq_len = job.prompt_len + job.output_len;
    job.global_batch = job.concurrent;
  } else {
    job.seq_len = static_cast<int>(json_fields::integer_in(required(j, "seq_len", "job.seq_len", "training"),
                                                           "job.seq_len", 1, limits::kSequenceTokens));
    job.global_batch = static_cast<int>(json_fields::integer_in(
        required(j, "global_batch", "job.global_batch", "training"), "job.global_batch", 1, limits::kSequences));
    if ((long long)job.seq_len * job.global_batch > limits::kStepTokens)
      throw_invalid("job.global_batch",
                    "job.seq_len x job.global_batch = " + std::to_string((long long)job.seq_len * job.global_batch) +
                        " tokens per step; at most 2^40 are accepted");
  }
  // A field of another kind of job would be ignored: an error naming it instead.
  const bool inference = job.kind == JobKind::inference;
  for (const char* key :
       {"prompt_len", "output_len", "concurrent", "latency_target_ms", "engine", "engine_batch_limit"})
    if (!inference && j.contains(key))
      throw_invalid(std::string("job.") + key, std::string("job.") + key + " is for inference jobs");
  // The training stack's fields: a serving plan runs on job.engine, and nothing of these applies.
  for (const char* key :
       {"seq_len", "global_batch", "torch_compile", "framework", "optimizer", "offload", "grad_reduce_dtype", "loss"})
    if (inference && j.contains(key))
      throw_invalid(std::string("job.") + key,
                    std::string("job.") + key + " is for training jobs" +
                        (std::string_view(key) == "framework" ? " (a serving plan takes job.engine)" : ""));
  for (const char* key : {"lora_rank", "lora_base", "lora_targets"})
    if (job.kind != JobKind::lora && j.contains(key))
      throw_invalid(std::string("job.") + key, std::string("job.") + key + " is for lora jobs");
  // Only the PyTorch stacks run a block op by op without compile (prepare.cpp): elsewhere the flag
  // would change nothing.
  if (job.torch_compile && job.framework != Framework::fsdp && job.framework != Framework::torchtitan &&
      job.framework != Framework::hf_accelerate)
    throw_invalid("job.torch_compile",
                  "job.torch_compile applies to the PyTorch stacks: job.framework fsdp, torchtitan or hf-accelerate");
  if (j.contains("grad_reduce_dtype"))
    if (const std::string why = grad_reduce_dtype_refusal(job); !why.empty())
      throw_invalid("job.grad_reduce_dtype", why);
  if (job.kind == JobKind::lora) {
    // The adapters' states are small; offloading them is not what LoRA stacks do, and not modelled.
    if (j.contains("offload"))
      throw_invalid("job.offload", "job.offload is for full fine-tuning and pre-training: a lora job keeps its "
                                   "adapters' small states on the GPU");
    job.lora_rank = opt_int(j, "lora_rank", "job.lora_rank", 1, limits::kLoraRank).value_or(16);
    if (const auto base = opt_string(j, "lora_base", "job.lora_base"))
      job.lora_base = parse_enum(kLoraBaseNames, *base, "job.lora_base");
    // An FP8 base (Transformer Engine's FP8 parameters) is what fp8 GEMMs read without a cast: the
    // job's GEMMs must be fp8.
    if (job.lora_base == LoraBase::fp8 && job.precision != Precision::fp8)
      throw_invalid("job.lora_base", "job.lora_base fp8 stores the base weights as the fp8 GEMMs read them: it needs "
                                     "job.precision fp8");
    if (const auto targets = opt_string(j, "lora_targets", "job.lora_targets"))
      job.lora_attention_only = parse_enum(kLoraAttentionOnlyNames, *targets, "job.lora_targets");
    // QLoRA's NF4 base (bitsandbytes) dequantises to bf16 before each GEMM, under PEFT/Transformers:
    // no fp8 GEMM on that path, and no Megatron-style tensor or pipeline parallelism.
    if (job.lora_base == LoraBase::nf4 && job.precision == Precision::fp8)
      throw_invalid("job.precision", "job.lora_base 4bit (QLoRA, bitsandbytes NF4) dequantises to bf16 before "
                                     "each GEMM: job.precision fp8 does not apply (use bf16)");
    if (job.lora_base == LoraBase::nf4 && (job.framework == Framework::megatron_core ||
                                           job.framework == Framework::nemo || job.framework == Framework::torchtitan))
      throw_invalid("job.framework", "job.lora_base 4bit (QLoRA, bitsandbytes NF4) runs under PEFT/Transformers: "
                                     "job.framework fsdp, hf-accelerate, deepspeed or auto, not " +
                                         std::string(to_string(job.framework)));
  }
  return job;
}

std::string number_words(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// Physical bounds on a custom machine: no more memory than its spec, no network faster than the fastest NICs of the
// type could carry (one or two rails per GPU plus front-end ports). A figure above these is a typo, and planning on it
// would mislead. (NVLink against the GPU's own figure is the catalog's rule, check_instance_links.)
void check_custom_bounds(const Instance& in, const Gpu& gpu) {
  auto at_least = [](const char* field, double value, double minimum, const char* unit, const char* what) {
    if (value < minimum)
      throw_invalid(std::string("hardware.custom.") + field, std::string("hardware.custom.") + field + " (" +
                                                                 number_words(value) + " " + unit + ") is below " +
                                                                 number_words(minimum) + " " + unit + ": " + what);
  };
  at_least("gpu_memory_gb", in.gpu_memory_gb, limits::kMemoryGbMin, "GB", "less than the planner holds back");
  if (in.nvlink_gbytes_per_s)
    at_least("nvlink_gbytes_per_s", *in.nvlink_gbytes_per_s, limits::kNvlinkGbytesPerSMin, "GB/s",
             "slower than a PCIe 1.0 x16 slot, not a GPU link");
  if (in.network_gbits_per_s)
    at_least("network_gbits_per_s", *in.network_gbits_per_s, limits::kNetworkGbitsPerSMin, "Gbit/s",
             "slower than Gigabit Ethernet");
  if (gpu.memory_gb > 0 && in.gpu_memory_gb > gpu.memory_gb * limits::kMemorySpecSlack)
    throw_invalid("hardware.custom.gpu_memory_gb", "hardware.custom.gpu_memory_gb (" + number_words(in.gpu_memory_gb) +
                                                       " GB) exceeds " + gpu.id + "'s HBM (" +
                                                       number_words(gpu.memory_gb) + " GB)");
  if (in.network_gbits_per_s) {
    const double ports = double(limits::kNicPortsPerGpuMax) * in.gpu_count + 2;
    const double most = ports * limits::kNicGbitsPerPort;
    if (*in.network_gbits_per_s > most)
      throw_invalid("hardware.custom.network_gbits_per_s",
                    "hardware.custom.network_gbits_per_s (" + number_words(*in.network_gbits_per_s) +
                        " Gbit/s per node) exceeds what " + number_words(ports) + " " +
                        std::string(to_string(in.network_type)) + " ports of " +
                        number_words(limits::kNicGbitsPerPort) + " Gbit/s (the fastest NICs) can carry for " +
                        std::to_string(in.gpu_count) + " GPUs: " + number_words(most) + " Gbit/s");
  }
}

Hardware custom_hardware(const json& c, const Catalog& catalog) {
  reject_unknown(c, "hardware.custom",
                 {"gpu_model", "gpu_count", "intra_node_fabric", "nvlink_gbytes_per_s", "nvlink_domain_gpus",
                  "network_type", "network_gbits_per_s", "gpu_memory_gb", "price_usd_per_hour", "gpudirect_rdma",
                  "vcpus", "memory_gib", "name"});
  Hardware hw;
  hw.custom = true;
  const auto gpu_id = opt_string(c, "gpu_model", "hardware.custom.gpu_model");
  if (!gpu_id)
    throw_invalid("hardware.custom.gpu_model", "hardware.custom.gpu_model is required (a GPU id of the catalog)");
  // Unknown: a suggestion; any case: the catalog's id (Catalog::gpu).
  const Gpu* gpu = &catalog.gpu(*gpu_id, ErrorKind::unknown_reference, "hardware.custom.gpu_model");
  hw.gpu = *gpu;
  Instance& in = hw.instance;
  in.gpu_model = gpu->id;
  in.gpu_count = opt_int(c, "gpu_count", "hardware.custom.gpu_count", 1, limits::kGpusPerNode).value_or(0);
  if (in.gpu_count == 0)
    throw_invalid("hardware.custom.gpu_count", "hardware.custom.gpu_count is required (GPUs per node)");
  in.gpu_memory_gb =
      opt_number(c, "gpu_memory_gb", "hardware.custom.gpu_memory_gb", limits::kMemoryGb).value_or(gpu->memory_gb);
  const auto fabric = opt_string(c, "intra_node_fabric", "hardware.custom.intra_node_fabric");
  in.intra_node_fabric = fabric ? parse_fabric(*fabric, "hardware.custom.intra_node_fabric")
                                : (in.gpu_count > 1 ? Fabric::pcie : Fabric::none);
  in.nvlink_gbytes_per_s =
      opt_number(c, "nvlink_gbytes_per_s", "hardware.custom.nvlink_gbytes_per_s", limits::kNvlinkGbytesPerS);
  if (!in.nvlink_gbytes_per_s && (in.intra_node_fabric == Fabric::nvswitch || in.intra_node_fabric == Fabric::nvlink))
    in.nvlink_gbytes_per_s = gpu->nvlink_gbytes_per_s;
  in.nvlink_domain_gpus =
      opt_int(c, "nvlink_domain_gpus", "hardware.custom.nvlink_domain_gpus", 1, limits::kNvlinkDomainGpus);
  const auto net = opt_string(c, "network_type", "hardware.custom.network_type");
  in.network_type = net ? parse_network_type(*net, "hardware.custom.network_type") : NetworkType::ethernet;
  in.gpudirect_rdma = opt_bool(c, "gpudirect_rdma", "hardware.custom.gpudirect_rdma");
  // The catalog loader's rules for the same fields (one home): a machine the catalog would refuse
  // (an NVLink figure on PCIe, "none" with 8 GPUs, a 72-GPU domain on A100 or one of partial
  // nodes, RDMA on plain ethernet) is refused here too, before the defaults below fill anything in.
  check_instance_links(in, *gpu, [](std::string_view field, const std::string& what) {
    const std::string at = "hardware.custom." + std::string(field);
    throw_invalid(at, at + ": " + what);
  });
  // Unstated: the node's own GPU links (links_gpus), the domain prepare assumes for a catalog record without one.
  if (!in.nvlink_domain_gpus) in.nvlink_domain_gpus = links_gpus(in.intra_node_fabric) ? in.gpu_count : 1;
  in.network_gbits_per_s =
      opt_number(c, "network_gbits_per_s", "hardware.custom.network_gbits_per_s", limits::kNetworkGbitsPerS);
  in.price_usd_per_hour =
      opt_number(c, "price_usd_per_hour", "hardware.custom.price_usd_per_hour", limits::kUsdPerHour, true);
  // The host, as the catalog states it for an instance: what CPU offload's memory check and its CPU
  // optimizer step need (unstated: the plan says what it could not check).
  const auto vcpus = opt_int(c, "vcpus", "hardware.custom.vcpus", 1, limits::kVcpus);
  if (vcpus) in.vcpus = int(*vcpus);
  in.memory_gib = opt_number(c, "memory_gib", "hardware.custom.memory_gib", limits::kHostMemoryGib);
  check_custom_bounds(in, *gpu);
  in.provider = "custom";
  in.name = opt_string(c, "name", "hardware.custom.name").value_or(gpu->id + "x" + std::to_string(in.gpu_count));
  in.id = "custom:" + in.name;
  return hw;
}

}  // namespace

Workload parse_workload(const json& doc, const Catalog& catalog) {
  check_json_depth(doc, "workload");
  if (!doc.is_object()) throw_invalid("", "the workload must be a JSON object with model, job and hardware");
  reject_unknown(doc, "", {"model", "job", "hardware", "layout", "constraints", "name", "description"});
  // Free text, but text: the schema (data/schema/workload.schema.json) says so.
  (void)opt_string(doc, "name", "name");
  (void)opt_string(doc, "description", "description");
  Workload w;
  if (!doc.contains("model")) throw_invalid("model", "model is required");
  w.model = parse_model(doc["model"]);
  if (!doc.contains("job")) throw_invalid("job", "job is required");
  w.job = parse_job(object_at(doc, "job", "job"));

  if (doc.contains("hardware") && !doc["hardware"].is_null()) {
    const json& h = object_at(doc, "hardware", "hardware");
    reject_unknown(h, "hardware", {"instance", "custom", "nodes"});
    w.nodes = opt_int(h, "nodes", "hardware.nodes", 1, limits::kNodes);
    if (h.contains("instance") && h.contains("custom"))
      throw_invalid("hardware", "hardware takes either instance or custom, not both");
    if (h.contains("instance")) {
      const auto id = json_fields::string(required(h, "instance", "hardware.instance", "an instance id of the catalog"),
                                          "hardware.instance");
      const Instance* in = &catalog.instance(id, ErrorKind::unknown_reference, "hardware.instance");
      const Gpu* gpu = catalog.find_gpu(in->gpu_model);
      if (!gpu)
        throw_unknown_reference("hardware.instance",
                                "instance '" + id + "' names GPU '" + in->gpu_model + "' missing from the catalog");
      w.hardware = Hardware{*in, *gpu, false};
    } else if (h.contains("custom")) {
      const json& custom = required(h, "custom", "hardware.custom", "an object describing the machine");
      if (!custom.is_object()) json_fields::fail("hardware.custom", "an object", custom);
      w.hardware = custom_hardware(custom, catalog);
    } else if (w.nodes) {
      throw_invalid("hardware.instance", "hardware.nodes needs hardware.instance or hardware.custom");
    }
  }

  if (doc.contains("layout") && !doc["layout"].is_null()) {
    const json& l = object_at(doc, "layout", "layout");
    reject_unknown(l, "layout",
                   {"tp", "pp", "cp", "dp", "dp_shard", "micro_batch", "zero", "recompute", "recompute_layer_fraction",
                    "sequence_parallel", "virtual_stages", "ep", "etp", "edp", "overlap_a2a", "dualpipe",
                    "tp_comm_overlap", "overlap_p2p_comm", "overlap_grad_reduce"});
    LayoutSpec& s = w.layout;
    s.tp = opt_int(l, "tp", "layout.tp", 1, limits::kLayoutSize);
    s.pp = opt_int(l, "pp", "layout.pp", 1, limits::kLayoutSize);
    s.cp = opt_int(l, "cp", "layout.cp", 1, limits::kLayoutSize);
    s.dp = opt_int(l, "dp", "layout.dp", 1, limits::kLayoutSize);
    s.dp_shard = opt_int(l, "dp_shard", "layout.dp_shard", 1, limits::kLayoutSize);  // divides dp: validate_layout
    s.micro_batch = opt_int(l, "micro_batch", "layout.micro_batch", 1, limits::kLayoutSize);
    s.zero = opt_int(l, "zero", "layout.zero", 0, 3);
    s.virtual_stages = opt_int(l, "virtual_stages", "layout.virtual_stages", 1, limits::kLayoutSize);
    s.ep = opt_int(l, "ep", "layout.ep", 1, limits::kLayoutSize);
    s.etp = opt_int(l, "etp", "layout.etp", 1, limits::kLayoutSize);
    s.edp = opt_int(l, "edp", "layout.edp", 1, limits::kLayoutSize);
    s.overlap_a2a = opt_bool(l, "overlap_a2a", "layout.overlap_a2a");
    s.dualpipe = opt_bool(l, "dualpipe", "layout.dualpipe");
    s.tp_comm_overlap = opt_bool(l, "tp_comm_overlap", "layout.tp_comm_overlap");
    s.overlap_p2p_comm = opt_bool(l, "overlap_p2p_comm", "layout.overlap_p2p_comm");
    s.overlap_grad_reduce = opt_bool(l, "overlap_grad_reduce", "layout.overlap_grad_reduce");
    // A stated false is what every other schedule does already (plan and recommend check a stated
    // true against the layout), but DualPipe overlaps its sends by design.
    if (s.overlap_p2p_comm == false && s.dualpipe.value_or(false))
      throw_invalid("layout.overlap_p2p_comm",
                    "layout.overlap_p2p_comm cannot be false with layout.dualpipe: DualPipe overlaps its sends");
    if (!w.model.moe.enabled()) {
      // DualPipe (DeepSeek-V3) overlaps the experts' all-to-all: without experts it would only
      // double the weights it keeps (two model copies).
      const char* at = s.ep.value_or(1) != 1           ? "ep"
                       : s.etp.value_or(1) != 1        ? "etp"
                       : s.overlap_a2a.value_or(false) ? "overlap_a2a"
                       : s.dualpipe.value_or(false)    ? "dualpipe"
                                                       : nullptr;
      if (at)
        throw_invalid(std::string("layout.") + at,
                      std::string("layout.") + at + " is for mixture-of-experts models (the model has no model.moe)");
    }
    if (s.ep && w.model.moe.enabled() && w.model.moe.experts % *s.ep != 0)
      throw_invalid("layout.ep", "layout.ep (" + std::to_string(*s.ep) + ") must divide the model's experts (" +
                                     std::to_string(w.model.moe.experts) + ")");
    if (s.etp && w.model.moe.enabled() && w.model.moe.expert_ffn_hidden % *s.etp != 0)
      throw_invalid("layout.etp", "layout.etp (" + std::to_string(*s.etp) +
                                      ") must divide model.moe.expert_ffn_hidden (" +
                                      std::to_string(w.model.moe.expert_ffn_hidden) + ")");
    if (const auto r = opt_string(l, "recompute", "layout.recompute"))
      s.recompute = parse_enum(kRecomputeNames, *r, "layout.recompute");
    s.recompute_layer_fraction = opt_number(l, "recompute_layer_fraction", "layout.recompute_layer_fraction", 1.0);
    // 1 (every layer, what a plan's layout prints) reads the same under any recompute mode; a share
    // below 1 only means something with full recompute.
    if (s.recompute_layer_fraction && *s.recompute_layer_fraction < 1.0 &&
        s.recompute.value_or(Recompute::none) != Recompute::full)
      throw_invalid(
          "layout.recompute_layer_fraction",
          "layout.recompute_layer_fraction is the share of layers fully recomputed: it needs layout.recompute 'full'");
    if (w.job.kind == JobKind::inference && s.recompute.value_or(Recompute::none) != Recompute::none)
      throw_invalid("layout.recompute",
                    "layout.recompute is a training setting: inference keeps no activations to recompute");
    s.sequence_parallel = opt_bool(l, "sequence_parallel", "layout.sequence_parallel");
    // The serving profiles time each engine step as it runs by default: neither DualPipe (a training
    // schedule) nor an overlap of one batch's all-to-all with another's compute; true would change
    // nothing there, so only false is accepted (plan and recommend alike).
    if (w.job.kind == JobKind::inference) {
      const struct {
        const std::optional<bool>& stated;
        const char *field, *why;
      } training_only[] = {
          {s.dualpipe, "layout.dualpipe", "layout.dualpipe is a training schedule"},
          {s.overlap_a2a, "layout.overlap_a2a",
           "layout.overlap_a2a is a training setting: the serving engine profiles do not overlap the all-to-all"},
          {s.tp_comm_overlap, "layout.tp_comm_overlap",
           "layout.tp_comm_overlap is a training setting: the serving profiles time TP as the engines run it"},
          {s.overlap_p2p_comm, "layout.overlap_p2p_comm",
           "layout.overlap_p2p_comm is a training setting: serving runs no pipeline schedule"},
          {s.overlap_grad_reduce, "layout.overlap_grad_reduce",
           "layout.overlap_grad_reduce is a training setting: serving reduces no gradients"},
      };
      for (const auto& t : training_only)
        if (t.stated.value_or(false)) throw_invalid(t.field, std::string(t.why) + " (only false is accepted)");
    }
    // Training settings a serving plan would echo but never use: serving engines run one batch of
    // sequences per step with whole weights on each TP rank (no ZeRO, micro-batches, Megatron SP
    // or interleaved stages). The values a serving plan prints for them (zero 0, micro_batch 1,
    // sequence_parallel false, virtual_stages 1) say exactly that, so its layout reads back.
    if (w.job.kind == JobKind::inference)
      for (const auto& [key, neutral] : {std::pair<const char*, json>{"zero", 0},
                                         {"micro_batch", 1},
                                         {"sequence_parallel", false},
                                         {"virtual_stages", 1}})
        if (l.contains(key) && !l[key].is_null() && l[key] != neutral)
          throw_invalid(std::string("layout.") + key, std::string("layout.") + key +
                                                          " is a training setting: an inference plan does not use it "
                                                          "(only its neutral value " +
                                                          neutral.dump() + " is accepted)");
    // Megatron-LM drops --sequence-parallel at tp 1 (megatron/training/arguments.py: "Disabling
    // sequence parallelism because tensor model parallelism is disabled"): it would be ignored.
    if (s.sequence_parallel.value_or(false) && s.tp && *s.tp == 1)
      throw_invalid(
          "layout.sequence_parallel",
          "layout.sequence_parallel splits activations over the tensor-parallel group: it needs layout.tp > 1");
    if (s.tp)
      if (const std::string why = tp_attention_problem(w.model, w.job.kind, *s.tp); !why.empty())
        throw_invalid("layout.tp", why);
    // What the job's stack cannot run among the parts the workload fixes (the search leaves out the rest).
    if (w.job.kind != JobKind::inference) {
      if (const StackProblem p = parallelism_problem(w.job, s.tp.value_or(1), s.pp.value_or(1),
                                                     s.virtual_stages.value_or(1), s.cp.value_or(1));
          !p.why.empty())
        throw_invalid(p.field, p.why);
      if (s.pp && s.zero)
        if (const StackProblem p = stack_problem(w.job, *s.pp, *s.zero); !p.why.empty()) throw_invalid(p.field, p.why);
    }
  }

  if (doc.contains("constraints") && !doc["constraints"].is_null()) {
    const json& c = object_at(doc, "constraints", "constraints");
    reject_unknown(c, "constraints",
                   {"providers", "gpu_models", "instances", "max_gpus", "max_nodes", "min_nodes", "budget_usd",
                    "deadline_hours", "spot", "tp_across_nodes", "objective"});
    Constraints& k = w.constraints;
    k.providers = string_list(c, "providers", "constraints.providers");
    k.gpu_models = string_list(c, "gpu_models", "constraints.gpu_models");
    k.instances = string_list(c, "instances", "constraints.instances");
    k.max_gpus = opt_int(c, "max_gpus", "constraints.max_gpus", 1, limits::kGpus);
    k.max_nodes = opt_int(c, "max_nodes", "constraints.max_nodes", 1, limits::kNodes);
    k.min_nodes = opt_int(c, "min_nodes", "constraints.min_nodes", 1, limits::kNodes);
    if (k.min_nodes && k.max_nodes && *k.min_nodes > *k.max_nodes)
      throw_invalid("constraints.min_nodes", "constraints.min_nodes (" + std::to_string(*k.min_nodes) +
                                                 ") exceeds constraints.max_nodes (" + std::to_string(*k.max_nodes) +
                                                 "): no node count meets both");
    k.budget_usd = opt_number(c, "budget_usd", "constraints.budget_usd", limits::kUsd);
    k.deadline_hours = opt_number(c, "deadline_hours", "constraints.deadline_hours", limits::kHours);
    k.spot = opt_bool(c, "spot", "constraints.spot").value_or(false);
    const std::optional<bool> across = opt_bool(c, "tp_across_nodes", "constraints.tp_across_nodes");
    k.tp_across_nodes = across.value_or(false);
    k.tp_across_nodes_given = across.has_value();
    const std::optional<std::string> stated_objective = opt_string(c, "objective", "constraints.objective");
    k.objective_given = stated_objective.has_value();
    const std::string objective = stated_objective.value_or("cost");
    k.objective = parse_enum(kObjectiveNames, objective, "constraints.objective");
    if (k.objective == Objective::cost_within_deadline && !k.deadline_hours)
      throw_invalid("constraints.deadline_hours", "objective cost_within_deadline needs constraints.deadline_hours");
    if ((k.deadline_hours || k.budget_usd) && !w.job.tokens)
      throw_invalid("job.tokens",
                    "constraints.deadline_hours and constraints.budget_usd need job.tokens (the job's size)");
    // Names that name nothing are errors with a suggestion, as in the instance filters.
    for (const auto& p : k.providers) catalog.check_provider_name(p, "constraints.providers");
    for (const auto& g : k.gpu_models) catalog.check_gpu_name(g, "constraints.gpu_models");
    // Any case names the instance; the search compares the catalog's spelling.
    for (auto& id : k.instances) id = catalog.instance(id, ErrorKind::unknown_reference, "constraints.instances").id;
  }
  return w;
}

namespace {

std::string listed(const std::vector<std::string>& names) {
  std::string out = "[";  // built in steps: GCC 12's -Wrestrict misfires on "[" + s + "]"
  out += text::join(names);
  out += ']';
  return out;
}

}  // namespace

std::vector<std::string> unmet_constraints(const Constraints& c, const Instance& in, int nodes) {
  std::vector<std::string> out;
  const auto any = [](const std::vector<std::string>& wanted, auto&& matches) {
    return wanted.empty() || std::any_of(wanted.begin(), wanted.end(), matches);
  };
  if (!any(c.providers, [&](const std::string& p) { return provider_matches(in.provider, p); }))
    out.push_back("constraints.providers " + listed(c.providers) + " excludes provider " + in.provider + " of " +
                  in.id);
  if (!any(c.gpu_models, [&](const std::string& g) { return gpu_id_matches(in.gpu_model, g); }))
    out.push_back("constraints.gpu_models " + listed(c.gpu_models) + " excludes " + in.gpu_model + " of " + in.id);
  if (!any(c.instances, [&](const std::string& id) { return id == in.id; }))
    out.push_back("constraints.instances " + listed(c.instances) + " does not list " + in.id);
  if (nodes > 0) {
    if (c.max_nodes && nodes > *c.max_nodes)
      out.push_back("hardware.nodes " + std::to_string(nodes) + " is above constraints.max_nodes " +
                    std::to_string(*c.max_nodes));
    if (c.min_nodes && nodes < *c.min_nodes)
      out.push_back("hardware.nodes " + std::to_string(nodes) + " is below constraints.min_nodes " +
                    std::to_string(*c.min_nodes));
    if (c.max_gpus && (long long)nodes * in.gpu_count > *c.max_gpus)
      out.push_back(std::to_string((long long)nodes * in.gpu_count) + " GPUs (" + std::to_string(nodes) + " x " +
                    std::to_string(in.gpu_count) + ") are above constraints.max_gpus " + std::to_string(*c.max_gpus));
  }
  return out;
}

Layout complete_layout(const Workload& w, int gpus) {
  const LayoutSpec& s = w.layout;
  if (!s.tp) throw_invalid("layout.tp", "plan needs layout.tp (use recommend to search layouts)");
  if (!s.pp) throw_invalid("layout.pp", "plan needs layout.pp (use recommend to search layouts)");
  Layout l;
  l.tp = *s.tp;
  l.pp = *s.pp;
  l.cp = s.cp.value_or(1);
  // Each size is at most 2^20, so tp x pp x cp fits in 64 bits; it may well exceed the GPUs.
  const long long model_parallel = (long long)l.tp * l.pp * l.cp;
  if (s.dp) {
    l.dp = *s.dp;
  } else {
    if (gpus % model_parallel != 0)
      throw_invalid("layout.tp", "tp x pp x cp = " + std::to_string(model_parallel) + " does not divide the " +
                                     std::to_string(gpus) + " GPUs");
    l.dp = static_cast<int>(gpus / model_parallel);
  }
  l.micro_batch = s.micro_batch.value_or(1);
  l.zero = s.zero.value_or(w.job.kind == JobKind::inference ? 0 : 1);
  l.dp_shard = s.dp_shard.value_or(0);
  l.recompute = s.recompute.value_or(Recompute::none);
  l.recompute_layer_fraction = s.recompute_layer_fraction.value_or(1.0);
  // Serving engines do not split activations over TP (the search plans them without it too).
  l.sequence_parallel = w.job.kind != JobKind::inference && s.sequence_parallel.value_or(l.tp > 1);
  l.virtual_stages = s.virtual_stages.value_or(1);
  l.ep = s.ep.value_or(1);
  // Training: Megatron-Core's expert TP as the layout states it, 1 by default; serving: the engines'
  // own placement (serving_default_etp), so "tp": 8 shards the experts as `vllm serve -tp 8` does.
  l.etp =
      s.etp.value_or(w.job.kind == JobKind::inference && w.model.moe.enabled() ? serving_default_etp(l.tp, l.ep) : 1);
  l.dualpipe = s.dualpipe.value_or(false);
  l.overlap_a2a = s.overlap_a2a.value_or(l.dualpipe);
  // The overlaps (plan() turns TP's off where the TP group leaves the NVLink domain, which only the
  // prepared hardware knows; validate_layout refuses a stated value the layout cannot hold).
  resolve_overlaps(w.job, s, w.model.moe.enabled(), /*tp_inside_nvlink_domain=*/true, l);
  return l;
}

StackProblem stack_problem(const Job& job, int pp, int zero) {
  if (job.kind == JobKind::inference) return {};
  if (job.offload == Offload::optimizer_and_params && zero != 3)
    return {"job.offload", "job.offload optimizer_and_params needs layout.zero 3 (ZeRO-Infinity / FSDP CPU offload)"};
  // DeepSpeed's offload_optimizer is a ZeRO feature (stages 1-3): without ZeRO there is no optimizer
  // partition to move.
  if (job.offload == Offload::optimizer && zero == 0)
    return {"job.offload", "job.offload optimizer needs layout.zero 1, 2 or 3 (ZeRO-Offload)"};
  // PyTorch FSDP's CPUOffload moves the parameters with their gradients and optimizer states
  // (offload_params; FSDP2's CPUOffloadPolicy): it has no optimizer-only mode.
  if (job.offload == Offload::optimizer && (job.framework == Framework::fsdp || job.framework == Framework::torchtitan))
    return {"job.offload", "job.offload optimizer is DeepSpeed's ZeRO-Offload; job.framework " +
                               std::string(to_string(job.framework)) +
                               " (PyTorch FSDP) offloads the parameters with the optimizer states: use "
                               "optimizer_and_params with layout.zero 3, or job.framework deepspeed"};
  // Accelerate's FSDP plugin has no optimizer-only offload (FSDP's CPUOffload moves the parameters
  // too): that runs through its DeepSpeed plugin, which the planner plans as job.framework deepspeed.
  if (job.framework == Framework::hf_accelerate && job.offload == Offload::optimizer)
    return {"job.offload", "job.offload optimizer is DeepSpeed's ZeRO-Offload; job.framework hf-accelerate "
                           "(Accelerate's FSDP plugin) offloads the parameters with the optimizer states: use "
                           "optimizer_and_params with layout.zero 3, or job.framework deepspeed (Accelerate's "
                           "DeepSpeed plugin)"};
  // auto's ZeRO-3 with the optimizer offloaded is DeepSpeed's ZeRO-Offload, which reduces in 16 bits
  // (framework_memory.hpp reduced_gradient_bytes): a stated fp32 reduction would go unheeded.
  if (job.framework == Framework::auto_ && job.grad_reduce_stated && !job.grad_reduce_bf16 &&
      planned_framework(job, zero) == Framework::deepspeed)
    return {"job.grad_reduce_dtype", "job.grad_reduce_dtype fp32 with job.offload optimizer at layout.zero 3 is "
                                     "planned as DeepSpeed's ZeRO-Offload, which reduces its gradients in 16 bits: "
                                     "leave job.grad_reduce_dtype out, or offload nothing"};
  if (pp > 1) {
    // DeepSpeed's pipeline engine runs ZeRO-1 at most ("ZeRO-2 and ZeRO-3 are incompatible with
    // pipeline parallelism", deepspeed/runtime/pipe/engine.py); Accelerate's own training loop
    // splits no pipeline (FSDP2 stacks do: torchtitan, NeMo AutoModel).
    // Under auto a ZeRO-3 job that offloads the optimizer alone is planned as DeepSpeed (planned_framework).
    if (planned_framework(job, zero) == Framework::deepspeed && zero >= 2)
      return {"layout.zero", std::string(job.framework == Framework::deepspeed
                                             ? "job.framework deepspeed"
                                             : "job.framework auto with job.offload optimizer (planned as "
                                               "DeepSpeed's ZeRO-Offload)") +
                                 " runs pipeline parallelism with ZeRO 0 or 1 only (its pipeline engine refuses "
                                 "ZeRO-2 and ZeRO-3); got layout.zero " +
                                 std::to_string(zero) + " with pp " + std::to_string(pp)};
    if (job.framework == Framework::hf_accelerate)
      return {"layout.pp", "job.framework hf-accelerate trains without pipeline parallelism (torchtitan, "
                           "Megatron-Core, NeMo and DeepSpeed have it); got pp " +
                               std::to_string(pp)};
  }
  return {};
}

StackProblem parallelism_problem(const Job& job, int tp, int pp, int virtual_stages, int cp) {
  if (is_qlora(job)) {
    const std::string qlora = "job.lora_base 4bit (QLoRA, bitsandbytes NF4) runs under PEFT/Transformers, ";
    if (tp > 1)
      return {"layout.tp", qlora + "which split no layer over GPUs: layout.tp must be 1, got " + std::to_string(tp)};
    if (pp > 1)
      return {"layout.pp", qlora + "which run no pipeline schedule: layout.pp must be 1, got " + std::to_string(pp)};
    if (cp > 1)
      return {"layout.cp", qlora + "which split no sequence over GPUs: layout.cp must be 1, got " + std::to_string(cp)};
  }
  // DeepSpeed's PipelineEngine runs one 1F1B schedule over contiguous stages (deepspeed/runtime/pipe/
  // schedule.py TrainSchedule): no interleaved chunks.
  if (job.framework == Framework::deepspeed && virtual_stages > 1)
    return {"layout.virtual_stages",
            "job.framework deepspeed's pipeline engine has no interleaved schedule: layout.virtual_stages must be 1, "
            "got " +
                std::to_string(virtual_stages)};
  return {};
}

std::string tp_attention_problem(const ModelShape& m, JobKind kind, long long tp) {
  const std::string size = "layout.tp (" + std::to_string(tp) + ")";
  if (tp < 1 || m.heads % tp != 0)
    return size + " must divide the model's attention heads (" + std::to_string(m.heads) + ")";
  if (m.attention == AttentionKind::mla || m.kv_heads <= 0 || m.kv_heads % tp == 0) return {};
  const std::string kv = std::to_string(m.kv_heads);
  if (kind != JobKind::inference)
    return size + " must divide the model's KV heads (" + kv +
           "): Megatron-Core splits the KV heads (query groups) evenly over the TP ranks";
  if (tp % m.kv_heads == 0) return {};  // vLLM/SGLang replicate each KV head on tp / kv_heads ranks
  return size + " must divide the model's KV heads (" + kv + ") or be a multiple of them: vLLM and SGLang " +
         "split the KV heads evenly over the TP ranks, or replicate each on tp / kv_heads ranks";
}

bool pipeline_split_possible(int layers, int pp) noexcept {
  if (pp < 1 || pp > layers) return false;
  const int per_stage = (layers + pp - 1) / pp, deficit = pp * per_stage - layers;
  return pp == 1 || deficit <= 2 * (per_stage - 1);
}

void validate_layout(const Workload& w, const Layout& l, int gpus_per_node, int nodes) {
  const ModelShape& m = w.model;
  const int gpus = gpus_per_node * nodes;
  if (const std::string why = tp_attention_problem(m, w.job.kind, l.tp); !why.empty()) throw_invalid("layout.tp", why);
  if (l.pp > m.layers)
    throw_invalid("layout.pp", "layout.pp (" + std::to_string(l.pp) + ") exceeds the model's layers (" +
                                   std::to_string(m.layers) + ")");
  if (!pipeline_split_possible(m.layers, l.pp))
    throw_invalid("layout.pp", "layout.pp (" + std::to_string(l.pp) + ") cannot split the model's " +
                                   std::to_string(m.layers) +
                                   " layers: with ceil(layers / pp) on the middle stages the first and last "
                                   "stages would hold no layer");
  // tp x pp x cp x dp in checked arithmetic: four sizes of up to 2^20 overflow 64 bits.
  long long product = 1;
  bool overflow = false;
  for (int size : {l.tp, l.pp, l.cp, l.dp})
    overflow = overflow || __builtin_mul_overflow(product, (long long)size, &product);
  if (overflow || product != gpus)
    throw_invalid("layout.dp", "tp x pp x cp x dp = " + std::to_string(l.tp) + " x " + std::to_string(l.pp) + " x " +
                                   std::to_string(l.cp) + " x " + std::to_string(l.dp) + " = " +
                                   (overflow ? std::string("more than 2^63") : std::to_string(product)) +
                                   " but the hardware has " + std::to_string(nodes) + " node(s) x " +
                                   std::to_string(gpus_per_node) + " GPUs = " + std::to_string(gpus));
  if (w.job.seq_len % l.cp != 0)
    throw_invalid("layout.cp", "layout.cp must divide the sequence length " + std::to_string(w.job.seq_len));
  if (l.zero < 0 || l.zero > 3) throw_invalid("layout.zero", "layout.zero must be 0, 1, 2 or 3");
  if (l.virtual_stages > 1) {
    if (l.pp == 1) throw_invalid("layout.virtual_stages", "layout.virtual_stages > 1 needs pp > 1");
    // Uneven splits are allowed, as Megatron-Core allows them (first/last stages with fewer layers
    // to make room for the embedding and the loss): the heaviest stage holds ceil(layers / pp)
    // layers in virtual_stages chunks, so it needs at least one layer per chunk.
    if ((m.layers + l.pp - 1) / l.pp < l.virtual_stages)
      throw_invalid("layout.virtual_stages", "layout.virtual_stages (" + std::to_string(l.virtual_stages) +
                                                 ") exceeds the layers per pipeline stage (ceil(" +
                                                 std::to_string(m.layers) + " / " + std::to_string(l.pp) + "))");
  }
  if (const StackProblem p = stack_problem(w.job, l.pp, l.zero); !p.why.empty()) throw_invalid(p.field, p.why);
  if (const StackProblem p = parallelism_problem(w.job, l.tp, l.pp, l.virtual_stages, l.cp); !p.why.empty())
    throw_invalid(p.field, p.why);
  if (w.layout.tp_comm_overlap.value_or(false))
    if (const char* why = tp_comm_overlap_problem(w.job, l, true))
      throw_invalid("layout.tp_comm_overlap", std::string("layout.tp_comm_overlap cannot be true here: ") + why);
  if (w.layout.overlap_p2p_comm.value_or(false))
    if (const char* why = overlap_p2p_comm_problem(w.job, l))
      throw_invalid("layout.overlap_p2p_comm", std::string("layout.overlap_p2p_comm cannot be true here: ") + why);
  // (A stated false under another stack says what holds: Megatron-Core's overlap does not run; the
  // layout's own stack schedules its reductions as it does.)
  if (w.layout.overlap_grad_reduce)
    if (const char* why = overlap_grad_reduce_problem(w.job, l, *w.layout.overlap_grad_reduce))
      throw_invalid("layout.overlap_grad_reduce", std::string("layout.overlap_grad_reduce cannot be ") +
                                                      (*w.layout.overlap_grad_reduce ? "true" : "false") +
                                                      " here: " + why);
  // MoE: overlapping the all-to-all needs one (ep > 1); DualPipe sets it for its own schedule.
  if (l.overlap_a2a && l.ep == 1 && !l.dualpipe && w.layout.overlap_a2a)
    throw_invalid("layout.overlap_a2a", "layout.overlap_a2a needs layout.ep > 1: with ep 1 there is no all-to-all");
  if (l.dualpipe) {
    if (l.pp < 2 || l.pp % 2 != 0)
      throw_invalid("layout.dualpipe",
                    "layout.dualpipe needs an even pp of at least 2 (got " + std::to_string(l.pp) + ")");
    if (l.virtual_stages > 1) throw_invalid("layout.dualpipe", "layout.dualpipe does not combine with virtual_stages");
    const long long per_replica = w.job.global_batch / std::max<long long>(1, (long long)l.dp * l.micro_batch);
    if (per_replica % 2 != 0)
      throw_invalid("layout.dualpipe", "layout.dualpipe needs an even number of micro-batches per replica (got " +
                                           std::to_string(per_replica) + ")");
    if (!l.overlap_a2a)
      throw_invalid("layout.overlap_a2a", "layout.dualpipe overlaps the all-to-all; overlap_a2a cannot be false");
  }
  if (w.model.moe.enabled()) {
    if (w.model.moe.expert_ffn_hidden % l.etp != 0)  // the engines' default etp (tp / ep) included
      throw_invalid("layout.etp", "layout.etp (" + std::to_string(l.etp) +
                                      (w.layout.etp ? "" : ", the engines' tp / ep by default") +
                                      ") must divide model.moe.expert_ffn_hidden (" +
                                      std::to_string(w.model.moe.expert_ffn_hidden) + ")");
    if (w.model.moe.experts % l.ep != 0)
      throw_invalid("layout.ep", "layout.ep (" + std::to_string(l.ep) + ") must divide the model's experts (" +
                                     std::to_string(w.model.moe.experts) + ")");
    // Megatron-Core: the experts' etp x ep x edp grid covers each stage's tp x cp x dp GPUs.
    const long long stage = (long long)l.tp * l.cp * l.dp, expert_group = (long long)l.ep * l.etp;
    if (stage % expert_group != 0)
      throw_invalid("layout.ep", "layout.ep x layout.etp (" + std::to_string(l.ep) + " x " + std::to_string(l.etp) +
                                     ") must divide tp x cp x dp (" + std::to_string(stage) +
                                     "): the expert-parallel groups are cut from each pipeline stage's GPUs");
  } else if (l.ep != 1 || l.etp != 1) {
    throw_invalid(l.ep != 1 ? "layout.ep" : "layout.etp", "layout.ep and layout.etp are for mixture-of-experts models");
  }
  // layout.edp is what the other sizes make it; a plan prints it, and reads it back only when it agrees.
  if (w.layout.edp && (long long)*w.layout.edp * l.ep * l.etp != (long long)l.tp * l.cp * l.dp)
    throw_invalid(
        "layout.edp",
        "layout.edp is derived, tp x cp x dp / (ep x etp) = " + std::to_string((long long)l.tp * l.cp * l.dp) + " / " +
            std::to_string((long long)l.ep * l.etp) + "; got " + std::to_string(*w.layout.edp) + " (leave it out)");
  if (l.dp_shard > 0) {
    if (l.dp % l.dp_shard != 0)
      throw_invalid("layout.dp_shard", "layout.dp_shard (" + std::to_string(l.dp_shard) + ") must divide layout.dp (" +
                                           std::to_string(l.dp) + ")");
    // Fewer ranks than dp only mean something where there are ZeRO states to shard (a plan prints
    // dp_shard = dp everywhere else, which reads back).
    if (l.dp_shard < l.dp) {
      if (const char* why = hybrid_sharding_problem(w.job, l, w.model.moe.enabled()))
        throw_invalid("layout.dp_shard", "layout.dp_shard below layout.dp (hybrid sharding) cannot run here: " +
                                             std::string(why) + " (" + std::to_string(l.zero_replicas()) +
                                             " copies; expert-data-parallel group " + std::to_string(l.edp()) + ")");
    }
  }
  if (w.job.kind != JobKind::inference) {
    if (w.job.global_batch % ((long long)l.dp * l.micro_batch) != 0)
      throw_invalid("layout.micro_batch", "job.global_batch (" + std::to_string(w.job.global_batch) +
                                              ") must be divisible by dp x micro_batch (" + std::to_string(l.dp) +
                                              " x " + std::to_string(l.micro_batch) + ")");
  } else if (!w.job.concurrent_max && w.job.concurrent % l.dp != 0) {
    throw_invalid("layout.dp", "job.concurrent (" + std::to_string(w.job.concurrent) +
                                   ") must be divisible by layout.dp (replicas)");
  }
}

nlohmann::json to_json(const Layout& l) {
  return {{"tp", l.tp},
          {"pp", l.pp},
          {"cp", l.cp},
          {"dp", l.dp},
          {"dp_shard", l.zero_shard()},
          {"micro_batch", l.micro_batch},
          {"zero", l.zero},
          {"recompute", std::string(to_string(l.recompute))},
          {"recompute_layer_fraction", l.recompute_layer_fraction},
          {"sequence_parallel", l.sequence_parallel},
          {"virtual_stages", l.virtual_stages},
          {"ep", l.ep},
          {"etp", l.etp},
          {"edp", l.edp()},
          {"overlap_a2a", l.overlap_a2a},
          {"dualpipe", l.dualpipe},
          {"tp_comm_overlap", l.tp_comm_overlap},
          {"overlap_p2p_comm", l.overlap_p2p_comm},
          {"overlap_grad_reduce", l.overlap_grad_reduce}};
}

}  // namespace linkwise::planner
