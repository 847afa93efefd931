// Small RAII wrappers over the CUDA runtime and the timing method every probe shares.
//
// Timing: each sample enqueues its copies or kernels behind a "hold" kernel that spins on a host
// flag; start and stop events bracket the work; then the host releases the flag. All launches are
// queued before the clock starts, so launch gaps are never timed (the idea of nvbandwidth's
// spin kernel; the code is ours). Several lanes (streams, possibly on several GPUs) released by
// one flag run concurrently; each lane's time comes from its own events.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace linkwise::probe::cuda {

// Throws Error(internal) "cudaMemcpyAsync(...) failed: <CUDA's message>".
void check(cudaError_t code, const char* call);
#define LW_CUDA(call) ::linkwise::probe::cuda::check((call), #call)

// Sets the current device for a scope, restoring the previous one.
class DeviceScope {
 public:
  explicit DeviceScope(int device);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

class DeviceBuffer {
 public:
  DeviceBuffer(int device, std::size_t bytes);  // filled with a byte pattern
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }
  int device() const { return device_; }

 private:
  int device_;
  std::size_t bytes_;
  void* ptr_ = nullptr;
};

// Host memory, pinned (page-locked, visible to every device) or pageable; touched on allocation
// so its pages sit on the NUMA node of the thread that allocates it.
class HostBuffer {
 public:
  HostBuffer(std::size_t bytes, bool pinned);
  ~HostBuffer();
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  void* get() const { return ptr_; }
  bool pinned() const { return pinned_; }

 private:
  std::size_t bytes_;
  bool pinned_;
  void* ptr_ = nullptr;
};

// One stream and its start/stop events, on one device.
class Lane {
 public:
  explicit Lane(int device);
  ~Lane();
  Lane(const Lane&) = delete;
  Lane& operator=(const Lane&) = delete;
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_; }
  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

// The hold flag: pinned, mapped and portable, so one store releases every lane on every GPU.
class Hold {
 public:
  Hold();
  ~Hold();
  Hold(const Hold&) = delete;
  Hold& operator=(const Hold&) = delete;
  void hold(const Lane& lane);  // enqueues the spin kernel on the lane's stream
  void release();               // lets every held lane go
  void rearm();                 // back to holding; throws if a hold kernel gave up waiting
 private:
  volatile int* flag_ = nullptr;  // [0] release flag, [1] set by a kernel that timed out
};

// Launches the spin kernel (hold.cu): spins until flag[0] != 0, or sets flag[1] after ~10 s.
void launch_hold_kernel(volatile int* flag, cudaStream_t stream);

// One timed sample over several lanes: per lane, hold, record start, run `enqueue[i]`, record
// stop; then release all and wait. Returns each lane's seconds.
std::vector<double> time_lanes(Hold& hold, const std::vector<Lane*>& lanes,
                               const std::vector<std::function<void(cudaStream_t)>>& enqueue);

// Repeats time_lanes: `warmup` unrecorded samples, then `samples` recorded ones. Returns, per
// sample, the sum over lanes of bytes_per_lane[i] / seconds_i in GB/s.
std::vector<double> bandwidth_samples(Hold& hold, const std::vector<Lane*>& lanes,
                                      const std::vector<std::function<void(cudaStream_t)>>& enqueue,
                                      const std::vector<double>& bytes_per_lane, int warmup, int samples);

int device_count();                        // 0 when there is no GPU or no driver
std::string error_text(cudaError_t code);  // "cudaErrorNoDevice: no CUDA-capable device is detected"

// Pins the calling thread to the CPUs local to the GPU (from /sys/bus/pci/devices/<bus id>/
// local_cpulist) for its lifetime and restores the previous affinity after. `pinned()` says
// whether it could.
class NumaAffinity {
 public:
  explicit NumaAffinity(int device);
  ~NumaAffinity();
  NumaAffinity(const NumaAffinity&) = delete;
  NumaAffinity& operator=(const NumaAffinity&) = delete;
  bool pinned() const { return pinned_; }

 private:
  bool pinned_ = false;
  std::vector<unsigned char> previous_;  // the saved cpu_set_t
};

std::string pci_bus_id(int device);  // "0000:18:00.0", lower case as in /sys

}  // namespace linkwise::probe::cuda
