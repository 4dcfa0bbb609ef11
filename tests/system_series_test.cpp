// The system sampler's series in the run's JSON (bench/run/system_series.h): the rate it was
// made with (--system-sample-hz), the user / system split in cores, and the per-core lists.
#include "bench/run/system_series.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace pipebench::bench {
namespace {

SystemSample sample(const char* stat, int64_t t_ns) {
  SystemSample s;
  s.t_ns = t_ns;
  s.cpus = parse_proc_stat(stat);
  return s;
}

// Per core, 100 ticks an interval. First interval (0.5 s): cpu0 +60 user +40 system, cpu1
// +100 idle; second (0.5 s): cpu0 +100 idle, cpu1 +25 user +25 idle +50 softirq.
constexpr const char* kA = "cpu0 100 0 100 100 0 0 0 0\ncpu1 100 0 100 100 0 0 0 0\n";
constexpr const char* kB = "cpu0 160 0 140 100 0 0 0 0\ncpu1 100 0 100 200 0 0 0 0\n";
constexpr const char* kC = "cpu0 160 0 140 200 0 0 0 0\ncpu1 125 0 100 225 0 0 50 0\n";

TEST(SystemSeries, WritesItsRateAndTheCpuSplitPerInterval) {
  SystemSeries series(50);
  EXPECT_TRUE(series.empty());
  series.add("BM_EndToEnd/x/emulated/workers:2",
             {sample(kA, 0), sample(kB, 500'000'000), sample(kC, 1'000'000'000)});
  ASSERT_FALSE(series.empty());
  const auto doc = nlohmann::json::parse(series.to_json());
  EXPECT_DOUBLE_EQ(doc.at("rate_hz").get<double>(), 50.0);
  const auto& c = doc.at("cases").at("BM_EndToEnd/x/emulated/workers:2");
  EXPECT_EQ(c.at("t_s"), nlohmann::json({0.5, 1.0}));
  // Interval 1: 100 of 200 ticks busy -> 1 core: 0.6 in user mode, 0.4 in kernel mode.
  // Interval 2: 75 of 200 busy -> 0.75 cores: 0.25 user, 0.5 kernel (softirq).
  const auto near = [](const nlohmann::json& got, std::vector<double> want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i].get<double>(), want[i], 1e-9) << i;
  };
  near(c.at("cpu_busy_cores"), {1.0, 0.75});
  near(c.at("cpu_user_cores"), {0.6, 0.25});
  near(c.at("cpu_system_cores"), {0.4, 0.5});
  const auto& cores = c.at("core_util_pct");
  ASSERT_EQ(cores.size(), 2u);
  near(cores[0], {100.0, 0.0});
  near(cores[1], {0.0, 75.0});
  EXPECT_FALSE(c.contains("gpu_util_pct")) << "no sample had NVML's figures";
}

TEST(SystemSeries, TheDefaultRateIsTwentyAndOneSampleMakesNoSeries) {
  SystemSeries series;
  series.add("BM_Loader/x/workers:1", {sample(kA, 0)});
  EXPECT_TRUE(series.empty());
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(series.to_json()).at("rate_hz").get<double>(), 20.0);
}

}  // namespace
}  // namespace pipebench::bench
