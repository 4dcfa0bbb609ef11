// The `cuda:cnn` step (train_step_cnn.h): the layer arithmetic (always built) and, with
// CUDA and cuDNN, the step itself: cuDNN's legacy convolution, pooling and activation API
// on the compute stream of detail::CudaStepBase, the loss and the momentum update as the
// small kernels of train_step_cnn.cu. NEVER RUN ON A DEVICE as of the commit that added
// it (no GPU was available): it compiles, its arithmetic is tested on the host, and its
// device tests skip.
#include "pipeline/train_step_cnn.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "device/cuda.h"
#include "pipeline/cuda_step_base.h"

#ifdef PIPEBENCH_HAVE_CUDA
#include <cuda_runtime_api.h>  // CUDART_VERSION
#endif
#ifdef PIPEBENCH_HAVE_CUDNN
#include <cuda_runtime.h>
#include <cudnn.h>
#endif

namespace pipebench {

CnnShapes cnn_shapes(int c, int h, int w) {
  if (c <= 0 || h <= 0 || w <= 0) {
    throw std::invalid_argument("cnn_shapes: C x H x W must be > 0, got " + std::to_string(c) +
                                " x " + std::to_string(h) + " x " + std::to_string(w));
  }
  CnnShapes s;
  const int smaller = std::min(h, w);
  while ((int64_t{2} << s.blocks) <= smaller) ++s.blocks;  // floor(log2(smaller))
  CnnConv conv_in{c, kCnnHidden, kCnnKernel, h, w, true, false};
  s.convs.push_back(conv_in);
  int sh = h, sw = w;
  for (int b = 0; b < s.blocks; ++b) {
    s.convs.push_back(CnnConv{kCnnHidden, kCnnHidden, kCnnKernel, sh, sw, true, true});
    sh /= 2, sw /= 2;  // MaxPool 2x2 stride 2, floor
  }
  s.convs.push_back(CnnConv{kCnnHidden, kCnnClasses, kCnnKernel, sh, sw, false, false});
  s.out_c = kCnnClasses, s.out_h = sh, s.out_w = sw;
  for (const CnnConv& v : s.convs) {
    s.params += v.params();
    s.forward_flop += v.forward_flop();
  }
  s.step_flop_per_sample = 3.0 * s.forward_flop - s.convs.front().forward_flop();
  return s;
}

std::vector<float> cnn_initial_weights(const CnnConv& conv, int layer) {
  // cuda_kernels::fill_uniform (train_step_cuda.cu) with the step's seed and scale; 2u is
  // exact, so the host's float arithmetic gives the device's bits.
  const size_t count = static_cast<size_t>(conv.cout) * conv.cin * conv.k * conv.k;
  const uint64_t seed = 101 + static_cast<uint64_t>(layer);
  const auto scale = static_cast<float>(std::sqrt(6.0 / (static_cast<double>(conv.cin) * conv.k * conv.k)));
  return host_fill_uniform(count, seed, scale);
}

// --- cuDNN 9's run-time libraries (train_step_cnn.h) ---------------------------------------

namespace {

#ifdef PIPEBENCH_HAVE_CUDA
constexpr int kCudaMajor = CUDART_VERSION / 1000;  // the toolkit built against: 13
#else
constexpr int kCudaMajor = 13;  // the toolkit pipebench targets
#endif

// What cuDNN 9 dlopens for the legacy convolution, pooling and activation API this step
// uses (libcudnn_adv, RNNs and attention, is not loaded for it), and why.
std::vector<CudnnLibrary> cudnn_libraries() {
  const std::string cuda = std::to_string(kCudaMajor);
  return {
      {"libcudnn.so.9", "the cuDNN API (the shim pipebench links)", true, "", "", ""},
      {"libcudnn_graph.so.9", "every cuDNN call (the graph library the others build on)", true, "", "", ""},
      {"libcudnn_ops.so.9", "pooling, activation and tensor operations", true, "", "", ""},
      {"libcudnn_cnn.so.9", "convolutions", true, "", "", ""},
      {"libcudnn_engines_precompiled.so.9", "the precompiled convolution kernels", true, "", "", ""},
      {"libcublasLt.so." + cuda, "the legacy convolution API's GEMM engines", true, "", "", ""},
      {"libcudnn_heuristic.so.9", "cuDNN's heuristic algorithm ranking", false, "", "", ""},
      {"libcudnn_engines_runtime_compiled.so.9", "runtime-compiled engines", false, "", "", ""},
      {"libnvrtc.so." + cuda, "runtime-compiled engines (NVRTC)", false, "", "", ""},
  };
}

std::string loaded_path(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) return "";
  return map->l_name;
}

// Already in the process (a library the process links, or one cuDNN loaded): its path.
std::string already_loaded(const std::string& name) {
  void* h = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) return "";
  std::string path = loaded_path(h);
  dlclose(h);  // RTLD_NOLOAD took a reference too
  return path.empty() ? name : path;
}

