// The device batch operators (transforms/batch_ops_device.h) against their CPU versions:
//   on any machine: draw_mix is the mixing operators' draw (the operator and apply_mix of
//   draw_mix on copies give the same bits), draw_horizontal_flips is the flip operator's,
//   the uint8 references (mix_batch_u8: rint half to even, hand-worked; cut_batch_u8_nhwc),
//   and the device functions' argument checks (std::invalid_argument before any device use;
//   CudaUnavailable after them without a device);
//   on a device (CudaBatchOps.*, skipped without one): each kernel against the CPU
//   operator on the same batch and draws, uint8 NHWC bit-exact, float32 NCHW within 1e-6,
//   odd batch sizes (the middle sample stays) and widths (the middle column stays).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "device/cuda.h"
#include "transforms/batch_mix.h"
#include "transforms/batch_ops_device.h"
#include "transforms/crop.h"
#include "transforms/pipeline.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

// n samples of c x h x w float32 NCHW with distinct values, one-hot labels of `classes`.
struct FloatBatch {
  std::vector<float> data, soft;
  std::vector<int32_t> labels;
  BatchData b;
  FloatBatch(int n, int c, int h, int w, int classes, unsigned salt = 0) {
    data.resize(static_cast<size_t>(n) * c * h * w);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(((i + salt) * 37) % 1001) / 7.0f - 60.0f;
    for (int i = 0; i < n; ++i) labels.push_back(i % classes);
    soft.resize(static_cast<size_t>(n) * classes);
    b = BatchData{data.data(), n, c, h, w, labels.data(), soft.data(), classes};
    one_hot_labels(b);
  }
};

std::vector<uint8_t> u8_batch(size_t bytes, unsigned salt = 0) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<uint8_t>(((i + salt) * 131 + (i >> 5)) & 0xFF);
  return v;
}

std::shared_ptr<const Pipeline> mixing_pipeline(const std::string& op) {
  return Pipeline::build(parse_pipeline_spec("[{center_crop: {size: 16}}, normalize, " + op + "]", "t"));
}

TEST(BatchMixDraws, DrawMixIsTheOperatorsDraw) {
  const struct {
    const char* spec;
    MixParams params;
  } cases[] = {
      {"{mixup_cutmix: {mixup_alpha: 0.8, cutmix_alpha: 1.0, switch_prob: 0.5, prob: 0.9}}", {0.8, 1.0, 0.9, 0.5}},
      {"{mixup: {alpha: 0.2, p: 0.6}}", {0.2, 0.0, 0.6, 0.0}},
      {"{cutmix: {alpha: 1.0}}", {0.0, 1.0, 1.0, 0.5}},
  };
  for (const auto& c : cases) {
    const auto p = mixing_pipeline(c.spec);
    const BatchOperator& op = p->batch_op(0);
    int cut = 0, mixed = 0;
    for (uint64_t batch = 0; batch < 40; ++batch) {
      FloatBatch a(5, 3, 9, 11, 4), b(5, 3, 9, 11, 4);
      Rng ra = Rng::for_batch(7, 1, batch), rb = ra;
      op.apply(a.b, ra);
      const MixDraw d = draw_mix(c.params, 9, 11, rb);
      apply_mix(b.b, d);
      ASSERT_EQ(a.data, b.data) << c.spec << " batch " << batch;
      ASSERT_EQ(a.soft, b.soft) << c.spec << " batch " << batch;
      ASSERT_EQ(ra.next_u64(), rb.next_u64()) << "the same number of draws";
      cut += d.apply && d.cut;
      mixed += d.apply;
    }
    EXPECT_GT(mixed, 0) << c.spec;
    if (c.params.cutmix_alpha > 0) {
      EXPECT_GT(cut, 0) << c.spec;
    }
  }
}

TEST(BatchMixDraws, FlipsAreTheFlipOperatorsDraw) {
  // The operator flips where rand < p (torchvision), one draw per sample.
  std::vector<Rng> rngs;
  for (uint64_t i = 0; i < 64; ++i) rngs.push_back(Rng::for_sample(3, 0, i));
  std::vector<Rng> copy = rngs;
  const auto flips = draw_horizontal_flips(0.5, copy);
  int n = 0;
  for (size_t i = 0; i < rngs.size(); ++i) {
    Rng r = rngs[i];
    EXPECT_EQ(flips[i] != 0, r.uniform() < 0.5) << i;
    EXPECT_EQ(copy[i].next_u64(), r.next_u64()) << "one draw per sample";
    n += flips[i];
  }
  EXPECT_GT(n, 16);
  EXPECT_LT(n, 48);
  EXPECT_THROW(draw_horizontal_flips(1.5, rngs), std::invalid_argument);
  EXPECT_EQ(draw_horizontal_flips(0.0, rngs), std::vector<uint8_t>(64, 0));
  EXPECT_EQ(draw_horizontal_flips(1.0, rngs), std::vector<uint8_t>(64, 1));
}

