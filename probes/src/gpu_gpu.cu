// gpu-gpu: every GPU pair, first with peer access off (copies staged by the driver, usually
// through host memory), then on (direct over NVLink or PCIe).
//   p2p-bandwidth  method copy-engine: cudaMemcpyPeerAsync on the source GPU's stream
//                  method sm: a kernel on the destination GPU reading the source's memory (P2P on)
//                  direction unidirectional (one-direction) or bidirectional: both GPUs copy to
//                  each other at once, bytes added (both-directions-added)
//   p2p-latency    P2P on: a pointer chase, one thread on src reading dst's memory, per hop
//                  P2P off: a 4-byte copy-engine copy, per copy
#include <algorithm>
#include <memory>

#include "cuda_util.hpp"
#include "probe.hpp"
#include "probe_classes.hpp"

namespace linkwise::probe {

namespace {

constexpr int kThreads = 256;

__global__ void peer_copy_kernel(float4* __restrict__ dst, const float4* __restrict__ src, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    dst[i] = src[i];
  }
}

// One dependent load after another: each hop waits for the previous one, so time / hops is the
// load latency. __ldcv skips the caches.
__global__ void pointer_chase_kernel(const unsigned* chain, int hops, unsigned* sink) {
  unsigned next = 0;
  for (int h = 0; h < hops; ++h) next = __ldcv(chain + next);
  *sink = next;
}

struct Buffers {
  std::unique_ptr<cuda::DeviceBuffer> src, dst;
  std::unique_ptr<cuda::Lane> lane;
  int blocks = 0;
};

// One run's buffers and results; GpuGpu (probe_classes.hpp) is compiled in every build, so the
// CUDA state lives here. filter() has seen at least 2 GPUs.
class PairBench {
 public:
  std::vector<Result> run(RunContext& context) {
    const int gpus = cuda::device_count();
    quick_ = context.quick;
    bytes_ = context.quick ? (64u << 20) : (256u << 20);
    samples_ = context.quick ? 5 : 20;
    hold_ = std::make_unique<cuda::Hold>();
    buffers_.resize(gpus);
    for (int d = 0; d < gpus; ++d) {
      buffers_[d].src = std::make_unique<cuda::DeviceBuffer>(d, bytes_);
      buffers_[d].dst = std::make_unique<cuda::DeviceBuffer>(d, bytes_);
      buffers_[d].lane = std::make_unique<cuda::Lane>(d);
      cudaDeviceProp prop{};
      LW_CUDA(cudaGetDeviceProperties(&prop, d));
      buffers_[d].blocks = prop.multiProcessorCount * (prop.maxThreadsPerMultiProcessor / kThreads);
    }

    context.say("gpu-gpu: peer access off");
    for (int i = 0; i < gpus; ++i) {
      for (int j = 0; j < gpus; ++j) {
        if (i == j) continue;
        copy_engine(i, j, false, "off");
        if (i < j) copy_engine(i, j, true, "off");
        copy_latency(i, j);
      }
    }

    context.say("gpu-gpu: peer access on");
    std::vector<std::pair<int, int>> enabled;
    for (int i = 0; i < gpus; ++i) {
      for (int j = 0; j < gpus; ++j) {
        int can = 0;
        if (i == j || cudaDeviceCanAccessPeer(&can, i, j) != cudaSuccess || !can) continue;
        cuda::DeviceScope scope(i);
        const cudaError_t code = cudaDeviceEnablePeerAccess(j, 0);
        if (code == cudaSuccess || code == cudaErrorPeerAccessAlreadyEnabled) {
          cudaGetLastError();  // clear "already enabled"
          enabled.emplace_back(i, j);
        }
      }
    }
    auto has = [&](int i, int j) {
      return std::find(enabled.begin(), enabled.end(), std::make_pair(i, j)) != enabled.end();
    };
    for (const auto& [i, j] : enabled) {
      copy_engine(i, j, false, "on");
      if (has(j, i)) {  // the SM copy runs on j reading i
        sm_copy(i, j, false);
        if (i < j) {
          copy_engine(i, j, true, "on");
          sm_copy(i, j, true);
        }
      }
      chase_latency(i, j);
    }
    for (const auto& [i, j] : enabled) {
      cuda::DeviceScope scope(i);
      cudaDeviceDisablePeerAccess(j);
    }
    return std::move(results_);
  }

 private:
  std::map<std::string, std::string> labels(int i, int j, const char* method, bool bidirectional, const char* p2p) {
    return {{"src", std::to_string(i)},
            {"dst", std::to_string(j)},
            {"method", method},
            {"direction", bidirectional ? "bidirectional" : "unidirectional"},
            {"p2p", p2p}};
  }

  void add_bandwidth(std::map<std::string, std::string> l, bool bidirectional, std::vector<double> samples) {
    results_.push_back(Result::make(std::string(metric::p2p_bandwidth), Unit::gbytes_per_s,
                                    bidirectional ? Counting::both_directions_added : Counting::one_direction, bytes_,
                                    std::move(l), std::move(samples)));
  }

