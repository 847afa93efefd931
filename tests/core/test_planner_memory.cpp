// Memory model against hand-computed cases from the public sources.
#include <catch2/catch.hpp>

#include <string>
#include <tuple>

#include "linkwise/catalog.hpp"
#include "linkwise/planner/engine.hpp"
#include "linkwise/planner/model.hpp"
#include "linkwise/units.hpp"
#include "planner_test_util.hpp"

using namespace linkwise::planner;

namespace {

Estimate memory_of(const ModelShape& shape, const Job& job, const Layout& l,
                   const Hardware& hw = planner_test::dgx(planner_test::a100_80())) {
  const PlannerConstants& k = default_constants();
  const PreparedHardware p = prepare_hardware(hw, job, k, nullptr, false);
  Estimate e;
  estimate_memory(prepare_model(shape, job), p, l, k, e);
  return e;
}

Job pretrain(int seq, int batch) {
  Job j;
  j.kind = JobKind::pretrain;
  j.seq_len = seq;
  j.global_batch = batch;
  return j;
}

// Activation bytes of one layer: the difference of two models one layer apart (pp 1).
double per_layer_activations(ModelShape shape, const Job& job, const Layout& l,
                             const Hardware& hw = planner_test::dgx(planner_test::a100_80())) {
  shape.layers = 2;
  const double two = memory_of(shape, job, l, hw).activations;
  shape.layers = 1;
  return two - memory_of(shape, job, l, hw).activations;
}

}  // namespace

TEST_CASE("mixed-precision Adam without ZeRO takes 16 bytes per parameter (ZeRO paper, Transformer Math 101)") {
  const ModelShape m = preset("llama2-7b");
  Layout l;  // tp = pp = dp = 1, zero 0
  Job job = pretrain(4096, 8);
  job.framework = Framework::fsdp;  // the ZeRO paper's accounting (Megatron keeps fp32 gradients: below)
  const Estimate e = memory_of(m, job, l);
  const double params = m.total_params() - m.hidden;
  // All parameters live on the one GPU (two embedding matrices, layer norms; the final norm's 4096 aside).
  CHECK(e.weights == Approx(2.0 * params).epsilon(1e-9));
  CHECK(e.gradients == Approx(2.0 * params).epsilon(1e-9));
  CHECK(e.optimizer == Approx(12.0 * params).epsilon(1e-9));
  CHECK((e.weights + e.gradients + e.optimizer) / params == Approx(16.0).epsilon(1e-3));
  CHECK(params / 1e9 == Approx(6.74).epsilon(0.005));  // Llama 2 7B: 6.74 B parameters
}

TEST_CASE("ZeRO stages shard model states over DP as in the ZeRO paper's 7.5B, 64-GPU example") {
  ModelShape m = preset("llama2-7b");
  Layout l;
  l.dp = 64;
  Job job = pretrain(2048, 64);
  job.framework = Framework::fsdp;  // the ZeRO paper's accounting
  auto states = [&](int zero) {
    l.zero = zero;
    const Estimate e = memory_of(m, job, l);
    return e.weights + e.gradients + e.optimizer;
  };
  const double psi = m.total_params();
  // ZeRO paper Figure 1: baseline (2 + 2 + K) psi, P_os 4 psi + K psi / Nd, P_os+g 2 psi + 14 psi / Nd, P_os+g+p 16 psi
  // / Nd.
  CHECK(states(0) == Approx(16 * psi));
  CHECK(states(1) == Approx(4 * psi + 12 * psi / 64));
  CHECK(states(2) == Approx(2 * psi + 14 * psi / 64));
  CHECK(states(3) == Approx(16 * psi / 64));
  // With psi = 7.5 B: 120, 31.4, 16.6 and 1.9 GB per GPU.
  CHECK(16 * 7.5 == Approx(120));
  CHECK((4 * 7.5 + 12 * 7.5 / 64) == Approx(31.4).epsilon(0.002));
  CHECK((2 * 7.5 + 14 * 7.5 / 64) == Approx(16.6).epsilon(0.003));
}