TEST(BatchMixU8, MixupRoundsHalfToEvenAsTimm) {
  // Pairs (0, 3) and (1, 2); lam 0.5: 10, 21 -> 15.5 -> 16; 13, 20 -> 16.5 -> 16 (even);
  // lam 0.25, 10 and 20: 0.25 * 10 + 0.75 * 20 = 17.5 -> 18, the other 12.5 -> 12.
  std::vector<uint8_t> v = {10, 13, 20, 21};
  mix_batch_u8(v.data(), 4, 1, 0.5f);
  EXPECT_EQ(v, (std::vector<uint8_t>{16, 16, 16, 16}));
  std::vector<uint8_t> w = {10, 0, 255, 20};
  mix_batch_u8(w.data(), 4, 1, 0.25f);
  EXPECT_EQ(w, (std::vector<uint8_t>{18, 191, 64, 12}));  // 0.25*0+0.75*255 = 191.25; 63.75 -> 64
  std::vector<uint8_t> odd = {1, 2, 3};
  mix_batch_u8(odd.data(), 3, 1, 0.0f);
  EXPECT_EQ(odd, (std::vector<uint8_t>{3, 2, 1}));  // lam 0 swaps; the middle stays
  EXPECT_THROW(mix_batch_u8(v.data(), 4, 1, 1.5f), std::invalid_argument);
  EXPECT_THROW(mix_batch_u8(nullptr, 4, 1, 0.5f), std::invalid_argument);
}

TEST(BatchMixU8, CutSwapsTheBoxOfEveryChannel) {
  const int n = 3, h = 5, w = 6, c = 3;
  auto v = u8_batch(static_cast<size_t>(n) * h * w * c);
  const auto x = v;
  const CropWindow box{1, 2, 3, 2};
  cut_batch_u8_nhwc(v.data(), n, h, w, c, box);
  const size_t m = static_cast<size_t>(h) * w * c;
  for (int i = 0; i < n; ++i)
    for (int y = 0; y < h; ++y)
      for (int xx = 0; xx < w; ++xx)
        for (int k = 0; k < c; ++k) {
          const bool in = xx >= 1 && xx < 4 && y >= 2 && y < 4;
          const size_t off = (static_cast<size_t>(y) * w + xx) * c + k;
          ASSERT_EQ(v[i * m + off], x[(in ? n - 1 - i : i) * m + off]);
        }
  EXPECT_THROW(cut_batch_u8_nhwc(v.data(), n, h, w, c, CropWindow{4, 0, 3, 1}), std::invalid_argument);
  EXPECT_FLOAT_EQ(cut_lam(h, w, box), 1.0f - 6.0f / 30.0f);
}

