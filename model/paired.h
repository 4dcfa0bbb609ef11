// A paired comparison: A (today) and B (a candidate) measured in alternating blocks over
// the same images, A B B A, so that a machine whose speed drifts linearly during the quad
// moves both sides alike (each block's A is the mean of its two A runs, B likewise).
//
// Method: the differences d_i = A_i - B_i of the n blocks (ms per sample) and their mean
// with a two-sided 95 % Student t interval, mean +- t(0.975, n - 1) * s / sqrt(n) (any
// statistics text; the quantile from Boost.Math's students_t); the ratio B / A from the
// mean of log(B_i / A_i) with the same t interval, exponentiated (a ratio's interval
// stays positive). When the same round of images was measured several times, the
// interval by round position instead (the overload below). Paired benchmarking as Tango.rs does it (shared/seeds), and the A/A
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

/// The same over a round of images measured R times, the round being a share
/// `round_share` (0 < f <= 1: the round's images / the dataset's) of the dataset: block i
/// covered the images at round position positions[i] (>= 0; a position that never occurs
/// is not part of the round). When every position was measured the same number of times
/// R >= 2 (J positions), the interval comes from the log ratios l = log(B/A), which a
/// change of the machine's speed during one round leaves as they are (A and B move
/// alike), unlike the differences in ms. With m_j each position's mean of l, L their mean,
///   s_w^2 = sum (l_jk - m_j)^2 / (J (R - 1))   the repeats' scatter: the machine's noise,
///   s_m^2 = sum (m_j - L)^2 / (J - 1)            the positions' spread: images differ,
///   var(L) = ((1 - f) s_m^2 + f s_w^2 / R) / J,
/// the variance of a mean over J blocks of images drawn from the dataset's, with the
/// finite-population correction, plus the noise of R repeats (Cochran, Sampling
/// Techniques, 3rd ed., ch. 9-10: cluster sampling and two-stage designs): a round that is
/// the whole dataset (f = 1) leaves only the noise, s_w^2 / (J R); a small share of a large
/// dataset, about s_m^2 / J. Degrees of freedom by Satterthwaite's approximation (J (R - 1)
/// when f = 1). ratio = exp(L) with exp(L +- t half); diff stays the mean of A - B and its
/// half width is a_mean x (ratio_hi - ratio_lo) / 2, so that within_noise() agrees with the
/// ratio's interval holding 1. Otherwise (one round, unequal repeats) the plain estimate
/// above. Errors: as above, and std::invalid_argument when positions differs in length or
/// holds a negative value, or round_share is not in (0, 1].
PairedEstimate paired_estimate(std::span<const double> a, std::span<const double> b,
                               std::span<const int> positions, double round_share = 1.0);

/// How a paired case splits a round of `n` images into blocks: their sizes, in order. The
/// paired case runs block p in the order A B B A when p is even (B A A B when odd) and
/// exchanges the sides' scratch when p / 2 is odd, so that within one round the four
/// combinations come in groups of four consecutive blocks. The count is a multiple of 4
/// wherever that leaves blocks of at least `min_block` images (n >= 4 min_block), about
/// n / `target` blocks (`target` >= `min_block` >= 1: images per block), and the images
/// left over go one each to the first blocks, so that each combination covers the same
/// number of images but for (n mod k) mod 4 images, which tip it by one image each. A
/// round cut into 9 blocks (44 images, 5 per block) gave A B B A five blocks and B A A B
/// four (a single round of large originals: photos-full). Smaller
/// rounds: one block per `min_block` images (at least one block). Errors:
/// std::invalid_argument when target < min_block or min_block < 1.
std::vector<size_t> paired_block_sizes(size_t n, size_t target, size_t min_block);

/// The order in which a paired case meets a round's images, given its blocks' sizes
/// (paired_block_sizes): out[j] is the round position of the j-th image met. The blocks
/// come in groups of `group` (4: one of each order and placement) and the positions are
/// dealt to the groups in turn, k mod groups, each up to its blocks' total, so that every
/// group's images are spread over the whole round: a case that stops after its first
/// groups (a round of large originals longer than its time budget) still averages images
/// from the whole dataset, not its first classes. A permutation of 0 .. sum(sizes) - 1.
/// Errors: std::invalid_argument when group < 1.
std::vector<size_t> group_spread_order(const std::vector<size_t>& block_sizes, size_t group);

/// t(0.975, df): the two-sided 95 % Student t quantile; df >= 1 (not necessarily whole:
/// Satterthwaite's degrees of freedom).
double t_quantile_975(double df);

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
