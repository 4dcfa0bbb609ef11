// cnn_dump: the `cuda:cnn` step's numbers for a check against another framework
// (scripts/cnn_torch_check.py builds the same CNN in PyTorch from them):
//
//   cnn_dump OUT [--n N] [--size S] [--steps K] [--seed X] [--init-only]
//
// writes into the folder OUT (made if missing) raw little-endian float32 files and
// manifest.json naming each with its shape:
//   input.f32              the batch, N x 3 x S x S NCHW, uniform in [-2, 2) from Rng(seed)
//                          (as BM_TrainStep's batch); labels are i % 10 (the step's own)
//   w0_<l>.f32, b0_<l>.f32 layer l's initial weights (Cout x Cin x k x k, cnn_initial_weights:
//                          the step's hash on the host, bit for bit) and biases (0)
//   --init-only stops here: no device needed (the tests check the script's own hash
//   against these on any machine). Otherwise, on the device (make_cnn_step at its default
//   learning rate), one step on the batch, then K - 1 more on the same batch:
//   dw_<l>.f32, db_<l>.f32 the first step's gradients (of the batch-mean loss)
//   w1_<l>.f32, b1_<l>.f32 the parameters after its update (SGD, momentum 0.9)
//   manifest "losses": the mean loss of each of the K steps (step k's, before its update)
// manifest.json also holds n, c, h, w, lr, momentum, the layers (cin, cout, k, h, w, relu,
// pool) and NVIDIA_TF32_OVERRIDE as set (0 keeps cuDNN off TF32: the check runs with it).
// Defaults: N 8, S 32 (5 blocks), K 20, seed 1.
//   cnn_dump --versions
// prints the cuBLAS it loaded (exit 1 naming why when it cannot: device/cublas.h), the cuDNN
// it was built with and the one the loader found (cudnnGetVersion(), with its path), and a
// warning line when the loaded one is older (gpu-suite.sh logs them).
// Exit status: 0 written; 77 no CUDA device, or a build without cuDNN (its last line says
// why; --versions prints the cuBLAS line before it);
// 2 bad arguments; 1 a failure (its message), a device whose cuDNN step cannot start
// (cuDNN's libraries not loading, say) included.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "device/cublas.h"
#include "device/cuda.h"
#include "pipeline/train_step_cnn.h"
#include "transforms/rng.h"

namespace {

namespace fs = std::filesystem;
using pipebench::CnnConv;

void write_f32(const fs::path& file, const std::vector<float>& v) {
  std::ofstream out(file, std::ios::binary);
  out.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(float)));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

int usage(const char* why) {
  std::fprintf(stderr,
               "cnn_dump: %s\nusage: cnn_dump OUT [--n N] [--size S] [--steps K] [--seed X] [--init-only]\n"
               "       cnn_dump --versions\n",
               why);
  return 2;
}