TEST(DeviceBatchOps, ChecksComeFirstThenTheDevice) {
  int dummy = 0;
  DeviceBatch b{&dummy, 4, 3, 8, 8, DeviceBatchFormat::kUint8Nhwc};
  EXPECT_EQ(b.bytes(), 4u * 3 * 8 * 8);
  EXPECT_EQ((DeviceBatch{&dummy, 2, 3, 4, 4, DeviceBatchFormat::kFloat32Nchw}.bytes()), 2u * 3 * 4 * 4 * 4);
  EXPECT_STREQ(device_batch_format_name(DeviceBatchFormat::kFloat32Nchw), "float32_nchw");
  DeviceBatch null_batch = b;
  null_batch.data = nullptr;
  EXPECT_THROW(device_mixup(null_batch, 0.5f, nullptr), std::invalid_argument);
  DeviceBatch empty = b;
  empty.n = 0;
  EXPECT_THROW(device_cutmix(empty, CropWindow{0, 0, 1, 1}, nullptr), std::invalid_argument);
  EXPECT_THROW(device_horizontal_flip(b, std::vector<uint8_t>(3, 1), nullptr), std::invalid_argument);
  DeviceBatch huge = b;
  huge.n = kDeviceFlipMaxBatch + 1;
  EXPECT_THROW(device_horizontal_flip(huge, std::vector<uint8_t>(huge.n, 1), nullptr), std::invalid_argument);
  EXPECT_THROW(device_mixup(b, std::nanf(""), nullptr), std::invalid_argument);
  EXPECT_THROW(device_mixup(b, -0.1f, nullptr), std::invalid_argument);
  EXPECT_THROW(device_cutmix(b, CropWindow{6, 0, 3, 1}, nullptr), std::invalid_argument);
  EXPECT_THROW(device_cutmix(b, CropWindow{0, 0, -1, 1}, nullptr), std::invalid_argument);
  if (cuda_available()) return;  // below: only where no device exists
  EXPECT_THROW(device_mixup(b, 0.5f, nullptr), CudaUnavailable);
  EXPECT_THROW(device_horizontal_flip(b, std::vector<uint8_t>(4, 1), nullptr), CudaUnavailable);
  EXPECT_THROW(device_cutmix(b, CropWindow{0, 0, 2, 2}, nullptr), CudaUnavailable);
  EXPECT_EQ(device_apply_mix(b, MixDraw{}, nullptr), 1.0f);  // nothing to do, no device needed
}

// --- on a device ------------------------------------------------------------------------------

// The batch's bytes on the device, an operator run there, and the bytes back.
template <class T, class Op>
std::vector<T> on_device(const std::vector<T>& host, DeviceBatch b, Op op) {
  DeviceBuffer buf(host.size() * sizeof(T));
  copy_to_device(buf.data(), host.data(), buf.bytes(), nullptr);
  b.data = buf.data();
  CudaStream stream;
  op(b, stream.handle());
  stream.synchronize();
  std::vector<T> out(host.size());
  copy_to_host(out.data(), buf.data(), buf.bytes(), nullptr);
  return out;
}

void expect_close(const std::vector<float>& got, const std::vector<float>& want, const char* what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 1e-6 * std::max(1.0f, std::fabs(want[i]))) << what << " at " << i;
}

// Shapes with an odd n (the middle sample stays) and an odd width (the middle column stays).
struct Shape {
  int n, c, h, w;
};
constexpr Shape kShapes[] = {{5, 3, 7, 9}, {4, 3, 16, 16}, {1, 3, 4, 5}, {64, 3, 32, 33}};

TEST(CudaBatchOps, FlipUint8NhwcIsTheCpuOperator) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  for (const Shape s : kShapes) {
    std::vector<Rng> rngs;
    for (int i = 0; i < s.n; ++i) rngs.push_back(Rng::for_sample(11, 0, i));
    const auto flips = draw_horizontal_flips(0.5, rngs);
    const size_t m = static_cast<size_t>(s.h) * s.w * s.c;
    const auto host = u8_batch(m * s.n);
    auto want = host;
    for (int i = 0; i < s.n; ++i) {
      if (!flips[i]) continue;
      Image img;
      img.resize(s.h, s.w, s.c);
      std::memcpy(img.ptr(), host.data() + i * m, m);
      horizontal_flip(img);  // the CPU operator (cv::flip)
      std::memcpy(want.data() + i * m, img.ptr(), m);
    }
    const auto got = on_device(host, DeviceBatch{nullptr, s.n, s.c, s.h, s.w, DeviceBatchFormat::kUint8Nhwc},
                               [&](const DeviceBatch& b, void* st) { device_horizontal_flip(b, flips, st); });
    ASSERT_EQ(got, want) << s.n << " x " << s.h << " x " << s.w;
  }
}

TEST(CudaBatchOps, FlipFloat32NchwMirrorsEachPlane) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  for (const Shape s : kShapes) {
    std::vector<uint8_t> flips(s.n);
    for (int i = 0; i < s.n; ++i) flips[i] = static_cast<uint8_t>(i % 3 != 1);
    FloatBatch f(s.n, s.c, s.h, s.w, 2);
    std::vector<float> want = f.data;
    for (int i = 0; i < s.n; ++i)
      for (int r = 0; flips[i] && r < s.c * s.h; ++r) {
        float* row = want.data() + (static_cast<size_t>(i) * s.c * s.h + r) * s.w;
        std::reverse(row, row + s.w);
      }
    const auto got = on_device(f.data, DeviceBatch{nullptr, s.n, s.c, s.h, s.w, DeviceBatchFormat::kFloat32Nchw},
                               [&](const DeviceBatch& b, void* st) { device_horizontal_flip(b, flips, st); });
    ASSERT_EQ(got, want);  // moves only: exact
  }
}

