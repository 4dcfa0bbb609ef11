// Image containers shared by decoders, transforms and collate.
//
// Image: HWC, uint8, interleaved RGB (channels = 3) or gray (channels = 1), rows packed
//   (row stride = width * channels bytes). Pixel (y, x), channel c is
//   data[(y * width + x) * channels + c].
//
// An Image keeps its storage across resize() calls, so a worker that reuses one object per
// sample allocates only while the largest image seen so far grows (no per-sample heap
// allocation after warm-up).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipebench {

struct Image {
  int height = 0;
  int width = 0;
  int channels = 3;
  std::vector<uint8_t> data;

  /// Sets the shape; contents are unspecified afterwards. Never shrinks capacity.
  void resize(int h, int w, int c = 3) {
    height = h;
    width = w;
    channels = c;
    const size_t n = static_cast<size_t>(h) * w * c;
    if (data.size() < n) data.resize(n);
  }
  size_t size_bytes() const { return static_cast<size_t>(height) * width * channels; }
  size_t row_bytes() const { return static_cast<size_t>(width) * channels; }
  uint8_t* row(int y) { return data.data() + y * row_bytes(); }
  const uint8_t* row(int y) const { return data.data() + y * row_bytes(); }
  uint8_t* ptr() { return data.data(); }
  const uint8_t* ptr() const { return data.data(); }
};

/// A rectangle in pixel coordinates of some image: columns [x, x + width), rows [y, y + height).
struct CropWindow {
  int x = 0;
  int y = 0;
  int width = 0;
  int height = 0;
  bool operator==(const CropWindow&) const = default;
};

}  // namespace pipebench
