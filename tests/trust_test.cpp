// The report's notes from the system metrics (report/trust.h): saturated cores, a warm
// run and a loader whose speed drifted, on hand-built runs whose answer is known.
#include "report/trust.h"

#include <gtest/gtest.h>

#include "model/legacy.h"

namespace pipebench::report {
namespace {

// Cases named as written by a pipebench before the run record: their keys from the
// legacy adapter (model/legacy.h), as pipebench-report reads such a file.
BenchRun run_with(std::map<std::string, std::map<std::string, double>> cases) {
  BenchRun r;
  for (auto& [name, values] : cases) {
    const model::CaseKey key = model::legacy_key(name);
    r.cases[key.name()] = CaseMeans{key, std::move(values), 1};
    r.keys[key.name()] = key;
  }
  return r;
}

bool has(const Trust& t, TrustWarning::Kind k) {
  for (const auto& w : t.warnings)
    if (w.kind == k) return true;
  return false;
}

const std::string kE1 = "BM_EndToEnd/p/emulated/workers:1", kE2 = "BM_EndToEnd/p/emulated/workers:2";
const std::string kL1 = "BM_Loader/p/workers:1", kL2 = "BM_Loader/p/workers:2";

TEST(TrustSystemMetrics, SaturatedCoresWhenTheLargestCountIsDataBoundOnBusyCores) {
  const auto trust = [&](double busy_cores, double data2) {
    const BenchRun r = run_with({{kE1, {{"data_ms", 60}, {"compute_ms", 25}, {"cpu_busy_cores_mean", 1.0}}},
                                 {kE2, {{"data_ms", data2}, {"compute_ms", 25}, {"cpu_busy_cores_mean", busy_cores}}}});
    return check_trust(r, SweepCases{{}, {{1, kE1}, {2, kE2}}}, 64, 2.0, std::nullopt);
  };
  const Trust saturated = trust(1.97, 31);
  ASSERT_TRUE(has(saturated, TrustWarning::Kind::kSaturatedCores));
  EXPECT_NE(saturated.warnings.back().text.find("2 workers kept 1.97 of 2 cores busy"), std::string::npos)
      << saturated.warnings.back().text;
  EXPECT_FALSE(has(trust(1.5, 31), TrustWarning::Kind::kSaturatedCores)) << "cores were free";
  EXPECT_FALSE(has(trust(1.97, 20), TrustWarning::Kind::kSaturatedCores)) << "compute-bound and faster";
  // Without the counter (an older run) nothing is said.
  const BenchRun old = run_with({{kE2, {{"data_ms", 31}, {"compute_ms", 25}}}});
  EXPECT_FALSE(has(check_trust(old, SweepCases{{}, {{2, kE2}}}, 64, 2.0, std::nullopt),
                   TrustWarning::Kind::kSaturatedCores));
}

TEST(TrustSystemMetrics, WarmRunOnlyWhenEveryLoaderReadNothingFromStorage) {
  const auto trust = [&](double read1, double read2) {
    const BenchRun r = run_with({{kL1, {{"data_ms", 60}, {"process_read_mib_per_s", read1}}},
                                 {kL2, {{"data_ms", 31}, {"process_read_mib_per_s", read2}}}});
    return check_trust(r, SweepCases{{{1, kL1}, {2, kL2}}, {}}, 64, 2.0, std::nullopt);
  };
  EXPECT_TRUE(has(trust(0, 0), TrustWarning::Kind::kWarmRun));
  EXPECT_FALSE(has(trust(0, 3.5), TrustWarning::Kind::kWarmRun));
  const BenchRun unknown = run_with({{kL1, {{"data_ms", 60}}}});
  EXPECT_FALSE(has(check_trust(unknown, SweepCases{{{1, kL1}}, {}}, 64, 2.0, std::nullopt),
                   TrustWarning::Kind::kWarmRun));
  EXPECT_STREQ(kind_name(TrustWarning::Kind::kWarmRun), "warm_run");
}

TEST(TrustSystemMetrics, LoaderDriftAboveFivePercentEitherWay) {
  const auto trust = [&](double drift) {
    const BenchRun r = run_with({{kE1, {{"data_ms", 60}, {"compute_ms", 25}, {"data_drift_pct", drift}}},
                                 {kE2, {{"data_ms", 31}, {"compute_ms", 25}}}});
    return check_trust(r, SweepCases{{}, {{1, kE1}, {2, kE2}}}, 64, 2.0, std::nullopt);
  };
  for (const double drift : {7.5, -6.0}) {
    const Trust t = trust(drift);
    ASSERT_TRUE(has(t, TrustWarning::Kind::kDrift)) << drift;
    const std::string& text = t.warnings.back().text;
    EXPECT_EQ(t.warnings.back().case_name, kE1);
    EXPECT_NE(text.find(drift > 0 ? "7.5 % slower" : "6.0 % faster"), std::string::npos) << text;
  }
  EXPECT_FALSE(has(trust(4.9), TrustWarning::Kind::kDrift));
  // Compute-bound whatever the drift: 18 ms of data, 20 % slower, is still under 25 ms.
  const BenchRun bound = run_with({{kE1, {{"data_ms", 18}, {"compute_ms", 25}, {"data_drift_pct", 20}}}});
  EXPECT_FALSE(has(check_trust(bound, SweepCases{{}, {{1, kE1}}}, 64, 2.0, std::nullopt),
                   TrustWarning::Kind::kDrift));
  EXPECT_FALSE(has(trust(-4.9), TrustWarning::Kind::kDrift));
  EXPECT_STREQ(kind_name(TrustWarning::Kind::kDrift), "loader_drift");
}

TEST(TrustSystemMetrics, LoopCpuDriftWhenTheWorkersGotSlowerInTheLoop) {
  const auto trust = [&](double data, double drift) {
    const BenchRun r = run_with({{kE1, {{"data_ms", data}, {"compute_ms", 25}, {"loop_cpu_drift_pct", drift}}}});
    return check_trust(r, SweepCases{{}, {{1, kE1}}}, 64, 2.0, std::nullopt);
  };
  const Trust t = trust(37, 11.6);
  ASSERT_TRUE(has(t, TrustWarning::Kind::kLoopCpu));
  EXPECT_NE(t.warnings.back().text.find("11.6 % more CPU per sample in the loop"), std::string::npos)
      << t.warnings.back().text;
  EXPECT_FALSE(has(t, TrustWarning::Kind::kDrift)) << "the windows around the loop agreed";
  EXPECT_FALSE(has(trust(37, 3.9), TrustWarning::Kind::kLoopCpu));
  EXPECT_FALSE(has(trust(18, 11.6), TrustWarning::Kind::kLoopCpu)) << "compute-bound either way";
  EXPECT_STREQ(kind_name(TrustWarning::Kind::kLoopCpu), "loop_cpu_drift");
}

}  // namespace
}  // namespace pipebench::report