// Loads the file to check its own dependencies; "" when it loads, else dlopen's message.
// RTLD_NODELETE keeps a loaded library mapped after dlclose: cuDNN's libraries allocate at
// load (their own libstdc++'s 71 KiB exception pool, among others), and unmapping them would
// leave that memory unreachable (LeakSanitizer reports it). cuDNN loads them anyway when the
// step runs, so keeping them costs nothing that the step would not.
constexpr int kCheckLoadFlags = RTLD_LAZY | RTLD_LOCAL | RTLD_NODELETE;

std::string load_error(const std::string& path) {
  void* h = dlopen(path.c_str(), kCheckLoadFlags);
  if (h == nullptr) {
    const char* why = dlerror();
    return why ? why : "dlopen failed";
  }
  dlclose(h);
  return "";
}

void ld_so_conf(const std::string& file, std::vector<std::string>& dirs, int depth) {
  if (depth > 4) return;
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    const size_t a = line.find_first_not_of(" \t"), b = line.find_last_not_of(" \t");
    if (a == std::string::npos) continue;
    line = line.substr(a, b - a + 1);
    if (line.rfind("include", 0) == 0 && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
      std::string pattern = line.substr(line.find_first_not_of(" \t", 7));
      if (!pattern.empty() && pattern[0] != '/')
        pattern = std::filesystem::path(file).parent_path().string() + "/" + pattern;
      glob_t g{};
      if (glob(pattern.c_str(), 0, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) ld_so_conf(g.gl_pathv[i], dirs, depth + 1);
      globfree(&g);
    } else if (line[0] == '/') {
      dirs.push_back(line);
    }
  }
}

const char* found_by_dir(const std::string& dir, const std::string& cudnn_dir, size_t ld_entries, size_t index) {
  if (index < ld_entries) return "LD_LIBRARY_PATH";
  if (dir == cudnn_dir) return "beside libcudnn.so.9";
  if (!cudnn_dir.empty() && dir.rfind(cudnn_dir + "/", 0) == 0) return "cuDNN's RUNPATH";
  return "the system's library path";
}

}  // namespace

std::vector<std::string> cudnn_search_dirs(const std::string& cudnn_dir, const std::string& ld_library_path) {
  std::vector<std::string> dirs;
  size_t start = 0;
  while (start <= ld_library_path.size()) {
    const size_t end = std::min(ld_library_path.find(':', start), ld_library_path.size());
    if (end > start) dirs.push_back(ld_library_path.substr(start, end - start));
    start = end + 1;
  }
  if (!cudnn_dir.empty()) {  // cuDNN 9's RUNPATH: $ORIGIN and NVIDIA's wheel layout
    dirs.push_back(cudnn_dir);
    for (const char* sibling : {"/../../cublas/lib", "/../../cuda_nvrtc/lib", "/../../cu13/lib"})
      dirs.push_back(cudnn_dir + sibling);
  }
  ld_so_conf("/etc/ld.so.conf", dirs, 0);
  for (const char* d : {"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"})
    dirs.emplace_back(d);
  return dirs;
}

namespace {

// dirs[0 .. ld_entries) came from LD_LIBRARY_PATH (for found_by).
CudnnLibraryCheck check_in(const std::string& cudnn_dir, const std::vector<std::string>& dirs, size_t ld_entries,
                           bool own_search_fallback) {
  CudnnLibraryCheck check;
  check.cudnn_dir = cudnn_dir;
  check.search_dirs = dirs;
  check.libraries = cudnn_libraries();
  for (CudnnLibrary& lib : check.libraries) {
    if (std::string p = already_loaded(lib.name); !p.empty()) {
      lib.path = p;
      lib.found_by = "already loaded";
      continue;
    }
    for (size_t i = 0; i < dirs.size(); ++i) {
      const std::string candidate = dirs[i] + "/" + lib.name;
      if (::access(candidate.c_str(), F_OK) != 0) continue;
      lib.path = candidate;
      lib.found_by = found_by_dir(dirs[i], cudnn_dir, ld_entries, i);
      lib.error = load_error(candidate);
      break;
    }
    if (lib.path.empty() && own_search_fallback) {
      if (void* h = dlopen(lib.name.c_str(), kCheckLoadFlags)) {
        lib.path = loaded_path(h);
        if (lib.path.empty()) lib.path = lib.name;
        lib.found_by = "pipebench's search path only";
        dlclose(h);
      }
    }
  }
  return check;
}

}  // namespace

