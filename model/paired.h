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
  /// By round position (the overload below): the round's distinct blocks J and the times R
  /// each was measured; 0 when the plain estimate over blocks was used.
  int positions = 0, repeats = 0;
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

/// The same over a round of images measured R times: block i covered the images at round
/// position positions[i] (>= 0; a position that never occurs is not part of the round).
/// When every position was measured the same number of times R >= 2, the estimand is the saving over the round's images: the mean of all
/// blocks, with an interval from the repeats' scatter around each position's own mean,
/// s^2 = sum (d_jk - mean_j)^2 / (J (R - 1)), half = t(0.975, J (R - 1)) s / sqrt(J R): the
/// fixed-effects one-way layout's error term (Montgomery, Design and Analysis of
/// Experiments, ch. 3), which counts the run-to-run noise and leaves out how much the
/// saving differs from one image to another (the images are the same on every run; the
/// plain interval over blocks would count that spread as noise). The same for the log
/// ratio. Otherwise (one round, unequal repeats) the plain estimate above. Errors: as above,
/// and std::invalid_argument when positions differs in length or holds a negative value.
PairedEstimate paired_estimate(std::span<const double> a, std::span<const double> b,
                               std::span<const int> positions);

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
