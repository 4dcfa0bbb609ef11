// kernel_tool: applies ONE deterministic pipebench kernel to a binary PPM and writes a binary
// PPM, so that tests/scripts/torchvision_reference_test.py can compare pipebench's pixels
// with torchvision's on the same input without Python bindings.
//
//   kernel_tool IN.ppm OUT.ppm KERNEL [ARGS...]
//
// IN.ppm: P6, maxval 255, H x W RGB; OUT.ppm the same format (the kernel decides its size).
// Kernels and their arguments (each named as torchvision.transforms.functional's call):
//   adjust_brightness F | adjust_contrast F | adjust_saturation F | adjust_hue F
//   rgb_to_grayscale | autocontrast | equalize | invert
//   posterize BITS | solarize THRESHOLD | adjust_sharpness F | gaussian_blur KSIZE SIGMA
//   affine ANGLE TX TY SCALE SHEAR_X SHEAR_Y INTERP [FILL]   (INTERP: nearest | bilinear)
//   rotate ANGLE INTERP [FILL]   (FILL: V or R,G,B; absent = torchvision's fill=None)
//   resize H W INTERP        (INTERP: nearest | bilinear | bicubic | area; the whole image)
//   center_crop SIZE         (CenterCropOp: pads with 0 where the image is smaller)
//   erase I J H W V[,V,V]    (normalize_to_chw with ImageNet statistics, then erase rows
//                            I..I+H, columns J..J+W; OUT is then float32 CHW, see below)
// erase writes "PBF32 C H W\n" and C*H*W little-endian float32 values instead of a PPM.
// Exit status: 0 written, 2 bad usage or input (one line on stderr saying why).
#include <array>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "transforms/affine.h"
#include "transforms/crop.h"
#include "transforms/erasing.h"
#include "transforms/image.h"
#include "transforms/normalize.h"
#include "transforms/ops/geometry.h"
#include "transforms/photometric.h"
#include "transforms/rng.h"

namespace pb = pipebench;

