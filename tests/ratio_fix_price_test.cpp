// decode:auto's price file by file (model/ratio_fix_price.h) against cases worked by hand:
// a measured file keeps its own ratio, an unmeasured one takes its header class's nearest
// neighbours' (a progressive original is not priced at a baseline one's saving), the
// step is the simulation of those costs, and bad input is named.
#include "model/ratio_fix_price.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace pipebench::model {
namespace {

FileHeader header(double mp, const std::string& klass) { return {mp, klass}; }

TEST(RatioFixPrice, AnUnmeasuredFileTakesItsClassNeighboursRatio) {
  // Measured: small baseline files save half; large progressive ones save 10 %; large
  // baseline ones save 80 %.
  std::vector<std::pair<std::optional<FileHeader>, double>> m;
  for (int i = 0; i < 6; ++i) m.emplace_back(header(0.2 + 0.01 * i, "jpeg/baseline/4:2:0"), 0.5);
  for (int i = 0; i < 3; ++i) m.emplace_back(header(15.0 + i, "jpeg/progressive/4:2:0"), 0.9);
  for (int i = 0; i < 3; ++i) m.emplace_back(header(11.0 + i, "jpeg/baseline/4:2:0"), 0.2);
  // A 16 MP progressive file: its own class's three, not the nearer-in-size baseline ones.
  EXPECT_DOUBLE_EQ(*predicted_ratio(header(16.0, "jpeg/progressive/4:2:0"), m), 0.9);
  // A 12 MP baseline file: its five nearest baseline files, the three large ones (0.2) and
  // two small ones (0.5) -> 0.2, where the class's median would read 0.5.
  EXPECT_DOUBLE_EQ(*predicted_ratio(header(12.0, "jpeg/baseline/4:2:0"), m), 0.2);
  EXPECT_DOUBLE_EQ(*predicted_ratio(header(0.3, "jpeg/baseline/4:2:0"), m), 0.5);
  // A class nobody measured (PNG): the nearest in size among all: 15 (0.9), 13 (0.2), 16
  // (0.9), 12 (0.2), 17 (0.9) MP -> 0.9.
  EXPECT_DOUBLE_EQ(*predicted_ratio(header(14.0, "png"), m), 0.9);
  // No header: the median of every measured ratio (three 0.2, six 0.5, three 0.9).
  EXPECT_DOUBLE_EQ(*predicted_ratio(std::nullopt, m), 0.5);
  EXPECT_FALSE(predicted_ratio(header(1.0, "png"), {}).has_value());
}

TEST(RatioFixPrice, EachFileAtItsOwnRatioThroughTheStepModel) {
  // 16 files of 1 ms and one of 40 ms; the 1 ms files measured at ratio 0.5, the large one
  // (progressive, not measured) predicted from a measured progressive neighbour at 0.9.
  std::map<std::size_t, double> today;
  std::vector<PairedImageCost> measured;
  std::map<std::size_t, FileHeader> headers;
  for (std::size_t i = 0; i < 16; ++i) {
    today[i] = 1.0;
    measured.push_back({i, 0.8, 0.4});
    headers[i] = header(0.25, "jpeg/baseline/4:2:0");
  }
  today[16] = 40.0;
  headers[16] = header(18.0, "jpeg/progressive/4:2:0");
  measured.push_back({99, 30.0, 27.0});  // a probed file today's windows did not time
  headers[99] = header(17.0, "jpeg/progressive/4:2:0");
  const HeaderLookup lookup = [&](std::size_t i) -> std::optional<FileHeader> {
    const auto it = headers.find(i);
    return it == headers.end() ? std::nullopt : std::optional(it->second);
  };
  LoaderShape l;
  l.batch = 4;
  l.workers = 2;
  l.prefetch_depth = 2;
  LoopShape loop;
  loop.compute_ms = 3;
  const auto p = price_ratio_fix(today, measured, lookup, 1.5, 1.0, l, loop);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->files, 17);
  EXPECT_EQ(p->measured, 16);
  EXPECT_NEAR(p->measured_cost_pct, 100.0 * 16 / 56, 1e-9);
  EXPECT_NEAR(p->cost_ratio, (16 * 0.5 + 40 * 0.9) / 56, 1e-12);
  StepModelInput in;
  in.loader = l;
  in.loop = loop;
  for (std::size_t i = 0; i < 16; ++i) in.sample_ms.push_back(1.0 * 0.5 * 1.5);
  in.sample_ms.push_back(40.0 * 0.9 * 1.5);
  EXPECT_DOUBLE_EQ(p->step.step_ms, predict_step(in).step_ms);
  // A mean saving spread over every file (the round's, 0.5) would price the large file at
  // 20 ms: well under the file-by-file price.
  for (auto& ms : in.sample_ms) ms = ms > 10 ? 40.0 * 0.5 * 1.5 : ms;
  EXPECT_GT(p->step.step_ms, predict_step(in).step_ms + 0.5);
}

TEST(RatioFixPrice, AFileMeasuredTwiceIsPooledAndTooFewGiveNoPrice) {
  std::map<std::size_t, double> today;
  std::vector<PairedImageCost> measured;
  for (std::size_t i = 0; i < 8; ++i) {
    today[i] = 2.0;
    measured.push_back({i, 1.0, 0.5});
  }
  measured.push_back({0, 3.0, 3.0});  // file 0 again: (0.5 + 3) / (1 + 3) = 0.875
  LoaderShape l;
  l.batch = 1;
  LoopShape loop;
  const auto p = price_ratio_fix(today, measured, nullptr, 1.0, 1.0, l, loop);
  ASSERT_TRUE(p.has_value());
  EXPECT_NEAR(p->cost_ratio, (7 * 0.5 + 0.875) / 8, 1e-12);
  // Seven files measured (a_ms 0 does not count): no price.
  measured.resize(7);
  measured.push_back({7, 0.0, 0.5});
  EXPECT_FALSE(price_ratio_fix(today, measured, nullptr, 1.0, 1.0, l, loop).has_value());
  EXPECT_THROW(price_ratio_fix(today, measured, nullptr, 0.0, 1.0, l, loop), std::invalid_argument);
  measured[0].b_ms = std::nan("");
  EXPECT_THROW(price_ratio_fix(today, measured, nullptr, 1.0, 1.0, l, loop), std::invalid_argument);
}

}  // namespace
}  // namespace pipebench::model
