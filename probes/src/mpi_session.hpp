// MPI for multi-node probes, kept behind this small class so no other file includes mpi.h
// (the CUDA files stay free of it). All ranks of MPI_COMM_WORLD take part in every call.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace linkwise::probe {

class MpiSession {
 public:
  MpiSession();   // MPI_Init_thread unless MPI is already initialised
  ~MpiSession();  // MPI_Finalize when this session initialised it
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  int local_rank() const { return local_rank_; }                            // rank among the ranks on this host
  int nodes() const { return nodes_; }                                      // distinct hosts
  const std::vector<std::string>& hostnames() const { return hostnames_; }  // one per rank
  const std::string& library_version() const { return library_version_; }

  void barrier() const;
  void broadcast(void* data, std::size_t bytes, int root) const;
  double max(double value) const;  // the largest value over all ranks, on every rank
  bool all(bool value) const;      // true on every rank when true on every rank

 private:
  bool owns_ = false;
  int rank_ = 0, size_ = 1, local_rank_ = 0, nodes_ = 1;
  std::vector<std::string> hostnames_;
  std::string library_version_;
};

}  // namespace linkwise::probe
