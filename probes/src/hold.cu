// The hold kernel: keeps a stream waiting until the host has enqueued a whole sample.
#include "cuda_util.hpp"

namespace linkwise::probe::cuda {

namespace {

__global__ void spin_until_released(volatile int* flag, long long timeout_cycles) {
  const long long start = clock64();
  while (flag[0] == 0) {
    if (clock64() - start > timeout_cycles) {
      flag[1] = 1;  // the host sees this in Hold::rearm and discards the sample
      return;
    }
  }
}

}  // namespace

void launch_hold_kernel(volatile int* flag, cudaStream_t stream) {
  // ~10 s at 2 GHz; SM clocks vary, the bound only has to catch a stuck host.
  spin_until_released<<<1, 1, 0, stream>>>(flag, 20'000'000'000LL);
  LW_CUDA(cudaGetLastError());
}

}  // namespace linkwise::probe::cuda