TEST_CASE("KV cache bytes: 2 x layers x KV heads x head size x bytes x tokens x sequences") {
  const ModelShape m = preset("llama2-70b");  // 80 layers, 8 KV heads of 128
  const Job job = planner_test::inference(3072, 1024, 8);
  Layout l;
  l.tp = 8;  // one KV head per GPU
  const Estimate e = memory_of(m, job, l);
  CHECK(e.kv_cache == Approx(2.0 * 80 * 1 * 128 * 2 * 4096 * 8));  // 1.34 GB
  l.tp = 2;                                                        // four KV heads per GPU
  CHECK(memory_of(m, job, l).kv_cache == Approx(4.0 * 2.0 * 80 * 128 * 2 * 4096 * 8));
  l.tp = 16;  // more GPUs than KV heads: heads are replicated, not split further
  CHECK(memory_of(m, job, l).kv_cache == Approx(2.0 * 80 * 1 * 128 * 2 * 4096 * 8));
}

TEST_CASE("activations follow Korthikanti et al. 2022 (arXiv 2205.05198) Table 2 and Figure 7") {
  // GPT-3 175B (a = 96, h = 12288, s = 2048), t = 8, b = 1, no FlashAttention, with dropout.
  ModelShape m = preset("gpt3-175b");
  Job job = pretrain(2048, 8);
  job.flash_attention = false;
  Layout l;
  l.tp = 8;
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  const double sbh = s * b * h;

  l.sequence_parallel = false;
  l.recompute = Recompute::none;
  const double none = per_layer_activations(m, job, l);
  CHECK(none == Approx(sbh * (10 + 24 / t + 5 * a * s / (h * t))));  // TP only

  l.sequence_parallel = true;
  CHECK(per_layer_activations(m, job, l) == Approx(sbh / t * (34 + 5 * a * s / h)));  // TP + SP

  l.sequence_parallel = false;
  l.recompute = Recompute::selective;
  CHECK(per_layer_activations(m, job, l) == Approx(sbh * (10 + 24 / t)));  // TP + selective

  l.sequence_parallel = true;
  const double sp_selective = per_layer_activations(m, job, l);
  CHECK(sp_selective == Approx(sbh * 34 / t));                 // TP + SP + selective
  CHECK(sp_selective / none == Approx(0.1849).epsilon(0.01));  // Figure 7: 18.49% for 175B

  l.sequence_parallel = false;
  l.recompute = Recompute::full;
  CHECK(per_layer_activations(m, job, l) == Approx(2 * sbh));  // full recompute keeps the layer input
  CHECK(2 * sbh / none == Approx(0.0871).epsilon(0.01));       // Figure 7: 8.71%

  // 22B of Figure 7 (a = 64, h = 6144): SP alone 66.84%, selective alone 49.42%, both 16.18%.
  ModelShape m22;
  m22.layers = 48;
  m22.hidden = 6144;
  m22.heads = 64;
  m22.kv_heads = 64;
  m22.ffn_hidden = 4 * 6144;
  m22.vocab = 51200;
  m22.dropout = true;
  l = Layout{};
  l.tp = 8;
  const double base = per_layer_activations(m22, job, l);
  l.sequence_parallel = true;
  CHECK(per_layer_activations(m22, job, l) / base == Approx(0.6684).epsilon(0.01));
  l.sequence_parallel = false;
  l.recompute = Recompute::selective;
  CHECK(per_layer_activations(m22, job, l) / base == Approx(0.4942).epsilon(0.01));
  l.sequence_parallel = true;
  CHECK(per_layer_activations(m22, job, l) / base == Approx(0.1618).epsilon(0.01));
}