CudnnLibraryCheck check_cudnn_libraries_in(const std::string& cudnn_dir, const std::vector<std::string>& dirs,
                                           bool own_search_fallback) {
  return check_in(cudnn_dir, dirs, 0, own_search_fallback);
}

CudnnLibraryCheck check_cudnn_libraries() {
  // libcudnn.so.9 where the process has it: loaded (a cuDNN build links it), else where
  // the process's own dlopen finds it (as the loader would for a program linking it).
  std::string shim = already_loaded("libcudnn.so.9");
  if (shim.empty()) {
    if (void* h = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_LOCAL)) {
      shim = loaded_path(h);
      dlclose(h);
    }
  }
  const std::string dir = shim.empty() ? "" : std::filesystem::path(shim).parent_path().string();
  const std::string ld = std::getenv("LD_LIBRARY_PATH") ? std::getenv("LD_LIBRARY_PATH") : "";
  const size_t ld_entries = cudnn_search_dirs("", ld).size() - cudnn_search_dirs("", "").size();
  return check_in(dir, cudnn_search_dirs(dir, ld), ld_entries, true);
}

std::string CudnnVersions::text(long version) {
  if (version <= 0) return "none";
  return std::to_string(version / 10000) + "." + std::to_string(version / 100 % 100) + "." +
         std::to_string(version % 100);
}

bool CudnnLibraryCheck::ok() const {
  for (const CudnnLibrary& lib : libraries)
    if (lib.required && !lib.ok()) return false;
  return true;
}

bool CudnnLibraryCheck::usable() const {
  for (const CudnnLibrary& lib : libraries)
    if (lib.required && !lib.loads()) return false;
  return true;
}

std::string CudnnLibraryCheck::summary() const {
  std::vector<std::string> problems, dirs_to_add;
  for (const CudnnLibrary& lib : libraries) {
    if (lib.ok()) continue;
    const char* kind = lib.required ? "" : " (optional)";
    if (lib.path.empty()) {
      problems.push_back(lib.name + kind + ", for " + lib.needed_for + ": not found where cuDNN looks");
    } else if (!lib.error.empty()) {
      problems.push_back(lib.name + kind + ", for " + lib.needed_for + ": found (" + lib.found_by + ", " +
                         lib.path + ") but does not load: " + lib.error);
    } else {  // pipebench's search path only
      problems.push_back(lib.name + kind + ", for " + lib.needed_for + ": only pipebench's own search path finds it (" +
                         lib.path + "); cuDNN's dlopen will not");
      const std::string d = std::filesystem::path(lib.path).parent_path().string();
      if (std::find(dirs_to_add.begin(), dirs_to_add.end(), d) == dirs_to_add.end()) dirs_to_add.push_back(d);
    }
  }
  if (problems.empty()) {
    return "cuDNN 9 libraries: all " + std::to_string(libraries.size()) +
           " resolve as cuDNN looks for them (libcudnn.so.9 in " + (cudnn_dir.empty() ? "?" : cudnn_dir) + ")";
  }
  std::string out = "cuDNN 9 libraries (libcudnn.so.9 in " + (cudnn_dir.empty() ? "no directory: not found" : cudnn_dir) +
                    "):";
  for (const std::string& p : problems) out += "\n  " + p;
  std::string path;
  for (const std::string& d : dirs_to_add) path += d + ":";
  out += "\n  set LD_LIBRARY_PATH=" + (path.empty() ? std::string("<the directory holding the missing library>:") : path) +
         "$LD_LIBRARY_PATH (cuDNN's dlopen searches it first; pipebench's RUNPATH does not apply to it)";
  return out;
}

#ifdef PIPEBENCH_HAVE_CUDNN
namespace cuda_kernels {  // train_step_cnn.cu
void softmax_xent(const float* logits, int n, int k, int classes, float* dlogits, float* loss,
                  void* stream);
void sgd_momentum(float* w, float* v, const float* g, size_t count, float lr, float momentum,
                  void* stream);
}  // namespace cuda_kernels

