// device-memory: one GPU's own memory, by its copy engine and by SM kernels. Buffers are at least
// 4x the L2 cache (and 256 MiB quick / 1 GiB full), so the figures are DRAM/HBM, not cache.
// Bytes counted as each result's "counting" says:
//   device-copy  copy-engine cudaMemcpy D2D and SM b[i] = a[i]: bytes read + bytes written (2N)
//   device-read  SM sum of a[i]: N read;  device-write  SM a[i] = x: N written
//   device-triad SM a[i] = b[i] + s*c[i]: 2N read + N written
#include <algorithm>
#include <memory>

#include "cuda_util.hpp"
#include "probe.hpp"
#include "probe_classes.hpp"

namespace linkwise::probe {

namespace {

__global__ void read_kernel(const float4* __restrict__ a, std::size_t n, float* sink) {
  float4 sum = make_float4(0, 0, 0, 0);
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float4 v = a[i];
    sum.x += v.x;
    sum.y += v.y;
    sum.z += v.z;
    sum.w += v.w;
  }
  // Never true for the buffer's pattern, but the compiler cannot know: the loads stay.
  if (sum.x + sum.y + sum.z + sum.w == -1.0f) *sink = sum.x;
}

__global__ void write_kernel(float4* __restrict__ a, std::size_t n, float value) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    a[i] = make_float4(value, value, value, value);
  }
}

__global__ void copy_kernel(float4* __restrict__ b, const float4* __restrict__ a, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    b[i] = a[i];
  }
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             std::size_t n, float s) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + s * y.x, x.y + s * y.y, x.z + s * y.z, x.w + s * y.w);
  }
}

constexpr int kThreads = 256;

}  // namespace

std::vector<Result> DeviceMemory::run(RunContext& context) {
  const int gpus = cuda::device_count();
  const int samples = context.quick ? 5 : 20;
  const int reps = context.quick ? 3 : 5;
  std::vector<Result> results;
  cuda::Hold hold;
  for (int d = 0; d < gpus; ++d) {
    cudaDeviceProp prop{};
    LW_CUDA(cudaGetDeviceProperties(&prop, d));
    const std::size_t floor = context.quick ? (256u << 20) : (1u << 30);
    std::size_t bytes = std::max<std::size_t>(floor, 4 * static_cast<std::size_t>(prop.l2CacheSize));
    bytes = bytes / 16 * 16;
    const std::size_t n = bytes / sizeof(float4);
    context.say("device-memory: GPU " + std::to_string(d) + ", " + std::to_string(bytes >> 20) + " MiB buffers");

    cuda::DeviceBuffer a(d, bytes), b(d, bytes), c(d, bytes), sink(d, sizeof(float));
    cuda::Lane lane(d);
    const int blocks = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / kThreads);
    auto* pa = static_cast<float4*>(a.get());
    auto* pb = static_cast<float4*>(b.get());
    auto* pc = static_cast<float4*>(c.get());
    auto* ps = static_cast<float*>(sink.get());

    auto measure = [&](std::string_view metric_name, Counting counting, const char* method, double arrays,
                       std::function<void(cudaStream_t)> once) {
      auto work = [&, once](cudaStream_t s) {
        for (int r = 0; r < reps; ++r) once(s);
      };
      results.push_back(
          Result::make(std::string(metric_name), Unit::gbytes_per_s, counting, bytes,
                       {{"gpu", std::to_string(d)}, {"method", method}},
                       cuda::bandwidth_samples(hold, {&lane}, {work}, {arrays * bytes * reps}, 1, samples)));
    };
    measure(metric::device_copy, Counting::read_plus_write, "copy-engine", 2,
            [&](cudaStream_t s) { LW_CUDA(cudaMemcpyAsync(pb, pa, bytes, cudaMemcpyDeviceToDevice, s)); });
    measure(metric::device_copy, Counting::read_plus_write, "sm", 2, [&](cudaStream_t s) {
      copy_kernel<<<blocks, kThreads, 0, s>>>(pb, pa, n);
      LW_CUDA(cudaGetLastError());
    });
    measure(metric::device_read, Counting::read, "sm", 1, [&](cudaStream_t s) {
      read_kernel<<<blocks, kThreads, 0, s>>>(pa, n, ps);
      LW_CUDA(cudaGetLastError());
    });
    measure(metric::device_write, Counting::write, "sm", 1, [&](cudaStream_t s) {
      write_kernel<<<blocks, kThreads, 0, s>>>(pa, n, 1.0f);
      LW_CUDA(cudaGetLastError());
    });
    measure(metric::device_triad, Counting::read_plus_write, "sm", 3, [&](cudaStream_t s) {
      triad_kernel<<<blocks, kThreads, 0, s>>>(pa, pb, pc, n, 3.0f);
      LW_CUDA(cudaGetLastError());
    });
  }
  return results;
}

}  // namespace linkwise::probe