TEST_CASE("the pipeline's first stage holds min(pp, micro-batches) micro-batches of activations") {
  const ModelShape m = preset("llama2-13b");  // 40 layers
  const Job job = pretrain(4096, 64);
  Layout l;
  l.pp = 4;
  l.dp = 2;  // 32 sequences per pipeline
  const Estimate e4 = memory_of(m, job, l);
  l.pp = 1;
  l.dp = 8;
  const Estimate e1 = memory_of(m, job, l);
  // pp 4: 10 layers x 4 micro-batches in flight, like the 40 layers of pp 1 (logits aside).
  CHECK(e4.activations == Approx(e1.activations).epsilon(0.15));
  CHECK(e4.weights < e1.weights / 3.5);
}

TEST_CASE("capacity is the nominal binary size minus the reserve") {
  const Estimate e = memory_of(preset("llama2-7b"), pretrain(2048, 8), Layout{});
  CHECK(e.capacity == Approx(80 * linkwise::units::kBytesPerGiB - default_constants().capacity_reserve_gb * 1e9));
  CHECK_FALSE(e.fits);  // 16 bytes x 6.7 B parameters does not fit on one 80 GB GPU
}

TEST_CASE(
    "framework accounting: Megatron-Core's fp32 main gradients, DeepSpeed's bf16 optimizer, optimizers, offload") {
  const ModelShape m = preset("llama2-7b");
  Layout l;
  l.dp = 8;
  l.zero = 1;
  const double psi = m.total_params() - m.hidden;
  auto states = [&](Framework f, Precision p, Optimizer o = Optimizer::adamw, Offload off = Offload::none) {
    Job job = pretrain(4096, 64);
    job.framework = f;
    job.precision = p;
    job.optimizer = o;
    job.offload = off;
    const Estimate e = memory_of(m, job, l);
    return (e.weights + e.gradients + e.optimizer) / psi;
  };
  // Megatron-Core docs (distributed optimizer): bf16 params + fp32 grads 6 + 12/d; fp16 4 + 16/d.
  CHECK(states(Framework::megatron_core, Precision::bf16) == Approx(6 + 12.0 / 8).epsilon(1e-3));
  CHECK(states(Framework::auto_, Precision::bf16) == Approx(6 + 12.0 / 8).epsilon(1e-3));
  CHECK(states(Framework::megatron_core, Precision::fp16) == Approx(4 + 16.0 / 8).epsilon(1e-3));
  // DeepSpeed bf16 optimizer: fp32 gradient accumulation, unsharded at ZeRO-1 (BigScience tr11 notes).
  CHECK(states(Framework::deepspeed, Precision::bf16) == Approx(8 + 12.0 / 8).epsilon(1e-3));
  CHECK(states(Framework::fsdp, Precision::bf16, Optimizer::adam8bit) == Approx(4 + 6.0 / 8).epsilon(1e-3));
  CHECK(states(Framework::fsdp, Precision::bf16, Optimizer::adafactor) == Approx(4 + 4.0 / 8).epsilon(1e-3));
  CHECK(states(Framework::fsdp, Precision::bf16, Optimizer::sgd) == Approx(4 + 8.0 / 8).epsilon(1e-3));
  // Offload: the optimizer states and the gradients live on the host; the GPU keeps its 16-bit
  // weights and DeepSpeed's 1 GB reduce bucket (the 7B model's gradients are larger than it).
  CHECK(states(Framework::fsdp, Precision::bf16, Optimizer::adamw, Offload::optimizer) ==
        Approx(2 + kOffloadReduceBucketBytes / psi).epsilon(1e-3));
}

TEST_CASE("memory verdict: tight inside the error band, no above capacity") {
  const ModelShape m = preset("llama2-7b");
  Layout l;
  l.dp = 8;
  l.zero = 1;
  for (int mb : {1, 2, 4, 8, 16}) {
    l.micro_batch = mb;
    const Estimate e = memory_of(m, pretrain(4096, 128), l);
    const double band = default_constants().memory_error_band;
    CHECK(e.fits == (e.total <= e.capacity));
    CHECK(e.tight == (e.fits && e.total * (1 + band) > e.capacity));
  }
}

