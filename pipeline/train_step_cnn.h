// The `cuda:cnn` training-step baseline: the case study's toy CNN (the seed
// ../shared/seeds/002_f12b0381f9f0b900.txt, Chaim Rand's "PyTorch Model Performance
// Analysis and Optimization, Part 4": class Net), trained with cuDNN. NEVER RUN ON A
// DEVICE as of the commit that added it: it compiles and its host arithmetic is tested,
// but no GPU was available to run it.
//
// The model, for a batch N x C x H x W float32 NCHW (C = 3 from the recipe), as the seed:
//   conv_in   C -> 30, 3x3, stride 1, same padding (1), bias, then ReLU  (the seed's
//             forward() is F.relu(self.conv_in(x)))
//   blocks    B = floor(log2(min(H, W))) times (the seed's int(log2(img_size))):
//             conv 30 -> 30 3x3 same + bias, ReLU, MaxPool 2x2 stride 2 (floor: 224 ->
//             112 -> ... -> 7 -> 3 -> 1). With B chosen so, the smaller side ends at 1;
//             B = 8 for 256, 7 for 224.
//   conv_out  30 -> 10, 3x3 same + bias (the seed: nn.Conv2d(hidden, num_classes, 3,
//             padding='same')), no ReLU
//   flatten   10 x H' x W' logits per sample, no linear layer (the seed has none): for a
//             square input H' = W' = 1, so the 10 logits are the seed's num_classes = 10;
//             for a non-square one the softmax spans all 10 x H' x W'.
//   loss      softmax cross-entropy, mean over the batch (nn.CrossEntropyLoss). StepInput
//             carries no labels, so sample i's label is the fixed i % 10.
//   backward  through every layer (conv backward-data except for the input, backward-
//             filter and backward-bias; ReLU; max pool)
//   update    SGD with momentum 0.9 on every weight and bias (torch.optim.SGD: v = 0.9 v +
//             g; p -= lr v), lr 0.001 as the seed.
// Weights: He-uniform, U(+-sqrt(6 / fan_in)) (as the `cuda` MLP; PyTorch's default is
// U(+-1/sqrt(fan_in))); biases 0. Layer l (0 = conv_in) draws its Cout x Cin x k x k filter
// (cuDNN's NCHW filter order) from cuda_kernels::fill_uniform with seed 101 + l (the hash
// of train_step.h's MLP weights), so a reference can rebuild them on the host
// (tests/train_step_cnn_test.cpp). A fresh model's first loss is therefore not ln 10 but
// somewhat above: its logits have a standard deviation near 1 (about ln 10 + 0.8 on the
// test's batch); PyTorch's default initialisation would give ln 10 +- 0.01.
// Algorithms by cuDNN's heuristics (cudnnGet*Algorithm_v7, the first usable), no
// benchmarking; each direction (forward, backward-data, backward-filter) has its own
// convolution descriptor set to its algorithm's math type (TF32 tensor cores where the
// heuristics rank such an algorithm first, on Ampere and newer, as PyTorch's default for
// convolutions).
//
// FLOPs per step (compute_gflop): convolutions only, each 2 x MACs over every kernel tap
// (padding included), plus the update:
//   F(conv) = 2 x Cout x H x W x Cin x k x k per sample (H x W its output = input size)
//   forward F = sum of F(conv) over the B + 2 convolutions
//   step    = N x (3 F - F(conv_in)) + 4 x P
// backward = backward-filter (F) + backward-data (F less conv_in's: the input needs no
// gradient); P the weights and biases, 4 FLOPs each (two multiplies, two adds) for the
// momentum update. ReLU, pooling, bias adds and the loss are not counted (< 1 %).
// S = 224 (B = 7): F = 1,164,973,320 per sample, step per sample 3,413,634,840, P = 60,460;
// N = 64: 218.47 GFLOP per step. S = 256 (B = 8): F = 1,521,729,720, P = 68,590.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "pipeline/train_step.h"

