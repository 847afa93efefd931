// nccl and nccl-multi-node: NCCL collectives over a size sweep, reported as nccl-tests reports
// them (algbw and busbw, core/src/probe/statistics.cpp has the formulas). float data, sum.
//   nccl             one process drives every GPU of the node (ncclCommInitAll)
//   nccl-multi-node  one MPI rank per GPU on every node (ncclCommInitRank, id broadcast by MPI)
// all-to-all is a group of ncclSend/ncclRecv, one pair per peer, as in nccl-tests.
// A sample is a batch of operations between two events per GPU, the streams held until the
// whole batch is enqueued; the sample's time is the slowest GPU's (over all ranks).
#include <nccl.h>

#include <algorithm>
#include <memory>

#include "cuda_util.hpp"
#include "linkwise/error.hpp"
#include "probe.hpp"
#include "probe_classes.hpp"

#if LINKWISE_PROBES_HAVE_MPI
#include "mpi_session.hpp"
#endif

namespace linkwise::probe {

namespace {

void nccl_check(ncclResult_t code, const char* call) {
  if (code != ncclSuccess) throw Error(ErrorKind::internal, std::string(call) + " failed: " + ncclGetErrorString(code));
}
#define LW_NCCL(call) nccl_check((call), #call)

// One GPU's part: its communicator, stream and buffers.
struct Member {
  int device = 0;
  ncclComm_t comm = nullptr;
  std::unique_ptr<cuda::Lane> lane;
  std::unique_ptr<cuda::DeviceBuffer> send, receive;
  ~Member() {
    if (comm) ncclCommDestroy(comm);
  }
};

struct Sweep {
  std::vector<std::size_t> sizes;
  int samples, iterations;
};

class CollectiveBench {
 public:
  // `slowest` turns this process's seconds into the slowest over all ranks; `everyone` tells
  // whether a flag holds on every rank (identity in a single process).
  CollectiveBench(std::vector<std::unique_ptr<Member>>& members, int ranks, int nodes,
                  std::function<double(double)> slowest, std::function<bool(bool)> everyone)
      : members_(members), ranks_(ranks), nodes_(nodes), slowest_(std::move(slowest)), everyone_(std::move(everyone)) {}

  std::vector<Result> run(const Sweep& sweep, RunContext& context) {
    std::vector<Result> results;
    for (Collective c :
         {Collective::all_reduce, Collective::all_gather, Collective::reduce_scatter, Collective::all_to_all}) {
      for (std::size_t requested : sweep.sizes) {
        // nccl-tests' size: one rank's whole buffer; divisible into ranks x floats.
        const std::size_t per_rank_floats = requested / sizeof(float) / ranks_;
        if (per_rank_floats == 0) continue;
        const std::size_t bytes = per_rank_floats * ranks_ * sizeof(float);
        context.say("nccl: " + std::string(to_string(c)) + " " + std::to_string(bytes) + " bytes on " +
                    std::to_string(ranks_) + " ranks");
        std::vector<double> algbw, busbw;
        for (int s = -1; s < sweep.samples; ++s) {  // s = -1: warm-up
          const double seconds = sample(c, per_rank_floats, sweep.iterations) / sweep.iterations;
          if (s < 0) continue;
          algbw.push_back(algbw_gbytes_per_s(static_cast<double>(bytes), seconds));
          busbw.push_back(busbw_gbytes_per_s(c, ranks_, static_cast<double>(bytes), seconds));
        }
        const std::map<std::string, std::string> labels{{"collective", std::string(to_string(c))},
                                                        {"ranks", std::to_string(ranks_)},
                                                        {"nodes", std::to_string(nodes_)},
                                                        {"datatype", "float"},
                                                        {"timing", held_ ? "held-stream" : "events"}};
        results.push_back(Result::make(std::string(metric::nccl_algbw), Unit::gbytes_per_s, Counting::one_direction,
                                       bytes, labels, algbw));
        results.push_back(Result::make(std::string(metric::nccl_busbw), Unit::gbytes_per_s, Counting::one_direction,
                                       bytes, labels, busbw));
      }
    }
    return results;
  }