namespace {

#define PIPEBENCH_CUDNN_CHECK(call)                                                      \
  do {                                                                                   \
    const cudnnStatus_t pipebench_cudnn_status_ = (call);                                \
    if (pipebench_cudnn_status_ != CUDNN_STATUS_SUCCESS) {                               \
      throw CudaError(std::string(#call) + " failed at " + __FILE__ + ":" +              \
                      std::to_string(__LINE__) + ": " +                                  \
                      cudnnGetErrorString(pipebench_cudnn_status_));                     \
    }                                                                                    \
  } while (0)

// An owned cuDNN descriptor: Create on construction, Destroy on destruction.
template <typename T, cudnnStatus_t (*Create)(T*), cudnnStatus_t (*Destroy)(T)>
class Desc {
 public:
  Desc() { PIPEBENCH_CUDNN_CHECK(Create(&d_)); }
  ~Desc() {
    if (d_ != nullptr) Destroy(d_);
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
  T get() const { return d_; }

 private:
  T d_ = nullptr;
};
using TensorDesc = Desc<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDesc = Desc<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvDesc =
    Desc<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor, cudnnDestroyConvolutionDescriptor>;
using PoolDesc = Desc<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;
using ActDesc =
    Desc<cudnnActivationDescriptor_t, cudnnCreateActivationDescriptor, cudnnDestroyActivationDescriptor>;

void set_nchw(const TensorDesc& d, int n, int c, int h, int w) {
  PIPEBENCH_CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.get(), CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, n, c, h, w));
}

// cuDNN's heuristic choice for one direction of a convolution (forward, backward data or
// backward filter; Perf the direction's perf type, kCount its number of algorithms), the
// same for the three: rank(kCount, &returned, perf) ranks the algorithms on the direction's
// own descriptor `conv` (at the default math); the first ranked usable (status success) is
// taken into `algo` and `conv` set to the math type it was ranked for (its perf entry's
// mathType, as the cuDNN documentation of cudnnGetConvolution*Algorithm_v7 and PyTorch's
// cuDNN convolutions do); workspace(algo, &bytes) sizes its workspace at that math.
// Returns that workspace in bytes. CudaError when no algorithm is usable or a call fails.
template <typename Perf, int kCount, typename Algo, typename Rank, typename Workspace>
size_t choose_algorithm(const ConvDesc& conv, const char* what, Algo& algo, Rank rank, Workspace workspace) {
  Perf perf[kCount];
  int returned = 0;
  rank(kCount, &returned, perf);
  const Perf* usable = nullptr;
  for (int i = 0; i < returned && usable == nullptr; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS) usable = &perf[i];
  if (usable == nullptr)
    throw CudaError(std::string("cuda:cnn: cuDNN offers no ") + what + " algorithm for this shape");
  algo = usable->algo;
  PIPEBENCH_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.get(), usable->mathType));
  size_t bytes = 0;
  workspace(algo, &bytes);
  return bytes;
}

constexpr size_t kParamAlign = 64;  // floats (256 bytes) between layers' weights and biases
size_t aligned(size_t floats) { return (floats + kParamAlign - 1) / kParamAlign * kParamAlign; }

// One convolution with what follows it (ReLU, max pool), its descriptors, algorithms and
// buffers. y: the convolution's output (ReLU in place); pooled: the pool's output.
struct Layer {
  CnnConv shape;
  TensorDesc x_desc, y_desc, bias_desc, pooled_desc;
  FilterDesc w_desc;
  // One convolution descriptor per direction: each carries the math type (tensor ops or
  // not) of the algorithm chosen for it (cudnnSetConvolutionMathType), which one
  // descriptor at the default math could not do for all three.
  ConvDesc conv_fwd, conv_bwd_data, conv_bwd_filter;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd_data{};
  cudnnConvolutionBwdFilterAlgo_t bwd_filter{};
  size_t w_off = 0, b_off = 0;  // into the parameter, gradient and velocity buffers (floats)
  DeviceBuffer y, dy, pooled, dpooled;  // may be larger than the batch needs (a short batch)
  // The four buffers by number (reshape keeps or grows each): y, dy, pooled, dpooled.
  static constexpr int kBuffers = 4;
  DeviceBuffer& buffer(int k) { return k == 0 ? y : k == 1 ? dy : k == 2 ? pooled : dpooled; }
  const DeviceBuffer& buffer(int k) const { return const_cast<Layer*>(this)->buffer(k); }
  /// The bytes buffer k needs for a batch of n (0: not used, no pool).
  size_t bytes(int k, size_t n) const {
    if (k >= 2 && !shape.pool) return 0;
    const size_t hw = k < 2 ? static_cast<size_t>(shape.h) * shape.w : static_cast<size_t>(shape.h / 2) * (shape.w / 2);
    return n * shape.cout * hw * sizeof(float);
  }
  // The tensor the next layer reads, and where its input gradient goes.
  float* out() const { return static_cast<float*>(shape.pool ? pooled.data() : y.data()); }
  float* dout() const { return static_cast<float*>(shape.pool ? dpooled.data() : dy.data()); }
};

