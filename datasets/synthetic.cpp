// Synthetic photo-like JPEGs. The renderer uses only integer arithmetic and IEEE-exact
// double operations (+, -, *, /, sqrt; no sin/exp/pow from libm, whose last bits differ
// between library versions), so a seed gives the same pixels, hence the same JPEG bytes
// from the same libjpeg-turbo, on every machine.
#include "datasets/synthetic.h"

#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "transforms/rng.h"

namespace pipebench {
namespace {

uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t z = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t hash3(uint64_t seed, uint64_t x, uint64_t y) { return mix(mix(seed, x), y); }

/// Uniform in [0, 1) from a hash.
double unit(uint64_t h) { return static_cast<double>(h >> 11) * 0x1.0p-53; }

double smooth(double t) { return t * t * (3.0 - 2.0 * t); }

uint8_t to_u8(double v) {
  const double r = v + 0.5;
  if (r <= 0.0) return 0;
  if (r >= 255.0) return 255;
  return static_cast<uint8_t>(r);
}

/// Value noise: random values on a lattice of `cell` pixels, smoothly interpolated.
/// Returns [-1, 1).
struct ValueNoise {
  uint64_t seed;
  int cell;
  double at(int x, int y) const {
    const int ix = x / cell, iy = y / cell;
    const double fx = smooth(static_cast<double>(x - ix * cell) / cell);
    const double fy = smooth(static_cast<double>(y - iy * cell) / cell);
    auto v = [&](int cx, int cy) {
      return 2.0 * unit(hash3(seed, static_cast<uint64_t>(cx), static_cast<uint64_t>(cy))) -
             1.0;
    };
    const double top = v(ix, iy) + (v(ix + 1, iy) - v(ix, iy)) * fx;
    const double bottom = v(ix, iy + 1) + (v(ix + 1, iy + 1) - v(ix, iy + 1)) * fx;
    return top + (bottom - top) * fy;
  }
};

struct Shape {
  bool ellipse = true;
  double cx = 0, cy = 0;   // centre, pixels
  double ux = 1, uy = 0;   // unit axis (rotation)
  double a = 1, b = 1;     // half extents along the axis and across it, pixels
  double colour[3] = {0, 0, 0};
  double gradient[3] = {0, 0, 0};  // colour change per half extent along the axis
  double opacity = 1;
  double edge = 1;         // soft-edge width, pixels
  double reach = 1;        // bounding half size: no effect beyond it, pixels
};

struct SubsamplingName {
  const char* name;
  int tj;
};
constexpr SubsamplingName kSubsamplings[] = {
    {"4:4:4", TJSAMP_444}, {"4:2:2", TJSAMP_422}, {"4:2:0", TJSAMP_420},
    {"4:4:0", TJSAMP_440}, {"gray", TJSAMP_GRAY}};

int parse_subsampling(const std::string& s) {
  for (const auto& e : kSubsamplings)
    if (s == e.name) return e.tj;
  throw std::invalid_argument("subsampling must be one of 4:4:4, 4:2:2, 4:2:0, 4:4:0, gray; got \"" +
                              s + "\"");
}

void check_positive(const char* what, int v) {
  if (v <= 0)
    throw std::invalid_argument(std::string(what) + " must be > 0, got " + std::to_string(v));
}

void check_quality(int quality) {
  if (quality < 1 || quality > 100)
    throw std::invalid_argument("quality must be in [1, 100], got " + std::to_string(quality));
}

std::string zero_padded(int value, int digits) {
  std::string s = std::to_string(value);
  if (static_cast<int>(s.size()) < digits) s.insert(0, static_cast<size_t>(digits) - s.size(), '0');
  return s;
}

}  // namespace

std::vector<uint8_t> render_synthetic_rgb(int width, int height, uint64_t seed) {
  check_positive("width", width);
  check_positive("height", height);
  if (static_cast<int64_t>(width) * height > 400'000'000)
    throw std::invalid_argument("width * height must be <= 400000000 pixels, got " +
                                std::to_string(static_cast<int64_t>(width) * height));
  Rng rng(mix(seed, 0x5EED));
  const double w = width, h = height, diag = std::sqrt(w * w + h * h);

  // 1. Background: a bilinear gradient between four random corner colours.
  double corner[4][3];
  for (auto& c : corner)
    for (double& ch : c) ch = rng.uniform(30.0, 225.0);

  // 2. Overlapping shapes (ellipses and rotated rectangles) with their own gradients.
  const int n_shapes = 10 + static_cast<int>(rng.uniform_int(0, 14));
  std::vector<Shape> shapes(static_cast<size_t>(n_shapes));
  for (auto& s : shapes) {
    s.ellipse = rng.bernoulli(0.6);
    s.cx = rng.uniform(-0.1, 1.1) * w;
    s.cy = rng.uniform(-0.1, 1.1) * h;
    double ux = rng.uniform(-1.0, 1.0), uy = rng.uniform(-1.0, 1.0);
    const double n = std::sqrt(ux * ux + uy * uy) + 1e-9;
    s.ux = ux / n;
    s.uy = uy / n;
    s.a = rng.uniform(0.02, 0.35) * diag;
    s.b = s.a * rng.uniform(0.3, 1.0);
    for (int c = 0; c < 3; ++c) {
      s.colour[c] = rng.uniform(10.0, 245.0);
      s.gradient[c] = rng.uniform(-40.0, 40.0);
    }
    s.opacity = rng.uniform(0.55, 1.0);
    s.edge = rng.uniform(0.7, 4.0);
    s.reach = s.a + s.edge;
  }

  // 3. Texture: a few octaves of value noise, mostly luminance with a little chroma.
  const uint64_t tex_seed = rng.next_u64();
  const ValueNoise octaves[] = {{mix(tex_seed, 1), 48}, {mix(tex_seed, 2), 17},
                                {mix(tex_seed, 3), 6}, {mix(tex_seed, 4), 2}};
  const double amplitude[] = {18.0, 12.0, 10.0, 8.0};
  const ValueNoise chroma{mix(tex_seed, 5), 31};
  double chroma_dir[3];
  for (double& c : chroma_dir) c = rng.uniform(-12.0, 12.0);

  // 4. Per-pixel sensor noise: triangular distribution, +-noise_amp (8..12 levels).
  const double noise_amp = rng.uniform(8.0, 12.0);
  const uint64_t noise_seed = rng.next_u64();

  std::vector<uint8_t> rgb(static_cast<size_t>(width) * height * 3);
  for (int y = 0; y < height; ++y) {
    const double fy = (h > 1) ? y / (h - 1) : 0.0;
    for (int x = 0; x < width; ++x) {
      const double fx = (w > 1) ? x / (w - 1) : 0.0;
      double px[3];
      for (int c = 0; c < 3; ++c) {
        const double top = corner[0][c] + (corner[1][c] - corner[0][c]) * fx;
        const double bottom = corner[2][c] + (corner[3][c] - corner[2][c]) * fx;
        px[c] = top + (bottom - top) * fy;
      }
      for (const auto& s : shapes) {
        const double dx = x - s.cx, dy = y - s.cy;
        if (std::abs(dx) > s.reach || std::abs(dy) > s.reach) continue;  // outside bounds
        const double u = (dx * s.ux + dy * s.uy) / s.a;   // along the axis, in half extents
        const double v = (-dx * s.uy + dy * s.ux) / s.b;  // across it
        double inside;  // signed distance-like, pixels (positive inside)
        if (s.ellipse) {
          const double r = std::sqrt(u * u + v * v);
          inside = (1.0 - r) * s.b;
        } else {
          inside = std::min((1.0 - std::abs(u)) * s.a, (1.0 - std::abs(v)) * s.b);
        }
        if (inside <= -s.edge) continue;
        const double alpha = s.opacity * (inside >= s.edge ? 1.0 : (inside + s.edge) / (2 * s.edge));
        for (int c = 0; c < 3; ++c) {
          const double col = s.colour[c] + s.gradient[c] * u;
          px[c] += (col - px[c]) * alpha;
        }
      }
      double tex = 0;
      for (int o = 0; o < 4; ++o) tex += amplitude[o] * octaves[o].at(x, y);
      const double ch = chroma.at(x, y);
      const uint64_t hn = hash3(noise_seed, static_cast<uint64_t>(x), static_cast<uint64_t>(y));
      uint8_t* out = &rgb[(static_cast<size_t>(y) * width + x) * 3];
      for (int c = 0; c < 3; ++c) {
        const uint64_t hc = mix(hn, static_cast<uint64_t>(c));
        const double noise =
            noise_amp * (unit(hc) + unit(mix(hc, 77)) - 1.0);  // triangular in (-1, 1)
        out[c] = to_u8(px[c] + tex + chroma_dir[c] * ch + noise);
      }
    }
  }
  return rgb;
}

std::vector<uint8_t> encode_jpeg(const uint8_t* rgb, int width, int height, int quality,
                                 const std::string& subsampling, bool progressive) {
  if (rgb == nullptr) throw std::invalid_argument("encode_jpeg: rgb must not be null");
  check_positive("width", width);
  check_positive("height", height);
  check_quality(quality);
  const int tj_subsamp = parse_subsampling(subsampling);

  std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitCompress(), tjDestroy);
  if (!handle) throw std::runtime_error(std::string("tjInitCompress failed: ") + tjGetErrorStr());
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  const int flags = progressive ? TJFLAG_PROGRESSIVE : 0;
  if (tjCompress2(handle.get(), rgb, width, 0, height, TJPF_RGB, &buffer, &size, tj_subsamp,
                  quality, flags) != 0) {
    const std::string msg = tjGetErrorStr2(handle.get());
    tjFree(buffer);
    throw std::runtime_error("tjCompress2 failed (" + std::to_string(width) + "x" +
                             std::to_string(height) + "): " + msg);
  }
  std::vector<uint8_t> jpeg(buffer, buffer + size);
  tjFree(buffer);
  return jpeg;
}

