// The synchronised step of data-parallel training: what every rank does after its
// training step, so that the slowest rank sets the pace (--sync, --grad-mib).
//
//   allreduce  MPI_Allreduce (sum) of a gradient-sized float32 buffer, as DDP / Horovod
//              do after the backward pass. The default size is ResNet-50's gradients,
//              25.557 M float32 parameters = 97.5 MiB (torchvision's resnet50), the model the
//              emulated step stands for (25 ms per batch of 64, pipeline/train_step.h).
//              On one host Open MPI reduces through shared memory on the CPU, which a real
//              job does on the accelerators (NCCL): the time it takes here is host time that
//              the loader's workers compete for, so it is measured and reported (sync_ms).
//   barrier    MPI_Barrier, as DLIO and MLPerf Storage stand in for the allreduce.
//   none       nothing: ranks run freely (the per-rank loops, no straggler effect).
// With world size 1 (or without MPI) every mode does nothing.
// Errors: std::invalid_argument for an unknown mode or a negative / non-finite size.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace pipebench::dist {

enum class SyncMode { kAllreduce, kBarrier, kNone };

/// ResNet-50's gradient bytes in MiB: 25,557,032 parameters x 4 B / 2^20.
inline constexpr double kResNet50GradMiB = 25557032.0 * 4 / (1024.0 * 1024.0);

/// "allreduce", "barrier", "none".
SyncMode parse_sync_mode(const std::string& text);
const char* sync_mode_name(SyncMode mode);

class SyncStep {
 public:
  /// The buffer (grad_mib MiB of float32) is allocated and touched here, for allreduce only.
  SyncStep(SyncMode mode, double grad_mib);
  /// One synchronisation (collective on every rank); returns its wall time, ms.
  double run();
  /// The mean wall time of `iters` synchronisations, ms, after one untimed (every rank
  /// enters together: a barrier first).
  double measure_ms(int iters);
  SyncMode mode() const { return mode_; }

 private:
  SyncMode mode_;
  std::vector<float> gradients_;
};

}  // namespace pipebench::dist
