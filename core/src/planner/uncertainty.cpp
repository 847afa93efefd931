// p10-p90 intervals from calibration residuals (see uncertainty.hpp and README "Error bars").
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "linkwise/planner/uncertainty.hpp"

namespace linkwise::planner {

const std::vector<ResidualBand>& residual_bands() {
  // `linkwise_calibrate --check-set tests/calibration/check_runs.json --bands` (fit and check sets
  // together; a band needs 5 runs, otherwise the coarser row below it applies).
  static const std::vector<ResidualBand> bands = {
#include "residual_bands.inc"
  };
  return bands;
}

const std::vector<ServingBand>& serving_bands() {
  static const std::vector<ServingBand> bands = {
#include "serving_bands.inc"
  };
  return bands;
}

std::optional<double> best_published_mfu(Architecture generation, Precision precision) noexcept {
  // The best MFU in the calibration and check sets: Megatron/NeMo/MosaicML runs; a plan above this
  // is beyond anything measured on the generation. The sets hold no run of Turing or Ada. FP8 on
  // Hopper and Blackwell: Megatron Bridge 26.04.01's Llama 3.1 405B on 1024 H100 (44%) and 26.06's
  // on 256 GB300 (55%), in the planner's MFU (the predicted MFU scaled by measured / predicted).
  const bool fp8 = precision == Precision::fp8;
  switch (generation) {
    case Architecture::ampere: return 0.62;
    case Architecture::hopper: return fp8 ? 0.44 : 0.62;
    case Architecture::volta: return 0.50;
    case Architecture::blackwell: return fp8 ? 0.55 : 0.60;
    // AMD's published runs (cdna_fit_runs.json, check_runs.json): MI325X Llama 3.1 70B BF16 at 43%,
    // FP8 at 32-36% of the FP8 peak (MLPerf's Llama 2 70B LoRA at 34%); MI355X's MLPerf Llama 3.1 8B
    // FP8 at 36%, its MLPerf LoRA at 38%. No CDNA 4 16-bit run.
    case Architecture::cdna3: return fp8 ? 0.36 : 0.43;
    case Architecture::cdna4: return fp8 ? std::optional<double>(0.38) : std::nullopt;
    default: return std::nullopt;
  }
}

std::string_view precision_class(Precision precision) noexcept {
  switch (precision) {
    case Precision::fp8: return "fp8";
    case Precision::fp4: return "fp4";
    default: return "16bit";
  }
}

double best_published_mfu_any_generation(Precision precision) noexcept {
  double best = 0;
  for (Architecture g : {Architecture::volta, Architecture::ampere, Architecture::hopper, Architecture::blackwell})
    best = std::max(best, best_published_mfu(g, precision).value_or(0));
  return best;
}

namespace {
bool match(const char* pattern, const std::string& value) { return std::string(pattern) == "*" || value == pattern; }
std::string pct(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * v);
  return buf;
}
}  // namespace

