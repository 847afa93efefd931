// Error bars on a plan (uncertainty.cpp): p10-p90 intervals on step time, tokens/s and cost from
// the calibration residuals (measured / predicted tokens/s) of comparable published runs: same
// GPU generation, precision class and parallelism family; wider, with a warning naming why, where
// the planner extrapolates.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "linkwise/planner/engine.hpp"
#include "linkwise/planner/serving.hpp"

namespace linkwise::planner {

struct ResidualBand {
  const char* generation;  // "ampere", "hopper", "volta", "*"
  const char* precision;   // "16bit", "fp8", "*"
  const char* family;      // "fsdp" (ZeRO-3 / FSDP), "3d" (Megatron TP/PP/DP), "*"
  double p10, p90;         // quantiles of measured / predicted tokens/s
  int runs;
};

// The table, from `linkwise_calibrate --bands` over the fit and check sets.
const std::vector<ResidualBand>& residual_bands();

// Serving: one band per engine and model kind, from the engine's own published runs never fit.
struct ServingBand {
  Engine engine;  // resolved: vllm, sglang or tensorrt_llm
  bool moe;       // mixture-of-experts models
  double p10, p90;
  int runs;
};
// The table, from `linkwise_calibrate_inference --bands` over the serving check rows.
const std::vector<ServingBand>& serving_bands();

struct Interval {
  double tokens_low = 1, tokens_high = 1;  // multipliers of the predicted tokens/s (p10, p90)
  std::string basis;                       // which runs the band comes from
  int runs = 0;
  bool widened = false;
  std::vector<std::string> reasons;  // why it was widened (also in the plan's warnings)
};

// Highest MFU any published run of the generation reached (calibration and check sets); nullopt
// where the sets hold no run of it. The second: the highest over every generation with runs.
std::optional<double> best_published_mfu(Architecture generation, Precision precision) noexcept;
double best_published_mfu_any_generation(Precision precision) noexcept;

// The residual bands' precision class: "16bit" (bf16, fp16), "fp8", "fp4".
std::string_view precision_class(Precision precision) noexcept;

// `generation` picks the band of its own runs where the calibration has them (Ampere, Hopper), the
// pooled band ("*") otherwise.
// `moe`, `engine`: serving plans take the band of their engine's published runs of that model kind.
// `offload_share`: the share of the step CPU offload takes (no published run checks it: widened).
Interval throughput_interval(Architecture generation, Precision precision, JobKind kind, const Layout& l, int gpus,
                             double seq_len, double mfu, bool moe = false, Engine engine = Engine::auto_,
                             double offload_share = 0);

}  // namespace linkwise::planner
