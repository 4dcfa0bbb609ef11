#include "transforms/normal.h"

#include <cmath>
#include <cstdint>

namespace pipebench {
namespace {

constexpr double kR = 3.442619855899;            // start of the tail (128 layers)
constexpr double kV = 9.91256303526217e-3;       // area of each layer
constexpr double kM = 2147483648.0;              // 2^31: the magnitude's scale

// The layer tables of the paper's zigset(): kn, the acceptance bound of layer i (in units
// of the 31-bit magnitude); wn, the layer's width per unit; fn, the density at its edge.
struct Tables {
  int64_t kn[128];
  double wn[128], fn[128];
  Tables() {
    double dn = kR, tn = kR;
    const double q = kV / std::exp(-0.5 * dn * dn);
    kn[0] = static_cast<int64_t>((dn / q) * kM);
    kn[1] = 0;
    wn[0] = q / kM;
    wn[127] = dn / kM;
    fn[0] = 1.0;
    fn[127] = std::exp(-0.5 * dn * dn);
    for (int i = 126; i >= 1; --i) {
      dn = std::sqrt(-2.0 * std::log(kV / dn + std::exp(-0.5 * dn * dn)));
      kn[i + 1] = static_cast<int64_t>((dn / tn) * kM);
      tn = dn;
      fn[i] = std::exp(-0.5 * dn * dn);
      wn[i] = dn / kM;
    }
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

}  // namespace

float ziggurat_normal(Rng& rng) {
  const Tables& t = tables();
  for (;;) {
    const uint64_t u = rng.next_u64();
    const int iz = static_cast<int>(u & 127);
    const auto hz = static_cast<int32_t>(static_cast<uint32_t>(u >> 32));  // signed magnitude
    const int64_t mag = hz < 0 ? -static_cast<int64_t>(hz) : hz;
    const double x = hz * t.wn[iz];
    if (mag < t.kn[iz]) return static_cast<float>(x);  // inside the layer's rectangle
    if (iz == 0) {  // the tail beyond kR (Marsaglia's method for the normal tail)
      double tx, ty;
      do {
        tx = -std::log(1.0 - rng.uniform()) / kR;
        ty = -std::log(1.0 - rng.uniform());
      } while (ty + ty < tx * tx);
      return static_cast<float>(hz > 0 ? kR + tx : -kR - tx);
    }
    // The wedge between the rectangle and the curve: accept under the density.
    if (t.fn[iz] + rng.uniform() * (t.fn[iz - 1] - t.fn[iz]) < std::exp(-0.5 * x * x))
      return static_cast<float>(x);
  }
}

}  // namespace pipebench
