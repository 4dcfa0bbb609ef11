// The `cuda:cnn` step (pipeline/train_step_cnn.h). The layer and FLOP arithmetic runs
// anywhere, against figures worked by hand; the step itself needs a CUDA device and cuDNN,
// and those tests skip with the reason where there is none. As of the commit that added
// them the device tests have never run (no GPU was available).
#include "pipeline/train_step_cnn.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "device/cuda.h"
#include "pipeline/train_step.h"
#include "tests/test_data.h"
#include "transforms/rng.h"

#ifdef PIPEBENCH_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace pipebench {
namespace {

// S = 224: floor(log2 224) = 7 blocks; convs at 224 (conv_in), then 224, 112, 56, 28, 14,
// 7, 3 (each block's conv runs before its pool), conv_out at 1.
//   conv_in  2 x 30 x 224^2 x 3 x 9          =    81,285,120
//   blocks   2 x 30 x 30 x 9 x (224^2 + 112^2 + 56^2 + 28^2 + 14^2 + 7^2 + 3^2)
//            = 16,200 x 66,894                 = 1,083,682,800
//   conv_out 2 x 10 x 1 x 30 x 9              =         5,400
//   forward F                                  = 1,164,973,320
//   per sample 3F - conv_in                    = 3,413,634,840
//   params   (810 + 30) + 7 x (8,100 + 30) + (2,700 + 10) = 60,460
//   N = 64:  64 x 3,413,634,840 + 4 x 60,460   = 218,472,871,600 FLOPs
TEST(CnnShapes, HandWorked224) {
  const CnnShapes s = cnn_shapes(3, 224, 224);
  EXPECT_EQ(s.blocks, 7);
  ASSERT_EQ(s.convs.size(), 9u);
  const int spatial[9] = {224, 224, 112, 56, 28, 14, 7, 3, 1};
  for (size_t i = 0; i < s.convs.size(); ++i) {
    const CnnConv& v = s.convs[i];
    EXPECT_EQ(v.h, spatial[i]) << i;
    EXPECT_EQ(v.w, spatial[i]) << i;
    EXPECT_EQ(v.k, 3) << i;
    EXPECT_EQ(v.cin, i == 0 ? 3 : 30) << i;
    EXPECT_EQ(v.cout, i == 8 ? 10 : 30) << i;
    EXPECT_EQ(v.relu, i != 8) << i;
    EXPECT_EQ(v.pool, i != 0 && i != 8) << i;
  }
  EXPECT_EQ(s.out_c, 10);
  EXPECT_EQ(s.out_h, 1);
  EXPECT_EQ(s.out_w, 1);
  EXPECT_EQ(s.logits(), 10);
  EXPECT_EQ(s.params, 60460);
  EXPECT_DOUBLE_EQ(s.convs[0].forward_flop(), 81285120.0);
  EXPECT_DOUBLE_EQ(s.forward_flop, 1164973320.0);
  EXPECT_DOUBLE_EQ(s.step_flop_per_sample, 3413634840.0);
  EXPECT_DOUBLE_EQ(s.step_gflop(64), 218.4728716);
}

// S = 256: 8 blocks at 256 .. 2, sum of squares 87,380; conv_in 2 x 30 x 256^2 x 27 =
// 106,168,320; F = 106,168,320 + 16,200 x 87,380 + 5,400 = 1,521,729,720; per sample
// 3F - conv_in = 4,459,020,840; params 840 + 8 x 8,130 + 2,710 = 68,590.
TEST(CnnShapes, HandWorked256) {
  const CnnShapes s = cnn_shapes(3, 256, 256);
  EXPECT_EQ(s.blocks, 8);
  ASSERT_EQ(s.convs.size(), 10u);
  EXPECT_EQ(s.convs[8].h, 2);
  EXPECT_EQ(s.convs[9].h, 1);
  EXPECT_EQ(s.logits(), 10);
  EXPECT_EQ(s.params, 68590);
  EXPECT_DOUBLE_EQ(s.forward_flop, 1521729720.0);
  EXPECT_DOUBLE_EQ(s.step_flop_per_sample, 4459020840.0);
  EXPECT_DOUBLE_EQ(s.step_gflop(64), 285.37760812);
}

// floor(log2(min(H, W))) blocks always leave the smaller side at 1 (S < 2^(B+1)).
TEST(CnnShapes, BlocksLeaveTheSmallerSideAtOne) {
  for (int s : {1, 2, 3, 63, 64, 65, 127, 160, 255, 257, 384, 511, 512}) {
    const CnnShapes shapes = cnn_shapes(3, s, s);
    EXPECT_EQ(shapes.blocks, static_cast<int>(std::floor(std::log2(s)))) << s;
    EXPECT_EQ(shapes.out_h, 1) << s;
    EXPECT_EQ(shapes.logits(), 10) << s;
    EXPECT_EQ(shapes.convs.size(), static_cast<size_t>(shapes.blocks) + 2) << s;
  }
  // Non-square: the blocks follow the smaller side, the logits are 10 x H' x W'.
  const CnnShapes wide = cnn_shapes(3, 224, 448);
  EXPECT_EQ(wide.blocks, 7);
  EXPECT_EQ(wide.out_h, 1);
  EXPECT_EQ(wide.out_w, 3);
  EXPECT_EQ(wide.logits(), 30);
  // One channel in: only conv_in's weights and FLOPs change.
  const CnnShapes gray = cnn_shapes(1, 224, 224), rgb = cnn_shapes(3, 224, 224);
  EXPECT_EQ(rgb.params - gray.params, 2 * 30 * 9);
  EXPECT_DOUBLE_EQ(rgb.forward_flop - gray.forward_flop, 2.0 * 30 * 224 * 224 * 2 * 9);
}

TEST(CnnShapes, RejectsEmptyShapes) {
  EXPECT_THROW(cnn_shapes(0, 224, 224), std::invalid_argument);
  EXPECT_THROW(cnn_shapes(3, 0, 224), std::invalid_argument);
  EXPECT_THROW(cnn_shapes(3, 224, -1), std::invalid_argument);
}

TEST(CnnStepFactory, NamesAndRefusals) {
  const auto& names = train_step_baselines();
  for (const char* name : {"emulated", "cuda", "cuda:mlp", "cuda:cnn"})
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  EXPECT_TRUE(is_cuda_baseline("cuda:cnn"));
  EXPECT_TRUE(is_cuda_baseline("cuda:mlp"));
  EXPECT_FALSE(is_cuda_baseline("emulated"));
  EXPECT_THROW(make_train_step("cuda:resnet", 1.0), std::invalid_argument);
  EXPECT_THROW(make_cnn_step(0.0f), std::invalid_argument);
  EXPECT_THROW(make_cnn_step(-1.0f), std::invalid_argument);
}

// --- cuDNN 9's run-time libraries (no device needed) -----------------------------------------

TEST(CudnnLibraries, SearchPathInCudnnsOrder) {
  const auto dirs = cudnn_search_dirs("/opt/cudnn/lib", "/a::/b:");
  ASSERT_GE(dirs.size(), 6u);
  EXPECT_EQ(dirs[0], "/a");  // LD_LIBRARY_PATH first, empty entries skipped
  EXPECT_EQ(dirs[1], "/b");
  EXPECT_EQ(dirs[2], "/opt/cudnn/lib");  // then cuDNN's RUNPATH: $ORIGIN, the wheel layout
  EXPECT_EQ(dirs[3], "/opt/cudnn/lib/../../cublas/lib");
  EXPECT_EQ(dirs[4], "/opt/cudnn/lib/../../cuda_nvrtc/lib");
  EXPECT_EQ(dirs.back(), "/usr/lib/x86_64-linux-gnu");  // the system's last
  EXPECT_EQ(cudnn_search_dirs("", "").front().rfind("/", 0), 0u);  // no LD_LIBRARY_PATH, no cuDNN
}

// A cuDNN directory with a broken libcudnn_ops.so.9 and nothing else: the broken one is
// named with dlopen's reason, the absent ones as not found, and the summary says what to set.
TEST(CudnnLibraries, MissingAndBrokenLibrariesAreNamed) {
  const auto dir = testing::scratch_dir("cudnn_libraries");
  std::ofstream(dir / "libcudnn_ops.so.9") << "not an ELF file\n";
  const CudnnLibraryCheck check = check_cudnn_libraries_in(dir.string(), {dir.string()}, false);
  ASSERT_EQ(check.libraries.size(), 9u);
  EXPECT_EQ(check.libraries.front().name, "libcudnn.so.9");
  EXPECT_FALSE(check.ok());
  const std::string summary = check.summary();
  for (const CudnnLibrary& lib : check.libraries) {
    if (lib.found_by == "already loaded") continue;  // linked, or loaded by an earlier test
    if (lib.name == "libcudnn_ops.so.9") {
      EXPECT_EQ(lib.path, (dir / "libcudnn_ops.so.9").string());
      EXPECT_FALSE(lib.error.empty());
      EXPECT_NE(summary.find("libcudnn_ops.so.9, for pooling, activation and tensor operations: found"),
                std::string::npos) << summary;
      EXPECT_NE(summary.find("but does not load"), std::string::npos) << summary;
    } else {
      EXPECT_TRUE(lib.path.empty()) << lib.name << " at " << lib.path;
      EXPECT_NE(summary.find(lib.name), std::string::npos) << summary;
    }
  }
  EXPECT_NE(summary.find("not found where cuDNN looks"), std::string::npos) << summary;
  EXPECT_NE(summary.find("set LD_LIBRARY_PATH="), std::string::npos) << summary;
}

// A library only the process's own dlopen finds (its RUNPATH, the loader's cache) is
// reported as such, with its directory to put on LD_LIBRARY_PATH.
TEST(CudnnLibraries, FoundOnlyByPipebenchSaysWhichDirectory) {
  const auto empty = testing::scratch_dir("cudnn_libraries_empty");
  const CudnnLibraryCheck check = check_cudnn_libraries_in(empty.string(), {empty.string()}, true);
  bool any = false;
  for (const CudnnLibrary& lib : check.libraries) {
    if (lib.found_by != "pipebench's search path only") continue;
    any = true;
    EXPECT_FALSE(lib.ok());
    EXPECT_TRUE(lib.loads() || !lib.error.empty());
    const std::string d = std::filesystem::path(lib.path).parent_path().string();
    EXPECT_NE(check.summary().find("set LD_LIBRARY_PATH=" + d + ":"), std::string::npos) << check.summary();
  }
  if (!any) GTEST_SKIP() << "no cuDNN library on this machine's own search path: " << check.summary();
}

// This process, as the bundle's test script runs it first on a GPU node: with cuDNN built,
// every required library must resolve where cuDNN looks; the summary says what to set.
TEST(CudnnLibraries, ResolveForThisProcess) {
  const CudnnLibraryCheck check = check_cudnn_libraries();
  std::printf("%s\n", check.summary().c_str());
  ASSERT_EQ(check.libraries.size(), 9u);
  if (!cnn_step_built()) GTEST_SKIP() << "built without cuDNN: " << check.summary();
  EXPECT_FALSE(check.cudnn_dir.empty());
  EXPECT_TRUE(check.usable()) << check.summary();
  EXPECT_TRUE(check.ok()) << check.summary();
}

TEST(CudaCnnStep, UnavailableWithoutDevice) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: " << cuda_info().device_name;
  try {
    make_cnn_step();
    FAIL() << "expected CudaUnavailable";
  } catch (const CudaUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find(cuda_info().reason), std::string::npos) << e.what();
  }
  EXPECT_THROW(make_train_step("cuda:cnn", 0.0), CudaUnavailable);
  EXPECT_THROW(make_train_step("cuda:mlp", 0.0), CudaUnavailable);
}