TEST_CASE("layer-selective checkpointing keeps all activations of the layers it does not checkpoint") {
  // fms-fsdp's selective_checkpointing p, torchtitan's selective_ac_option k: recompute full on a
  // share f of the layers, the other layers keep what recompute none keeps.
  const ModelShape m = preset("llama2-13b");
  Job job = pretrain(4096, 64);
  job.framework = Framework::fsdp;
  Layout l;
  l.dp = 8;
  l.micro_batch = 2;
  l.zero = 3;
  const double none = per_layer_activations(m, job, l);
  l.recompute = Recompute::full;
  const double full = per_layer_activations(m, job, l);
  l.recompute_layer_fraction = 0.5;
  const double half = per_layer_activations(m, job, l);
  CHECK(full == Approx(2.0 * m.hidden * 2 * 4096).epsilon(1e-9));  // the layer's 16-bit input only
  CHECK(half == Approx(0.5 * none + 0.5 * full).epsilon(1e-9));
}

TEST_CASE(
    "torchtitan's op-level selective AC keeps the odd matmuls' and SDPA's outputs, Megatron's drops only attention") {
  const ModelShape m = preset("llama3.1-8b");
  Layout l;
  l.dp = 8;
  l.micro_batch = 2;
  l.zero = 3;
  l.recompute = Recompute::selective;
  Job job = pretrain(8192, 16);
  job.framework = Framework::torchtitan;
  const double h = m.hidden, kv = double(m.kv_heads) * (m.hidden / m.heads);
  // Block input, Q, V, SDPA output + fp32 log-sum-exp, w1 output, w2's full-width output (16-bit).
  const double saved = 2 * h + 2 * h + 2 * kv + 2 * h + 4.0 * m.heads + 2.0 * m.ffn_hidden + 2 * h;
  CHECK(per_layer_activations(m, job, l) == Approx(saved * 2 * 8192).epsilon(1e-9));
  job.framework = Framework::megatron_core;  // FlashAttention: selective drops only the fp32 log-sum-exp
  l.recompute = Recompute::none;
  const double megatron_none = per_layer_activations(m, job, l);
  CHECK(megatron_none > 2.0 * saved * 2 * 8192);
}

TEST_CASE("torchtitan with pipeline parallelism keeps the stage's 16-bit weights and fp32 gradients unsharded") {
  // parallelize_llama.py apply_fsdp: reshard_after_forward = False under PP; FSDP2 accumulates the
  // unsharded gradients of the non-last micro-batches in fp32 (the reduce dtype).
  const ModelShape m = preset("llama3.1-70b");
  Layout l;
  l.tp = 8;
  l.pp = 4;
  l.dp = 4;
  l.zero = 3;
  l.recompute = Recompute::full;
  Job job = pretrain(8192, 64);
  job.framework = Framework::fsdp;
  const Estimate fsdp = memory_of(m, job, l);
  job.framework = Framework::torchtitan;
  const Estimate titan = memory_of(m, job, l);
  const double stage_params_per_gpu = fsdp.weights * 4 / 2.0;  // ZeRO-3 over dp 4, 2 bytes each
  // Reported where they are: the unsharded 16-bit weights under weights, the fp32 gradients under
  // gradients; the rest of the difference (FSDP's per-unit buffers it no longer needs, the
  // allocator's share) stays in overhead.
  CHECK(titan.weights - fsdp.weights == Approx(2.0 * stage_params_per_gpu).epsilon(1e-9));
  CHECK(titan.gradients - fsdp.gradients == Approx(4.0 * stage_params_per_gpu).epsilon(1e-9));
  const double titan_sum = titan.weights + titan.gradients + titan.optimizer + titan.activations + titan.overhead;
  CHECK(titan_sum == Approx(titan.total).epsilon(1e-12));
  CHECK(titan.total - fsdp.total > 5.5 * stage_params_per_gpu);
  CHECK(titan.total - fsdp.total < 6.5 * stage_params_per_gpu);
  l.pp = 1;
  l.tp = 1;  // and no TP: torchtitan's vocab-parallel loss would add activations (and their allocator share)
  l.dp = 128;
  job.framework = Framework::torchtitan;
  const Estimate no_pp = memory_of(m, job, l);
  job.framework = Framework::fsdp;
  CHECK(no_pp.overhead == Approx(memory_of(m, job, l).overhead).epsilon(1e-9));  // without PP: FSDP's per-unit buffers
}

