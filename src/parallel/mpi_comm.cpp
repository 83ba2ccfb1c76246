#include "parallel/mpi_comm.hpp"

#include <climits>
#include <cstdlib>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#ifdef LOSSLESS_HAVE_MPI
#include <mpi.h>
#endif

namespace lossless::parallel {

bool LaunchedByMpi() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') return true;
  return false;
}

namespace {
// The first of `vars` set to a whole number in 0 .. INT_MAX, or -1.
int EnvNumber(std::initializer_list<const char*> vars) {
  for (const char* var : vars) {
    const char* v = std::getenv(var);
    if (v == nullptr || *v == '\0') continue;
    char* end = nullptr;
    const long r = std::strtol(v, &end, 10);
    if (*end == '\0' && r >= 0 && r <= INT_MAX) return static_cast<int>(r);
  }
  return -1;
}
}  // namespace

int LauncherRank() {
  return EnvNumber({"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"});
}

int LauncherSize() {
  return EnvNumber({"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"});
}

#ifdef LOSSLESS_HAVE_MPI

bool MpiBuilt() {
  return true;
}

std::string MpiLibraryVersion() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(text, &len);
  std::string s(text, static_cast<size_t>(len));
  if (auto nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  if (auto comma = s.find(','); comma != std::string::npos) s.resize(comma);
  return s;
}

namespace {

constexpr int kGatherTag = 1;
constexpr int kExchangeTag = 2;

void Check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error(std::string("MPI: ") + what + ": " +
                             std::string(text, static_cast<size_t>(len)));
  }
}

int Count(size_t n) {
  if (n > static_cast<size_t>(INT_MAX))
    throw std::length_error("MPI: a message above 2 GiB (INT_MAX bytes) is not supported");
  return static_cast<int>(n);
}

// Receives one message of unknown length from `source` with `tag` into
// `bytes`, reusing its memory (resize zero-fills only what it grows by).
void RecvAnyInto(int source, int tag, std::string& bytes) {
  MPI_Status st;
  Check(MPI_Probe(source, tag, MPI_COMM_WORLD, &st), "MPI_Probe");
  int n = 0;
  Check(MPI_Get_count(&st, MPI_BYTE, &n), "MPI_Get_count");
  bytes.resize(static_cast<size_t>(n));
  Check(MPI_Recv(bytes.data(), n, MPI_BYTE, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv");
}
std::string RecvAny(int source, int tag) {
  std::string bytes;
  RecvAnyInto(source, tag, bytes);
  return bytes;
}

class MpiComm final : public Comm {
 public:
  MpiComm() {
    Check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    Check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  }
  ~MpiComm() override { MPI_Finalize(); }
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  int Rank() const override { return rank_; }
  int Size() const override { return size_; }
  void Barrier() override { Check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }
  int64_t AllreduceMin(int64_t v) override {
    int64_t out = 0;
    Check(MPI_Allreduce(&v, &out, 1, MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD), "MPI_Allreduce");
    return out;
  }
  void AllreduceMinLanes(int64_t* lanes, size_t n) override {
    if (n == 0) return;
    Check(MPI_Allreduce(MPI_IN_PLACE, lanes, Count(n), MPI_INT64_T, MPI_MIN, MPI_COMM_WORLD),
          "MPI_Allreduce");
  }
  std::vector<std::string> Gather(const std::string& bytes) override {
    if (rank_ != 0) {
      Check(MPI_Send(bytes.data(), Count(bytes.size()), MPI_BYTE, 0, kGatherTag, MPI_COMM_WORLD),
            "MPI_Send");
      return {};
    }
    std::vector<std::string> all;
    all.reserve(static_cast<size_t>(size_));
    all.push_back(bytes);
    for (int r = 1; r < size_; ++r) all.push_back(RecvAny(r, kGatherTag));
    return all;
  }
  std::string Broadcast(const std::string& bytes) override {
    int64_t n = rank_ == 0 ? static_cast<int64_t>(bytes.size()) : 0;
    Check(MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    std::string out = rank_ == 0 ? bytes : std::string(static_cast<size_t>(n), '\0');
    Check(MPI_Bcast(out.data(), Count(out.size()), MPI_BYTE, 0, MPI_COMM_WORLD), "MPI_Bcast");
    return out;
  }
  std::vector<std::string> Exchange(const std::vector<Outgoing>& out,
                                    const std::vector<int>& from) override {
    std::vector<std::string> in;
    ExchangeInto(out, from, in);
    return in;
  }
  void ExchangeInto(const std::vector<Outgoing>& out, const std::vector<int>& from,
                    std::vector<std::string>& in) override {
    std::vector<MPI_Request> requests(out.size());
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i].peer < 0 || out[i].peer >= size_ || out[i].peer == rank_)
        throw std::logic_error("Exchange: peer out of range or this rank");
      // MPI_Isend's buffer is const since MPI-3.
      Check(MPI_Isend(out[i].bytes.data(), Count(out[i].bytes.size()), MPI_BYTE, out[i].peer,
                      kExchangeTag, MPI_COMM_WORLD, &requests[i]),
            "MPI_Isend");
    }
    in.resize(from.size());
    // Messages between one pair with one tag do not overtake each other
    // (MPI-3.1 section 3.5), so window k's batch is always received in round k.
    for (size_t i = 0; i < from.size(); ++i) RecvAnyInto(from[i], kExchangeTag, in[i]);
    if (!requests.empty())
      Check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
  }

 private:
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace

std::unique_ptr<Comm> OpenMpiWorld() {
  if (!LaunchedByMpi()) return nullptr;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized) throw std::logic_error("OpenMpiWorld: MPI was already finalized");
#ifdef OPEN_MPI
  // A rank waiting at a window's end yields its core (sched_yield between
  // polls) instead of spinning, unless the user chose otherwise
  // (OMPI_MCA_mpi_yield_when_idle=0 spins). On a machine shared with other
  // jobs a spinning rank takes a core from the rank it waits for: the
  // 1,024-host fat-tree run took 3.0-4.2 s spinning and 1.5-1.7 s yielding
  // at load average 6 (docs/benchmarks.md). Read by MPI_Init.
  if (!initialized) setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
#endif
  if (!initialized) Check(MPI_Init(nullptr, nullptr), "MPI_Init");
  return std::make_unique<MpiComm>();
}

#else  // no MPI in this build

bool MpiBuilt() {
  return false;
}
std::string MpiLibraryVersion() {
  return {};
}
std::unique_ptr<Comm> OpenMpiWorld() {
  return nullptr;
}

#endif

}  // namespace lossless::parallel