// The reason a device test cannot run here, or empty.
std::string no_cnn_device() {
  if (!cuda_available()) return "no CUDA device: " + cuda_info().reason;
  if (!cnn_step_built()) return "built without cuDNN";
  return "";
}

TEST(CudaCnnStep, LossDecreasesOnAFixedBatch) {
  if (const std::string why = no_cnn_device(); !why.empty()) GTEST_SKIP() << why;
  auto step = make_cnn_step();
  EXPECT_EQ(step->name(), "cuda:cnn");
  EXPECT_TRUE(std::isnan(step->last_loss()));
  const int n = 16, c = 3, h = 64, w = 64;
  std::vector<float> batch(static_cast<size_t>(n) * c * h * w);
  for (size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<float>((i * 2654435761u) % 1000) / 500.0f - 1.0f;
  std::vector<double> losses;
  for (int i = 0; i < 20; ++i) {
    step->step(batch.data(), n, c, h, w);
    losses.push_back(step->last_loss());
    ASSERT_TRUE(std::isfinite(losses.back())) << "step " << i;
  }
  EXPECT_LT(losses.back(), losses.front());
}

// --- the first loss of a fresh model ----------------------------------------------------------

// cuda_kernels::fill_uniform (train_step_cuda.cu) on the host, bit for bit (2u is exact).
std::vector<double> hash_uniform(size_t count, uint64_t seed, float scale) {
  const std::vector<float> f = host_fill_uniform(count, seed, scale);
  return std::vector<double>(f.begin(), f.end());
}

TEST(CnnStep, InitialWeightsAreTheDeviceHash) {
  // cnn_initial_weights (what cnn_dump writes for scripts/cnn_torch_check.py) against the
  // hash above, the float the device computes, for every layer of a 32 px model.
  const CnnShapes s = cnn_shapes(3, 32, 32);
  ASSERT_EQ(s.convs.size(), 7u);  // conv_in, 5 blocks, conv_out
  for (size_t l = 0; l < s.convs.size(); ++l) {
    const CnnConv& v = s.convs[l];
    const auto w = cnn_initial_weights(v, static_cast<int>(l));
    const auto ref = hash_uniform(static_cast<size_t>(v.cout) * v.cin * v.k * v.k, 101 + l,
                                  static_cast<float>(std::sqrt(6.0 / (double(v.cin) * v.k * v.k))));
    ASSERT_EQ(w.size(), ref.size());
    for (size_t i = 0; i < w.size(); ++i) ASSERT_EQ(w[i], static_cast<float>(ref[i])) << l << " " << i;
  }
  EXPECT_EQ(cnn_initial_weights(s.convs[0], 0).front(), cnn_initial_weights(s.convs[0], 0).front());
  EXPECT_NE(cnn_initial_weights(s.convs[1], 1), cnn_initial_weights(s.convs[2], 2));  // seeds per layer
}

// The model of train_step_cnn.h forward on the CPU in double, from the step's initial
// weights (layer l's filter, Cout x Cin x k x k, from fill_uniform with seed 101 + l and
// scale sqrt(6 / fan_in); biases 0), and the mean softmax cross-entropy on labels i % 10.
double cpu_first_loss(const std::vector<float>& batch, int n, int c, int h, int w) {
  const CnnShapes shapes = cnn_shapes(c, h, w);
  std::vector<double> x(batch.begin(), batch.end());
  int ch = c, sh = h, sw = w;
  uint64_t seed = 101;
  for (const CnnConv& v : shapes.convs) {
    const std::vector<double> wt = hash_uniform(static_cast<size_t>(v.cout) * v.cin * v.k * v.k, seed++,
                                                static_cast<float>(std::sqrt(6.0 / (double(v.cin) * v.k * v.k))));
    std::vector<double> y(static_cast<size_t>(n) * v.cout * sh * sw, 0.0);  // biases 0
    const int r = v.k / 2;
    for (int i = 0; i < n; ++i)
      for (int o = 0; o < v.cout; ++o)
        for (int yy = 0; yy < sh; ++yy)
          for (int xx = 0; xx < sw; ++xx) {
            double acc = 0;
            for (int ci = 0; ci < ch; ++ci)
              for (int dy = 0; dy < v.k; ++dy)
                for (int dx = 0; dx < v.k; ++dx) {
                  const int sy = yy + dy - r, sx = xx + dx - r;
                  if (sy < 0 || sy >= sh || sx < 0 || sx >= sw) continue;  // zero padding
                  acc += wt[((static_cast<size_t>(o) * ch + ci) * v.k + dy) * v.k + dx] *
                         x[((static_cast<size_t>(i) * ch + ci) * sh + sy) * sw + sx];
                }
            y[((static_cast<size_t>(i) * v.cout + o) * sh + yy) * sw + xx] = v.relu ? std::max(acc, 0.0) : acc;
          }
    ch = v.cout;
    if (v.pool) {  // 2x2 stride 2, floor
      const int ph = sh / 2, pw = sw / 2;
      std::vector<double> p(static_cast<size_t>(n) * ch * ph * pw);
      for (int i = 0; i < n; ++i)
        for (int o = 0; o < ch; ++o)
          for (int yy = 0; yy < ph; ++yy)
            for (int xx = 0; xx < pw; ++xx) {
              const auto at = [&](int a, int b) { return y[((static_cast<size_t>(i) * ch + o) * sh + a) * sw + b]; };
              p[((static_cast<size_t>(i) * ch + o) * ph + yy) * pw + xx] =
                  std::max({at(2 * yy, 2 * xx), at(2 * yy, 2 * xx + 1), at(2 * yy + 1, 2 * xx), at(2 * yy + 1, 2 * xx + 1)});
            }
      y = std::move(p);
      sh = ph, sw = pw;
    }
    x = std::move(y);
  }
  const size_t k = static_cast<size_t>(ch) * sh * sw;  // logits per sample
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double* z = x.data() + static_cast<size_t>(i) * k;
    const double top = *std::max_element(z, z + k);
    double e = 0;
    for (size_t j = 0; j < k; ++j) e += std::exp(z[j] - top);
    sum += std::log(e) + top - z[i % kCnnClasses];
  }
  return sum / n;
}

