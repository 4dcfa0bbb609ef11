// Loader: the whole input pipeline as a oneTBB flow graph, in the spirit of PyTorch's
// DataLoader:
//
//   sampler -> read -> decode + transforms (a Pipeline) -> collate -> [H2D] -> consumer
//
// Batches are in the pipeline's output format (Pipeline::output(), the spec's collate:
// float32 NCHW by default, or float32 NHWC, uint8 NHWC, uint8 NCHW: pipeline_output.h),
// batch_size samples with int32 labels, delivered in sampler order (or, with
// LoaderOptions::in_order false, as they complete: see there). A uint8 batch carries
// the normalize its consumer must apply after the copy (Batch::normalize; the CPU reference
// is normalize_u8_batch in collate.h). Float32 NCHW samples are written by the pipeline
// straight into their slot; the other formats are collated into it by the worker
// (collate.h), timed as the collate stage. When the spec has batch operators (mixup, cutmix,
// label smoothing), the worker that completes a batch runs them on it (Stage::kBatchOps)
// and the batch carries soft labels (batch_size x classes float32). Workers are the threads that do sample work (a
// tbb::task_arena of `workers` concurrency); at most prefetch_depth_batches batches are in
// flight (being filled, or ready and not yet released by the consumer), so memory is
// bounded whatever the dataset size. Batch buffers come from a pool (pinned when
// memory == kPinned) and are reused. Peak RSS growth of a loader is about
//   prefetch_depth_batches x batch bytes (batch_size x C x H x W x 4 for float32, x 1 for
//   uint8, + 12 B per sample; + batch_size x classes x 4 with batch operators; allocated
//   and touched at construction)
//   + workers x decoder scratch (about the decoded source H x W x 3 + the file's bytes + the
//   operators' uint8 intermediates)
//   + the dataset's bytes when it is cached in memory;
// tests/resource_test.cpp checks it within a margin.
//
// Determinism: sample i of epoch e uses Rng::for_sample(sampler.seed, e, i), so one seed
// gives bit-identical batches at any worker count.
//
// Errors: the constructor throws std::invalid_argument for bad options (workers, batch
// size or prefetch depth < 1, no pipeline, epochs < 1). With OnError::kStop a
// failing sample stops the loader: next() throws LoaderError naming the file and reason;
// no thread is left running. With OnError::kSkip the sample is dropped and counted
// (LoaderStats::skipped) and its batch slot is filled from the next samples of the epoch
// so batches keep their size; when every distinct sample of the dataset has failed since
// the last success (every file bad), the loader stops as with kStop, rather than cycling
// through empty epochs.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "datasets/sample_source.h"
#include "device/cuda.h"
#include "pipeline/sampler.h"
#include "measure/stage_timers.h"
#include "transforms/pipeline.h"

