// Whether a GPU has a dense tensor-core peak for the job's precision in the catalog, and if not,
// whether the precision is absent from the hardware or only the figure is unknown. The catalog
// holds null for both (T4 has no bf16 tensor cores; the A10G has them but NVIDIA publishes no
// A10G figure), so the architecture decides which one a null means.
#include <set>
#include <string>

#include "linkwise/planner/engine.hpp"

namespace linkwise::planner {
namespace {

// The precisions each architecture's tensor cores run, from the vendors' architecture papers:
// NVIDIA Tesla V100 (2017) and Turing (2018) whitepapers: FP16 (no BF16, no FP8); NVIDIA A100
// (2020) and GA102 Ampere (2020) whitepapers: BF16 and FP16, no FP8; NVIDIA Ada (2022), H100 (2022)
// papers: FP8 as well, no FP4; Blackwell (2024) paper: FP4 (NVFP4/MXFP4) as well; AMD CDNA 3
// whitepaper (2023): BF16, FP16, FP8; CDNA 4 (MI350 series, 2025): FP4 (MXFP4) as well.
std::set<Precision> tensor_precisions(Architecture architecture) {
  switch (architecture) {
    case Architecture::volta:
    case Architecture::turing: return {Precision::fp16};
    case Architecture::ampere: return {Precision::bf16, Precision::fp16};
    case Architecture::ada:
    case Architecture::hopper:
    case Architecture::cdna3: return {Precision::bf16, Precision::fp16, Precision::fp8};
    case Architecture::blackwell:
    case Architecture::cdna4: return {Precision::bf16, Precision::fp16, Precision::fp8, Precision::fp4};
  }
  return {};
}

bool has_peak(const Gpu& gpu, Precision precision) {
  switch (precision) {
    // The fp16 and bf16 peaks are equal on every GPU that has both: either one stands for fp16.
    case Precision::bf16: return gpu.bf16_dense_tflops.has_value();
    case Precision::fp16: return gpu.fp16_dense_tflops.has_value() || gpu.bf16_dense_tflops.has_value();
    case Precision::fp8: return gpu.fp8_dense_tflops.has_value();
    case Precision::fp4: return gpu.fp4_dense_tflops.has_value();
  }
  return false;
}

PeakAvailability availability_of(const Gpu& gpu, Precision precision) {
  if (has_peak(gpu, precision)) return PeakAvailability::known;
  if (!tensor_precisions(gpu.architecture).contains(precision)) return PeakAvailability::absent;
  return PeakAvailability::unknown;
}

// The first peak the job needs that the catalog lacks: an fp8 or fp4 job keeps attention and the
// output layer in 16-bit, so it needs a 16-bit peak as well.
struct Missing {
  PeakAvailability availability;
  Precision precision;
};

Missing first_missing(const Gpu& gpu, Precision precision) {
  const PeakAvailability own = availability_of(gpu, precision);
  if (own != PeakAvailability::known || (precision != Precision::fp8 && precision != Precision::fp4))
    return {own, precision};
  const Precision sixteen = gpu.bf16_dense_tflops ? Precision::bf16 : Precision::fp16;
  return {availability_of(gpu, sixteen), sixteen};
}

}  // namespace

PeakAvailability tensor_peak_availability(const Gpu& gpu, Precision precision) {
  return first_missing(gpu, precision).availability;
}

bool supports_precision(const Gpu& gpu, Precision precision) {
  return tensor_peak_availability(gpu, precision) == PeakAvailability::known;
}

std::string missing_peak_reason(const Gpu& gpu, Precision precision) {
  const Missing missing = first_missing(gpu, precision);
  const std::string name(to_string(missing.precision));
  switch (missing.availability) {
    case PeakAvailability::known: return {};
    case PeakAvailability::absent:
      return "no " + name + " tensor cores (" + std::string(to_string(gpu.architecture)) + ")";
    case PeakAvailability::unknown:
      return name + " tensor-core peak of " + gpu.id +
             " unknown in the catalog (no published figure): time cannot be estimated";
  }
  return {};
}

}  // namespace linkwise::planner