TEST(CudaBatchOps, MixupIsTheCpuOperator) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  for (const Shape s : kShapes) {
    for (float lam : {0.0f, 0.3f, 0.5f, 0.77f, 1.0f}) {
      FloatBatch f(s.n, s.c, s.h, s.w, 3), ref(s.n, s.c, s.h, s.w, 3);
      mix_batch(ref.b, lam);
      const auto got = on_device(f.data, DeviceBatch{nullptr, s.n, s.c, s.h, s.w, DeviceBatchFormat::kFloat32Nchw},
                                 [&](const DeviceBatch& b, void* st) { device_mixup(b, lam, st); });
      expect_close(got, ref.data, "float32 mixup");
      const auto host = u8_batch(static_cast<size_t>(s.n) * s.c * s.h * s.w, 5);
      auto want = host;
      mix_batch_u8(want.data(), s.n, want.size() / s.n, lam);
      const auto got8 = on_device(host, DeviceBatch{nullptr, s.n, s.c, s.h, s.w, DeviceBatchFormat::kUint8Nhwc},
                                  [&](const DeviceBatch& b, void* st) { device_mixup(b, lam, st); });
      ASSERT_EQ(got8, want) << "uint8 mixup, lam " << lam;
    }
  }
}

TEST(CudaBatchOps, CutmixIsTheCpuOperator) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  for (const Shape s : kShapes) {
    Rng rng(5);
    for (int k = 0; k < 6; ++k) {
      const CropWindow box = k == 0 ? CropWindow{0, 0, s.w, s.h} : cutmix_box(s.h, s.w, rng.uniform(), rng);
      FloatBatch f(s.n, s.c, s.h, s.w, 3), ref(s.n, s.c, s.h, s.w, 3);
      cut_batch(ref.b, box);
      const auto got = on_device(f.data, DeviceBatch{nullptr, s.n, s.c, s.h, s.w, DeviceBatchFormat::kFloat32Nchw},
                                 [&](const DeviceBatch& b, void* st) { device_cutmix(b, box, st); });
      ASSERT_EQ(got, ref.data) << "float32 cutmix (moves only: exact)";
      const auto host = u8_batch(static_cast<size_t>(s.n) * s.c * s.h * s.w, 9);
      auto want = host;
      cut_batch_u8_nhwc(want.data(), s.n, s.h, s.w, s.c, box);
      const auto got8 = on_device(host, DeviceBatch{nullptr, s.n, s.c, s.h, s.w, DeviceBatchFormat::kUint8Nhwc},
                                  [&](const DeviceBatch& b, void* st) { device_cutmix(b, box, st); });
      ASSERT_EQ(got8, want) << "uint8 cutmix";
    }
  }
}

TEST(CudaBatchOps, TheMixOperatorsDrawsGiveTheCpuBatch) {
  // The operator (mixup_cutmix, DeiT's setting) on the CPU, the same Rng's draw applied on the
  // device, and the labels mixed on the host with the weight device_apply_mix returns.
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  const auto p = mixing_pipeline("{mixup_cutmix: {mixup_alpha: 0.8, cutmix_alpha: 1.0, switch_prob: 0.5}}");
  const MixParams params{0.8, 1.0, 1.0, 0.5};
  for (uint64_t batch = 0; batch < 12; ++batch) {
    FloatBatch cpu(6, 3, 12, 10, 5), dev(6, 3, 12, 10, 5);
    Rng rc = Rng::for_batch(1, 0, batch), rd = rc;
    p->batch_op(0).apply(cpu.b, rc);
    const MixDraw d = draw_mix(params, 12, 10, rd);
    float lam = 1;
    const auto got = on_device(dev.data, DeviceBatch{nullptr, 6, 3, 12, 10, DeviceBatchFormat::kFloat32Nchw},
                               [&](const DeviceBatch& b, void* st) { lam = device_apply_mix(b, d, st); });
    mix_soft_labels(dev.soft.data(), 6, 5, lam);
    expect_close(got, cpu.data, "mixup_cutmix pixels");
    expect_close(dev.soft, cpu.soft, "mixup_cutmix labels");
  }
}

}  // namespace
}  // namespace pipebench