// A zero batch through a fresh model: every activation is 0 (zero input, zero biases), so
// the 10 logits are 0 and the loss is ln 10 exactly; float32's expf/logf leave it within a
// few ulps (2.3e-7 each at 2.3), well inside 1e-5. Checks the loss kernel, its labels and
// the batch mean, whatever the convolutions do.
TEST(CudaCnnStep, FirstLossOfAZeroBatchIsLn10) {
  if (const std::string why = no_cnn_device(); !why.empty()) GTEST_SKIP() << why;
  auto step = make_cnn_step();
  const int n = 8, c = 3, h = 32, w = 32;
  std::vector<float> zeros(static_cast<size_t>(n) * c * h * w, 0.0f);
  step->step(zeros.data(), n, c, h, w);
  EXPECT_NEAR(step->last_loss(), std::log(10.0), 1e-5);
}

// A random batch through a fresh model: its first loss is the CPU forward's (same weights),
// and about ln 10. Tolerances:
//   against the CPU: 0.02. cuDNN's default math may run float32 convolutions on TF32 tensor
//   cores (10-bit mantissa, ~5e-4 relative per product) through 7 convolutions: logits off
//   by about 1e-3 of their scale (~1), the loss by less; 0.02 is ten times that and far
//   below what a wrong layout, padding, pooling or label gives (the logits' scale, ~0.5).
//   about ln 10: within -0.3 .. +1.2. At He-uniform initialisation the logits of a
//   fresh model have a standard deviation s of about 0.5 to 1.2 (a numpy simulation of this
//   model, 3 weight draws at 32 and 64 px: first losses 2.43 to 2.99), and the expected
//   loss of 10 classes is about ln 10 + 0.45 s^2; a loss far above says the logits blew up
//   (a missing ReLU, a wrong initial scale), far below that the labels leak into the
//   logits. The CPU value must lie in the band too: the band is about the model, not cuDNN.
//   For this batch and these weights the CPU forward gives 3.0844 (ln 10 + 0.78; logits'
//   s = 0.97), and an independent numpy forward with the same hashed weights the same to
//   6 digits. (PyTorch's default initialisation, U(+-1/sqrt(fan_in)) with biases, gives
//   2.30 +- 0.01: its logits are ~0.03.)
TEST(CudaCnnStep, FirstLossMatchesTheCpuForwardAndIsAboutLn10) {
  if (const std::string why = no_cnn_device(); !why.empty()) GTEST_SKIP() << why;
  auto step = make_cnn_step();
  const int n = 8, c = 3, h = 32, w = 32;
  std::vector<float> batch(static_cast<size_t>(n) * c * h * w);
  uint32_t state = 777;
  for (float& v : batch) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / 8388608.0f - 1.0f;  // [-1, 1)
  }
  step->step(batch.data(), n, c, h, w);
  const double gpu = step->last_loss();
  const double cpu = cpu_first_loss(batch, n, c, h, w);
  EXPECT_NEAR(gpu, cpu, 0.02);
  EXPECT_GT(cpu, std::log(10.0) - 0.3);
  EXPECT_LT(cpu, std::log(10.0) + 1.2);
  EXPECT_GT(gpu, std::log(10.0) - 0.3);
  EXPECT_LT(gpu, std::log(10.0) + 1.2);
}

