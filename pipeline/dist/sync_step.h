// The synchronised step of data-parallel training: what every rank does after its
// training step, so that the slowest rank sets the pace (--sync, --grad-mib, --link-gbs,
// --link-latency-us).
//
//   emulated   (the default) the gradient allreduce emulated as the emulated step emulates
//              compute: every rank waits (sleeping) until all have arrived, then waits the
//              time a ring allreduce of the gradients takes on a stated link
//              (ring_allreduce_ms below). No host CPU is spent: on a GPU node NCCL moves and
//              sums the gradients on the accelerators, so ranks sharing one host's cores
//              leave them to the loaders, as they would there.
//   allreduce  the real MPI_Allreduce (sum) of a gradient-sized float32 buffer, as DDP /
//              Horovod do after the backward pass. The default size is ResNet-50's
//              gradients, 25.557 M float32 parameters = 97.5 MiB (torchvision's resnet50),
//              the model the emulated step stands for (25 ms per batch of 64,
//              pipeline/train_step.h). On one host Open MPI reduces through shared memory on
//              the CPU, which a real job does on the accelerators: the time and the loop
//              thread's CPU it takes here are host resources the loader's workers lose, so
//              both are measured and reported (sync_ms, sync_cpu_ms).
//   barrier    MPI_Barrier, as DLIO and MLPerf Storage stand in for the allreduce.
//   none       nothing: ranks run freely (the per-rank loops, no straggler effect).
// With world size 1 (or without MPI) every mode does nothing.
// Errors: std::invalid_argument for an unknown mode or a negative / non-finite size.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace pipebench::dist {

enum class SyncMode { kEmulated, kAllreduce, kBarrier, kNone };

/// ResNet-50's gradient bytes in MiB: 25,557,032 parameters x 4 B / 2^20.
inline constexpr double kResNet50GradMiB = 25557032.0 * 4 / (1024.0 * 1024.0);

/// The link a ring allreduce is emulated on (--link-gbs, --link-latency-us).
/// Defaults: NVLink 4 of an H100 SXM node, 900 GB/s per GPU in both directions together
/// (NVIDIA H100 Tensor Core GPU datasheet), so 450 GB/s each way, the rate a ring step
/// sends at; and an assumed 5 us per ring step (a small NCCL allreduce on one NVLink node
/// takes tens of us over its 2(N-1) steps: measure yours with nccl-tests' all_reduce_perf).
/// For ranks on different nodes, InfiniBand NDR is 400 Gb/s = 50 GB/s per port each way.
struct LinkModel {
  double gb_per_s = 450;     ///< GB/s (1e9 bytes per second), one direction
  double latency_us = 5;     ///< per ring step, us
};

/// The time of a ring allreduce of `bytes` over `ranks` ranks on `link`, ms:
///     2 (N - 1) / N x bytes / bandwidth  +  2 (N - 1) x latency
/// (reduce-scatter then all-gather, each N - 1 steps moving bytes / N: Patarasuk and Yuan,
/// "Bandwidth optimal all-reduce algorithms for clusters of workstations", JPDC 69(2),
/// 2009; NCCL's nccl-tests doc/PERFORMANCE.md calls 2 (N - 1) / N the bus-bandwidth
/// factor). 0 for one rank. Errors: std::invalid_argument for bytes < 0, ranks < 1 or a
/// link without a positive finite bandwidth / a non-negative finite latency.
double ring_allreduce_ms(double bytes, int ranks, const LinkModel& link);

/// "emulated", "allreduce", "barrier", "none".
SyncMode parse_sync_mode(const std::string& text);
const char* sync_mode_name(SyncMode mode);

class SyncStep {
 public:
  /// The buffer (grad_mib MiB of float32) is allocated and touched here, for allreduce only;
  /// `link` is what emulated waits on (ignored by the other modes).
  SyncStep(SyncMode mode, double grad_mib, const LinkModel& link = {});
  /// One synchronisation (collective on every rank); returns its wall time, ms.
  double run();
  /// The mean wall time of `iters` synchronisations, ms, after one untimed (every rank
  /// enters together: a barrier first).
  double measure_ms(int iters);
  SyncMode mode() const { return mode_; }
  /// emulated: the modelled transfer each step waits after every rank has arrived, ms
  /// (ring_allreduce_ms at this world size); 0 for the other modes and for one rank.
  double modelled_ms() const { return modelled_ms_; }

 private:
  SyncMode mode_;
  double modelled_ms_ = 0;
  std::vector<float> gradients_;
};

}  // namespace pipebench::dist