  void copy_engine(int i, int j, bool bidirectional, const char* p2p) {
    auto copy = [this](int from, int to) {
      void* dst = buffers_[to].dst->get();
      const void* src = buffers_[from].src->get();
      const std::size_t bytes = bytes_;
      return [=](cudaStream_t s) { LW_CUDA(cudaMemcpyPeerAsync(dst, to, src, from, bytes, s)); };
    };
    const double bytes = static_cast<double>(bytes_);
    std::vector<double> samples =
        bidirectional ? cuda::bandwidth_samples(*hold_, {buffers_[i].lane.get(), buffers_[j].lane.get()},
                                                {copy(i, j), copy(j, i)}, {bytes, bytes}, 1, samples_)
                      : cuda::bandwidth_samples(*hold_, {buffers_[i].lane.get()}, {copy(i, j)}, {bytes}, 1, samples_);
    add_bandwidth(labels(i, j, "copy-engine", bidirectional, p2p), bidirectional, std::move(samples));
  }

  void sm_copy(int i, int j, bool bidirectional) {
    auto pull = [this](int from, int to) {  // a kernel on `to` reads `from`'s memory
      auto* dst = static_cast<float4*>(buffers_[to].dst->get());
      const auto* src = static_cast<const float4*>(buffers_[from].src->get());
      const std::size_t n = bytes_ / sizeof(float4);
      const int blocks = buffers_[to].blocks;
      return [=](cudaStream_t s) {
        peer_copy_kernel<<<blocks, kThreads, 0, s>>>(dst, src, n);
        LW_CUDA(cudaGetLastError());
      };
    };
    const double bytes = static_cast<double>(bytes_);
    std::vector<double> samples =
        bidirectional ? cuda::bandwidth_samples(*hold_, {buffers_[j].lane.get(), buffers_[i].lane.get()},
                                                {pull(i, j), pull(j, i)}, {bytes, bytes}, 1, samples_)
                      : cuda::bandwidth_samples(*hold_, {buffers_[j].lane.get()}, {pull(i, j)}, {bytes}, 1, samples_);
    add_bandwidth(labels(i, j, "sm", bidirectional, "on"), bidirectional, std::move(samples));
  }

  void copy_latency(int i, int j) {
    constexpr int kCopies = 100;
    void* dst = buffers_[j].dst->get();
    const void* src = buffers_[i].src->get();
    auto work = [=](cudaStream_t s) {
      for (int c = 0; c < kCopies; ++c) LW_CUDA(cudaMemcpyPeerAsync(dst, j, src, i, 4, s));
    };
    std::vector<double> us;
    for (int s = -1; s < samples_; ++s) {
      const auto seconds = cuda::time_lanes(*hold_, {buffers_[i].lane.get()}, {work});
      if (s >= 0) us.push_back(seconds[0] / kCopies * 1e6);
    }
    results_.push_back(Result::make(
        std::string(metric::p2p_latency), Unit::microseconds, std::nullopt, 4,
        {{"src", std::to_string(i)}, {"dst", std::to_string(j)}, {"method", "copy-engine"}, {"p2p", "off"}},
        std::move(us)));
  }

  void chase_latency(int i, int j) {
    const int hops = quick_ ? 2000 : 10000;
    // The chain lives on j: a stride of 4 KiB plus a line, over the first 16 MiB of j's buffer.
    const unsigned count = static_cast<unsigned>(std::min<std::size_t>(bytes_, 16u << 20) / sizeof(unsigned));
    const unsigned stride = (4096 + 128) / sizeof(unsigned);
    std::vector<unsigned> chain(count);
    for (unsigned k = 0; k < count; ++k) chain[k] = (k + stride) % count;
    auto* device_chain = static_cast<unsigned*>(buffers_[j].dst->get());
    {
      cuda::DeviceScope scope(j);
      LW_CUDA(cudaMemcpy(device_chain, chain.data(), count * sizeof(unsigned), cudaMemcpyHostToDevice));
    }
    auto* sink = static_cast<unsigned*>(buffers_[i].dst->get());
    auto work = [=](cudaStream_t s) {
      pointer_chase_kernel<<<1, 1, 0, s>>>(device_chain, hops, sink);
      LW_CUDA(cudaGetLastError());
    };
    std::vector<double> us;
    for (int s = -1; s < samples_; ++s) {
      const auto seconds = cuda::time_lanes(*hold_, {buffers_[i].lane.get()}, {work});
      if (s >= 0) us.push_back(seconds[0] / hops * 1e6);
    }
    results_.push_back(Result::make(
        std::string(metric::p2p_latency), Unit::microseconds, std::nullopt, 4,
        {{"src", std::to_string(i)}, {"dst", std::to_string(j)}, {"method", "sm-pointer-chase"}, {"p2p", "on"}},
        std::move(us)));
  }

  bool quick_ = false;
  std::size_t bytes_ = 0;
  int samples_ = 0;
  std::unique_ptr<cuda::Hold> hold_;
  std::vector<Buffers> buffers_;
  std::vector<Result> results_;
};

}  // namespace

std::vector<Result> GpuGpu::run(RunContext& context) { return PairBench().run(context); }

}  // namespace linkwise::probe
