// The cost fit (model/cost_fit.h) against lines worked by hand: slope, intercept and R^2,
// the floor under the line, a class's own line against the pooled one, no line from one
// size, and bad input named.
#include "model/cost_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace pipebench::model {
namespace {

TEST(CostFit, AnExactLineByHand) {
  // (1, 3), (2, 5), (3, 7): 2 ms per megapixel from 1 ms, R^2 1.
  const auto l = fit_line({{1, 3}, {2, 5}, {3, 7}});
  ASSERT_TRUE(l.has_value());
  EXPECT_DOUBLE_EQ(l->ms_per_megapixel, 2.0);
  EXPECT_DOUBLE_EQ(l->intercept_ms, 1.0);
  EXPECT_DOUBLE_EQ(l->r2, 1.0);
  EXPECT_EQ(l->files, 3);
  EXPECT_DOUBLE_EQ(l->predict(24.0), 49.0);  // a large original: far beyond the points
  EXPECT_DOUBLE_EQ(l->predict(0.0), 3.0);    // below the points: the cheapest timed cost
}

TEST(CostFit, ResidualsAndRSquaredByHand) {
  // (0, 1), (1, 3), (2, 2): means 1 and 2; Sxx = 2, Sxy = 1: slope 0.5, intercept 1.5;
  // residuals -0.5, 1, -0.5 (sum of squares 1.5) over Syy = 2: R^2 = 1 - 1.5 / 2 = 0.25.
  const auto l = fit_line({{0, 1}, {1, 3}, {2, 2}});
  ASSERT_TRUE(l.has_value());
  EXPECT_DOUBLE_EQ(l->ms_per_megapixel, 0.5);
  EXPECT_DOUBLE_EQ(l->intercept_ms, 1.5);
  EXPECT_NEAR(l->r2, 0.25, 1e-12);
  EXPECT_DOUBLE_EQ(l->floor_ms, 1.0);
}

TEST(CostFit, NoLineFromOnePointOrOneSize) {
  EXPECT_FALSE(fit_line({}).has_value());
  EXPECT_FALSE(fit_line({{1, 2}}).has_value());
  EXPECT_FALSE(fit_line({{0.19, 2}, {0.19, 3}, {0.19, 2.5}}).has_value());  // photos-in: one size
  // A cost that falls as the pixels grow (small PNGs beside large JPEGs, pooled) is no line:
  // it would price every large file at the cheapest cost.
  EXPECT_FALSE(fit_line({{0.1, 9}, {1, 5}, {5, 2}}).has_value());
  EXPECT_FALSE(fit_line({{0.1, 3}, {1, 3}, {5, 3}}).has_value());  // flat: no slope either
  CostFits none = fit_costs({{{0.19, "jpeg/baseline/4:2:0"}, 2.0}});
  EXPECT_FALSE(none.pooled.has_value());
  EXPECT_FALSE(none.predict({1.0, "jpeg/baseline/4:2:0"}).has_value());
}

TEST(CostFit, AClassWithEnoughFilesHasItsOwnLineTheOthersThePooledOne) {
  // 8 baseline JPEGs at 1 + 2 x MP, 8 progressive ones at 1 + 4 x MP, 3 PNGs (too few for
  // a line of their own).
  std::vector<std::pair<FileHeader, double>> timed;
  for (int i = 1; i <= 8; ++i) {
    timed.push_back({{static_cast<double>(i), "jpeg/baseline/4:2:0"}, 1 + 2.0 * i});
    timed.push_back({{static_cast<double>(i), "jpeg/progressive/4:2:0"}, 1 + 4.0 * i});
  }
  for (int i = 1; i <= 3; ++i) timed.push_back({{static_cast<double>(i), "png"}, 10.0 * i});
  const CostFits f = fit_costs(timed);
  ASSERT_EQ(f.by_class.size(), 2u);
  EXPECT_DOUBLE_EQ(*f.predict({10.0, "jpeg/baseline/4:2:0"}), 21.0);
  EXPECT_DOUBLE_EQ(*f.predict({10.0, "jpeg/progressive/4:2:0"}), 41.0);
  ASSERT_TRUE(f.pooled.has_value());
  EXPECT_EQ(f.pooled->files, 19);
  EXPECT_DOUBLE_EQ(*f.predict({10.0, "png"}), f.pooled->predict(10.0));
  EXPECT_DOUBLE_EQ(*f.predict({10.0, "webp"}), f.pooled->predict(10.0));  // a class never timed
  EXPECT_LT(f.pooled->r2, 1.0);
}

TEST(CostFit, BadInputIsNamed) {
  EXPECT_THROW(fit_line({{1, 1}, {2, std::nan("")}}), std::invalid_argument);
  EXPECT_THROW(fit_line({{-1, 1}, {2, 2}}), std::invalid_argument);
  EXPECT_THROW(fit_line({{1, -1}, {2, 2}}), std::invalid_argument);
}

}  // namespace
}  // namespace pipebench::model