TEST_CASE("DeepSpeed's pipeline engine with its bf16 optimizer adds a bf16 copy of the stage's gradients to the peak") {
  // PipelineEngine._bf16_reduce_grads (DeepSpeed 0.6-0.14) all-reduces the flat fp32 gradients cast
  // to bf16: 2 bytes per local parameter on top of the freed activations' cached segments, up to
  // the card's capacity (the allocator frees its cache and retries before it fails).
  const ModelShape m = preset("llama2-13b");
  Layout l;
  l.tp = 4;
  l.pp = 4;
  l.dp = 4;
  l.zero = 1;
  l.recompute = Recompute::full;
  Job job = pretrain(2048, 64);
  job.framework = Framework::deepspeed;
  job.precision = Precision::fp16;
  const Estimate fp16 = memory_of(m, job, l);
  job.precision = Precision::bf16;
  const Estimate bf16 = memory_of(m, job, l);
  job.framework = Framework::megatron_core;
  const Estimate megatron = memory_of(m, job, l);
  const double stage_params = bf16.weights / 2.0;
  REQUIRE(bf16.total < bf16.capacity);
  // bf16 over fp16: the fp32 gradient buffer (4 bytes per parameter, in states) and the cast copy (2).
  const double fp16_states = fp16.weights + fp16.gradients + fp16.optimizer;
  const double bf16_states = bf16.weights + bf16.gradients + bf16.optimizer;
  CHECK(bf16.overhead - fp16.overhead - 2.0 * stage_params ==
        Approx(0.0).margin(0.02 * stage_params + 0.2 * (bf16_states - fp16_states)));
  CHECK(bf16.total == Approx(bf16.weights + bf16.gradients + bf16.optimizer + bf16.activations + bf16.overhead));
  // Megatron-Core reduces its fp32 main gradients in place: no copy.
  CHECK(megatron.overhead < bf16.overhead - 1.5 * stage_params);
  // Without pipeline parallelism the engine reduces per-parameter buckets: no copy either.
  job.framework = Framework::deepspeed;
  l.pp = 1;
  l.dp = 16;
  const Estimate no_pp = memory_of(m, job, l);
  job.precision = Precision::fp16;
  const Estimate no_pp_fp16 = memory_of(m, job, l);
  CHECK(no_pp.overhead - no_pp_fp16.overhead < 0.5 * no_pp.weights / 2.0);
  // A stage that leaves less room than the copy: nvidia-smi would read the whole card, and the run
  // still fits (the copy comes after the activations are freed), tight.
  l.tp = 1;
  l.pp = 2;
  l.dp = 8;
  job.precision = Precision::bf16;
  int capped = 0;
  for (int mb : {1, 2, 4}) {
    l.micro_batch = mb;
    const Estimate e = memory_of(m, job, l);
    CHECK(e.fits == (e.total <= e.capacity));
    if (e.fits && e.total == e.capacity) {
      ++capped;
      CHECK(e.tight);
    }
  }
  CHECK(capped > 0);
}