// The forward, backward and update of the model of train_step_cnn.h on the compute stream,
// a detail::CudaStepBase. Parameters, gradients and momentum each live in one buffer (layer
// by layer, aligned), so the update is one kernel. Every gradient is overwritten each step
// (beta = 0).
class CnnImpl final : public detail::CudaStepBase {
 public:
  explicit CnnImpl(float lr) : CudaStepBase("cuda:cnn"), lr_(lr) {
    PIPEBENCH_CUDNN_CHECK(cudnnCreate(&handle_));
    const cudnnStatus_t s = cudnnSetStream(handle_, static_cast<cudaStream_t>(compute_handle()));
    if (s != CUDNN_STATUS_SUCCESS) {
      cudnnDestroy(handle_);
      PIPEBENCH_CUDNN_CHECK(s);
    }
    PIPEBENCH_CUDNN_CHECK(cudnnSetActivationDescriptor(relu_.get(), CUDNN_ACTIVATION_RELU,
                                                       CUDNN_PROPAGATE_NAN, 0.0));
    PIPEBENCH_CUDNN_CHECK(cudnnSetPooling2dDescriptor(pool_.get(), CUDNN_POOLING_MAX, CUDNN_PROPAGATE_NAN,
                                                      2, 2, 0, 0, 2, 2));
  }
  ~CnnImpl() override {
    synchronize_quietly();
    if (handle_ != nullptr) cudnnDestroy(handle_);
  }

  double compute_gflop(int n, int c, int h, int w) const override {
    detail::check_shape("cuda:cnn compute_gflop", n, c, h, w);
    return cnn_shapes(c, h, w).step_gflop(n);
  }

  double last_loss() {
    synchronize();
    if (steps_run_ == 0) return std::numeric_limits<double>::quiet_NaN();
    std::vector<float> host(static_cast<size_t>(n_));
    PIPEBENCH_CUDA_CHECK(cudaMemcpy(host.data(), loss_.data(), host.size() * sizeof(float),
                                    cudaMemcpyDeviceToHost));
    double sum = 0;
    for (float v : host) sum += v;
    return sum / n_;
  }

  CnnTensors tensors() {
    synchronize();
    CnnTensors t;
    if (steps_run_ == 0) return t;
    std::vector<float> params(param_floats_), grads(param_floats_);
    PIPEBENCH_CUDA_CHECK(cudaMemcpy(params.data(), params_.data(), param_floats_ * sizeof(float),
                                    cudaMemcpyDeviceToHost));
    PIPEBENCH_CUDA_CHECK(cudaMemcpy(grads.data(), grads_.data(), param_floats_ * sizeof(float),
                                    cudaMemcpyDeviceToHost));
    for (const auto& l : layers_) {
      const CnnConv& v = l->shape;
      const size_t nw = static_cast<size_t>(v.cout) * v.cin * v.k * v.k, nb = static_cast<size_t>(v.cout);
      const auto slice = [](const std::vector<float>& all, size_t off, size_t n) {
        return std::vector<float>(all.begin() + static_cast<std::ptrdiff_t>(off),
                                  all.begin() + static_cast<std::ptrdiff_t>(off + n));
      };
      t.convs.push_back(v);
      t.weight.push_back(slice(params, l->w_off, nw));
      t.bias.push_back(slice(params, l->b_off, nb));
      t.weight_grad.push_back(slice(grads, l->w_off, nw));
      t.bias_grad.push_back(slice(grads, l->b_off, nb));
    }
    return t;
  }

