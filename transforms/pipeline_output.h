// What a pipeline hands to collate: the dtype and layout of one sample once it is in its
// slot of the batch (the spec's `collate: {dtype, layout}`), and the normalize that moves
// after the copy to the accelerator when the batch is uint8.
//
//   dtype float32, layout NCHW   the default: the per-sample chain ends with a float32 CHW
//                                tensor (normalize, convert_color_yuv, to_dtype) written
//                                straight into the batch slot; batch N x C x H x W float32
//   dtype float32, layout NHWC   the same tensor, transposed to H x W x C when collated;
//                                batch N x H x W x C float32 (TensorFlow's / DALI's order)
//   dtype uint8,   layout NHWC   the chain stops at the uint8 HWC image (no float work on
//                                the CPU), copied into the slot as is; batch N x H x W x C
//                                uint8: a quarter of float32's bytes (FFCV's and DALI's
//                                usual choice, normalized on the accelerator)
//   dtype uint8,   layout NCHW   the same image de-interleaved to C x H x W when collated;
//                                batch N x C x H x W uint8
//
// With dtype uint8 a `normalize` that ends the per-sample operators does not run on the CPU:
// it becomes the batch's DeferredNormalize, applied after the H2D copy (normalize_u8_batch
// in pipeline/collate.h is its CPU reference; the CUDA training step runs it as a kernel).
// Every other float-only operator is refused by the spec (check_collate, spec.h).
//
// With `collate: {dtype: uint8, layout: NHWC, finish: device}` a horizontal_flip ending the
// per-sample operators and the pixels of mixup / cutmix / mixup_cutmix are left to the
// device too: the batch carries their draws (pipeline.h; the loader's Batch::flips and
// Batch::mixes), and the device applies them before the normalize.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "transforms/image.h"

namespace pipebench {

enum class SampleDtype { kFloat32, kUint8 };
/// The batch's order of axes (one sample's is CHW for NCHW, HWC for NHWC).
enum class BatchLayout { kNCHW, kNHWC };

inline const char* dtype_name(SampleDtype d) { return d == SampleDtype::kUint8 ? "uint8" : "float32"; }
inline const char* layout_name(BatchLayout l) { return l == BatchLayout::kNHWC ? "NHWC" : "NCHW"; }
/// From a spec's text ("float32" / "uint8", "NCHW" / "NHWC"); the spec parser has checked it.
inline SampleDtype dtype_from_name(const std::string& s) {
  return s == "uint8" ? SampleDtype::kUint8 : SampleDtype::kFloat32;
}
inline BatchLayout layout_from_name(const std::string& s) {
  return s == "NHWC" ? BatchLayout::kNHWC : BatchLayout::kNCHW;
}

/// One collated sample: its dtype, layout and C, H, W.
struct SampleFormat {
  SampleDtype dtype = SampleDtype::kFloat32;
  BatchLayout layout = BatchLayout::kNCHW;
  int channels = 0, height = 0, width = 0;

  size_t elements() const { return static_cast<size_t>(channels) * height * width; }
  size_t element_bytes() const { return dtype == SampleDtype::kUint8 ? 1 : 4; }
  size_t bytes() const { return elements() * element_bytes(); }
  /// The collate needs no copy: the chain writes the slot itself (float32 NCHW).
  bool in_place() const { return dtype == SampleDtype::kFloat32 && layout == BatchLayout::kNCHW; }
  /// e.g. "uint8 NHWC 224x224x3" (the dimensions in the layout's order, batch axis left out).
  std::string text() const {
    const std::string c = std::to_string(channels), h = std::to_string(height), w = std::to_string(width);
    return std::string(dtype_name(dtype)) + " " + layout_name(layout) + " " +
           (layout == BatchLayout::kNHWC ? h + "x" + w + "x" + c : c + "x" + h + "x" + w);
  }
};

/// One uint8 H x W x C image into `out` in `layout`'s order for one sample: H x W x C
/// (NHWC: a copy) or C x H x W (NCHW: de-interleaved). out holds image.size_bytes() bytes.
/// No checks: pipeline/collate.h's collate_image_u8 is the checked form.
inline void write_image_u8(const Image& image, BatchLayout layout, uint8_t* out) {
  const size_t plane = static_cast<size_t>(image.height) * image.width;
  const int c = image.channels;
  const uint8_t* src = image.ptr();
  if (layout == BatchLayout::kNHWC || c == 1) {
    std::memcpy(out, src, plane * c);
  } else if (c == 3) {  // the common case, unrolled so the compiler vectorises it
    for (size_t p = 0; p < plane; ++p) {
      out[p] = src[3 * p];
      out[plane + p] = src[3 * p + 1];
      out[2 * plane + p] = src[3 * p + 2];
    }
  } else {
    for (size_t p = 0; p < plane; ++p)
      for (int ch = 0; ch < c; ++ch) out[ch * plane + p] = src[p * c + ch];
  }
}

/// The normalize that a uint8 batch still needs, done after the copy:
/// out[n][c][y][x] = (q / 255 - mean[c]) / std[c] in float32, q the uint8 value: the same
/// float arithmetic as the per-sample normalize (transforms/normalize.h), so the float
/// batch it gives equals the float32 pipeline's to float rounding (the fused resize +
/// normalize steps differ from this formula by at most 4.8e-7 with ImageNet's statistics).
struct DeferredNormalize {
  std::array<float, 3> mean{}, std{};
};

}  // namespace pipebench
