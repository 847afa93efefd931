// host-device: copies between host memory and each GPU through the copy engines.
//   h2d, d2h      one GPU, one direction (one-direction), pinned: held-stream timing;
//                 pageable: cudaMemcpy is synchronous for pageable memory, so it is timed on the
//                 host around each copy (a hold kernel would deadlock behind a staged copy)
//   h2d+d2h       both directions at once on two streams, bytes added (both-directions-added)
//   scope         one-gpu: from the CPUs of the GPU's NUMA node (thread pinned, host memory
//                 first-touched there); all-gpus: every GPU at once, bandwidths added
#include <chrono>
#include <memory>

#include "cuda_util.hpp"
#include "probe.hpp"
#include "probe_classes.hpp"

namespace linkwise::probe {

namespace {

using cuda::DeviceBuffer;
using cuda::HostBuffer;
using cuda::Lane;

struct Plan {
  std::size_t bytes;
  int copies_per_sample;
  int samples;
};

std::function<void(cudaStream_t)> copies(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, int n) {
  return [=](cudaStream_t stream) {
    for (int i = 0; i < n; ++i) LW_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  };
}

std::vector<double> pageable_samples(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, int samples) {
  std::vector<double> result;
  for (int s = -1; s < samples; ++s) {  // s = -1: warm-up
    const auto start = std::chrono::steady_clock::now();
    LW_CUDA(cudaMemcpy(dst, src, bytes, kind));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s >= 0) result.push_back(static_cast<double>(bytes) / seconds / 1e9);
  }
  return result;
}

}  // namespace

std::vector<Result> HostDevice::run(RunContext& context) {
  const Plan plan = context.quick ? Plan{256u << 20, 2, 5} : Plan{1u << 30, 2, 20};
  const int gpus = cuda::device_count();
  const double bytes = static_cast<double>(plan.bytes) * plan.copies_per_sample;
  cuda::Hold hold;
  std::vector<Result> results;
  auto add = [&](std::string_view metric_name, Counting counting, std::map<std::string, std::string> labels,
                 std::vector<double> samples) {
    results.push_back(Result::make(std::string(metric_name), Unit::gbytes_per_s, counting, plan.bytes,
                                   std::move(labels), std::move(samples)));
  };

  for (int d = 0; d < gpus; ++d) {
    context.say("host-device: GPU " + std::to_string(d));
    cuda::NumaAffinity affinity(d);
    const std::string cpus = affinity.pinned() ? "numa-local" : "unpinned";
    HostBuffer host_a(plan.bytes, true), host_b(plan.bytes, true);
    DeviceBuffer dev_a(d, plan.bytes), dev_b(d, plan.bytes);
    Lane lane_a(d), lane_b(d);
    auto labels = [&](const char* memory) {
      return std::map<std::string, std::string>{
          {"gpu", std::to_string(d)}, {"memory", memory}, {"scope", "one-gpu"}, {"cpu_affinity", cpus}};
    };

    auto h2d = copies(dev_a.get(), host_a.get(), plan.bytes, cudaMemcpyHostToDevice, plan.copies_per_sample);
    auto d2h = copies(host_b.get(), dev_b.get(), plan.bytes, cudaMemcpyDeviceToHost, plan.copies_per_sample);
    add(metric::h2d, Counting::one_direction, labels("pinned"),
        cuda::bandwidth_samples(hold, {&lane_a}, {h2d}, {bytes}, 1, plan.samples));
    add(metric::d2h, Counting::one_direction, labels("pinned"),
        cuda::bandwidth_samples(hold, {&lane_b}, {d2h}, {bytes}, 1, plan.samples));
    add(metric::h2d_d2h, Counting::both_directions_added, labels("pinned"),
        cuda::bandwidth_samples(hold, {&lane_a, &lane_b}, {h2d, d2h}, {bytes, bytes}, 1, plan.samples));

    HostBuffer pageable(plan.bytes, false);
    cuda::DeviceScope scope(d);
    add(metric::h2d, Counting::one_direction, labels("pageable"),
        pageable_samples(dev_a.get(), pageable.get(), plan.bytes, cudaMemcpyHostToDevice, plan.samples));
    add(metric::d2h, Counting::one_direction, labels("pageable"),
        pageable_samples(pageable.get(), dev_a.get(), plan.bytes, cudaMemcpyDeviceToHost, plan.samples));
  }

  if (gpus > 1) {
    context.say("host-device: all " + std::to_string(gpus) + " GPUs at once");
    std::vector<std::unique_ptr<HostBuffer>> host;
    std::vector<std::unique_ptr<DeviceBuffer>> device;
    std::vector<std::unique_ptr<Lane>> lane_store;
    std::vector<Lane*> lanes;
    for (int d = 0; d < gpus; ++d) {
      cuda::NumaAffinity affinity(d);  // each GPU's buffer on its own NUMA node
      host.push_back(std::make_unique<HostBuffer>(plan.bytes, true));
      device.push_back(std::make_unique<DeviceBuffer>(d, plan.bytes));
      lane_store.push_back(std::make_unique<Lane>(d));
      lanes.push_back(lane_store.back().get());
    }
    const std::vector<double> lane_bytes(gpus, bytes);
    for (const bool to_device : {true, false}) {
      std::vector<std::function<void(cudaStream_t)>> work;
      for (int d = 0; d < gpus; ++d) {
        work.push_back(
            to_device
                ? copies(device[d]->get(), host[d]->get(), plan.bytes, cudaMemcpyHostToDevice, plan.copies_per_sample)
                : copies(host[d]->get(), device[d]->get(), plan.bytes, cudaMemcpyDeviceToHost, plan.copies_per_sample));
      }
      add(to_device ? metric::h2d : metric::d2h, Counting::one_direction,
          {{"gpu", "all"}, {"memory", "pinned"}, {"scope", "all-gpus"}, {"gpus", std::to_string(gpus)}},
          cuda::bandwidth_samples(hold, lanes, work, lane_bytes, 1, plan.samples));
    }
  }
  return results;
}

}  // namespace linkwise::probe