 private:
  // The layers for a batch shape, in three phases so that a throw leaves the model as it
  // was: (1) new descriptors and algorithms, (2) every buffer that must grow, allocated
  // aside, (3) the commit, moving the old buffers that are large enough into the new
  // layers. So a short last batch, and the full batch after it, re-describe the model
  // and keep its activations (about 2.5 GB at batch 64 and 224 px), where they were
  // freed and allocated twice per epoch before.
  void reshape(int n, int c, int h, int w) override {
    CnnShapes shapes = cnn_shapes(c, h, w);
    const bool same_params = c == c_ && shapes.blocks == shapes_.blocks && !layers_.empty();
    // (1) Descriptors and algorithms.
    std::vector<std::unique_ptr<Layer>> layers;
    size_t param_floats = 0, workspace = 0;
    for (const CnnConv& v : shapes.convs) {
      auto l = std::make_unique<Layer>();
      l->shape = v;
      set_nchw(l->x_desc, n, v.cin, v.h, v.w);
      set_nchw(l->y_desc, n, v.cout, v.h, v.w);
      set_nchw(l->bias_desc, 1, v.cout, 1, 1);
      PIPEBENCH_CUDNN_CHECK(cudnnSetFilter4dDescriptor(l->w_desc.get(), CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW,
                                                       v.cout, v.cin, v.k, v.k));
      for (const ConvDesc* d : {&l->conv_fwd, &l->conv_bwd_data, &l->conv_bwd_filter})
        PIPEBENCH_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(d->get(), v.k / 2, v.k / 2, 1, 1, 1, 1,
                                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
      if (v.pool) set_nchw(l->pooled_desc, n, v.cout, v.h / 2, v.w / 2);
      l->w_off = param_floats;
      param_floats += aligned(static_cast<size_t>(v.cout) * v.cin * v.k * v.k);
      l->b_off = param_floats;
      param_floats += aligned(static_cast<size_t>(v.cout));
      workspace = std::max(workspace, choose_algorithms(*l, /*first=*/layers.empty()));
      layers.push_back(std::move(l));
    }
    // (2) What must grow, allocated aside: layer i may keep old layer i's buffers.
    const size_t nn = static_cast<size_t>(n);
    std::vector<std::array<DeviceBuffer, Layer::kBuffers>> grown(layers.size());
    for (size_t i = 0; i < layers.size(); ++i) {
      const Layer* old = i < layers_.size() ? layers_[i].get() : nullptr;
      for (int k = 0; k < Layer::kBuffers; ++k) {
        const size_t need = layers[i]->bytes(k, nn);
        if (need > 0 && (old == nullptr || old->buffer(k).bytes() < need)) grown[i][k] = DeviceBuffer(need);
      }
    }
    DeviceBuffer new_workspace, new_loss, new_params, new_grads, new_velocity;
    if (workspace_.data() == nullptr || workspace > workspace_.bytes())
      new_workspace = DeviceBuffer(std::max<size_t>(workspace, 1));
    if (nn * sizeof(float) > loss_.bytes()) new_loss = DeviceBuffer(nn * sizeof(float));
    if (!same_params) {
      new_params = DeviceBuffer(param_floats * sizeof(float));
      new_grads = DeviceBuffer(param_floats * sizeof(float));
      new_velocity = DeviceBuffer(param_floats * sizeof(float));
    }
    // (3) Commit (moves do not throw).
    for (size_t i = 0; i < layers.size(); ++i) {
      Layer* old = i < layers_.size() ? layers_[i].get() : nullptr;
      for (int k = 0; k < Layer::kBuffers; ++k) {
        if (layers[i]->bytes(k, nn) == 0) continue;
        layers[i]->buffer(k) = grown[i][k].data() != nullptr ? std::move(grown[i][k]) : std::move(old->buffer(k));
      }
    }
    if (new_workspace.data() != nullptr) workspace_ = std::move(new_workspace);
    if (new_loss.data() != nullptr) loss_ = std::move(new_loss);
    if (!same_params) {
      params_ = std::move(new_params);
      grads_ = std::move(new_grads);
      velocity_ = std::move(new_velocity);
      auto s = static_cast<cudaStream_t>(compute_handle());
      PIPEBENCH_CUDA_CHECK(cudaMemsetAsync(params_.data(), 0, param_floats * sizeof(float), s));
      PIPEBENCH_CUDA_CHECK(cudaMemsetAsync(grads_.data(), 0, param_floats * sizeof(float), s));
      PIPEBENCH_CUDA_CHECK(cudaMemsetAsync(velocity_.data(), 0, param_floats * sizeof(float), s));
      uint64_t seed = 101;
      for (const auto& l : layers) {  // He-uniform weights, zero biases
        const CnnConv& v = l->shape;
        const double fan_in = static_cast<double>(v.cin) * v.k * v.k;
        cuda_kernels::fill_uniform(f(params_) + l->w_off, static_cast<size_t>(v.cout) * v.cin * v.k * v.k,
                                   seed++, static_cast<float>(std::sqrt(6.0 / fan_in)), s);
      }
      param_floats_ = param_floats;
      steps_run_ = 0;
    }
    layers_ = std::move(layers);
    shapes_ = std::move(shapes);
  }

  // cuDNN's heuristic choice (choose_algorithm) for the layer's three convolutions, each on
  // its own descriptor; returns the largest workspace they need (backward-data is not run
  // for the first layer).
  size_t choose_algorithms(Layer& l, bool first) {
    const cudnnTensorDescriptor_t x = l.x_desc.get(), y = l.y_desc.get();
    const cudnnFilterDescriptor_t w = l.w_desc.get();
    const cudnnConvolutionDescriptor_t fwd = l.conv_fwd.get(), bf = l.conv_bwd_filter.get(),
                                       bd = l.conv_bwd_data.get();
    const size_t forward = choose_algorithm<cudnnConvolutionFwdAlgoPerf_t, CUDNN_CONVOLUTION_FWD_ALGO_COUNT>(
        l.conv_fwd, "forward", l.fwd,
        [&](int count, int* returned, auto* perf) {
          PIPEBENCH_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(handle_, x, w, fwd, y, count, returned, perf));
        },
        [&](auto algo, size_t* bytes) {
          PIPEBENCH_CUDNN_CHECK(cudnnGetConvolutionForwardWorkspaceSize(handle_, x, w, fwd, y, algo, bytes));
        });
    const size_t filter =
        choose_algorithm<cudnnConvolutionBwdFilterAlgoPerf_t, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT>(
            l.conv_bwd_filter, "backward-filter", l.bwd_filter,
            [&](int count, int* returned, auto* perf) {
              PIPEBENCH_CUDNN_CHECK(
                  cudnnGetConvolutionBackwardFilterAlgorithm_v7(handle_, x, y, bf, w, count, returned, perf));
            },
            [&](auto algo, size_t* bytes) {
              PIPEBENCH_CUDNN_CHECK(
                  cudnnGetConvolutionBackwardFilterWorkspaceSize(handle_, x, y, bf, w, algo, bytes));
            });
    if (first) return std::max(forward, filter);
    const size_t data = choose_algorithm<cudnnConvolutionBwdDataAlgoPerf_t, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT>(
        l.conv_bwd_data, "backward-data", l.bwd_data,
        [&](int count, int* returned, auto* perf) {
          PIPEBENCH_CUDNN_CHECK(
              cudnnGetConvolutionBackwardDataAlgorithm_v7(handle_, w, y, bd, x, count, returned, perf));
        },
        [&](auto algo, size_t* bytes) {
          PIPEBENCH_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(handle_, w, y, bd, x, algo, bytes));
        });
    return std::max({forward, filter, data});
  }

  void run_step(const float* x) override {
    const float one = 1.0f, zero = 0.0f;
    void* ws = workspace_.data();
    const size_t ws_bytes = workspace_.bytes();
    float* w = f(params_);
    float* g = f(grads_);
    // Forward: conv (+ bias), ReLU in place, max pool.
    const float* in = x;
    for (const auto& lp : layers_) {
      Layer& l = *lp;
      PIPEBENCH_CUDNN_CHECK(cudnnConvolutionForward(handle_, &one, l.x_desc.get(), in, l.w_desc.get(),
                                                    w + l.w_off, l.conv_fwd.get(), l.fwd, ws, ws_bytes, &zero,
                                                    l.y_desc.get(), l.y.data()));
      PIPEBENCH_CUDNN_CHECK(cudnnAddTensor(handle_, &one, l.bias_desc.get(), w + l.b_off, &one,
                                           l.y_desc.get(), l.y.data()));
      if (l.shape.relu) {
        PIPEBENCH_CUDNN_CHECK(cudnnActivationForward(handle_, relu_.get(), &one, l.y_desc.get(), l.y.data(),
                                                     &zero, l.y_desc.get(), l.y.data()));
      }
      if (l.shape.pool) {
        PIPEBENCH_CUDNN_CHECK(cudnnPoolingForward(handle_, pool_.get(), &one, l.y_desc.get(), l.y.data(),
                                                  &zero, l.pooled_desc.get(), l.pooled.data()));
      }
      in = l.out();
    }
    // Loss: softmax cross-entropy of the last layer's output (the logits) on the fixed
    // labels i % 10, and its gradient into that layer's dy.
    Layer& last = *layers_.back();
    cuda_kernels::softmax_xent(f(last.y), n_, static_cast<int>(shapes_.logits()), kCnnClasses, f(last.dy),
                               f(loss_), compute_handle());
    // Backward, last layer first. dy of a layer arrives from the layer above (or the
    // loss); through its pool and ReLU it becomes the convolution output's gradient.
    for (size_t i = layers_.size(); i-- > 0;) {
      Layer& l = *layers_[i];
      if (l.shape.pool) {
        PIPEBENCH_CUDNN_CHECK(cudnnPoolingBackward(handle_, pool_.get(), &one, l.pooled_desc.get(),
                                                   l.pooled.data(), l.pooled_desc.get(), l.dpooled.data(),
                                                   l.y_desc.get(), l.y.data(), &zero, l.y_desc.get(),
                                                   l.dy.data()));
      }
      if (l.shape.relu) {  // y is the ReLU's output: positive exactly where its input was
        PIPEBENCH_CUDNN_CHECK(cudnnActivationBackward(handle_, relu_.get(), &one, l.y_desc.get(), l.y.data(),
                                                      l.y_desc.get(), l.dy.data(), l.y_desc.get(),
                                                      l.y.data(), &zero, l.y_desc.get(), l.dy.data()));
      }
      const float* layer_in = i == 0 ? x : layers_[i - 1]->out();
      PIPEBENCH_CUDNN_CHECK(cudnnConvolutionBackwardBias(handle_, &one, l.y_desc.get(), l.dy.data(), &zero,
                                                         l.bias_desc.get(), g + l.b_off));
      PIPEBENCH_CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle_, &one, l.x_desc.get(), layer_in,
                                                           l.y_desc.get(), l.dy.data(), l.conv_bwd_filter.get(),
                                                           l.bwd_filter, ws, ws_bytes, &zero, l.w_desc.get(),
                                                           g + l.w_off));
      if (i > 0) {
        PIPEBENCH_CUDNN_CHECK(cudnnConvolutionBackwardData(handle_, &one, l.w_desc.get(), w + l.w_off,
                                                           l.y_desc.get(), l.dy.data(), l.conv_bwd_data.get(),
                                                           l.bwd_data, ws, ws_bytes, &zero, l.x_desc.get(),
                                                           layers_[i - 1]->dout()));
      }
    }
    // SGD with momentum on every parameter.
    cuda_kernels::sgd_momentum(w, f(velocity_), g, param_floats_, lr_, kCnnMomentum, compute_handle());
    ++steps_run_;
  }

  float lr_;
  cudnnHandle_t handle_ = nullptr;
  ActDesc relu_;
  PoolDesc pool_;
  CnnShapes shapes_;
  std::vector<std::unique_ptr<Layer>> layers_;
  DeviceBuffer params_, grads_, velocity_, workspace_, loss_;
  size_t param_floats_ = 0;
  int64_t steps_run_ = 0;
};