namespace pipebench {

class TraceRecorder;

class LoaderError : public std::runtime_error {
 public:
  LoaderError(std::string file, const std::string& what)
      : std::runtime_error(what), file_(std::move(file)) {}
  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

enum class OnError { kStop, kSkip };

struct LoaderOptions {
  /// What each sample goes through (transforms/pipeline.h); required. Shared: the loader
  /// keeps it alive.
  std::shared_ptr<const Pipeline> pipeline;
  int batch_size = 64;               ///< samples per batch
  int workers = 1;                   ///< threads doing sample work
  int prefetch_depth_batches = 2;    ///< most batches in flight at once
  /// true: batches reach next() in sampler order (a batch waits for every batch before
  /// it). false: PyTorch's DataLoader(in_order=False): next() returns whichever complete
  /// batch is ready first, so one slow sample holds only its own batch, not the batches
  /// after it. Every batch of an epoch is still delivered exactly once, with the same
  /// samples and the same pixels (each sample's draws depend on its epoch and index, not
  /// on timing); what changes is the order in which batches, and so samples, reach the
  /// model, which then depends on timing (batches of the next epoch may come before the
  /// last of this one; Batch::epoch and Batch::index say which is which).
  bool in_order = true;
  SamplerOptions sampler;            ///< shuffle, seed, drop_last, sharding
  int epochs = 1;
  OnError on_error = OnError::kStop;
  MemoryKind memory = MemoryKind::kPageable;  ///< batch buffers; kPinned needs CUDA
  bool copy_to_device = false;       ///< add the H2D stage (needs CUDA)
  bool stage_timers = true;          ///< per-stage timing (cheap; see stage_timers.h)
  TraceRecorder* trace = nullptr;    ///< Chrome trace spans when non-null
};

/// One delivered batch. Pointers stay valid until the BatchHandle holding it is destroyed.
struct Batch {
  int epoch = 0;
  int64_t index = 0;             ///< batch index within the epoch
  int size = 0;                  ///< samples (batch_size, or fewer for a last batch)
  int channels = 0, height = 0, width = 0;
  SampleFormat format;           ///< one sample's dtype, layout, C, H, W
  /// float32 batches: size x C x H x W (NCHW) or size x H x W x C (NHWC), host; null for uint8
  const float* data = nullptr;
  /// uint8 batches, in format.layout, host; null for float32
  const uint8_t* data_u8 = nullptr;
  /// uint8 batches whose spec ends with normalize: what the consumer applies after the
  /// copy (pipeline_output.h); null otherwise (a uint8 batch without it is raw pixels)
  const DeferredNormalize* normalize = nullptr;
  /// `collate: {..., finish: device}` (uint8 NHWC): size flags, 1 where the deferred
  /// horizontal_flip mirrors that sample after the copy; null when nothing is deferred.
  const uint8_t* flips = nullptr;
  /// finish: device: the batch's mixup / cutmix draws, applied to the pixels after the
  /// copy in this order (soft_labels are already mixed); empty otherwise.
  std::span<const MixDraw> mixes;
  const int32_t* labels = nullptr;                  ///< size labels
  /// size x num_classes float32 soft labels (mixed / smoothed by the spec's batch
  /// operators); null when the spec has none.
  const float* soft_labels = nullptr;
  int num_classes = 0;
  std::span<const int64_t> sample_indices;          ///< dataset indices, size entries
  /// The same batch on the device when copy_to_device, as delivered: a finish: device
  /// batch's flips and mixes are not applied there (the training step applies them).
  const void* device_data = nullptr;
  /// The batch's host bytes, whatever its dtype.
  const void* host_data() const {
    return data != nullptr ? static_cast<const void*>(data) : static_cast<const void*>(data_u8);
  }
  /// Bytes of the batch's data: size x C x H x W x (4 for float32, 1 for uint8).
  size_t bytes() const { return static_cast<size_t>(size) * format.bytes(); }
};

/// Owns a delivered batch; releasing it returns the buffer to the pool and lets the loader
/// start another batch. Move-only.
class BatchHandle {
 public:
  BatchHandle() = default;
  BatchHandle(const Batch* batch, std::shared_ptr<void> releaser)
      : batch_(batch), releaser_(std::move(releaser)) {}
  const Batch& operator*() const { return *batch_; }
  const Batch* operator->() const { return batch_; }
  void release() { releaser_.reset(); batch_ = nullptr; }

 private:
  const Batch* batch_ = nullptr;
  std::shared_ptr<void> releaser_;
};

class Loader {
 public:
  /// Starts the pipeline at once (batches are prefetched before the first next()). The
  /// dataset must outlive the Loader; delivered batches may outlive it.
  Loader(const SampleSource& dataset, LoaderOptions options);
  /// Cancels the graph, waits for the worker threads and frees every buffer that no
  /// BatchHandle still holds; never hangs (a sample being processed is finished first).
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  /// The next batch in sampler order (in_order false: the first complete one), or nullopt
  /// after the last epoch. Blocks while none
  /// is ready. Throws LoaderError after a sample failed with OnError::kStop (again on every
  /// later call), and std::logic_error when the caller still holds prefetch_depth_batches
  /// BatchHandles and the stream has not ended (no batch could become ready: it would
  /// wait forever).
  std::optional<BatchHandle> next();

  int64_t batches_per_epoch() const;
  const LoaderOptions& options() const;
  /// Counters and stage times so far. Each counter is read atomically, but not all at one
  /// instant: a sample finishing during the call may show in one counter and not another.
  LoaderStats stats() const;

  /// One sample's cost as its worker spent it: read + pipeline + collate into the batch
  /// slot, wall ns (the stage timers' clock), with its dataset index.
  struct SampleCost {
    int64_t index = 0;
    int64_t ns = 0;
  };
  /// Starts (true) or stops recording every sample's cost, for the step model's cost
  /// distribution (model/step_model.h; bench's loader-alone windows). Recorded only with
  /// LoaderOptions::stage_timers (else nothing is): one lock per sample while on.
  void record_sample_costs(bool on);
  /// The costs recorded since the last call, in the order the workers finished them;
  /// clears them.
  std::vector<SampleCost> take_sample_costs();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pipebench
