// pipebench-report on a user's loop (report/regions.h): the JSON a RegionTimer writes
// (measure/region_timer.h), on a fake clock, read back by the report's own parser, gives
// the per-step breakdown and the verdict worked out by hand below.
#include "report/format.h"
#include "report/regions.h"
#include "report/report.h"
#include "report/run.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <string>

#include "measure/region_timer.h"
#include "tests/report_rows.h"
#include "tests/fake_region_clock.h"
#include "tests/test_data.h"

namespace pipebench::report {
namespace {

using nlohmann::json;

using FakeClock = pipebench::testing::FakeRegionClock;

// Four steps of 10 ms each: IO 4, ToDevice 1, Forward 2, Backward 2, Other 0.5, and 0.5 ms
// in none of them. By hand, per step: step 10 ms, data 4 ms = 40 % stall (> 10 %:
// data-bound), compute 4 ms = AU 40 %, unaccounted 0.5 ms; batch 32 -> 3200 images/s; a
// loader that keeps up leaves 10 - 4 = 6 ms.
std::filesystem::path data_bound_loop() {
  int64_t now = 0;
  RegionTimer timer(std::make_unique<FakeClock>(&now));
  const auto phase = [&](Region key, double ms) {
    timer.start(key);
    now += static_cast<int64_t>(ms * 1e6);
    timer.end(key);
  };
  for (int step = 0; step < 4; ++step) {
    auto batch = timer.scope(Region::Batch);
    phase(Region::IO, 4);
    phase(Region::ToDevice, 1);
    phase(Region::Forward, 2);
    phase(Region::Backward, 2);
    phase(Region::Other, 0.5);
    now += 500000;  // 0.5 ms outside every phase
  }
  timer.set_context("batch_size", "32");
  const auto file = pipebench::testing::scratch_dir("regions_report") / "loop.json";
  timer.write_json(file);
  return file;
}

TEST(RegionsReport, ARegionTimerFileGetsTheLoopsVerdict) {
  const Report r = build_report(read_run(data_bound_loop()));
  ASSERT_TRUE(r.regions_only);
  const RegionProfile& p = r.regions;
  EXPECT_DOUBLE_EQ(p.steps, 4);
  EXPECT_TRUE(p.step_from_batch);
  EXPECT_NEAR(p.step_ms, 10, 1e-9);
  EXPECT_NEAR(p.data_ms, 4, 1e-9);
  EXPECT_NEAR(p.compute_ms, 4, 1e-9);
  EXPECT_NEAR(p.to_device_ms, 1, 1e-9);
  EXPECT_NEAR(p.other_ms, 0.5, 1e-9);
  EXPECT_NEAR(p.unaccounted_ms, 0.5, 1e-9);
  EXPECT_NEAR(p.stall_pct, 40, 1e-9);
  EXPECT_NEAR(p.au_pct, 40, 1e-9);
  EXPECT_TRUE(r.data_bound());
  const std::string text = format_text(r);
  EXPECT_NE(text.find("Verdict: data-bound"), std::string::npos) << text;
  EXPECT_NE(text.find("3200 images/s at batch 32"), std::string::npos) << text;
  EXPECT_NE(text.find("up to 4.00 ms, to 6.00 ms"), std::string::npos) << text;
  const json j = to_json(r);
  EXPECT_EQ(j["data_bound"], true);
  EXPECT_NEAR(j["region_timers"]["stall_pct"].get<double>(), 40, 1e-9);
}

// Without a Batch key the step is the sum of the phases: IO 0.5 + Forward 8 + Other 1.5 =
// 10 ms per step over 10 steps (IO's count); stall 5 % (<= 10 %: not data-bound), AU 80 %.
TEST(RegionsReport, WithoutBatchTheStepIsTheSumOfThePhases) {
  using testing::row;
  const json doc = {{"benchmarks",
                     {row("RegionTimer/IO", {{"count", 10}, {"total_ms", 5.0}}),
                      row("RegionTimer/Forward", {{"count", 10}, {"total_ms", 80.0}}),
                      row("RegionTimer/Other", {{"count", 5}, {"total_ms", 15.0}})}}};
  const Report r = testing::report_of(doc);
  ASSERT_TRUE(r.regions_only);
  EXPECT_FALSE(r.regions.step_from_batch);
  EXPECT_DOUBLE_EQ(r.regions.steps, 10);
  EXPECT_DOUBLE_EQ(r.regions.step_ms, 10);
  EXPECT_DOUBLE_EQ(r.regions.stall_pct, 5);
  EXPECT_DOUBLE_EQ(r.regions.au_pct, 80);
  EXPECT_FALSE(r.data_bound());
  EXPECT_EQ(r.batch, 0);  // no batch_size in the context: no images/s
  EXPECT_NE(format_text(r).find("Verdict: not data-bound"), std::string::npos);
}

TEST(RegionsReport, ARowWithoutTotalIsAnErrorNamingIt) {
  using testing::row;
  const json doc = {{"benchmarks", {row("RegionTimer/IO", {{"count", 10}})}}};
  try {
    testing::report_of(doc);
    FAIL() << "expected ReportError";
  } catch (const ReportError& e) {
    EXPECT_NE(std::string(e.what()).find("RegionTimer/IO has no total_ms"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace pipebench::report
