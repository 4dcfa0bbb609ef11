// The host side of the device batch operators (batch_ops_device.h): the draws, the checks,
// and the launches (batch_ops_device_kernels.h) under PIPEBENCH_HAVE_CUDA; without CUDA
// every operator throws CudaUnavailable after its checks.
#include "transforms/batch_ops_device.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "device/cuda.h"
#include "transforms/ops/geometry.h"

#ifdef PIPEBENCH_HAVE_CUDA
#include "transforms/batch_ops_device_kernels.h"
#endif

namespace pipebench {
namespace {

void check_batch(const DeviceBatch& b, const char* what) {
  if (b.data == nullptr) throw std::invalid_argument(std::string(what) + ": null device batch");
  if (b.n < 1 || b.c < 1 || b.h < 1 || b.w < 1)
    throw std::invalid_argument(std::string(what) + ": batch shape " + std::to_string(b.n) + " x " +
                                std::to_string(b.c) + " x " + std::to_string(b.h) + " x " + std::to_string(b.w) +
                                " has a size < 1");
}

// Every check passed: the device, or why there is none.
void need_device() {
#ifndef PIPEBENCH_HAVE_CUDA
  throw CudaUnavailable("device batch operators: built without CUDA");
#else
  require_cuda();
#endif
}

}  // namespace

const char* device_batch_format_name(DeviceBatchFormat f) {
  return f == DeviceBatchFormat::kUint8Nhwc ? "uint8_nhwc" : "float32_nchw";
}

bool device_batch_ops_built() {
#ifdef PIPEBENCH_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

std::vector<uint8_t> draw_horizontal_flips(double p, std::vector<Rng>& rngs) {
  if (!(p >= 0.0 && p <= 1.0))
    throw std::invalid_argument("horizontal_flip: p must be in [0, 1], got " + std::to_string(p));
  const FlipOp op(true, p);  // the operator's own draw
  std::vector<uint8_t> flips(rngs.size());
  for (size_t i = 0; i < rngs.size(); ++i) flips[i] = op.draw(rngs[i]) ? 1 : 0;
  return flips;
}

void device_horizontal_flip(const DeviceBatch& b, std::span<const uint8_t> flips, void* stream) {
  check_batch(b, "device horizontal_flip");
  if (flips.size() != static_cast<size_t>(b.n))
    throw std::invalid_argument("device horizontal_flip: " + std::to_string(flips.size()) + " flags for " +
                                std::to_string(b.n) + " samples");
  if (b.n > kDeviceFlipMaxBatch)
    throw std::invalid_argument("device horizontal_flip: at most " + std::to_string(kDeviceFlipMaxBatch) +
                                " samples per call, got " + std::to_string(b.n));
  need_device();
#ifdef PIPEBENCH_HAVE_CUDA
  device_kernels::FlipMask mask{};
  bool any = false;
  for (int i = 0; i < b.n; ++i) {
    if (flips[i] != 0) {
      mask.bits[i / 64] |= uint64_t{1} << (i % 64);
      any = true;
    }
  }
  if (!any || b.w < 2) return;
  if (b.format == DeviceBatchFormat::kUint8Nhwc) {
    device_kernels::flip_u8_nhwc(static_cast<uint8_t*>(b.data), b.n, b.h, b.w, b.c, mask, stream);
  } else {
    device_kernels::flip_f32_nchw(static_cast<float*>(b.data), b.n, b.c, b.h, b.w, mask, stream);
  }
#else
  (void)stream;
#endif
}

void device_mixup(const DeviceBatch& b, float lam, void* stream) {
  check_batch(b, "device mixup");
  if (!(lam >= 0.0f && lam <= 1.0f))
    throw std::invalid_argument("device mixup: lam must be in [0, 1], got " + std::to_string(lam));
  need_device();
#ifdef PIPEBENCH_HAVE_CUDA
  if (b.n < 2) return;
  if (b.format == DeviceBatchFormat::kUint8Nhwc) {
    device_kernels::mixup_u8(static_cast<uint8_t*>(b.data), b.n, b.sample_elements(), lam, stream);
  } else {
    device_kernels::mixup_f32(static_cast<float*>(b.data), b.n, b.sample_elements(), lam, stream);
  }
#else
  (void)stream;
#endif
}

void device_cutmix(const DeviceBatch& b, const CropWindow& box, void* stream) {
  check_batch(b, "device cutmix");
  if (box.x < 0 || box.y < 0 || box.width < 0 || box.height < 0 || box.x + box.width > b.w ||
      box.y + box.height > b.h)
    throw std::invalid_argument("device cutmix: the box lies outside the " + std::to_string(b.h) + " x " +
                                std::to_string(b.w) + " image");
  need_device();
#ifdef PIPEBENCH_HAVE_CUDA
  if (b.n < 2 || box.width == 0 || box.height == 0) return;
  if (b.format == DeviceBatchFormat::kUint8Nhwc) {
    device_kernels::cutmix_u8_nhwc(static_cast<uint8_t*>(b.data), b.n, b.h, b.w, b.c, box.x, box.y, box.width,
                                   box.height, stream);
  } else {
    device_kernels::cutmix_f32_nchw(static_cast<float*>(b.data), b.n, b.c, b.h, b.w, box.x, box.y, box.width,
                                    box.height, stream);
  }
#else
  (void)stream;
#endif
}

float device_apply_mix(const DeviceBatch& b, const MixDraw& d, void* stream) {
  if (!d.apply) {
    check_batch(b, "device mixup");
    return 1.0f;
  }
  if (d.cut) {
    device_cutmix(b, d.box, stream);
    return cut_lam(b.h, b.w, d.box);
  }
  const auto lam = static_cast<float>(d.lam);
  device_mixup(b, lam, stream);
  return lam;
}

}  // namespace pipebench
