// BufferTrim: gives back a reused buffer's memory after an outlier.
//
// Decoders reuse their buffers (and the caller's output Image) so that steady state
// allocates nothing; but a vector never shrinks, so one 9999 x 9999 image among 500 x 375
// photos would leave every worker holding 300 MB for the rest of the run (issue 15,
// defect 6). BufferTrim remembers what the last kWindow calls needed and releases a
// buffer whose capacity is more than kFactor times the largest of them (and above
// kFloorBytes, below which the saving is not worth a reallocation). Taking the largest
// need over a window, not the last one, keeps a dataset of mixed sizes from reallocating
// back and forth: a buffer is released only kWindow calls after the outlier.
//
// Use: fit(buffer, need_bytes) before resizing the buffer to need_bytes. One BufferTrim
// per buffer (the needs of different buffers differ). Not thread-safe (one per worker,
// like the decoders).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <vector>

namespace pipebench {

class BufferTrim {
 public:
  static constexpr size_t kWindow = 16;          ///< calls remembered
  static constexpr size_t kFactor = 4;           ///< capacity / largest recent need
  static constexpr size_t kFloorBytes = 4 << 20;  ///< never release below 4 MiB

  /// Records this call's need (bytes) and releases `v`'s storage when it is oversized for
  /// the recent needs; the caller then resizes `v` to what it needs.
  template <class T>
  void fit(std::vector<T>& v, size_t need_bytes) {
    record(need_bytes);
    if (oversized(v.capacity() * sizeof(T))) std::vector<T>().swap(v);
  }

  /// Records one call's need, in bytes.
  void record(size_t need_bytes) {
    needs_[next_] = need_bytes;
    next_ = (next_ + 1) % kWindow;
  }

  /// Whether a buffer of `capacity_bytes` is more than kFactor x the largest recent need
  /// (and above kFloorBytes).
  bool oversized(size_t capacity_bytes) const {
    const size_t largest = *std::max_element(needs_.begin(), needs_.end());
    return capacity_bytes > kFloorBytes && capacity_bytes / kFactor > largest;
  }

 private:
  std::array<size_t, kWindow> needs_{};
  size_t next_ = 0;
};

}  // namespace pipebench
