#include "cuda_util.hpp"

#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "linkwise/error.hpp"

namespace linkwise::probe::cuda {

void check(cudaError_t code, const char* call) {
  if (code != cudaSuccess) {
    throw Error(ErrorKind::internal, std::string(call) + " failed: " + error_text(code));
  }
}

std::string error_text(cudaError_t code) {
  return std::string(cudaGetErrorName(code)) + ": " + cudaGetErrorString(code);
}

int device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

DeviceScope::DeviceScope(int device) {
  LW_CUDA(cudaGetDevice(&previous_));
  LW_CUDA(cudaSetDevice(device));
}
DeviceScope::~DeviceScope() { cudaSetDevice(previous_); }

DeviceBuffer::DeviceBuffer(int device, std::size_t bytes) : device_(device), bytes_(bytes) {
  DeviceScope scope(device);
  LW_CUDA(cudaMalloc(&ptr_, bytes));
  LW_CUDA(cudaMemset(ptr_, 0x5a, bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) {
    cudaSetDevice(device_);
    cudaFree(ptr_);
  }
}

HostBuffer::HostBuffer(std::size_t bytes, bool pinned) : bytes_(bytes), pinned_(pinned) {
  if (pinned) {
    LW_CUDA(cudaHostAlloc(&ptr_, bytes, cudaHostAllocPortable));
  } else {
    ptr_ = std::aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
    if (!ptr_) throw Error(ErrorKind::internal, "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
  }
  std::memset(ptr_, 0x3c, bytes);  // first touch: pages land on this thread's NUMA node
}
HostBuffer::~HostBuffer() {
  if (!ptr_) return;
  if (pinned_) {
    cudaFreeHost(ptr_);
  } else {
    std::free(ptr_);
  }
}

Lane::Lane(int device) : device_(device) {
  DeviceScope scope(device);
  LW_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  LW_CUDA(cudaEventCreate(&start_));
  LW_CUDA(cudaEventCreate(&stop_));
}
Lane::~Lane() {
  cudaSetDevice(device_);
  if (start_) cudaEventDestroy(start_);
  if (stop_) cudaEventDestroy(stop_);
  if (stream_) cudaStreamDestroy(stream_);
}

Hold::Hold() {
  void* flag = nullptr;
  LW_CUDA(cudaHostAlloc(&flag, 2 * sizeof(int), cudaHostAllocPortable | cudaHostAllocMapped));
  flag_ = static_cast<volatile int*>(flag);
  flag_[0] = 0;
  flag_[1] = 0;
}
Hold::~Hold() { cudaFreeHost(const_cast<int*>(flag_)); }

void Hold::hold(const Lane& lane) { launch_hold_kernel(flag_, lane.stream()); }

void Hold::release() { __atomic_store_n(const_cast<int*>(&flag_[0]), 1, __ATOMIC_SEQ_CST); }

void Hold::rearm() {
  if (flag_[1] != 0) {
    throw Error(ErrorKind::internal,
                "a hold kernel gave up waiting (the host took over 10 s to enqueue a sample): the timing "
                "would include launch gaps");
  }
  __atomic_store_n(const_cast<int*>(&flag_[0]), 0, __ATOMIC_SEQ_CST);
}

std::vector<double> time_lanes(Hold& hold, const std::vector<Lane*>& lanes,
                               const std::vector<std::function<void(cudaStream_t)>>& enqueue) {
  hold.rearm();
  try {
    for (std::size_t i = 0; i < lanes.size(); ++i) {
      DeviceScope scope(lanes[i]->device());
      hold.hold(*lanes[i]);
      LW_CUDA(cudaEventRecord(lanes[i]->start(), lanes[i]->stream()));
      enqueue[i](lanes[i]->stream());
      LW_CUDA(cudaEventRecord(lanes[i]->stop(), lanes[i]->stream()));
    }
  } catch (...) {
    hold.release();  // never leave a GPU spinning behind a failed enqueue
    throw;
  }
  hold.release();
  std::vector<double> seconds;
  for (Lane* lane : lanes) {
    DeviceScope scope(lane->device());
    LW_CUDA(cudaEventSynchronize(lane->stop()));
    float ms = 0;
    LW_CUDA(cudaEventElapsedTime(&ms, lane->start(), lane->stop()));
    seconds.push_back(ms / 1e3);
  }
  hold.rearm();  // also reports a hold that timed out during this sample
  return seconds;
}

std::vector<double> bandwidth_samples(Hold& hold, const std::vector<Lane*>& lanes,
                                      const std::vector<std::function<void(cudaStream_t)>>& enqueue,
                                      const std::vector<double>& bytes_per_lane, int warmup, int samples) {
  std::vector<double> result;
  for (int s = 0; s < warmup + samples; ++s) {
    const auto seconds = time_lanes(hold, lanes, enqueue);
    if (s < warmup) continue;
    double gbytes_per_s = 0;
    for (std::size_t i = 0; i < lanes.size(); ++i) gbytes_per_s += bytes_per_lane[i] / seconds[i] / 1e9;
    result.push_back(gbytes_per_s);
  }
  return result;
}

std::string pci_bus_id(int device) {
  char id[32] = {};
  LW_CUDA(cudaDeviceGetPCIBusId(id, sizeof id, device));
  std::string text(id);
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  // CUDA writes an 8-digit domain ("00000000:18:00.0"); /sys uses 4.
  if (text.size() == 16 && text.rfind("0000", 0) == 0) text = text.substr(4);
  return text;
}

NumaAffinity::NumaAffinity(int device) {
  std::ifstream in("/sys/bus/pci/devices/" + pci_bus_id(device) + "/local_cpulist");
  std::string list;
  if (!in || !std::getline(in, list)) return;
  cpu_set_t wanted;
  CPU_ZERO(&wanted);
  std::size_t pos = 0;
  while (pos < list.size()) {  // "0-23,48-71"
    const std::size_t end = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, end - pos);
    const std::size_t dash = item.find('-');
    try {
      const int first = std::stoi(item.substr(0, dash));
      const int last = dash == std::string::npos ? first : std::stoi(item.substr(dash + 1));
      for (int cpu = first; cpu <= last && cpu < CPU_SETSIZE; ++cpu) CPU_SET(cpu, &wanted);
    } catch (const std::exception&) {
      return;
    }
    pos = end + 1;
  }
  cpu_set_t current;
  if (sched_getaffinity(0, sizeof current, &current) != 0) return;
  previous_.assign(reinterpret_cast<unsigned char*>(&current),
                   reinterpret_cast<unsigned char*>(&current) + sizeof current);
  pinned_ = sched_setaffinity(0, sizeof wanted, &wanted) == 0;
}

NumaAffinity::~NumaAffinity() {
  if (pinned_) {
    cpu_set_t previous;
    std::memcpy(&previous, previous_.data(), sizeof previous);
    sched_setaffinity(0, sizeof previous, &previous);
  }
}

}  // namespace linkwise::probe::cuda
