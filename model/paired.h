// A paired comparison: A (today) and B (a candidate) measured in alternating blocks over
// the same images, A B B A, so that a machine whose speed drifts linearly during the quad
// moves both sides alike (each block's A is the mean of its two A runs, B likewise).
//
// Method: the differences d_i = A_i - B_i of the n blocks (ms per sample) and their mean
// with a two-sided 95 % Student t interval, mean +- t(0.975, n - 1) * s / sqrt(n) (any
// statistics text; the quantile from Boost.Math's students_t); the ratio B / A from the
// mean of log(B_i / A_i) with the same t interval, exponentiated (a ratio's interval
// stays positive). Paired benchmarking as Tango.rs does it (shared/seeds), and the A/A
// control: A against itself measured the same way must read zero within its interval.
//
// Units: whatever the inputs are in (pipebench passes ms per sample). Errors:
// std::invalid_argument when a and b differ in length or a value is not finite and > 0.
#pragma once

#include <span>
#include <vector>

namespace pipebench::model {

struct PairedEstimate {
  int blocks = 0;            ///< n
  double a_mean = 0, b_mean = 0;
  double diff = 0;           ///< mean of A_i - B_i (a saving when > 0)
  double diff_half = 0;      ///< 95 % half width of diff; infinite with fewer than 2 blocks
  double ratio = 1;          ///< B / A, geometric mean over blocks
  double ratio_lo = 0, ratio_hi = 0;  ///< its 95 % interval
  /// The interval of diff holds 0: no effect can be told from the noise.
  bool within_noise() const { return !(diff - diff_half > 0 || diff + diff_half < 0); }
};

/// The paired estimate of blocks (a[i], b[i]).
PairedEstimate paired_estimate(std::span<const double> a, std::span<const double> b);

/// t(0.975, df): the two-sided 95 % Student t quantile; df >= 1.
double t_quantile_975(int df);

/// A mean with its two-sided 95 % Student t interval, mean +- t(0.975, n - 1) s / sqrt(n).
struct MeanEstimate {
  int n = 0;
  double mean = 0;
  double half = 0;  ///< infinite with fewer than 2 values
};

/// The mean of `x` (finite values; std::invalid_argument otherwise) with its interval.
MeanEstimate mean_interval(std::span<const double> x);

/// Consecutive values of `x` averaged in blocks of `block` (the last, shorter block left
/// out), for serially correlated series such as a loop's step times: the batch-means
/// method, whose block means are closer to independent than the values.
std::vector<double> block_means(std::span<const double> x, size_t block);

}  // namespace pipebench::model