Interval throughput_interval(Architecture generation, Precision precision, JobKind kind, const Layout& l, int gpus,
                             double seq_len, double mfu, bool moe, Engine engine, double offload_share) {
  Interval out;
  if (kind == JobKind::inference) {
    // The engine's own check rows never fit (serving_bands.inc): TensorRT-LLM's tables are large and
    // close; vLLM's and SGLang's are third-party runs of newer versions than their profiles' fit rows,
    // and far wider (docs/calibration.md "vLLM and SGLang check sources").
    const Engine resolved = engine;  // the caller's, resolved for the GPU (resolve)
    const std::string engine_name(to_string(resolved));
    // Serving has no ZeRO family or training precision class: the training bands below do not apply.
    // Kept around the point prediction as every band is.
    for (const ServingBand& b : serving_bands()) {
      if (b.engine != resolved || b.moe != moe) continue;
      out.tokens_low = std::min(0.97, b.p10);
      out.tokens_high = std::max(1.03, b.p90);
      out.runs = b.runs;
      out.basis = std::to_string(b.runs) + " published " + engine_name + " serving runs of " +
                  (moe ? "mixture-of-experts" : "dense") + " models held out of the calibration: p10-p90 of " +
                  "measured / predicted output tokens/s";
      break;
    }
    // The band is the engine's own error on runs never fit, not a widening: `widened` stays false
    // and the basis says where it comes from.
    return out;
  }
  const std::string prec(precision_class(precision));
  // Mixture-of-experts plans take the MoE runs' own band (their error is not the dense runs').
  const std::string family = moe ? "moe" : l.zero == 3 ? "fsdp" : "3d";
  const bool calibrated_generation = generation == Architecture::ampere || generation == Architecture::hopper;
  // The bands name generations as the catalog spells architectures (linkwise_calibrate --bands). A
  // generation fit on a set of its own or only checked (Blackwell: its NeMo fit set, MLPerf,
  // Megatron-Bridge; AMD) has a band of its own once 5 runs measure it: that band is its error.
  const std::string name(to_string(generation));
  const bool own_band = std::any_of(residual_bands().begin(), residual_bands().end(),
                                    [&](const ResidualBand& b) { return b.generation == name && b.runs >= 5; });
  const std::string band_generation = calibrated_generation || own_band ? name : "*";
  for (const ResidualBand& b : residual_bands()) {
    if (!match(b.generation, band_generation) || !match(b.precision, prec) || !match(b.family, family) || b.runs < 5)
      continue;
    out.tokens_low = b.p10;
    out.tokens_high = b.p90;
    out.runs = b.runs;
    out.basis = std::to_string(b.runs) + " published runs (" + b.generation + ", " + b.precision + ", " + b.family +
                "): p10-p90 of measured / predicted tokens/s";
    break;
  }
  // The band is of residuals, which can sit on one side of the prediction for a group (a bias the
  // fit could not remove); the interval still always contains the point prediction.
  out.tokens_low = std::min(out.tokens_low, 0.97);
  out.tokens_high = std::max(out.tokens_high, 1.03);
  auto widen = [&](double factor, std::string why) {
    // Stretch the band around 1 in log space.
    out.tokens_low = std::exp(std::log(out.tokens_low) * factor);
    out.tokens_high = std::exp(std::log(out.tokens_high) * factor);
    out.widened = true;
    out.reasons.push_back(std::move(why));
  };
  if (!calibrated_generation && !own_band)
    widen(2.0, "no residual band of the " + name + " generation (fewer than 5 published runs): interval doubled");
  const std::optional<double> own = best_published_mfu(generation, precision);
  const double best = own ? *own : best_published_mfu_any_generation(precision);
  const std::string best_words =
      own ? "the best published " + name + " run (" + pct(best) + ")"
          : "the best published run of any generation (" + pct(best) + "; none of " + name + ")";
  if (mfu > best) {
    // Above every published run of the generation the excess is more likely the model's than the
    // hardware's: the interval reaches down to the best run's MFU (at the band's own p10 below it)
    // and no higher than the band's least width above the prediction.
    out.tokens_low = std::min(out.tokens_low, best / mfu * out.tokens_low);
    out.tokens_high = std::min(out.tokens_high, 1.03);
    out.widened = true;
    out.reasons.push_back("predicted MFU " + pct(mfu) + " is above " + best_words +
                          ": interval widened down to that run's MFU, not above the prediction");
  }
  if (offload_share > 0.1)
    widen(1.5, "CPU offload: " + pct(offload_share) +
                   " of the step is the host's optimizer step and its transfers, which no published run in the "
                   "calibration checks: interval widened");
  // Beyond the largest calibration run the interval widens with every doubling of the GPUs: a plan
  // at 500 times that scale is not known to the same 10-30%.
  if (gpus > 3072) {
    const double doublings = std::log2(double(gpus) / 3072.0);
    const double factor = std::max(1.5, 1.0 + 0.5 * doublings);
    char how[64];
    std::snprintf(how, sizeof how, "%.1f", factor);
    widen(factor, "more GPUs (" + std::to_string(gpus) + ") than any calibration run (3072): interval widened " + how +
                      "x in log space");
  }
  if (seq_len > 262144) widen(1.5, "sequence length beyond the calibration runs (262144): interval widened");
  return out;
}

}  // namespace linkwise::planner
