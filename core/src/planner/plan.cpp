// plan(): one workload on one hardware and layout, evaluated and described for people.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "linkwise/error.hpp"
#include "linkwise/planner/framework_memory.hpp"
#include "linkwise/planner/plan.hpp"
#include "linkwise/planner/uncertainty.hpp"
#include "linkwise/text.hpp"
#include "linkwise/units.hpp"

namespace linkwise::planner {

namespace {

std::string fmt(const char* format, double v) {
  char buf[256];  // the longest format (the tight-memory warning) is ~120 characters
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

std::string percent(double part, double whole) { return fmt("%.0f%%", whole > 0 ? 100.0 * part / whole : 0.0); }

std::string network_words(HardwareRef hw) {
  const Instance& in = hw.instance;
  if (!in.network_gbits_per_s) return "the network";
  return fmt("%g", *in.network_gbits_per_s) + " Gbit/s " + std::string(to_string(in.network_type));
}

std::string intra_words(HardwareRef hw) {
  const Instance& in = hw.instance;
  if (in.nvlink_gbytes_per_s && in.intra_node_fabric != Fabric::pcie)
    return std::string(to_string(in.intra_node_fabric)) + fmt(" %.0f GB/s", *in.nvlink_gbytes_per_s);
  return std::string(to_string(in.intra_node_fabric));
}

// The memory options published recipes state that this job leaves off and that would make the layout
// fit (outside the error band where one can): job.grad_reduce_dtype bf16 (NVIDIA's Megatron Bridge and
// NeMo recipes) and job.loss fused (llm-foundry's default). "" when none applies or none is enough.
std::string memory_option_advice(const Workload& w, const PreparedHardware& p, const Layout& l,
                                 const PlannerConstants& k, const Estimate& e) {
  const Job& job = w.job;
  if (job.kind == JobKind::inference) return "";
  struct Option {
    const char* words;
    bool applies;
    void (*set)(Job&);
    Estimate alone;
  };
  Option options[] = {
      {"job.grad_reduce_dtype bf16",
       !job.grad_reduce_bf16 && grad_reduce_dtype_refusal(job).empty(),
       [](Job& j) { j.grad_reduce_bf16 = true; },
       {}},
      {"job.loss fused", !job.fused_loss, [](Job& j) { j.fused_loss = true; }, {}},
  };
  Job all = job;
  for (Option& o : options) {
    if (!o.applies) continue;
    Job one = job;
    o.set(one);
    o.set(all);
    estimate_memory(prepare_model(w.model, one), p, l, k, o.alone);
    if (o.alone.fits && !o.alone.tight)  // one option is enough
      return "memory: with " + std::string(o.words) +
             fmt(" (as published recipes run) it would need %.1f GB per GPU ", units::bytes_to_gb(o.alone.total)) +
             fmt("of %.1f GB", units::bytes_to_gb(o.alone.capacity));
  }
  Estimate both;
  estimate_memory(prepare_model(w.model, all), p, l, k, both);
  if (!both.fits) return "";
  // Name the options that take memory off this layout (the loss's, say, is off the busiest stage).
  std::string words;
  for (const Option& o : options)
    if (o.applies && o.alone.total < e.total) words += (words.empty() ? "" : " and ") + std::string(o.words);
  if (words.empty()) return "";
  return "memory: with " + words +
         fmt(" (as published recipes run) it would need %.1f GB per GPU ", units::bytes_to_gb(both.total)) +
         fmt("of %.1f GB", units::bytes_to_gb(both.capacity)) + (both.tight ? ", inside the error band" : "");
}

// What the GPU-to-GPU link family is called on this machine (AMD's is Infinity Fabric).
std::string link_family(HardwareRef hw) {
  return hw.instance.intra_node_fabric == Fabric::infinity_fabric ? "Infinity Fabric" : "NVLink";
}

std::string domain_words(HardwareRef hw, const PreparedHardware& p) {
  return "the " + std::to_string(p.nvlink_domain_gpus) + "-GPU " + link_family(hw) + " domain";
}

std::string ep_words(HardwareRef hw, const Layout& l, const Estimate& e, const PreparedHardware& p) {
  return "expert-parallel all-to-all (ep=" + std::to_string(l.ep) + ") over " +
         (e.ep_inside_domain ? (p.nvlink_domain_gpus > p.gpus_per_node ? domain_words(hw, p) : intra_words(hw))
                             : network_words(hw) + " (the EP group leaves the " + link_family(hw) + " domain)");
}

std::string bottleneck_words(const Workload& w, HardwareRef hw, int nodes, const Layout& l, const Estimate& e,
                             const PreparedHardware& p) {
  const double step = e.step;
  if (w.job.kind == JobKind::inference) {
    if (e.ep_exposed > 0.3 * step)
      return ep_words(hw, l, e, p) + " (latency-bound at decode): " + percent(e.ep_exposed, step) +
             " of each decode step";
    if (e.tp_exposed > 0.3 * step)
      return "tensor-parallel all-reduces over " + intra_words(hw) +
             " (latency-bound at decode): " + percent(e.tp_exposed, step) + " of each decode step";
    // Few sequences: the layers' small kernels, not the bytes they read, set the pace.
    if (e.decode_layer_fixed_s > 0.3 * step)
      return "the engine's fixed time per layer per step (" + std::to_string(w.model.layers) + " layers x " +
             fmt("%.0f", 1e6 * e.decode_layer_fixed_s / w.model.layers) +
             " us: kernel launches and small kernels, whatever the batch): " + percent(e.decode_layer_fixed_s, step) +
             " of each decode step; more concurrent sequences share it";
    // "GPU memory": HBM on data-center cards, GDDR on the A10G, L4, L40S and RTX cards.
    return "GPU memory bandwidth: each decode step reads " + fmt("%.1f", units::bytes_to_gb(e.decode_weight_bytes)) +
           " GB of weights" + (w.model.moe.enabled() ? " (the experts its tokens route to)" : "") + " and " +
           fmt("%.1f", units::bytes_to_gb(e.decode_kv_bytes)) + " GB of KV cache per GPU";
  }
  struct Part {
    double seconds;
    std::string words;
  };
  // The link a group of `ranks` data-parallel ranks (each tp x cp GPUs) runs on.
  const auto dp_link_of = [&](int ranks) {
    const double gpus = double(l.tp) * l.cp * ranks;
    const bool network = nodes > 1 && gpus > hw.instance.gpu_count &&
                         !inside_nvlink_domain(p, gpus, double(nodes) * hw.instance.gpu_count);
    return network ? network_words(hw) : intra_words(hw);
  };
  const std::string dp_link = dp_link_of(l.dp);
  const std::string dp_what =
      l.zero == 3 ? "ZeRO-3 weight gathers and gradient reduce-scatters" : "data-parallel gradient reduction";
  // Hybrid sharding: the ZeRO collectives inside each shard group, the copies' all-reduce across them.
  const std::string dp_words = l.zero_replicas() > 1
                                   ? dp_what + " inside each shard group of " + std::to_string(l.zero_shard()) +
                                         " ranks (over " + dp_link_of(l.zero_shard()) + ") and the " +
                                         std::to_string(l.zero_replicas()) + " copies' all-reduce over " + dp_link
                                   : dp_what + " over " + dp_link;
  Part parts[] = {
      {e.dp_exposed, dp_words},
      {e.tp_exposed, "tensor-parallel collectives (tp=" + std::to_string(l.tp) + ") over " +
                         (!inside_nvlink_domain(p, l.tp, double(nodes) * hw.instance.gpu_count) ? network_words(hw)
                          : l.tp <= hw.instance.gpu_count                                       ? intra_words(hw)
                                                                                                : domain_words(hw, p))},
      {e.ep_exposed, ep_words(hw, l, e, p)},
      {e.pp_bubble, "pipeline bubble (pp=" + std::to_string(l.pp) + ", " + fmt("%.0f", e.micro_batches) +
                        " micro-batches" +
                        (l.virtual_stages > 1 ? ", " + std::to_string(l.virtual_stages) + " virtual stages)" : ")")},
      {e.pp_exposed, "pipeline sends over " + (nodes > 1 ? network_words(hw) : intra_words(hw))},
      {e.cp_exposed, "context-parallel ring exchanges"},
      {e.offload, "CPU offload: the host's optimizer step (" + fmt("%.3g s", e.cpu_optimizer) + ") and the " +
                      (p.pcie_gen ? "PCIe Gen" + std::to_string(p.pcie_gen) : std::string("host-link")) + " transfers"},
  };
  const Part* worst = &parts[0];
  for (const Part& part : parts)
    if (part.seconds > worst->seconds) worst = &part;
  const std::string link = worst->words + ": " + percent(worst->seconds, step) + " of the step";
  // The largest term holds the step back: a link term where it outweighs compute, else compute,
  // with the largest link term after it where that still costs more than a tenth of the step.
  if (worst->seconds > 0.1 * step && worst->seconds >= e.compute) return link;
  // The whole step's hardware FLOP rate, not the kernels' while they run: bubble and exposed
  // communication lower it with compute unchanged.
  const double achieved = e.hardware_flops_per_step / (l.gpus() * e.step) / p.peak_flops;
  return "compute: " + percent(e.compute, step) + " of the step (GEMMs " + fmt("%.0f%%", 100 * e.gemm_time_fraction) +
         " of compute time" +
         (deepspeed_pipeline(w.job.framework, l.pp) ? ", with DeepSpeed's pipeline-engine time per layer pass" : "") +
         "); over the whole step the GPUs run at " + fmt("%.0f%%", 100 * achieved) + " of the dense " +
         std::string(to_string(w.job.precision)) + " peak" +
         (worst->seconds > 0.1 * step ? "; then " + link : std::string());
}

}  // namespace

Plan describe(const Workload& w, HardwareRef hw, int nodes, const Layout& l, const Estimate& e,
              const PreparedHardware& p, const PreparedLinksInfo& links, const PlannerConstants& k) {
  Plan plan;
  plan.model = w.model.name;
  plan.params_b = w.model.total_params() / 1e9;
  plan.active_params_b = w.model.active_params() / 1e9;
  plan.kv_cache_precision = w.job.kv_cache_precision;
  plan.kind = w.job.kind;
  plan.precision = w.job.precision;
  plan.instance = hw.instance.id;
  plan.gpu_model = hw.gpu.id;
  plan.custom_hardware = hw.custom;
  plan.nodes = nodes;
  plan.gpus_per_node = hw.instance.gpu_count;
  plan.gpus = nodes * hw.instance.gpu_count;
  plan.nvlink_domain_gpus = std::max(p.gpus_per_node, p.nvlink_domain_gpus);
  plan.layout = l;
  plan.raw = e;
  if (w.job.kind != JobKind::inference) plan.framework = std::string(to_string(planned_framework(w.job, l.zero)));

  using units::bytes_to_gb;
  plan.memory_gb = {bytes_to_gb(e.weights),     bytes_to_gb(e.gradients), bytes_to_gb(e.optimizer),
                    bytes_to_gb(e.activations), bytes_to_gb(e.kv_cache),  bytes_to_gb(e.overhead),
                    bytes_to_gb(e.total),       bytes_to_gb(e.capacity)};
  plan.fits = e.fits;
  plan.memory_verdict = !e.fits ? "no" : e.tight ? "tight" : "fits";
  // CPU offload applies to full training (LoRA keeps no optimizer states worth offloading).
  const bool offloaded =
      w.job.kind != JobKind::inference && w.job.kind != JobKind::lora && w.job.offload != Offload::none;
  if (offloaded) plan.offload_host_checked = !e.host_unchecked();
  plan.memory_error_band = k.memory_error_band;
  plan.memory_margin_gb = bytes_to_gb(e.capacity - e.total);
  if (e.tight && e.memory_at_risk < e.total)  // the engine's start-up KV pool is outside the band
    plan.warnings.push_back(
        fmt("memory is tight: the weights, activations and one sequence's KV cache (%.1f GB ",
            bytes_to_gb(e.memory_at_risk)) +
        fmt("of the card's %.1f GB) ", plan.memory_gb.capacity) +
        fmt("are within the memory model's measured error band (measured peaks up to %.0f%% above it): the engine "
            "may not start",
            100 * k.memory_error_band));
  else if (e.tight)
    plan.warnings.push_back(fmt("memory is tight: %.1f GB to spare is inside the memory model's measured error band ",
                                plan.memory_margin_gb) +
                            fmt("(measured peaks up to %.0f%% above the prediction): the job may run out of memory",
                                100 * k.memory_error_band));
  const double nominal_gib = hw.instance.gpu_memory_gb > 0 ? hw.instance.gpu_memory_gb : hw.gpu.memory_gb;
  if (offloaded) {
    plan.warnings.push_back(
        fmt("CPU offload adds %.3g s to the step (time_s.offload): ", e.offload) +
        fmt("the host's optimizer step %.3g s (DeepSpeed CPU-Adam's published rate, ZeRO-Offload Table 4, ",
            e.cpu_optimizer) +
        (p.host_vcpus ? fmt("at %.0f%% for this host's vCPUs", 100 * cpu_adam_host_share(p, k))
                      : std::string("at the reference host's rate: no vCPU count to scale it by")) +
        fmt(") and the PCIe transfers %.3g s", e.offload - e.cpu_optimizer) +
        (p.pcie_gen ? std::string()
                    : " (the catalog states no host link for " + hw.gpu.id + ": timed as PCIe Gen4 x16)") +
        (hw.instance.memory_gib ? fmt("; the host holds %.0f GiB of offloaded states",
                                      units::bytes_to_gib(e.host_offload_bytes * hw.instance.gpu_count))
                                : std::string("; no host memory figure to check them against")));
    // Offload only buys memory: say so where the same layout fits on the GPUs without it.
    Job on_gpus = w.job;
    on_gpus.offload = Offload::none;
    Estimate without;
    estimate_memory(prepare_model(w.model, on_gpus), p, l, k, without);
    if (without.fits)
      plan.warnings.push_back(
          fmt("this layout fits without CPU offload (%.1f GB per GPU ", units::bytes_to_gb(without.total)) +
          fmt("of %.1f GB): offload only slows it, ", units::bytes_to_gb(without.capacity)) +
          fmt("by %.3g s per step; drop job.offload", e.offload));
  }
  // A layout that does not fit, or only inside the error band, may fit with the memory options real
  // recipes state: say which, with the GB it would need (a suggestion, never applied).
  if (!e.fits || e.tight) {
    if (const std::string advice = memory_option_advice(w, p, l, k, e); !advice.empty())
      plan.warnings.push_back(advice);
  }
  if (!e.host_fits) {  // CPU offload: the node's host memory cannot hold the offloaded states
    plan.why_not.push_back(fmt("host memory: the offloaded states need %.0f GiB per node, ",
                               units::bytes_to_gib(e.host_offload_bytes * hw.instance.gpu_count)) +
                           fmt("the instance has %.3g GiB", hw.instance.memory_gib.value_or(0)));
    plan.why_not_reasons.push_back(Reason::memory);
  }
  if (e.total > e.capacity) {  // the GPU's own memory (not the host's, not the KV pool's: said apart)
    plan.why_not.push_back(
        fmt("needs %.1f GB per GPU, ", plan.memory_gb.total) + fmt("%.1f GB available", plan.memory_gb.capacity) +
        fmt(" (the card's %.0f GiB, ", nominal_gib) +
        fmt("%.1f GB, less the reserve)", units::bytes_to_gb(units::gpu_capacity_bytes(nominal_gib))));
    plan.why_not_reasons.push_back(Reason::memory);
  }
  plan.step_time_s = e.step;
  plan.time_s.compute = e.compute;
  plan.time_s.tp_comm = e.tp_comm;
  plan.time_s.cp_comm = e.cp_comm;
  plan.time_s.pp_comm = e.pp_comm;
  plan.time_s.pp_bubble = e.pp_bubble;
  plan.time_s.dp_comm = e.dp_comm;
  plan.time_s.ep_comm = e.ep_comm;
  plan.time_s.exposed_comm = e.exposed_comm;
  plan.time_s.tp_exposed = e.tp_exposed;
  plan.time_s.cp_exposed = e.cp_exposed;
  plan.time_s.pp_exposed = e.pp_exposed;
  plan.time_s.dp_exposed = e.dp_exposed;
  plan.time_s.ep_exposed = e.ep_exposed;
  plan.time_s.dequant = e.dequant;
  plan.time_s.offload = e.offload;
  plan.tokens_per_s = e.tokens_per_s;
  const double gpus = plan.gpus;
  plan.model_tflops_per_gpu = e.model_flops_per_step / e.step / gpus / units::kFlopsPerTflop;
  plan.hardware_tflops_per_gpu = e.hardware_flops_per_step / e.step / gpus / units::kFlopsPerTflop;
  plan.mfu = plan.model_tflops_per_gpu * units::kFlopsPerTflop / p.peak_flops;
  if (w.job.kind == JobKind::inference) {
    plan.ttft_s = e.ttft;
    plan.tpot_s = e.itl;
    plan.decode_tokens_per_s = e.decode_tokens_per_s;
    plan.ttft_under_load_s = e.ttft_under_load;
    const Engine engine = resolve(w.job.engine, hw.gpu);
    plan.engine = std::string(to_string(engine));
    plan.concurrent = static_cast<long long>(e.sequences + e.queued) * l.dp;
    plan.max_concurrent = static_cast<long long>(e.max_sequences) * l.dp;
    plan.max_concurrent_limit = e.max_sequences_at_batch_limit ? "engine_batch_limit" : "kv_pool";
    plan.concurrent_is_max = w.job.concurrent_max;
    if (e.max_sequences < 1) {
      const EngineProfile& profile = engine_profile(engine);
      plan.why_not.push_back("the engine's KV pool (" + plan.engine +
                             fmt(", %.0f%% ", 100 * memory_fraction(profile, l.tp)) +
                             std::string(describe_kv_pool(profile.kv_pool_rule)) +
                             ") cannot hold one sequence of prompt_len + output_len tokens");
      plan.why_not_reasons.push_back(Reason::memory);
    }
    if (e.queued > 0)
      plan.warnings.push_back("job.concurrent exceeds what " + plan.engine +
                              "'s KV pool holds per replica at its defaults (" +
                              fmt("%.0f sequences", e.max_sequences) +
                              "): the engine runs that many and queues the rest, which wait for slots (in "
                              "ttft_under_load_s); \"concurrent\": \"max\" plans at that limit");
    if (w.job.latency_target_ms) {
      plan.meets_latency_target = e.itl * 1000.0 <= *w.job.latency_target_ms;
      if (!*plan.meets_latency_target)
        plan.why_not.push_back(fmt("time per output token %.1f ms exceeds ", e.itl * 1000) +
                               fmt("the %g ms target", *w.job.latency_target_ms));
      if (!*plan.meets_latency_target) plan.why_not_reasons.push_back(Reason::latency_target);
    }
  }
  if (p.price_per_node_hour >= 0) {
    plan.price_usd_per_hour = p.price_per_node_hour * nodes;
    plan.usd_per_million_tokens = *plan.price_usd_per_hour / (e.tokens_per_s * units::kSecondsPerHour) * 1e6;
  }
  if (w.job.tokens) {
    plan.job_hours = *w.job.tokens / e.tokens_per_s / units::kSecondsPerHour;
    if (plan.price_usd_per_hour) plan.cost_usd = *plan.job_hours * *plan.price_usd_per_hour;
  }
  const Constraints& c = w.constraints;
  if (c.deadline_hours && plan.job_hours) {
    plan.meets_deadline = *plan.job_hours <= *c.deadline_hours;
    if (!*plan.meets_deadline)
      plan.why_not.push_back(fmt("takes %.1f h, ", *plan.job_hours) + fmt("over the %g h deadline", *c.deadline_hours));
    if (!*plan.meets_deadline) plan.why_not_reasons.push_back(Reason::deadline);
  }
  if (c.budget_usd && plan.cost_usd) {
    plan.within_budget = *plan.cost_usd <= *c.budget_usd;
    if (!*plan.within_budget)
      plan.why_not.push_back("costs " + text::dollars(*plan.cost_usd) + ", over the " + text::dollars(*c.budget_usd) +
                             " budget");
    if (!*plan.within_budget) plan.why_not_reasons.push_back(Reason::budget);
  }
  plan.bottleneck = bottleneck_words(w, hw, nodes, l, e, p);
  plan.bandwidth_source = {links.intra_node, links.inter_node, links.hbm};
  plan.intra_node_busbw_gbytes_per_s = p.intra_busbw / units::kBytesPerGB;
  if (p.has_network) plan.inter_node_gbytes_per_s_per_gpu = p.nic_per_gpu / units::kBytesPerGB;

  if (!inside_nvlink_domain(p, l.tp, plan.gpus))
    plan.warnings.push_back("tensor parallelism (tp=" + std::to_string(l.tp) + ") " +
                            (l.tp > plan.nvlink_domain_gpus
                                 ? std::string("spans nodes")
                                 : "does not tile the " + std::to_string(plan.nvlink_domain_gpus) +
                                       "-GPU NVLink domain, so some groups straddle two") +
                            ": its collectives run on the network");
  if (w.model.moe.enabled() && l.ep > 1 && !e.ep_inside_domain)
    plan.warnings.push_back("expert parallelism (ep=" + std::to_string(l.ep) + " x etp=" + std::to_string(l.etp) +
                            ") leaves the " + std::to_string(plan.nvlink_domain_gpus) + "-GPU " + link_family(hw) +
                            " domain: part of every all-to-all crosses the network");
  if (w.model.moe.enabled() && w.job.kind != JobKind::inference && l.tp > 1 && !l.sequence_parallel)
    plan.warnings.push_back("MoE with tp > 1 is modelled with sequence parallelism (Megatron-Core requires it)");
  if (w.job.precision == Precision::fp4 && w.job.kind != JobKind::inference)
    plan.warnings.push_back(
        "fp4 training: GEMMs at the FP4 peak as in NVIDIA's NVFP4 pre-training recipe (arXiv 2509.25149), "
        "which keeps some layers in 16-bit; weights, gradients and optimizer states stay 16/32-bit");
  if (w.model.layers % ((long long)l.pp * l.virtual_stages) != 0)
    plan.warnings.push_back(
        (w.job.kind == JobKind::inference
             ? "pp = " + std::to_string(l.pp) + " does not divide the " + std::to_string(w.model.layers) +
                   " layers: stages are uneven; the heaviest, "
             : "pp x virtual_stages = " + std::to_string(l.pp * l.virtual_stages) + " does not divide the " +
                   std::to_string(w.model.layers) +
                   " layers: stages are uneven (Megatron's first/last-stage split); the heaviest, ") +
        std::to_string((w.model.layers + l.pp - 1) / l.pp) + " layers, sets the pace");
  // Beyond the context its publisher states: positions the model was not trained on, unless the job
  // extends RoPE (the card's YaRN figure where it documents one).
  if (w.model.context_tokens > 0) {
    const long long tokens =
        w.job.kind == JobKind::inference ? (long long)w.job.prompt_len + w.job.output_len : (long long)w.job.seq_len;
    const int window = w.model.context_tokens, extended = w.model.context_tokens_extended;
    if (tokens > window)
      plan.warnings.push_back(
          std::string(w.job.kind == JobKind::inference ? "job.prompt_len + job.output_len = " : "job.seq_len ") +
          std::to_string(tokens) + " exceeds " + w.model.name + "'s " + std::to_string(window) +
          "-token context window (its publisher's figure)" +
          (extended > window ? (tokens > extended ? ", and the " : ": the ") + std::to_string(extended) +
                                   "-token one its card documents with YaRN" +
                                   (tokens > extended ? " too" : " needs that RoPE scaling set")
                             : std::string(": positions beyond it are untrained unless the job extends RoPE")));
  }
  // A rack-scale NVLink domain rented as several instances (GB200/GB300 trays): the plan's traffic
  // between them rides NVLink only where the provider places them in one rack.
  // Training's collectives and a serving replica wider than one instance cross them; independent
  // serving replicas of one instance each do not.
  const bool crosses_instances = w.job.kind != JobKind::inference || (long long)l.tp * l.pp * l.cp > p.gpus_per_node ||
                                 (long long)l.ep * l.etp > p.gpus_per_node;
  if (nodes > 1 && p.nvlink_domain_gpus > p.gpus_per_node && crosses_instances)
    plan.warnings.push_back("the plan runs NVLink between its " + std::to_string(nodes) + " instances (a " +
                            std::to_string(p.nvlink_domain_gpus) +
                            "-GPU rack-scale domain): that holds only where the provider places them in one "
                            "rack, one NVLink (IMEX) domain; ask for rack placement, or the traffic crosses the "
                            "network");
  const std::string architecture(to_string(hw.gpu.architecture));
  const Architecture arch = hw.gpu.architecture;
  if (w.job.kind == JobKind::inference) {
    // Serving runs at the engine profile's fractions (serving.cpp), fit on Ampere, Hopper and
    // Blackwell rows, and on an AMD Instinct generation's rows where the engine has figures of its
    // own there (RocmTerms, fit on one kind of run: said for every other); the training GEMM
    // efficiency plays no part.
    const EngineProfile& eng = p.engine_profile;
    const std::string engine(to_string(p.engine));
    if (!engine_fit_on(eng, arch)) {
      plan.warnings.push_back("no published serving benchmark of " + engine + " on the " + architecture +
                              " generation in the engine profiles' fit set: its decode and GEMM fractions are "
                              "those fit on Ampere, Hopper and Blackwell");
    } else if (const RocmTerms* rocm = rocm_terms(eng, arch)) {
      plan.warnings.push_back(engine + "'s " + architecture +
                              fmt(" figures (%.2g ms per layer per step, ", 1e3 * rocm->layer_step_s) +
                              fmt("fractions x%.2f) are fit on ", rocm->fraction_scale) + std::string(rocm->basis) +
                              " only: for other models and sizes they are an extrapolation");
    }
  } else if (arch == Architecture::cdna3 || arch == Architecture::cdna4) {
    plan.warnings.push_back(
        "AMD Instinct (" + architecture + fmt("): its GEMM efficiency %.2f (", k.gemm_efficiency_cdna) +
        fmt("x %.2f in FP8) is fit on 24 published AMD runs ", fp8_gemm_efficiency_ratio(arch, k)) +
        "(MI325X Llama 3.1 70B BF16; MLPerf Training's Llama 2 70B LoRA on MI300X, MI325X and MI355X) and "
        "checked on five (MI325X and MI355X FP8 pre-training); MI300X FP8 ran 17% slower than that fit");
  } else if (arch == Architecture::blackwell) {
    plan.warnings.push_back(
        fmt("Blackwell: its GEMM efficiency %.2f is fit on 12 published FP8 runs ", k.gemm_efficiency_blackwell) +
        "(NeMo's B200 and GB200 tables) and checked on 105 others (23 MLPerf Training, 75 Megatron "
        "Bridge 25.09-26.06, 7 of NVIDIA's DGX Cloud recipes: 6 of them the only 16-bit Blackwell runs, "
        "GB200 bf16, 8% under)");
    if (is_gb300(hw.gpu)) {
      const double ratio = gb300_tensor_ratio(hw.gpu, Precision::bf16, k);
      const bool fp4 = w.job.precision == Precision::fp4;
      plan.warnings.push_back(
          (fp4 ? fmt("GB300: its 16-bit attention and output layer run at %.2f x that efficiency, its FP4 GEMMs "
                     "at Blackwell's own (the datasheet already gives GB300 1.5 x GB200's FP4 peak)",
                     ratio)
               : "GB300: its " + std::string(to_string(w.job.precision)) +
                     fmt(" GEMMs and its attention run at %.2f x that efficiency", ratio)) +
          " (fit on 7 GB300/GB200 pairs of Megatron Bridge's tables, where GB300 ran the same jobs 8-25% faster "
          "at the same 16-bit and FP8 datasheet peaks); MLPerf's GB300 runs gained less over GB200 (about 4%)");
    }
  } else if (arch != Architecture::ampere && arch != Architecture::hopper) {
    plan.warnings.push_back("no calibration data for the " + architecture +
                            " generation: its GEMM efficiency is the uncalibrated default " +
                            fmt("%.2f", k.gemm_efficiency_other));
  }
  if (w.job.kind != JobKind::inference && plan.mfu < 0.10) {
    // Low MFU has two causes with different remedies: GPUs that wait (communication, bubble,
    // offload), or GPUs busy with work far from their peak (small GEMMs, memory-bound kernels).
    const double compute_share = e.step > 0 ? e.compute / e.step : 0.0;
    if (compute_share < 0.5)
      plan.warnings.push_back(fmt("MFU %.1f%%: ", 100 * plan.mfu) +
                              fmt("compute is %.0f%% of the step ", 100 * compute_share) +
                              "(the rest waits on communication, the pipeline bubble or offload): fewer GPUs or "
                              "another layout would waste less");
    else
      plan.warnings.push_back(fmt("MFU %.1f%%: ", 100 * plan.mfu) +
                              fmt("compute is %.0f%% of the step but runs far from the peak ", 100 * compute_share) +
                              (deepspeed_pipeline(w.job.framework, l.pp)
                                   ? std::string("(DeepSpeed's pipeline-engine time per layer pass, below, and "
                                                 "small matrix multiplies or memory-bound kernels)")
                                   : std::string("(small matrix multiplies, memory-bound kernels: short sequences "
                                                 "or small micro-batches): longer sequences or larger "
                                                 "micro-batches would use the GPUs better")));
  }
  // DeepSpeed's pipeline engine is timed with the per-layer-pass time the 2021-2022 production runs
  // lost (constants.cpp deepspeed_pipeline_layer_overhead_s); Megatron-DeepSpeed's 2023 runs lost
  // much less (docs/calibration.md "DeepSpeed's pipeline engine"). Every plan under it, plan's and
  // recommend's, says how much of its step that is and what the step would be without it.
  if (w.job.kind != JobKind::inference && deepspeed_pipeline(w.job.framework, l.pp) &&
      k.deepspeed_pipeline_layer_overhead_s > 0) {
    PlannerConstants without = k;
    without.deepspeed_pipeline_layer_overhead_s = 0;
    const Estimate bare = estimate(prepare_model(w.model, w.job), p, nodes, l, without);
    plan.warnings.push_back(
        fmt("job.framework deepspeed with pp > 1: %.3g s of the ", e.step - bare.step) +
        fmt("%.3g s step is DeepSpeed's pipeline-engine time, ", e.step) +
        fmt("%.2f ms per layer per pass as the 2021-2022 production runs lost it ",
            1e3 * k.deepspeed_pipeline_layer_overhead_s) +
        "(fit on BigScience's, checked on Megatron-Turing NLG's and GLM-130B's); Megatron-DeepSpeed's 2023 "
        "runs lost much less, so on a current release the step may be nearer " +
        fmt("%.3g s", bare.step));
  }
  // An overlap planned by default, as NVIDIA's recipes run it, where Megatron-LM's own default is
  // off: the plan says so, and what the step is without it, so the assumption is never silent.
  const auto say_default = [&](bool Layout::*flag, const char* field, const char* what, double exposed, double comm,
                               const char* traffic) {
    Layout without = l;
    without.*flag = false;
    const Estimate bare = estimate(prepare_model(w.model, w.job), p, nodes, without, k);
    plan.warnings.push_back(std::string(field) + " not stated: planned with " + what +
                            ", as NVIDIA's recipes run it; " + fmt("it leaves %.3g s of the ", exposed) +
                            fmt("%.3g s of ", comm) + traffic + " exposed; " +
                            fmt("without it (Megatron-LM's default; state false) the step is %.3g s", bare.step) +
                            fmt(" (%.3g s with it)", e.step));
  };
  if (l.tp_comm_overlap && !w.layout.tp_comm_overlap)  // tp_comm_overlap_default
    say_default(&Layout::tp_comm_overlap, "layout.tp_comm_overlap",
                "Transformer Engine's TP communication overlap (NeMo, Megatron Bridge, MLPerf)", e.tp_exposed,
                e.tp_comm, "TP collectives");
  // (Where the run may choose: Megatron-FSDP always overlaps.)
  if (l.overlap_grad_reduce && !w.layout.overlap_grad_reduce && e.dp_comm > e.dp_exposed &&
      grad_reduce_overlap(w.job, l) == GradReduceOverlap::choice)
    say_default(&Layout::overlap_grad_reduce, "layout.overlap_grad_reduce",
                l.zero == 1 ? "Megatron-Core's overlap of the gradient reduction and the distributed optimizer's gather"
                            : "Megatron-Core's overlap of the gradient reduction",
                e.dp_exposed, e.dp_comm, "data-parallel traffic");
  {
    const Interval iv = throughput_interval(
        hw.gpu.architecture, w.job.precision, w.job.kind, l, plan.gpus,
        w.job.kind == JobKind::inference ? double(w.job.prompt_len) : double(w.job.seq_len), plan.mfu,
        w.model.moe.enabled(), resolve(w.job.engine, hw.gpu), e.step > 0 ? e.offload / e.step : 0.0);
    plan.tokens_per_s_interval = {e.tokens_per_s * iv.tokens_low, e.tokens_per_s * iv.tokens_high};
    plan.step_time_interval = {e.step / iv.tokens_high, e.step / iv.tokens_low};
    if (plan.cost_usd)
      plan.cost_usd_interval = Plan::Range{*plan.cost_usd / iv.tokens_high, *plan.cost_usd / iv.tokens_low};
    if (plan.usd_per_million_tokens)
      plan.usd_per_million_tokens_interval =
          Plan::Range{*plan.usd_per_million_tokens / iv.tokens_high, *plan.usd_per_million_tokens / iv.tokens_low};
    if (plan.job_hours) {
      plan.job_hours_interval = Plan::Range{*plan.job_hours / iv.tokens_high, *plan.job_hours / iv.tokens_low};
      // A deadline met at the prediction but not at the interval's slow end is a risk, not a promise.
      if (plan.meets_deadline && *plan.meets_deadline && plan.job_hours_interval->p90 > *w.constraints.deadline_hours)
        plan.warnings.push_back(
            fmt("meets the %.4g h deadline at the prediction (", *w.constraints.deadline_hours) +
            fmt("%.1f h) but not at the slow end of its p10-p90 interval (", *plan.job_hours) +
            fmt("%.1f h): published runs like it finish later 1 time in 10 or more", plan.job_hours_interval->p90));
    }
    plan.interval_basis = iv.basis;
    plan.interval_widened = iv.widened;
    for (const std::string& why : iv.reasons) plan.warnings.push_back(why);
  }
  if (!plan.price_usd_per_hour)
    plan.warnings.push_back(w.constraints.spot ? "no spot price in the catalog for this instance: cost unknown"
                                               : "no price for this hardware: cost unknown");
  else if (w.constraints.spot)
    plan.warnings.push_back(
        fmt("priced at the spot rate ($%.2f/h per node", *plan.price_usd_per_hour / nodes) +
        (hw.instance.price_usd_per_hour ? fmt("; on demand $%.2f/h", *hw.instance.price_usd_per_hour) : std::string()) +
        "): spot capacity can be reclaimed mid-job; restarts and checkpointing are not priced");
  if (w.job.kind != JobKind::inference && !w.job.tokens)
    plan.warnings.push_back("job.tokens not given: job_hours and cost_usd are unknown");
  return plan;
}

Plan plan(const Workload& w, const MeasuredLinks* measured) {
  if (!w.hardware)
    throw_invalid("hardware", "plan needs hardware: {\"instance\": ..., \"nodes\": N} or {\"custom\": {...}}");
  if (w.constraints.objective_given)
    throw_invalid("constraints.objective", "constraints.objective ranks the plans recommend finds; plan evaluates "
                                           "the one layout given (leave it out, or use recommend)");
  const Hardware& hw = *w.hardware;
  const int nodes = w.nodes.value_or(1);
  const int gpus = nodes * hw.instance.gpu_count;
  Layout layout = complete_layout(w, gpus);
  validate_layout(w, layout, hw.instance.gpu_count, nodes);
  if (w.job.kind == JobKind::inference && layout.cp != 1)
    throw_invalid("layout.cp", "context parallelism is for training; use cp 1 for inference");
  const PlannerConstants& k = default_constants();
  PreparedLinksInfo links;
  const PreparedHardware prepared = prepare_hardware(hw, w.job, k, measured, w.constraints.spot, &links);
  if (nodes > 1 && !prepared.has_network)
    throw_invalid("hardware.nodes",
                  "instance " + hw.instance.id + " has no stated network bandwidth between nodes; use one node");
  // Transformer Engine's TP overlap exchanges over NVIDIA NVLink: off by default where the TP group
  // is not inside one NVLink domain, refused where the workload states it there.
  if (layout.tp_comm_overlap && !tp_on_nvidia_nvlink(prepared, layout.tp, gpus)) {
    if (w.layout.tp_comm_overlap)
      throw_invalid("layout.tp_comm_overlap",
                    std::string("layout.tp_comm_overlap cannot be true here: ") +
                        tp_comm_overlap_problem(w.job, layout, /*tp_inside_nvlink_domain=*/false));
    layout.tp_comm_overlap = false;
  }
  const PreparedModel model = prepare_model(w.model, w.job);
  const Estimate e = estimate(model, prepared, nodes, layout, k);
  Plan p = describe(w, hw, nodes, layout, e, prepared, links, k);
  // layout.zero 3 under job.framework auto is planned as PyTorch FSDP; Megatron-Core runs the same
  // layout as Megatron-FSDP, with the overlap its recipes publish. Where the two differ by more than
  // 10% the plan says what the other gives, so the default is not read as the only answer.
  if ((w.job.kind == JobKind::pretrain || w.job.kind == JobKind::finetune) && w.job.framework == Framework::auto_ &&
      layout.zero == 3 && w.job.offload == Offload::none) {
    Job megatron = w.job;
    megatron.framework = Framework::megatron_core;
    // The same layout as Megatron-Core runs it: its overlaps as stated, or by their defaults there.
    Layout as_megatron = layout;
    resolve_overlaps(megatron, w.layout, w.model.moe.enabled(), tp_on_nvidia_nvlink(prepared, layout.tp, gpus),
                     as_megatron);
    const Estimate a = estimate(prepare_model(w.model, megatron), prepared, nodes, as_megatron, k);
    if (a.fits && std::fabs(a.tokens_per_s / e.tokens_per_s - 1.0) > 0.10)
      p.warnings.push_back(
          fmt("layout.zero 3 under job.framework auto is planned as PyTorch FSDP (%.0f tokens/s); ", e.tokens_per_s) +
          fmt("Megatron-FSDP (job.framework megatron-core) plans %.0f tokens/s ", a.tokens_per_s) +
          fmt("on the same layout (%+.0f%%)", 100.0 * (a.tokens_per_s / e.tokens_per_s - 1.0)));
  }
  // The workload's constraints hold for a fixed machine too: one it does not meet is why the plan
  // does not qualify, as recommend would reject it (never a silent "fits").
  for (const std::string& why : unmet_constraints(w.constraints, hw.instance, nodes)) {
    p.why_not.push_back(why);
    p.why_not_reasons.push_back(Reason::constraint);
  }
  // tp_across_nodes false, stated: a TP group beyond the NVLink domain is what it rules out (the
  // search never builds one; a fixed layout is told so).
  if (w.constraints.tp_across_nodes_given && !w.constraints.tp_across_nodes &&
      !inside_nvlink_domain(prepared, layout.tp, gpus)) {
    p.why_not.push_back("layout.tp " + std::to_string(layout.tp) + " leaves the " +
                        std::to_string(std::max(prepared.gpus_per_node, prepared.nvlink_domain_gpus)) +
                        "-GPU NVLink domain, which constraints.tp_across_nodes false rules out");
    p.why_not_reasons.push_back(Reason::constraint);
  }
  return p;
}

}  // namespace linkwise::planner
