#include "model/paired.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <boost/math/distributions/students_t.hpp>

namespace pipebench::model {

double t_quantile_975(double df) {
  if (!(df >= 1)) throw std::invalid_argument("t quantile: df must be >= 1, got " + std::to_string(df));
  return boost::math::quantile(boost::math::students_t(df), 0.975);
}

PairedEstimate paired_estimate(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size())
    throw std::invalid_argument("paired estimate: " + std::to_string(a.size()) + " A blocks against " +
                                std::to_string(b.size()) + " B blocks");
  PairedEstimate e;
  e.blocks = static_cast<int>(a.size());
  if (e.blocks == 0) return e;
  double sum_a = 0, sum_b = 0, sum_d = 0, sum_l = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!(std::isfinite(a[i]) && a[i] > 0 && std::isfinite(b[i]) && b[i] > 0))
      throw std::invalid_argument("paired estimate: block " + std::to_string(i) + " is not a time > 0");
    sum_a += a[i];
    sum_b += b[i];
    sum_d += a[i] - b[i];
    sum_l += std::log(b[i] / a[i]);
  }
  const double n = static_cast<double>(e.blocks);
  e.a_mean = sum_a / n;
  e.b_mean = sum_b / n;
  e.diff = sum_d / n;
  const double log_ratio = sum_l / n;
  e.ratio = std::exp(log_ratio);
  if (e.blocks < 2) {
    e.diff_half = std::numeric_limits<double>::infinity();
    e.ratio_lo = 0;
    e.ratio_hi = std::numeric_limits<double>::infinity();
    return e;
  }
  double ss_d = 0, ss_l = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ss_d += std::pow(a[i] - b[i] - e.diff, 2);
    ss_l += std::pow(std::log(b[i] / a[i]) - log_ratio, 2);
  }
  const double t = t_quantile_975(e.blocks - 1);
  e.diff_half = t * std::sqrt(ss_d / (n - 1)) / std::sqrt(n);
  const double log_half = t * std::sqrt(ss_l / (n - 1)) / std::sqrt(n);
  e.ratio_lo = std::exp(log_ratio - log_half);
  e.ratio_hi = std::exp(log_ratio + log_half);
  return e;
}

PairedEstimate paired_estimate(std::span<const double> a, std::span<const double> b,
                               std::span<const int> positions, double round_share) {
  PairedEstimate e = paired_estimate(a, b);  // checks a and b; the means are the same
  if (positions.size() != a.size())
    throw std::invalid_argument("paired estimate: " + std::to_string(positions.size()) + " positions for " +
                                std::to_string(a.size()) + " blocks");
  if (!(round_share > 0 && round_share <= 1))
    throw std::invalid_argument("paired estimate: the round's share of the dataset must be in (0, 1], got " +
                                std::to_string(round_share));
  int j_count = 0;
  for (int p : positions) {
    if (p < 0) throw std::invalid_argument("paired estimate: negative round position " + std::to_string(p));
    j_count = std::max(j_count, p + 1);
  }
  std::vector<int> count(static_cast<size_t>(j_count), 0);
  std::vector<double> sum_l(count.size(), 0);
  for (size_t i = 0; i < a.size(); ++i) {
    const auto p = static_cast<size_t>(positions[i]);
    ++count[p];
    sum_l[p] += std::log(b[i] / a[i]);
  }
  // A position never run (every block of it held a bad file) is not part of the round.
  int r = 0, ran = 0;
  for (int c : count) {
    if (c == 0) continue;
    if (r != 0 && c != r) return e;  // unequal repeats: the plain estimate
    r = c;
    ++ran;
  }
  if (r < 2 || ran < 2) return e;
  const double n_pos = ran, reps = r;
  double grand = 0;
  for (size_t p = 0; p < count.size(); ++p)
    if (count[p] > 0) grand += sum_l[p] / reps;
  grand /= n_pos;
  double ss_w = 0, ss_m = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto p = static_cast<size_t>(positions[i]);
    ss_w += std::pow(std::log(b[i] / a[i]) - sum_l[p] / reps, 2);
  }
  for (size_t p = 0; p < count.size(); ++p)
    if (count[p] > 0) ss_m += std::pow(sum_l[p] / reps - grand, 2);
  const double df_w = n_pos * (reps - 1), df_m = n_pos - 1;
  const double s2_w = ss_w / df_w, s2_m = ss_m / df_m;
  const double f = round_share;
  const double c_m = (1 - f) / n_pos, c_w = f / (reps * n_pos);
  const double var = c_m * s2_m + c_w * s2_w;
  // Satterthwaite: the degrees of freedom of a sum of mean squares.
  const double denom = std::pow(c_m * s2_m, 2) / df_m + std::pow(c_w * s2_w, 2) / df_w;
  const double df = f >= 1 ? df_w : (denom > 0 ? std::max(1.0, var * var / denom) : df_w);
  const double half = t_quantile_975(df) * std::sqrt(var);
  e.positions = ran;
  e.repeats = r;
  e.ratio = std::exp(grand);
  e.ratio_lo = std::exp(grand - half);
  e.ratio_hi = std::exp(grand + half);
  e.diff_half = e.a_mean * (e.ratio_hi - e.ratio_lo) / 2;
  return e;
}