#ifdef PIPEBENCH_HAVE_CUDA
// A short batch (the last of an epoch, drop_last false) and the full batch after it keep
// the model's buffers: the device's free memory does not move (a rebuild would free the
// full batch's activations, ~80 MB here, and allocate the short batch's), and training goes
// on (the loss stays finite, the parameters are not re-initialised: the full batch's loss
// after the short one is not the fresh model's).
TEST(CudaCnnStep, TensorsAfterOneStepAreTheInitialWeightsLessTheUpdate) {
  // What cnn_dump reads for the PyTorch check: after one step the parameters are the
  // initial ones (cnn_initial_weights, biases 0) less lr x the gradient (the momentum
  // buffer starts at 0, so v = g), and the gradients are finite and not all zero.
  if (const std::string why = no_cnn_device(); !why.empty()) GTEST_SKIP() << why;
  auto step = make_cnn_step();
  EXPECT_TRUE(step->tensors().convs.empty());
  const int n = 4, c = 3, h = 16, w = 16;
  std::vector<float> batch(static_cast<size_t>(n) * c * h * w);
  Rng rng(9);
  for (float& x : batch) x = static_cast<float>(rng.uniform(-2, 2));
  step->step(batch.data(), n, c, h, w);
  const CnnTensors t = step->tensors();
  const CnnShapes s = cnn_shapes(c, h, w);
  ASSERT_EQ(t.convs.size(), s.convs.size());
  for (size_t l = 0; l < t.convs.size(); ++l) {
    const auto w0 = cnn_initial_weights(t.convs[l], static_cast<int>(l));
    ASSERT_EQ(t.weight[l].size(), w0.size());
    double grad_scale = 0;
    for (float g : t.weight_grad[l]) {
      ASSERT_TRUE(std::isfinite(g));
      grad_scale = std::max(grad_scale, std::fabs(double(g)));
    }
    EXPECT_GT(grad_scale, 0) << "layer " << l;
    for (size_t i = 0; i < w0.size(); ++i)
      ASSERT_NEAR(t.weight[l][i], w0[i] - kCnnLearningRate * t.weight_grad[l][i], 1e-6 * (1 + std::fabs(w0[i])))
          << "layer " << l << " weight " << i;
    for (size_t i = 0; i < t.bias[l].size(); ++i)
      ASSERT_NEAR(t.bias[l][i], -kCnnLearningRate * t.bias_grad[l][i], 1e-9) << "layer " << l << " bias " << i;
  }
}

