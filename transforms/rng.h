// Deterministic per-sample random numbers.
//
// Every random transform of a sample draws from an Rng seeded by (seed, epoch, sample
// index), so one seed gives bit-identical samples whatever the worker count or the order
// in which workers run; within it each operator has its own stream (Rng::stream, keyed by
// the operator's name and occurrence in the spec), so the operators' draws do not depend
// on one another. The generator is SplitMix64 (Steele, Lea, Flood: "Fast splittable
// pseudorandom number generators", OOPSLA 2014), the seeder of xoshiro; it is small, fast
// and passes BigCrush, which is plenty for crop offsets and masks.
#pragma once

#include <cmath>
#include <cstdint>

namespace pipebench {

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}

  /// The generator for one sample: a hash of the three keys, so neighbouring indices
  /// give unrelated streams.
  static Rng for_sample(uint64_t seed, uint64_t epoch, uint64_t sample_index) {
    Rng r(seed ^ 0x9E3779B97F4A7C15ull);
    uint64_t s = r.next_u64() ^ (epoch * 0xBF58476D1CE4E5B9ull);
    Rng r2(s);
    return Rng(r2.next_u64() ^ (sample_index * 0x94D049BB133111EBull));
  }

  /// The generator for one batch's batch operators (mixup, cutmix): keyed like
  /// for_sample, with a salt so that batch b and sample b draw unrelated streams.
  static Rng for_batch(uint64_t seed, uint64_t epoch, uint64_t batch_index) {
    return for_sample(seed ^ 0xB47C0FFEE0DDF00Dull, epoch, batch_index);
  }

  /// An operator's own stream within this sample's (or batch's): a generator keyed by this
  /// one's state and the operator's stable identity (`salt`, stream_salt()), without
  /// advancing this one. Every operator of a pipeline draws from its own stream, so adding,
  /// removing or changing one operator leaves every other operator's draws as they were
  /// (common random numbers: a what-if candidate samples the same crops and flips as
  /// today's pipeline, and a paired comparison compares like with like).
  Rng stream(uint64_t salt) const {
    Rng r(state_ ^ (salt * 0xD6E8FEB86659FD93ull));
    r.next_u64();
    return Rng(r.next_u64() ^ salt);
  }
  /// The stable identity of an operator in a spec: FNV-1a 64 of "<name>#<k>", k the
  /// operator's occurrence among those of its name (1 for the first), so it does not move
  /// when another operator is added or removed.
  static uint64_t stream_salt(const char* name, int occurrence) {
    uint64_t h = 1469598103934665603ull;
    const auto mix = [&](unsigned char ch) { h = (h ^ ch) * 1099511628211ull; };
    for (const char* p = name; *p != 0; ++p) mix(static_cast<unsigned char>(*p));
    mix('#');
    for (int v = occurrence; v > 0; v /= 10) mix(static_cast<unsigned char>('0' + v % 10));
    return h;
  }

  uint64_t next_u64() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform double in [0, 1), 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  /// Uniform double in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }
  /// Uniform integer in [lo, hi] (inclusive), lo <= hi.
  int64_t uniform_int(int64_t lo, int64_t hi) {
    const uint64_t span = static_cast<uint64_t>(hi - lo) + 1;
    return lo + static_cast<int64_t>(span == 0 ? next_u64() : next_u64() % span);
  }
  /// True with probability p.
  bool bernoulli(double p) { return uniform() < p; }
  /// Standard normal N(0, 1) (Box-Muller; one draw of two uniforms per call).
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log() finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  /// Gamma(shape, 1), shape > 0 (Marsaglia and Tsang, "A simple method for generating
  /// gamma variables", ACM TOMS 2000; shape < 1 by Gamma(shape + 1) * U^(1/shape)).
  double gamma(double shape) {
    if (shape < 1.0) return gamma(shape + 1.0) * std::pow(1.0 - uniform(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1.0 + c * x;
      } while (v <= 0.0);
      v = v * v * v;
      const double u = 1.0 - uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v;
    }
  }
  /// Beta(a, b), a, b > 0 (as two gammas: X / (X + Y)).
  double beta(double a, double b) {
    const double x = gamma(a), y = gamma(b);
    // Both gammas underflow to 0 for tiny shapes (a = 0.001: one draw in five): Beta's mass
    // is then at 0 and 1, with P(1) = a / (a + b), its mean.
    if (!(x + y > 0.0)) return uniform() < a / (a + b) ? 1.0 : 0.0;
    return x / (x + y);
  }

 private:
  uint64_t state_;
};

}  // namespace pipebench
