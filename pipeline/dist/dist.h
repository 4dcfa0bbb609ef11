// pipebench across processes: the rank and world of a data-parallel run started by
// `mpirun -np N pipebench ...` (or `srun` under Slurm), and the few collectives the
// benchmark needs (a barrier, sums / extrema of scalars, a float allreduce standing in for
// the gradient allreduce, gathers to rank 0, an agreement on failures).
//
// Built with MPI (CMake PIPEBENCH_MPI, Open MPI from Debian) this is dist_mpi.cpp; without
// it, dist_single.cpp: world size 1, rank 0, and every collective is the identity, so the
// callers run the same code paths either way. Even when built with MPI, MPI is initialised
// only when a launcher started the process (Open MPI's OMPI_COMM_WORLD_SIZE, PMIx's
// PMIX_RANK, PMI's PMI_RANK / PMI_SIZE): a plain `pipebench` stays a single process with no
// MPI start-up cost.
//
// Threading: MPI is initialised with MPI_THREAD_FUNNELED; only the thread that created the
// Session (main, the benchmark thread) may call the collectives. The loader's worker threads
// never do.
// Waiting: the collectives a rank may wait in for the others (barrier, the reductions,
// agree, the allreduce's arrival) wait sleeping, polling every 50 us, not spinning as a
// blocking MPI call does: ranks sharing a node's cores leave them to the loaders' workers.
// Errors: MPI's default handler (MPI_ERRORS_ARE_FATAL) aborts the job on an MPI error;
// nothing here throws. abort() ends every rank (MPI_Abort), so a rank that cannot go on
// never leaves the others waiting in a collective.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pipebench::dist {

/// True when this build has MPI (PIPEBENCH_MPI found an MPI library).
bool built_with_mpi();

/// MPI for the life of the object: initialised in the constructor when a launcher started
/// the process (see the top), finalised in the destructor. One per process, made first
/// thing in main().
class Session {
 public:
  Session(int* argc, char*** argv);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
};

int rank();        ///< 0 .. world_size() - 1; 0 without MPI
int world_size();  ///< ranks in the job; 1 without MPI
/// This rank among the ranks on its node (MPI_Comm_split_type(MPI_COMM_WORLD,
/// MPI_COMM_TYPE_SHARED) in the Session's constructor), and their count; 0 and 1 without
/// MPI. The Session also puts local_rank() into the environment as PIPEBENCH_LOCAL_RANK
/// (before pipebench starts a thread of its own, and only where the launcher's own variable
/// is missing or says otherwise), where the CUDA code picks the rank's GPU
/// (device/cuda.h, node_local_rank(): device = local rank % device count).
int local_rank();
int local_size();
/// This process's host name (gethostname), for the run context.
std::string host_name();

void barrier();

/// A barrier that a rank arrives at and then keeps working until every rank has arrived
/// (MPI_Ibarrier, polled with MPI_Test): the ranks' loaders measured "at the same time" stay
/// under the same contention until the last rank is done. Construct = arrive (collective:
/// every rank must construct one, even after a failure of its own); done() polls; the
/// destructor waits (sleeping) when done() has not returned true. Without MPI done() is
/// true at once.
class PendingBarrier {
 public:
  PendingBarrier();
  ~PendingBarrier();
  PendingBarrier(const PendingBarrier&) = delete;
  PendingBarrier& operator=(const PendingBarrier&) = delete;
  bool done();

 private:
  void* request_ = nullptr;  // the MPI_Request (dist_mpi.cpp); null when done or no MPI
};
/// In-place elementwise sum over ranks of `count` floats (MPI_Allreduce, MPI_SUM): the
/// gradient allreduce of data-parallel training.
void allreduce_sum(float* data, size_t count);
double allreduce_sum(double v);
double allreduce_max(double v);
double allreduce_min(double v);
/// Rank 0 gets every rank's vector, in rank order (lengths may differ); the others get an
/// empty result.
std::vector<std::vector<double>> gather(const std::vector<double>& mine);
/// Rank 0 gets every rank's string, in rank order; the others an empty result.
std::vector<std::string> gather(const std::string& mine);

/// The result of agree(): failed_rank -1 when every rank was ok; else the lowest rank that
/// was not, and its message (every rank gets both).
struct Agreement {
  int failed_rank = -1;
  std::string message;
  bool ok() const { return failed_rank < 0; }
};
/// Collective: every rank says whether it can go on (and why not); all learn the same
/// answer, so all take the same path afterwards (one small allreduce; on failure two
/// broadcasts of the message from the failed rank).
Agreement agree(bool ok, const std::string& message);

/// Ends the whole job with `code` (MPI_Abort), or the process without MPI.
[[noreturn]] void abort(int code);

}  // namespace pipebench::dist