namespace {

// Reads one whitespace-separated header token of a PPM, skipping '#' comments.
std::string ppm_token(std::istream& in) {
  std::string tok;
  while (true) {
    const int c = in.get();
    if (c == EOF) break;
    if (c == '#') {
      std::string ignored;
      std::getline(in, ignored);
      continue;
    }
    if (std::isspace(c)) {
      if (!tok.empty()) break;
      continue;
    }
    tok.push_back(static_cast<char>(c));
  }
  return tok;
}

pb::Image read_ppm(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  if (ppm_token(in) != "P6") throw std::runtime_error(path + " is not a binary PPM (P6)");
  const int w = std::stoi(ppm_token(in));
  const int h = std::stoi(ppm_token(in));
  const int maxval = std::stoi(ppm_token(in));
  if (w <= 0 || h <= 0 || maxval != 255)
    throw std::runtime_error(path + ": need a positive size and maxval 255");
  pb::Image img;
  img.resize(h, w, 3);
  in.read(reinterpret_cast<char*>(img.ptr()), static_cast<std::streamsize>(img.size_bytes()));
  if (in.gcount() != static_cast<std::streamsize>(img.size_bytes()))
    throw std::runtime_error(path + ": truncated pixel data");
  return img;
}

void write_ppm(const std::string& path, const pb::Image& img) {
  if (img.channels != 3) throw std::runtime_error("the kernel produced a non-RGB image");
  std::ofstream out(path, std::ios::binary);
  out << "P6\n" << img.width << " " << img.height << "\n255\n";
  out.write(reinterpret_cast<const char*>(img.ptr()), static_cast<std::streamsize>(img.size_bytes()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

// The kernel's arguments with checked conversions.
struct Args {
  std::vector<std::string> v;
  const std::string& at(size_t i) const {
    if (i >= v.size()) throw std::invalid_argument("missing argument " + std::to_string(i + 1));
    return v[i];
  }
  float f(size_t i) const { return std::stof(at(i)); }
  int i(size_t k) const { return std::stoi(at(k)); }
  // "V" or "V,V,V" (one value for all channels, or one each).
  std::vector<float> floats(size_t k) const {
    std::vector<float> out;
    std::stringstream ss(at(k));
    for (std::string part; std::getline(ss, part, ',');) out.push_back(std::stof(part));
    return out;
  }
  // An optional trailing fill: absent is torchvision's fill=None.
  std::optional<std::array<float, 3>> fill(size_t k) const {
    if (k >= v.size()) return std::nullopt;
    const auto f = floats(k);
    if (f.size() == 1) return std::array<float, 3>{f[0], f[0], f[0]};
    if (f.size() == 3) return std::array<float, 3>{f[0], f[1], f[2]};
    throw std::invalid_argument("fill must be V or R,G,B, got " + v[k]);
  }
};

pb::WarpInterpolation warp_interp(const std::string& name) {
  if (name == "nearest") return pb::WarpInterpolation::kNearest;
  if (name == "bilinear") return pb::WarpInterpolation::kBilinear;
  throw std::invalid_argument("warp interpolation must be nearest or bilinear, got " + name);
}

pb::Interpolation resize_interp(const std::string& name) {
  if (name == "nearest") return pb::Interpolation::kNearest;
  if (name == "bilinear") return pb::Interpolation::kBilinear;
  if (name == "bicubic") return pb::Interpolation::kBicubic;
  if (name == "area") return pb::Interpolation::kArea;
  throw std::invalid_argument("resize interpolation must be nearest, bilinear, bicubic or area, got " +
                              name);
}

// Each kernel maps (input, args) to the output image.
using Kernel = std::function<pb::Image(pb::Image, const Args&)>;

Kernel in_place(std::function<void(pb::Image&, const Args&)> f) {
  return [f](pb::Image img, const Args& a) {
    f(img, a);
    return img;
  };
}

const std::map<std::string, Kernel>& kernels() {
  static const std::map<std::string, Kernel> k = {
      {"adjust_brightness", in_place([](pb::Image& m, const Args& a) { pb::adjust_brightness(m, a.f(0)); })},
      {"adjust_contrast", in_place([](pb::Image& m, const Args& a) { pb::adjust_contrast(m, a.f(0)); })},
      {"adjust_saturation", in_place([](pb::Image& m, const Args& a) { pb::adjust_saturation(m, a.f(0)); })},
      {"adjust_hue", in_place([](pb::Image& m, const Args& a) { pb::adjust_hue(m, a.f(0)); })},
      {"rgb_to_grayscale", in_place([](pb::Image& m, const Args&) { pb::rgb_to_grayscale(m); })},
      {"autocontrast", in_place([](pb::Image& m, const Args&) { pb::autocontrast(m); })},
      {"equalize", in_place([](pb::Image& m, const Args&) { pb::equalize(m); })},
      {"invert", in_place([](pb::Image& m, const Args&) { pb::invert(m); })},
      {"posterize", in_place([](pb::Image& m, const Args& a) { pb::posterize(m, a.i(0)); })},
      {"solarize", in_place([](pb::Image& m, const Args& a) { pb::solarize(m, a.f(0)); })},
      {"adjust_sharpness", in_place([](pb::Image& m, const Args& a) {
         pb::Image scratch;
         pb::adjust_sharpness(m, a.f(0), scratch);
       })},
      {"gaussian_blur", in_place([](pb::Image& m, const Args& a) {
         pb::Image scratch;
         pb::gaussian_blur(m, a.i(0), a.f(1), scratch);
       })},
      {"affine",
       [](pb::Image src, const Args& a) {
         pb::AffineParams p;
         p.angle = a.f(0);
         p.translate = {a.f(1), a.f(2)};
         p.scale = a.f(3);
         p.shear = {a.f(4), a.f(5)};
         pb::Image out;
         pb::affine(src, out, p, warp_interp(a.at(6)), a.fill(7));
         return out;
       }},
      {"rotate",
       [](pb::Image src, const Args& a) {
         pb::Image out;
         pb::rotate(src, out, a.f(0), warp_interp(a.at(1)), a.fill(2));
         return out;
       }},
      {"resize",
       [](pb::Image src, const Args& a) {
         const pb::CropWindow all{0, 0, src.width, src.height};
         pb::Image out;
         pb::resized_crop(src, all, a.i(0), a.i(1), out, false, resize_interp(a.at(2)));
         return out;
       }},
      {"center_crop",
       [](pb::Image src, const Args& a) {
         // The operator itself (not crop.h's center_crop), since it is what pads.
         const pb::CenterCropOp op(a.i(0));
         pb::SampleData s;
         s.image = std::move(src);
         pb::Rng rng(0);  // center_crop draws nothing
         op.apply(s, rng, nullptr);
         return s.image;
       }},
  };
  return k;
}

// erase: the normalized float32 CHW tensor with one box erased (torchvision F.erase on
// F.normalize(to_tensor(img))), written as "PBF32 C H W\n" + raw little-endian float32.
void erase_to_file(const pb::Image& img, const Args& a, const std::string& path) {
  std::vector<float> chw(static_cast<size_t>(3) * img.height * img.width);
  pb::normalize_to_chw(img, chw.data());
  const pb::CropWindow box{a.i(1), a.i(0), a.i(3), a.i(2)};  // x = j, y = i, width = w, height = h
  const auto value = a.floats(4);
  pb::erase(chw.data(), 3, img.height, img.width, box, value);
  std::ofstream out(path, std::ios::binary);
  out << "PBF32 3 " << img.height << " " << img.width << "\n";
  out.write(reinterpret_cast<const char*>(chw.data()),
            static_cast<std::streamsize>(chw.size() * sizeof(float)));
  if (!out) throw std::runtime_error("cannot write " + path);
}

int usage(const std::string& why) {
  std::cerr << "kernel_tool: " << why << "\nusage: kernel_tool IN.ppm OUT.ppm KERNEL [ARGS...]; kernels:";
  for (const auto& [name, _] : kernels()) std::cerr << " " << name;
  std::cerr << " erase\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) return usage("need IN.ppm, OUT.ppm and a kernel name");
  const std::string kernel = argv[3];
  const auto it = kernels().find(kernel);
  if (it == kernels().end() && kernel != "erase") return usage("unknown kernel \"" + kernel + "\"");
  Args args;
  for (int k = 4; k < argc; ++k) args.v.emplace_back(argv[k]);
  try {
    if (kernel == "erase") {
      erase_to_file(read_ppm(argv[1]), args, argv[2]);
    } else {
      write_ppm(argv[2], it->second(read_ppm(argv[1]), args));
    }
  } catch (const std::exception& e) {
    std::cerr << "kernel_tool: " << argv[3] << ": " << e.what() << "\n";
    return 2;
  }
  return 0;
}