MeanEstimate mean_interval(std::span<const double> x) {
  MeanEstimate e;
  e.n = static_cast<int>(x.size());
  if (e.n == 0) {
    e.half = std::numeric_limits<double>::infinity();
    return e;
  }
  double sum = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i])) throw std::invalid_argument("mean interval: value " + std::to_string(i) + " is not finite");
    sum += x[i];
  }
  e.mean = sum / e.n;
  if (e.n < 2) {
    e.half = std::numeric_limits<double>::infinity();
    return e;
  }
  double ss = 0;
  for (double v : x) ss += (v - e.mean) * (v - e.mean);
  e.half = t_quantile_975(e.n - 1) * std::sqrt(ss / (e.n - 1) / e.n);
  return e;
}

std::vector<size_t> paired_block_sizes(size_t n, size_t target, size_t min_block) {
  if (min_block < 1 || target < min_block)
    throw std::invalid_argument("paired_block_sizes: need target >= min_block >= 1, got target " +
                                std::to_string(target) + ", min_block " + std::to_string(min_block));
  if (n == 0) return {};
  size_t k = std::max<size_t>(1, n / min_block);  // a small round: blocks of min_block
  if (n >= 4 * min_block) {
    k = (n + target - 1) / target;  // about n / target blocks
    k = (k + 3) / 4 * 4;            // in whole groups of four
    while (k > 4 && n / k < min_block) k -= 4;
  }
  std::vector<size_t> sizes(k, n / k);
  const size_t extra = n % k;
  // One more image for each block of whole groups of four, then for the last few.
  for (size_t p = 0; p < extra; ++p) ++sizes[p];
  return sizes;
}

std::vector<size_t> group_spread_order(const std::vector<size_t>& block_sizes, size_t group) {
  if (group < 1) throw std::invalid_argument("group_spread_order: need group >= 1");
  std::vector<size_t> room;  // each group's images
  for (size_t p = 0; p < block_sizes.size(); ++p) {
    if (p % group == 0) room.push_back(0);
    room.back() += block_sizes[p];
  }
  const size_t n = std::accumulate(room.begin(), room.end(), size_t{0});
  std::vector<std::vector<size_t>> dealt(room.size());
  for (size_t k = 0; k < n; ++k) {
    size_t g = k % room.size();
    while (dealt[g].size() == room[g]) g = (g + 1) % room.size();  // room is left somewhere
    dealt[g].push_back(k);
  }
  std::vector<size_t> out;
  out.reserve(n);
  for (const auto& d : dealt) out.insert(out.end(), d.begin(), d.end());
  return out;
}

std::vector<double> block_means(std::span<const double> x, size_t block) {
  std::vector<double> out;
  if (block == 0) return out;
  for (size_t i = 0; i + block <= x.size(); i += block) {
    double sum = 0;
    for (size_t k = 0; k < block; ++k) sum += x[i + k];
    out.push_back(sum / static_cast<double>(block));
  }
  return out;
}

}  // namespace pipebench::model
