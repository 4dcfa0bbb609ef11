// dist.h with MPI (the C API; Open MPI from Debian). See dist.h for the rules.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>

#include "pipeline/dist/dist.h"

namespace pipebench::dist {
namespace {

bool g_active = false;  // MPI initialised by our Session (a launcher started us)
int g_rank = 0, g_size = 1;
int g_local_rank = 0, g_local_size = 1;  // among the ranks of this node

// The node-local rank where the CUDA code reads it (device/cuda.h, node_local_rank()):
// Open MPI's OMPI_COMM_WORLD_LOCAL_RANK (and MPICH's, Slurm's) usually says the same, and is
// then left alone; PIPEBENCH_LOCAL_RANK, read first, is set only where no launcher variable
// gives this rank or one disagrees with MPI. The Session runs first thing in main(),
// before pipebench starts a thread (MPI's own threads do not read this variable).
void publish_local_rank(int local) {
  const std::string value = std::to_string(local);
  for (const char* name : {"PIPEBENCH_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* v = std::getenv(name);
    if (v == nullptr || *v == '\0') continue;
    if (value == v) return;  // the first source the CUDA code reads already says so
    break;
  }
  setenv("PIPEBENCH_LOCAL_RANK", value.c_str(), 1);
}

// Started by mpirun / mpiexec / srun: the launchers' environment variables.
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

// Waits for a non-blocking collective sleeping between polls. A blocking MPI call
// busy-polls while it waits for the other ranks (Open MPI's progress loop), which takes a
// core from the loader's workers: on a node whose cores the ranks share, the fast ranks'
// waiting would slow the slow rank's loader, and the wait would count as data time. The
// sleeps leave the core to them, as a training process blocked on its accelerator does:
// 50 us at first, doubling up to 400 us, so a wait adds at most 400 us (under 1 % of a
// 40 ms step) and a long one wakes its thread 2-3 times a millisecond, not 20: at 2 ranks on
// 2 cores, a rank waiting 50 us at a time for the slower one took enough of the cores from
// both ranks' workers to make the synchronised step 3-7 % slower than their loaders alone.
void wait_sleeping(MPI_Request& request) {
  int done = 0;
  MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  auto nap = std::chrono::microseconds(50);
  while (!done) {
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::microseconds(400));
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  }
}

double reduce(double v, MPI_Op op) {
  if (!g_active) return v;
  double out = 0;
  MPI_Request request;
  MPI_Iallreduce(&v, &out, 1, MPI_DOUBLE, op, MPI_COMM_WORLD, &request);
  wait_sleeping(request);
  return out;
}

// The count of each rank on rank 0 (empty elsewhere), and the displacements for Gatherv.
std::vector<int> gather_counts(int mine, std::vector<int>& displs) {
  std::vector<int> counts(g_rank == 0 ? g_size : 0);
  MPI_Gather(&mine, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  displs.assign(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i) displs[i] = displs[i - 1] + counts[i - 1];
  return counts;
}

}  // namespace

bool built_with_mpi() { return true; }

Session::Session(int* argc, char*** argv) {
  if (!launched_by_mpi()) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  MPI_Comm node = MPI_COMM_NULL;  // the ranks that share this node's memory
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &g_local_rank);
  MPI_Comm_size(node, &g_local_size);
  MPI_Comm_free(&node);
  publish_local_rank(g_local_rank);
  g_active = true;
}

Session::~Session() {
  if (g_active) MPI_Finalize();
  g_active = false;
}

int rank() { return g_rank; }
int world_size() { return g_size; }
int local_rank() { return g_local_rank; }
int local_size() { return g_local_size; }

PendingBarrier::PendingBarrier() {
  if (!g_active) return;
  auto* request = new MPI_Request;
  MPI_Ibarrier(MPI_COMM_WORLD, request);
  request_ = request;
}

PendingBarrier::~PendingBarrier() {
  if (request_ == nullptr) return;
  auto* request = static_cast<MPI_Request*>(request_);
  wait_sleeping(*request);
  delete request;
}

bool PendingBarrier::done() {
  if (request_ == nullptr) return true;
  auto* request = static_cast<MPI_Request*>(request_);
  int flag = 0;
  MPI_Test(request, &flag, MPI_STATUS_IGNORE);
  if (!flag) return false;
  delete request;
  request_ = nullptr;
  return true;
}

void barrier() { PendingBarrier arrived; }  // its destructor waits, sleeping

void allreduce_sum(float* data, size_t count) {
  if (!g_active) return;
  // The waiting for the others in a sleeping barrier; then the reduction itself, blocking
  // (a non-blocking one progresses only while polled), with every rank present.
  barrier();
  // MPI counts are int: large buffers in chunks.
  constexpr size_t kChunk = size_t{1} << 30;
  for (size_t off = 0; off < count; off += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, count - off));
    MPI_Allreduce(MPI_IN_PLACE, data + off, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
}

double allreduce_sum(double v) { return reduce(v, MPI_SUM); }
double allreduce_max(double v) { return reduce(v, MPI_MAX); }
double allreduce_min(double v) { return reduce(v, MPI_MIN); }

std::vector<std::vector<double>> gather(const std::vector<double>& mine) {
  if (!g_active) return {mine};
  std::vector<int> displs;
  const auto counts = gather_counts(static_cast<int>(mine.size()), displs);
  std::vector<double> all(g_rank == 0 ? static_cast<size_t>(displs.back() + counts.back()) : 0);
  MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(), counts.data(),
              displs.data(), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<std::vector<double>> out;
  for (size_t r = 0; r < counts.size(); ++r)
    out.emplace_back(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
  return out;
}

std::vector<std::string> gather(const std::string& mine) {
  if (!g_active) return {mine};
  std::vector<int> displs;
  const auto counts = gather_counts(static_cast<int>(mine.size()), displs);
  std::string all(g_rank == 0 ? static_cast<size_t>(displs.back() + counts.back()) : 0, '\0');
  MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(), counts.data(),
              displs.data(), MPI_CHAR, 0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (size_t r = 0; r < counts.size(); ++r) out.push_back(all.substr(displs[r], counts[r]));
  return out;
}

Agreement agree(bool ok, const std::string& message) {
  if (!g_active) return ok ? Agreement{} : Agreement{0, message};
  // The lowest failing rank, or g_size when none failed.
  int mine = ok ? g_size : g_rank, first = g_size;
  MPI_Request request;
  MPI_Iallreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD, &request);
  wait_sleeping(request);
  if (first == g_size) return {};
  Agreement a{first, g_rank == first ? message : std::string()};
  int length = static_cast<int>(a.message.size());
  MPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD);
  a.message.resize(static_cast<size_t>(length));
  MPI_Bcast(a.message.data(), length, MPI_CHAR, first, MPI_COMM_WORLD);
  return a;
}

void abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (g_active) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace pipebench::dist