TEST_CASE("torchtitan's vocab-parallel loss holds 16 bytes per local vocab entry, eager cross-entropy 10") {
  // PyTorch's loss_parallel (torchtitan's default under TP): fp32 input, shifted logits, exp and
  // result in the forward; zeros, exp and their sum beside the saved log-probabilities in backward.
  const ModelShape m = preset("llama3.1-8b");
  Layout l;
  l.tp = 2;
  l.dp = 4;
  l.zero = 3;
  l.micro_batch = 2;
  l.recompute = Recompute::full;
  Job job = pretrain(8192, 8);
  job.framework = Framework::fsdp;
  const double fsdp = memory_of(m, job, l).activations;
  job.framework = Framework::torchtitan;
  const double titan = memory_of(m, job, l).activations;
  const double entries = 2.0 * 8192 * m.vocab / 2;
  CHECK(titan - fsdp == Approx(6.0 * entries).epsilon(1e-9));
  l.tp = 1;  // no TP, no loss parallelism: the same eager cross-entropy
  l.dp = 8;
  job.framework = Framework::fsdp;
  const double fsdp_1 = memory_of(m, job, l).activations;
  job.framework = Framework::torchtitan;
  CHECK(memory_of(m, job, l).activations == Approx(fsdp_1).epsilon(1e-12));
}

TEST_CASE("Transformer Engine keeps its Linear layers' inputs as their FP8 or NVFP4 copies, torchao 16-bit") {
  // Per token and layer of Llama 3.1 8B without TP: the QKV and MLP inputs (h each), the attention
  // output projection's input (h) and SwiGLU's product, the down projection's input (ffn), kept at
  // 1 byte in FP8 (0.5625 in NVFP4: 4 bits and a scale byte per 16) instead of 2.
  const ModelShape m = preset("llama3.1-8b");
  const linkwise::Catalog catalog = linkwise::Catalog::load_data_dir(LINKWISE_TEST_DATA_DIR);
  const Hardware b200 = planner_test::dgx(catalog.gpu("B200-SXM-180GB"));  // FP8 and FP4 tensor cores
  Layout l;
  l.dp = 8;
  Job job = pretrain(4096, 8);
  const double h = m.hidden, ffn = m.ffn_hidden, tokens = 4096;
  const double linear_inputs = tokens * (3 * h + ffn);  // elements per layer
  job.precision = Precision::bf16;
  job.framework = Framework::megatron_core;
  const double bf16 = per_layer_activations(m, job, l, b200);
  job.precision = Precision::fp8;
  CHECK(bf16 - per_layer_activations(m, job, l, b200) == Approx(1.0 * linear_inputs).epsilon(1e-9));
  job.framework = Framework::auto_;  // the default profile holds memory as Megatron-Core below ZeRO-3
  CHECK(bf16 - per_layer_activations(m, job, l, b200) == Approx(1.0 * linear_inputs).epsilon(1e-9));
  job.framework = Framework::nemo;
  job.precision = Precision::fp4;
  CHECK(bf16 - per_layer_activations(m, job, l, b200) == Approx((2.0 - 0.5625) * linear_inputs).epsilon(1e-9));
  // torchtitan and PyTorch FSDP run FP8 through torchao, which keeps the high-precision input.
  job.precision = Precision::fp8;
  job.framework = Framework::torchtitan;
  l.zero = 3;
  const double titan8 = per_layer_activations(m, job, l, b200);
  job.precision = Precision::bf16;
  CHECK(per_layer_activations(m, job, l, b200) == Approx(titan8).epsilon(1e-12));
}

TEST_CASE("bf16 gradient reduction halves Megatron-Core's gradient buffer and FSDP's unsharded unit gradients") {
  const ModelShape m = preset("llama3.1-8b");
  Job job = pretrain(4096, 64);
  Layout l;
  l.dp = 8;
  l.zero = 1;
  job.framework = Framework::megatron_core;
  const Estimate fp32 = memory_of(m, job, l);
  job.grad_reduce_bf16 = true;
  const Estimate bf16 = memory_of(m, job, l);
  CHECK(fp32.gradients == Approx(2.0 * bf16.gradients).epsilon(1e-12));  // 4 bytes per parameter, then 2
  CHECK(bf16.gradients == Approx(2.0 * fp32.weights / 2.0).epsilon(1e-12));
  // FSDP (ZeRO-3): the current unit's unsharded gradients before their reduce-scatter, 4 bytes then 2.
  l.zero = 3;
  job.framework = Framework::fsdp;
  job.grad_reduce_bf16 = false;
  const Estimate fsdp32 = memory_of(m, job, l);
  job.grad_reduce_bf16 = true;
  const Estimate fsdp16 = memory_of(m, job, l);
  CHECK(fsdp16.gradients == Approx(fsdp32.gradients).epsilon(1e-12));  // the shards stay 16-bit
  CHECK(fsdp32.overhead > fsdp16.overhead);
}