std::vector<std::filesystem::path> write_synthetic_dataset(const std::filesystem::path& root,
                                                           const SyntheticOptions& options) {
  check_positive("count", options.count);
  check_positive("classes", options.classes);
  if (options.classes > options.count)
    throw std::invalid_argument("classes must be in [1, count=" + std::to_string(options.count) +
                                "], got " + std::to_string(options.classes));
  check_positive("min_width", options.min_width);
  check_positive("min_height", options.min_height);
  if (options.max_width < options.min_width)
    throw std::invalid_argument("max_width must be >= min_width=" +
                                std::to_string(options.min_width) + ", got " +
                                std::to_string(options.max_width));
  if (options.max_height < options.min_height)
    throw std::invalid_argument("max_height must be >= min_height=" +
                                std::to_string(options.min_height) + ", got " +
                                std::to_string(options.max_height));
  check_quality(options.quality);
  parse_subsampling(options.subsampling);

  std::vector<std::filesystem::path> paths;
  paths.reserve(static_cast<size_t>(options.count));
  const int class_digits = std::max<int>(3, static_cast<int>(std::to_string(options.classes - 1).size()));
  const int image_digits = std::max<int>(6, static_cast<int>(std::to_string(options.count - 1).size()));
  for (int i = 0; i < options.count; ++i) {
    const int label = i % options.classes;
    Rng rng = Rng::for_sample(options.seed, 0, static_cast<uint64_t>(i));
    const int width = static_cast<int>(rng.uniform_int(options.min_width, options.max_width));
    const int height = static_cast<int>(rng.uniform_int(options.min_height, options.max_height));
    const auto rgb = render_synthetic_rgb(width, height, rng.next_u64());
    const auto jpeg = encode_jpeg(rgb.data(), width, height, options.quality,
                                  options.subsampling, options.progressive);
    auto path = root / ("class_" + zero_padded(label, class_digits)) /
                ("img_" + zero_padded(i, image_digits) + ".jpg");
    write_file(path, jpeg.data(), jpeg.size());
    paths.push_back(std::move(path));
  }
  return paths;
}

}  // namespace pipebench