 private:
  void enqueue(Collective c, const Member& m, std::size_t per_rank_floats) {
    const std::size_t total = per_rank_floats * ranks_;
    auto* send = static_cast<float*>(m.send->get());
    auto* receive = static_cast<float*>(m.receive->get());
    cudaStream_t s = m.lane->stream();
    switch (c) {
      case Collective::all_reduce: LW_NCCL(ncclAllReduce(send, receive, total, ncclFloat, ncclSum, m.comm, s)); break;
      case Collective::all_gather: LW_NCCL(ncclAllGather(send, receive, per_rank_floats, ncclFloat, m.comm, s)); break;
      case Collective::reduce_scatter:
        LW_NCCL(ncclReduceScatter(send, receive, per_rank_floats, ncclFloat, ncclSum, m.comm, s));
        break;
      case Collective::all_to_all:
        for (int peer = 0; peer < ranks_; ++peer) {
          LW_NCCL(ncclSend(send + peer * per_rank_floats, per_rank_floats, ncclFloat, peer, m.comm, s));
          LW_NCCL(ncclRecv(receive + peer * per_rank_floats, per_rank_floats, ncclFloat, peer, m.comm, s));
        }
        break;
      default: throw Error(ErrorKind::internal, "collective not measured: " + std::string(to_string(c)));
    }
  }

  // Seconds for `iterations` operations: the slowest GPU of all ranks.
  double sample(Collective c, std::size_t per_rank_floats, int iterations) {
    for (;;) {
      if (held_) {
        hold_.rearm();
      }
      for (auto& m : members_) {
        cuda::DeviceScope scope(m->device);
        if (held_) hold_.hold(*m->lane);
        LW_CUDA(cudaEventRecord(m->lane->start(), m->lane->stream()));
      }
      try {
        for (int i = 0; i < iterations; ++i) {
          LW_NCCL(ncclGroupStart());
          for (auto& m : members_) {
            cuda::DeviceScope scope(m->device);
            enqueue(c, *m, per_rank_floats);
          }
          LW_NCCL(ncclGroupEnd());
        }
        for (auto& m : members_) {
          cuda::DeviceScope scope(m->device);
          LW_CUDA(cudaEventRecord(m->lane->stop(), m->lane->stream()));
        }
      } catch (...) {
        if (held_) hold_.release();  // never leave a GPU spinning behind a failed enqueue
        throw;
      }
      if (held_) hold_.release();
      double seconds = 0;
      for (auto& m : members_) {
        cuda::DeviceScope scope(m->device);
        LW_CUDA(cudaEventSynchronize(m->lane->stop()));
        float ms = 0;
        LW_CUDA(cudaEventElapsedTime(&ms, m->lane->start(), m->lane->stop()));
        seconds = std::max(seconds, ms / 1e3);
      }
      bool hold_worked = true;
      if (held_) {
        try {
          hold_.rearm();
        } catch (const Error&) {
          hold_worked = false;  // NCCL waited on the held GPU while enqueuing: time without the hold
        }
      }
      if (everyone_(hold_worked)) return slowest_(seconds);
      held_ = false;
    }
  }