TEST_CASE("a fused cross-entropy keeps 4 bytes per vocab entry (flash-attn), 6 under Transformer Engine, eager 10") {
  const ModelShape m = preset("llama3.1-8b");
  Layout l;
  l.dp = 8;
  l.micro_batch = 2;
  Job job = pretrain(4096, 64);
  const double entries = 2.0 * 4096 * m.vocab;  // one micro-batch's logits on one GPU (tp 1)
  for (const auto& [framework, zero, fused_bytes] :
       {std::tuple{Framework::fsdp, 3, 4.0}, std::tuple{Framework::megatron_core, 1, 6.0},
        std::tuple{Framework::auto_, 1, 6.0}, std::tuple{Framework::auto_, 3, 4.0}}) {
    job.framework = framework;
    l.zero = zero;
    job.fused_loss = false;
    const double eager = memory_of(m, job, l).activations;
    job.fused_loss = true;
    INFO(std::string(to_string(framework)) << " zero " << zero);
    CHECK(eager - memory_of(m, job, l).activations == Approx((10.0 - fused_bytes) * entries).epsilon(1e-9));
  }
}

TEST_CASE("LoRA on the attention alone: fewer adapters, and the frozen MLP keeps no Linear inputs") {
  // Per token and layer of Llama 3.1 8B (bf16, no TP): the MLP's input (h) and the down projection's
  // input (ffn), 2 bytes each, are kept only for weight gradients the frozen MLP has none of.
  const ModelShape m = preset("llama3.1-8b");
  Layout l;
  l.dp = 8;
  Job job = pretrain(4096, 64);
  job.kind = JobKind::lora;
  const double all = per_layer_activations(m, job, l);
  const Estimate all_states = memory_of(m, job, l);
  job.lora_attention_only = true;
  CHECK(all - per_layer_activations(m, job, l) == Approx(4096 * 2.0 * (m.hidden + m.ffn_hidden)).epsilon(1e-9));
  const Estimate attention_states = memory_of(m, job, l);
  CHECK(attention_states.optimizer < all_states.optimizer);  // the adapters' states
  CHECK(attention_states.weights < all_states.weights);
  // An FP8 base: 1 byte a base weight.
  job.precision = Precision::fp8;
  const Hardware h100 = planner_test::dgx(planner_test::h100_80());
  const double bf16_base = memory_of(m, job, l, h100).weights;
  job.lora_base = LoraBase::fp8;
  CHECK(memory_of(m, job, l, h100).weights < 0.51 * bf16_base);
}