int versions() {
  // cuBLAS first: the MLP step needs it, and it is loaded at run time (device/cublas.h), so
  // the suite's ldd pass cannot see it missing.
  if (const std::string why = pipebench::cublas_missing(); !why.empty()) {
    std::printf("cnn_dump: %s\n", why.c_str());
    return pipebench::cuda_info().compiled ? 1 : 77;
  }
#ifdef PIPEBENCH_HAVE_CUDA
  std::printf("cnn_dump: cuBLAS loaded (%s)\n", pipebench::cublas().library.c_str());
#endif
  if (!pipebench::cnn_step_built()) {
    std::printf("cnn_dump: skipped: built without cuDNN\n");
    return 77;
  }
  const pipebench::CudnnVersions v = pipebench::cudnn_versions();
  const std::string built = pipebench::CudnnVersions::text(v.built);
  const std::string loaded = pipebench::CudnnVersions::text(v.loaded);
  std::printf("cnn_dump: cuDNN built with %s, loaded %s (%s)\n", built.c_str(), loaded.c_str(),
              v.loaded_path.empty() ? "path unknown" : v.loaded_path.c_str());
  if (v.loaded < v.built)
    std::printf("cnn_dump: warning: the loaded cuDNN %s is older than %s, the one built with\n", loaded.c_str(),
                built.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string out_dir;
  int n = 8, size = 32, steps = 20;
  unsigned long long seed = 1;
  bool init_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&](int& v) {
      if (i + 1 >= argc) return false;
      char* end = nullptr;
      const long x = std::strtol(argv[++i], &end, 10);
      if (*end != 0 || x < 1 || x > 100000) return false;
      v = static_cast<int>(x);
      return true;
    };
    if (a == "--n") {
      if (!value(n)) return usage("--n needs a count >= 1");
    } else if (a == "--size") {
      if (!value(size)) return usage("--size needs pixels >= 1");
    } else if (a == "--steps") {
      if (!value(steps)) return usage("--steps needs a count >= 1");
    } else if (a == "--seed") {
      if (i + 1 >= argc) return usage("--seed needs a number");
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--versions") {
      if (argc != 2) return usage("--versions takes no other argument");
      return versions();
    } else if (a == "--init-only") {
      init_only = true;
    } else if (!a.empty() && a[0] == '-') {
      return usage(("unknown option " + a).c_str());
    } else if (out_dir.empty()) {
      out_dir = a;
    } else {
      return usage("one output folder");
    }
  }
  if (out_dir.empty()) return usage("no output folder");
  try {
    const fs::path out(out_dir);
    fs::create_directories(out);
    const int c = 3;
    const pipebench::CnnShapes shapes = pipebench::cnn_shapes(c, size, size);
    nlohmann::json m;
    m["n"] = n, m["c"] = c, m["h"] = size, m["w"] = size;
    m["lr"] = pipebench::kCnnLearningRate, m["momentum"] = pipebench::kCnnMomentum;
    m["labels"] = "i % 10";
    m["classes"] = pipebench::kCnnClasses;
    const char* tf32 = std::getenv("NVIDIA_TF32_OVERRIDE");
    m["tf32_override"] = tf32 ? tf32 : "";
    nlohmann::json files = nlohmann::json::object();
    const auto put = [&](const std::string& name, const std::vector<float>& v, std::vector<int> shape) {
      write_f32(out / (name + ".f32"), v);
      files[name] = {{"file", name + ".f32"}, {"shape", shape}};
    };
    std::vector<float> batch(static_cast<size_t>(n) * c * size * size);
    pipebench::Rng rng(seed);
    for (float& x : batch) x = static_cast<float>(rng.uniform(-2, 2));
    put("input", batch, {n, c, size, size});
    nlohmann::json layers = nlohmann::json::array();
    for (size_t l = 0; l < shapes.convs.size(); ++l) {
      const CnnConv& v = shapes.convs[l];
      layers.push_back({{"cin", v.cin}, {"cout", v.cout}, {"k", v.k}, {"h", v.h}, {"w", v.w}, {"relu", v.relu},
                        {"pool", v.pool}});
      const std::string s = std::to_string(l);
      put("w0_" + s, pipebench::cnn_initial_weights(v, static_cast<int>(l)), {v.cout, v.cin, v.k, v.k});
      put("b0_" + s, std::vector<float>(static_cast<size_t>(v.cout), 0.0f), {v.cout});
    }
    m["layers"] = layers;
    if (!init_only) {
      std::unique_ptr<pipebench::CnnTrainStep> step;
      try {
        step = pipebench::make_cnn_step();
      } catch (const pipebench::CudaUnavailable& e) {
        // Skipped only without a device (or without cuDNN built in): on a device, a step that
        // cannot start (cuDNN's libraries missing or not loading) is a failure.
        if (!pipebench::cuda_available() || !pipebench::cnn_step_built()) {
          std::printf("cnn_dump: skipped: %s\n", e.what());
          return 77;
        }
        std::fprintf(stderr, "cnn_dump: error: a CUDA device is there (%s) but the cuda:cnn step cannot start: %s\n",
                     pipebench::cuda_info().device_name.c_str(), e.what());
        return 1;
      }
      std::vector<double> losses;
      for (int k = 0; k < steps; ++k) {
        step->step(batch.data(), n, c, size, size);
        losses.push_back(step->last_loss());
        if (k == 0) {
          const pipebench::CnnTensors t = step->tensors();
          if (t.convs.size() != shapes.convs.size()) throw std::runtime_error("the step has another layer count");
          for (size_t l = 0; l < t.convs.size(); ++l) {
            const CnnConv& v = t.convs[l];
            const std::string s = std::to_string(l);
            put("dw_" + s, t.weight_grad[l], {v.cout, v.cin, v.k, v.k});
            put("db_" + s, t.bias_grad[l], {v.cout});
            put("w1_" + s, t.weight[l], {v.cout, v.cin, v.k, v.k});
            put("b1_" + s, t.bias[l], {v.cout});
          }
        }
      }
      m["losses"] = losses;
      m["device"] = pipebench::cuda_info().device_name;
    }
    m["files"] = files;
    std::ofstream(out / "manifest.json") << m.dump(1) << "\n";
    std::printf("cnn_dump: %s: %zu layers, batch %d x %d x %d x %d%s\n", out_dir.c_str(), shapes.convs.size(), n, c,
                size, size, init_only ? " (initial weights only)" : "");
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cnn_dump: error: %s\n", e.what());
    return 1;
  }
}