  std::vector<std::unique_ptr<Member>>& members_;
  int ranks_, nodes_;
  std::function<double(double)> slowest_;
  std::function<bool(bool)> everyone_;
  cuda::Hold hold_;
  bool held_ = true;
};

// Large sizes matter: NCCL's busbw still grows past 512 MiB (nccl-tests issue #149, #212), so
// even --quick ends at 1 GiB. Sizes that do not fit twice in a quarter of the smallest free GPU
// memory (`limit_bytes`, agreed over all ranks) are dropped.
Sweep sweep_for(bool quick, double limit_bytes) {
  Sweep sweep = quick ? Sweep{{1u << 20, 32u << 20, 1u << 30}, 5, 5}
                      : Sweep{{64u << 10, 1u << 20, 16u << 20, 256u << 20, 1u << 30, 4ull << 30}, 20, 10};
  std::erase_if(sweep.sizes, [&](std::size_t size) { return static_cast<double>(size) > limit_bytes; });
  if (sweep.sizes.empty()) throw Skip{"less than 4 MiB of free GPU memory"};
  return sweep;
}

double free_memory_quarter(const std::vector<int>& devices) {
  double smallest = 1e30;
  for (int d : devices) {
    cuda::DeviceScope scope(d);
    std::size_t free = 0, total = 0;
    LW_CUDA(cudaMemGetInfo(&free, &total));
    smallest = std::min(smallest, static_cast<double>(free) / 4.0);
  }
  return smallest;
}

std::size_t largest(const Sweep& sweep) { return *std::max_element(sweep.sizes.begin(), sweep.sizes.end()); }

void add_buffers(Member& m, std::size_t bytes) {
  m.lane = std::make_unique<cuda::Lane>(m.device);
  m.send = std::make_unique<cuda::DeviceBuffer>(m.device, bytes);
  m.receive = std::make_unique<cuda::DeviceBuffer>(m.device, bytes);
}

}  // namespace

std::vector<Result> NcclSingleNode::run(RunContext& context) {
  const int gpus = cuda::device_count();  // filter() saw at least 2
  std::vector<ncclComm_t> comms(gpus);
  std::vector<int> devices(gpus);
  for (int d = 0; d < gpus; ++d) devices[d] = d;
  const Sweep sweep = sweep_for(context.quick, free_memory_quarter(devices));
  context.say("nccl: ncclCommInitAll over " + std::to_string(gpus) + " GPUs");
  LW_NCCL(ncclCommInitAll(comms.data(), gpus, devices.data()));
  std::vector<std::unique_ptr<Member>> members;
  for (int d = 0; d < gpus; ++d) {
    members.push_back(std::make_unique<Member>());
    members.back()->device = d;
    members.back()->comm = comms[d];
    add_buffers(*members.back(), largest(sweep));
  }
  CollectiveBench bench(
      members, gpus, 1, [](double s) { return s; }, [](bool b) { return b; });
  return bench.run(sweep, context);
}

#if LINKWISE_PROBES_HAVE_MPI
// filter() saw an MPI world of at least 2 ranks, each with a GPU.
std::vector<Result> NcclMultiNode::run(RunContext& context) {
  const MpiSession& mpi = *context.mpi;
  const int gpus = cuda::device_count();
  const int device = mpi.local_rank() % gpus;
  const Sweep sweep = sweep_for(context.quick, -mpi.max(-free_memory_quarter({device})));
  ncclUniqueId id{};
  if (mpi.rank() == 0) LW_NCCL(ncclGetUniqueId(&id));
  mpi.broadcast(&id, sizeof id, 0);

  std::vector<std::unique_ptr<Member>> members;
  members.push_back(std::make_unique<Member>());
  Member& m = *members.back();
  m.device = device;
  {
    cuda::DeviceScope scope(m.device);
    context.say("nccl-multi-node: ncclCommInitRank over " + std::to_string(mpi.size()) + " ranks on " +
                std::to_string(mpi.nodes()) + " nodes");
    LW_NCCL(ncclCommInitRank(&m.comm, mpi.size(), id, mpi.rank()));
  }
  add_buffers(m, largest(sweep));
  CollectiveBench bench(
      members, mpi.size(), mpi.nodes(), [&](double s) { return mpi.max(s); }, [&](bool b) { return mpi.all(b); });
  auto results = bench.run(sweep, context);
  return mpi.rank() == 0 ? results : std::vector<Result>{};
}
#endif

}  // namespace linkwise::probe