namespace pipebench {

constexpr int kCnnHidden = 30;       ///< the seed's hidden_size
constexpr int kCnnClasses = 10;      ///< the seed's num_classes (conv_out's channels)
constexpr int kCnnKernel = 3;        ///< every convolution's k (conv_out's too, as the seed)
constexpr float kCnnLearningRate = 0.001f;
constexpr float kCnnMomentum = 0.9f;

/// One convolution: k x k, stride 1, same padding, its output H x W = its input's.
struct CnnConv {
  int cin = 0, cout = 0, k = 0;
  int h = 0, w = 0;   ///< spatial size in and out
  bool relu = false;  ///< ReLU after it
  bool pool = false;  ///< then MaxPool 2x2 stride 2 (output floor(h/2) x floor(w/2))
  int64_t params() const { return static_cast<int64_t>(cout) * cin * k * k + cout; }
  /// Forward FLOPs per sample: 2 x Cout x H x W x Cin x k x k.
  double forward_flop() const { return 2.0 * cout * h * w * cin * k * k; }
};

/// The CNN's layers for one sample of C x H x W (see the top of this file).
struct CnnShapes {
  int blocks = 0;               ///< floor(log2(min(H, W)))
  std::vector<CnnConv> convs;   ///< conv_in, the blocks' convolutions, conv_out
  int out_c = 0, out_h = 0, out_w = 0;  ///< logits per sample: out_c x out_h x out_w
  int64_t params = 0;           ///< weights and biases, all layers
  double forward_flop = 0;      ///< per sample
  double step_flop_per_sample = 0;  ///< 3 x forward_flop - conv_in's forward
  int64_t logits() const { return static_cast<int64_t>(out_c) * out_h * out_w; }
  /// (N x step_flop_per_sample + 4 x params) / 1e9.
  double step_gflop(int n) const { return (n * step_flop_per_sample + 4.0 * params) / 1e9; }
};

/// Pure arithmetic, no device: std::invalid_argument for c, h or w <= 0.
CnnShapes cnn_shapes(int c, int h, int w);

/// The model's parameters and the last step's gradients read back from the device, per
/// convolution in layer order (conv_in, the blocks', conv_out), for checks against another
/// framework (tests/cnn_dump.cpp writes them, scripts/cnn_torch_check.py compares them with
/// PyTorch): weights Cout x Cin x k x k float32 (cuDNN's NCHW filter order, which is
/// PyTorch's Conv2d.weight layout), biases Cout. weight/bias are the parameters as they are
/// now (after the last step's update), weight_grad/bias_grad the gradients that step
/// computed (of the batch-mean loss, before the update). All empty before the first step.
struct CnnTensors {
  std::vector<CnnConv> convs;
  std::vector<std::vector<float>> weight, bias, weight_grad, bias_grad;
};

/// A `cuda:cnn` step, with the loss the tests watch.
class CnnTrainStep : public TrainStep {
 public:
  /// Waits for the submitted steps and returns the last step's mean loss (NaN before any).
  virtual double last_loss() = 0;
  /// Waits for the submitted steps and copies the tensors back (see CnnTensors).
  virtual CnnTensors tensors() = 0;
};

/// Layer `layer`'s initial weights (0 = conv_in), computed on the host bit for bit as the
/// step fills them on the device: Cout x Cin x k x k values (2u - 1) sqrt(6 / fan_in), u the
/// top 24 bits of SplitMix64(101 + layer + (i + 1) x 0x9E3779B97F4A7C15) / 2^24
/// (cuda_kernels::fill_uniform); the biases start at 0. No device needed; never throws
/// beyond std::bad_alloc.
std::vector<float> cnn_initial_weights(const CnnConv& conv, int layer);

/// True when built with CUDA and cuDNN (the `cuda:cnn` step exists).
bool cnn_step_built();

/// The cuDNN this process was built with and the one it loaded, as cuDNN 9 numbers them
/// (major x 10000 + minor x 100 + patch: 91900 is 9.19.0). built: CUDNN_VERSION of the
/// headers; loaded: cudnnGetVersion() of the libcudnn.so.9 the loader found, with its path
/// (dladdr). Both 0 in a build without cuDNN. No device needed; never throws.
struct CudnnVersions {
  long built = 0;
  long loaded = 0;
  std::string loaded_path;
  /// "9.19.0" for 91900; "none" for 0.
  static std::string text(long version);
};
CudnnVersions cudnn_versions();

// --- cuDNN 9's run-time libraries ---------------------------------------------------------
// libcudnn.so.9 is a small shim that dlopens its sub-libraries (libcudnn_graph, _ops, _cnn,
// _engines_precompiled, _heuristic, _engines_runtime_compiled) by soname when first used,
// and they dlopen cuBLASLt (the legacy convolution API) and NVRTC (runtime-compiled
// engines) the same way (NVIDIA, "Building and Running a cuDNN Dependent Program", cuDNN 9
// installation guide). A dlopen made inside cuDNN searches LD_LIBRARY_PATH, then that
// library's own RUNPATH (cuDNN 9's: $ORIGIN, its own directory, and in NVIDIA's wheel
// layout $ORIGIN/../../cuda_nvrtc/lib, ../../cublas/lib, ../../cu13/lib), then the
// system's (/etc/ld.so.conf's directories, /lib, /usr/lib), never pipebench's RUNPATH
// (the bundle's $ORIGIN/../lib:/usr/local/cuda/lib64). A library that pipebench itself
// finds may thus be missing for cuDNN, which then fails at its first call
// (CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED or NOT_INITIALIZED) without naming it.
// check_cudnn_libraries() looks for each where cuDNN will, loads it to check its own
// dependencies (libz.so.1, libcudnn_graph), and says what is missing and which
// LD_LIBRARY_PATH to set. No device needed; never throws.

/// One library cuDNN loads at run time.
struct CudnnLibrary {
  std::string name;       ///< the soname, e.g. "libcudnn_graph.so.9", "libnvrtc.so.13"
  std::string needed_for;  ///< e.g. "convolutions"
  bool required = true;   ///< the cuda:cnn step cannot run without it
  std::string path;       ///< where it was found ("" when nowhere)
  /// "already loaded", "LD_LIBRARY_PATH", "beside libcudnn.so.9", "cuDNN's RUNPATH",
  /// "the system's library path", "pipebench's search path only" (cuDNN will not find it
  /// there), or "" (nowhere)
  std::string found_by;
  std::string error;      ///< dlopen's message when it was found but did not load
  /// Found where cuDNN looks, and it loads.
  bool ok() const { return !path.empty() && error.empty() && found_by != "pipebench's search path only"; }
  /// It loads at all (possibly only through pipebench's own search path).
  bool loads() const { return !path.empty() && error.empty(); }
};

struct CudnnLibraryCheck {
  std::string cudnn_dir;  ///< the directory of libcudnn.so.9 ("" when not found)
  std::vector<std::string> search_dirs;  ///< cuDNN's search path, in order (see above)
  std::vector<CudnnLibrary> libraries;   ///< libcudnn.so.9 first
  /// Every required library is found where cuDNN looks, and loads.
  bool ok() const;
  /// Every required library loads at all: false means cuda:cnn cannot run.
  bool usable() const;
  /// One line when every library is ok ("cuDNN 9 libraries: all 9 resolve as cuDNN looks
  /// for them (libcudnn.so.9 in DIR)"); else a line per problem (what is missing or does
  /// not load, what needs it) and the LD_LIBRARY_PATH to set.
  std::string summary() const;
};

/// The check for this process: libcudnn.so.9 where the process loaded it (or would), and
/// cuDNN's search path from the environment. Loads and unloads each library it finds
/// (some hundred ms in all, once). Callable without a GPU and in a build without cuDNN.
CudnnLibraryCheck check_cudnn_libraries();
/// The same with the directories given (in order) instead of cuDNN's search path, for the
/// tests; with `own_search_fallback`, a library not in them is also looked up by the
/// process's own dlopen ("pipebench's search path only").
CudnnLibraryCheck check_cudnn_libraries_in(const std::string& cudnn_dir, const std::vector<std::string>& dirs,
                                           bool own_search_fallback);
/// cuDNN's search path for a cuDNN in `cudnn_dir`: the entries of `ld_library_path` (a
/// colon-separated list; empty entries skipped), cudnn_dir and the wheel layout's
/// siblings, /etc/ld.so.conf's directories (its includes followed), the default ones.
std::vector<std::string> cudnn_search_dirs(const std::string& cudnn_dir, const std::string& ld_library_path);
/// Needs a CUDA device (CudaUnavailable otherwise) and a build with cuDNN (CudaUnavailable
/// "built without cuDNN" otherwise). learning_rate > 0 (std::invalid_argument). The first
/// call in the process runs check_cudnn_libraries(): CudaUnavailable with its summary when
/// a required library does not load at all; its summary on stderr (once) when a library
/// loads only through pipebench's own search path or an optional one is missing.
std::unique_ptr<CnnTrainStep> make_cnn_step(float learning_rate = kCnnLearningRate);

}  // namespace pipebench