TEST_CASE("the Hugging Face stack's eager Llama block keeps fp32 norm inputs and silu(gate); fused stacks do not") {
  // Per token and layer of Llama 3.1 8B (bf16, no TP, no recompute): two RMSNorms keep their fp32
  // input (2 bytes more than a fused norm's 16-bit input) and, with a trained norm weight, the 16-bit
  // normalized tensor (2 bytes); SwiGLU's product keeps silu(gate) (2 bytes per intermediate).
  const ModelShape m = preset("llama3.1-8b");
  Layout l;
  l.dp = 8;
  Job job = pretrain(4096, 64);
  job.framework = Framework::fsdp;
  const double fused = per_layer_activations(m, job, l);
  job.framework = Framework::torchtitan;
  CHECK(per_layer_activations(m, job, l) == Approx(fused).epsilon(1e-12));  // not assumed of torchtitan
  job.framework = Framework::hf_accelerate;
  const double tokens = 4096;
  CHECK(per_layer_activations(m, job, l) - fused ==
        Approx(tokens * (2 * (2 + 2) * m.hidden + 2.0 * m.ffn_hidden)).epsilon(1e-9));
  job.torch_compile = true;  // compiled blocks fuse them away
  CHECK(per_layer_activations(m, job, l) == Approx(fused).epsilon(1e-12));
  job.torch_compile = false;
  job.kind = JobKind::lora;  // frozen norm weights: no normalized copy for their gradient
  job.framework = Framework::fsdp;
  const double lora_fused = per_layer_activations(m, job, l);
  job.framework = Framework::hf_accelerate;
  CHECK(per_layer_activations(m, job, l) - lora_fused ==
        Approx(tokens * (2 * 2 * m.hidden + 2.0 * m.ffn_hidden)).epsilon(1e-9));
  // `auto` plans QLoRA as Hugging Face PEFT below ZeRO-3 (the plan's framework): the same block;
  // at ZeRO-3 as FSDP with compiled blocks: not.
  job.framework = Framework::auto_;
  job.lora_base = LoraBase::nf4;
  const double peft = per_layer_activations(m, job, l);
  job.framework = Framework::hf_accelerate;
  CHECK(peft == Approx(per_layer_activations(m, job, l)).epsilon(1e-12));
  job.framework = Framework::auto_;
  l.zero = 3;
  const double sharded = per_layer_activations(m, job, l);
  job.framework = Framework::fsdp;
  CHECK(sharded == Approx(per_layer_activations(m, job, l)).epsilon(1e-12));
}

// The search skips a recompute mode and ZeRO stage at every larger micro-batch once the GPU could
// not hold it at a smaller one (search.cpp, gpu_short): exact only while the memory total never
// shrinks as the micro-batch grows, whatever the stack, model, stage, pipeline or expert grid.
TEST_CASE("memory per GPU never shrinks as the micro-batch grows, the search's micro-batch skip rests on it") {
  const Hardware a100 = planner_test::dgx(planner_test::a100_80()), h100 = planner_test::dgx(planner_test::h100_80());
  struct Grid {
    int tp, pp, v, cp;
    Precision precision;
  };
  const Grid grids[] = {{1, 1, 1, 1, Precision::bf16}, {8, 1, 1, 1, Precision::fp8},  {2, 4, 1, 1, Precision::bf16},
                        {2, 4, 2, 1, Precision::fp8},  {1, 8, 4, 1, Precision::bf16}, {2, 2, 1, 2, Precision::fp8}};
  int cases = 0;
  for (const char* name : {"llama3.1-70b", "mixtral-8x7b", "deepseek-v3"}) {
    const ModelShape shape = preset(name);
    for (Framework f : {Framework::auto_, Framework::megatron_core, Framework::torchtitan, Framework::deepspeed,
                        Framework::fsdp, Framework::hai_llm}) {
      for (Recompute rc : {Recompute::none, Recompute::selective, Recompute::full}) {
        for (int zero = 0; zero <= 3; ++zero) {
          for (const Grid& g : grids) {
            Job job = pretrain(4096, 256);
            job.framework = f;
            job.precision = g.precision;
            Layout l;
            l.tp = g.tp;
            l.pp = g.pp;
            l.cp = g.cp;
            l.virtual_stages = g.v;
            l.dp = 4;
            l.ep = shape.moe.experts > 0 ? 4 : 1;
            l.zero = zero;
            l.recompute = rc;
            l.sequence_parallel = g.tp > 1;
            double previous = 0;
            for (int mb : {1, 2, 4, 8, 16, 32, 64}) {
              l.micro_batch = mb;
              const double total = memory_of(shape, job, l, g.precision == Precision::fp8 ? h100 : a100).total;
              INFO(name << " framework " << int(f) << " recompute " << int(rc) << " zero " << zero << " tp " << g.tp
                        << " pp " << g.pp << " v " << g.v << " cp " << g.cp << " precision " << int(g.precision)
                        << " mb " << mb);
              CHECK(total >= previous);
              previous = total;
              ++cases;
            }
          }
        }
      }
    }
  }
  CHECK(cases == 3 * 6 * 3 * 4 * 6 * 7);
}
