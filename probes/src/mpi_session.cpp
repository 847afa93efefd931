#include "mpi_session.hpp"

#include <mpi.h>

#include <algorithm>
#include <set>

#include "linkwise/error.hpp"

namespace linkwise::probe {

namespace {
void check(int code, const char* call) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw Error(ErrorKind::internal, std::string(call) + " failed: " + std::string(text, length));
  }
}
}  // namespace

MpiSession::MpiSession() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    owns_ = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);

  // Every rank's host name, so pairs know whether they crossed the network.
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  std::vector<char> all(static_cast<std::size_t>(size_) * MPI_MAX_PROCESSOR_NAME);
  check(MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                      MPI_COMM_WORLD),
        "MPI_Allgather");
  for (int r = 0; r < size_; ++r) hostnames_.emplace_back(&all[static_cast<std::size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
  nodes_ = static_cast<int>(std::set<std::string>(hostnames_.begin(), hostnames_.end()).size());
  local_rank_ = static_cast<int>(std::count(hostnames_.begin(), hostnames_.begin() + rank_, hostnames_[rank_]));

  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  MPI_Get_library_version(version, &length);
  library_version_.assign(version, length);
  // Keep the first line: Open MPI appends its repository and release date.
  library_version_ = library_version_.substr(0, library_version_.find_first_of("\n,"));
}

MpiSession::~MpiSession() {
  if (owns_) MPI_Finalize();
}

void MpiSession::barrier() const { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

void MpiSession::broadcast(void* data, std::size_t bytes, int root) const {
  check(MPI_Bcast(data, static_cast<int>(bytes), MPI_BYTE, root, MPI_COMM_WORLD), "MPI_Bcast");
}

double MpiSession::max(double value) const {
  double result = value;
  check(MPI_Allreduce(&value, &result, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return result;
}

bool MpiSession::all(bool value) const {
  int in = value ? 1 : 0, out = 0;
  check(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
  return out == 1;
}

}  // namespace linkwise::probe