TEST(CudaCnnStep, AShortBatchKeepsTheBuffers) {
  if (const std::string why = no_cnn_device(); !why.empty()) GTEST_SKIP() << why;
  auto step = make_cnn_step();
  const int full = 32, c = 3, h = 64, w = 64;
  std::vector<float> batch(static_cast<size_t>(full) * c * h * w);
  for (size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<float>((i * 2654435761u) % 1000) / 500.0f - 1.0f;
  const auto free_bytes = [] {
    size_t free = 0, total = 0;
    EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
    return static_cast<double>(free);
  };
  step->step(batch.data(), full, c, h, w);
  const double first = step->last_loss();
  for (int i = 0; i < 5; ++i) step->step(batch.data(), full, c, h, w);
  const double before = free_bytes();
  step->step(batch.data(), 5, c, h, w);  // the short batch
  EXPECT_TRUE(std::isfinite(step->last_loss()));
  EXPECT_NEAR(free_bytes(), before, 8.0 * (1 << 20));
  step->step(batch.data(), full, c, h, w);  // the next epoch's first batch
  EXPECT_NEAR(free_bytes(), before, 8.0 * (1 << 20));
  EXPECT_TRUE(std::isfinite(step->last_loss()));
  EXPECT_NE(step->last_loss(), first);  // trained, not re-initialised
}
#endif

TEST(CudaCnnStep, ReportsTheFormulaFlops) {
  if (const std::string why = no_cnn_device(); !why.empty()) GTEST_SKIP() << why;
  auto step = make_cnn_step();
  EXPECT_DOUBLE_EQ(step->compute_gflop(64, 3, 224, 224), 218.4728716);
  EXPECT_DOUBLE_EQ(step->compute_gflop(8, 3, 96, 96), cnn_shapes(3, 96, 96).step_gflop(8));
  EXPECT_THROW(step->compute_gflop(0, 3, 224, 224), std::invalid_argument);
}

TEST(CudaCnnStep, Uint8AndFloatBatchesRun) {
  if (const std::string why = no_cnn_device(); !why.empty()) GTEST_SKIP() << why;
  auto step = make_cnn_step();
  const int n = 4, c = 3, h = 40, w = 40;
  const size_t count = static_cast<size_t>(n) * c * h * w;
  std::vector<float> floats(count, 0.25f);
  std::vector<uint8_t> bytes(count);
  for (size_t i = 0; i < count; ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
  const DeferredNormalize norm{{0.485f, 0.456f, 0.406f}, {0.229f, 0.224f, 0.225f}};
  StepInput u8;
  u8.data = bytes.data();
  u8.n = n, u8.c = c, u8.h = h, u8.w = w;
  u8.dtype = SampleDtype::kUint8;
  u8.layout = BatchLayout::kNHWC;
  u8.normalize = &norm;
  for (int i = 0; i < 3; ++i) {
    step->step(floats.data(), n, c, h, w);
    step->step(u8);
  }
  EXPECT_TRUE(std::isfinite(step->last_loss()));
  u8.layout = BatchLayout::kNCHW;
  u8.normalize = nullptr;
  step->step(u8);
  EXPECT_TRUE(std::isfinite(step->last_loss()));
  EXPECT_GT(step->measure_compute_ms(n, c, h, w, 3), 0.0);
}

}  // namespace
}  // namespace pipebench
