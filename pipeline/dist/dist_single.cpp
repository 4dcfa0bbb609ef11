// dist.h without MPI: one process, world size 1; every collective is the identity.
#include <cstdlib>

#include "pipeline/dist/dist.h"

namespace pipebench::dist {

bool built_with_mpi() { return false; }
Session::Session(int*, char***) {}
Session::~Session() = default;
int rank() { return 0; }
int world_size() { return 1; }
int local_rank() { return 0; }
int local_size() { return 1; }
void barrier() {}
PendingBarrier::PendingBarrier() = default;
PendingBarrier::~PendingBarrier() = default;
bool PendingBarrier::done() { return true; }
void allreduce_sum(float*, size_t) {}
double allreduce_sum(double v) { return v; }
double allreduce_max(double v) { return v; }
double allreduce_min(double v) { return v; }
std::vector<std::vector<double>> gather(const std::vector<double>& mine) { return {mine}; }
std::vector<std::string> gather(const std::string& mine) { return {mine}; }
Agreement agree(bool ok, const std::string& message) {
  return ok ? Agreement{} : Agreement{0, message};
}
void abort(int code) { std::_Exit(code); }

}  // namespace pipebench::dist