// The CnnTrainStep: CnnImpl behind detail::CudaStepFacade, which forwards TrainStep's calls.
class CnnStep final : public detail::CudaStepFacade<CnnTrainStep, CnnImpl> {
 public:
  using CudaStepFacade::CudaStepFacade;
  double last_loss() override { return impl_.last_loss(); }
  CnnTensors tensors() override { return impl_.tensors(); }
};

}  // namespace

bool cnn_step_built() { return true; }

CudnnVersions cudnn_versions() {
  CudnnVersions v;
  v.built = CUDNN_VERSION;
  v.loaded = static_cast<long>(cudnnGetVersion());
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudnnGetVersion), &info) != 0 && info.dli_fname != nullptr)
    v.loaded_path = info.dli_fname;
  return v;
}

std::unique_ptr<CnnTrainStep> make_cnn_step(float learning_rate) {
  if (!(learning_rate > 0.0f) || !std::isfinite(learning_rate)) {
    throw std::invalid_argument("cuda:cnn step: learning_rate must be finite and > 0, got " +
                                std::to_string(learning_rate));
  }
  require_cuda();
  // cuDNN's run-time libraries, once per process (train_step_cnn.h): a required one that
  // does not load at all ends here with what to set; other problems are said once.
  static const CudnnLibraryCheck libraries = check_cudnn_libraries();
  if (!libraries.usable()) throw CudaUnavailable("cuda:cnn unavailable: " + libraries.summary());
  static std::once_flag told;  // a problem (the summary's lines after the first), once
  if (libraries.summary().find('\n') != std::string::npos)
    std::call_once(told, [] { std::fprintf(stderr, "pipebench: warning: %s\n", libraries.summary().c_str()); });
  return std::make_unique<CnnStep>(learning_rate);
}
#else
bool cnn_step_built() { return false; }

CudnnVersions cudnn_versions() { return {}; }

std::unique_ptr<CnnTrainStep> make_cnn_step(float learning_rate) {
  if (!(learning_rate > 0.0f) || !std::isfinite(learning_rate)) {
    throw std::invalid_argument("cuda:cnn step: learning_rate must be finite and > 0, got " +
                                std::to_string(learning_rate));
  }
  require_cuda();  // throws when built without CUDA or without a device
  throw CudaUnavailable("cuda:cnn unavailable: built without cuDNN (no cudnn.h and libcudnn in the "
                        "CUDA toolkit at configure time)");
}
#endif

}  // namespace pipebench
