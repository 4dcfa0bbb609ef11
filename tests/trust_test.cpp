// The report's notes from the system metrics (report/trust.h): saturated cores, a warm
// run and a loader whose speed drifted, on hand-built runs whose answer is known. And the
// Trust section's form (issue 28 item 4): one line per cause naming its cases, the most
// consequential first, at most 5 lines unless --verbose.
#include "report/trust.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model/legacy.h"
#include "report/format.h"
#include "tests/report_rows.h"

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

// Heterogeneity is not drift (issue 34 item 3): the window after the loop held the large
// originals of a heavy-tailed folder, its samples' own CPU per sample 320 % up, its loader
// 335 % slower: (1 + 3.35) / (1 + 3.20) - 1 = 3.6 % of the same work slower, no warning. A
// CPU hog (two busy threads) doubles the wall time of the same work: still a warning.
TEST(TrustSystemMetrics, HeterogeneityExplainedByTheSamplesWorkIsNotDrift) {
  const auto trust = [&](double drift, double work) {
    const BenchRun r = run_with({{kE1, {{"data_ms", 60}, {"compute_ms", 25}, {"data_drift_pct", drift},
                                        {"data_work_drift_pct", work}}}});
    return check_trust(r, SweepCases{{}, {{1, kE1}}}, 64, 2.0, std::nullopt);
  };
  EXPECT_FALSE(has(trust(335.4, 320.0), TrustWarning::Kind::kDrift));
  const Trust hog = trust(110.0, 3.0);
  ASSERT_TRUE(has(hog, TrustWarning::Kind::kDrift));
  // (1 + 1.10) / (1 + 0.03) - 1 = 103.9 % slower for the same work.
  EXPECT_NE(hog.warnings.back().text.find("103.9 % slower after for the same work"), std::string::npos)
      << hog.warnings.back().text;
  // Costlier images and a slower machine at once: the rest still warns.
  EXPECT_TRUE(has(trust(335.4, 100.0), TrustWarning::Kind::kDrift));
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

TEST(TrustSystemMetrics, TheFilesTheLoopMetExplainItsCpuDrift) {
  // The mix at 1 worker (a default run): the loop's window met cheaper files than the windows
  // alone (-11.9 % at their own cost alone) and spent 13.8 % less CPU per sample: -2.1 % for
  // the same files, no warning. The same files 20 % slower in the loop: a warning, net.
  const auto trust = [&](double drift, double work) {
    const BenchRun r = run_with({{kE1, {{"data_ms", 113}, {"compute_ms", 25}, {"loop_cpu_drift_pct", drift},
                                        {"loop_work_drift_pct", work}}}});
    return check_trust(r, SweepCases{{}, {{1, kE1}}}, 64, 2.0, std::nullopt);
  };
  EXPECT_FALSE(has(trust(-13.8, -11.9), TrustWarning::Kind::kLoopCpu));
  const Trust slower = trust(8.0, -10.0);  // (1.08 / 0.90 - 1) = 20.0 % more for the same files
  ASSERT_TRUE(has(slower, TrustWarning::Kind::kLoopCpu));
  EXPECT_NE(slower.warnings.back().text.find("20.0 % more CPU per sample in the loop than with the loader alone "
                                             "for the same files"),
            std::string::npos)
      << slower.warnings.back().text;
}

// --- the Trust section: one line per cause ---------------------------------------------------

const std::string kE4 = "BM_EndToEnd/p/emulated/workers:4";

// Three end-to-end cases whose loader drifted (data-bound: 60, 31, 17 ms of data against 10
// ms of compute), and the same three with loop CPU drift.
Trust drifted(double d1, double d2, double d4) {
  const BenchRun r = run_with(
      {{kE1, {{"data_ms", 60}, {"compute_ms", 10}, {"data_drift_pct", d1}, {"loop_cpu_drift_pct", 3.9}}},
       {kE2, {{"data_ms", 31}, {"compute_ms", 10}, {"data_drift_pct", d2}, {"loop_cpu_drift_pct", 11.6}}},
       {kE4, {{"data_ms", 17}, {"compute_ms", 10}, {"data_drift_pct", d4}, {"loop_cpu_drift_pct", 7.0}}}});
  return check_trust(r, SweepCases{{}, {{1, kE1}, {2, kE2}, {4, kE4}}}, 64, 8.0, std::nullopt);
}

TEST(TrustSection, SeveralCasesWithOneCauseGiveOneLineNamingThemAll) {
  const Trust t = drifted(5.6, 15.1, 9.0);
  ASSERT_EQ(t.warnings.size(), 5u);  // 3 loader drifts, 2 loop CPU drifts (3.9 % is within 5 %)
  const auto lines = trust_lines(t, false);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].rfind("Warning: Loader drift (3 cases: " + kE1 + ", " + kE2 + ", " + kE4 + "): ", 0), 0u)
      << lines[0];
  // The most extreme figure, where, and the range.
  EXPECT_NE(lines[0].find("was up to 15.1 % slower after (at " + kE2 + "; 5.6 to 15.1 % slower across "
                          "the 3 cases)"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind("Warning: Loop CPU drift (2 cases: " + kE2 + ", " + kE4 + "): ", 0), 0u)
      << lines[1];
  EXPECT_NE(lines[1].find("up to 11.6 % more CPU per sample in the loop"), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("7.0 to 11.6 % more across the 2 cases"), std::string::npos) << lines[1];

  // Either way: the extreme is the largest magnitude, the range says both directions.
  const auto mixed = trust_lines(drifted(-6.0, 5.5, -12.3), false);
  EXPECT_NE(mixed[0].find("was up to 12.3 % faster after (at " + kE4 + "; from 12.3 % faster to 5.5 % "
                          "slower across the 3 cases)"), std::string::npos) << mixed[0];

  // One case: its own sentence, named once.
  const auto one = trust_lines(drifted(1.0, 7.5, 2.0), false);
  EXPECT_EQ(one[0].rfind("Warning: Loader drift (" + kE2 + "): its loader, measured alone before and "
                         "after the loop, was 7.5 % slower after: ", 0), 0u) << one[0];

  const auto groups = group_warnings(t);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].cases, (std::vector<std::string>{kE1, kE2, kE4}));
  EXPECT_EQ(groups[0].warnings, 3u);
  EXPECT_EQ(groups[1].warnings, 2u);
}

// Every kind once, in the reverse of the consequence order, two cases for some.
Trust every_kind() {
  using K = TrustWarning::Kind;
  Trust t;
  t.warnings = {{K::kWarmRun, "", "The loader cases read 0 B/s from storage."},
                {K::kSaturatedCores, kE4, kE4 + ": 4 workers kept 7.90 of 8 cores busy.", 7.9},
                {K::kContention, kL2, kL2 + ": CPU per sample rises (+20 %).", 20},
                {K::kPhysicalFloor, kL2, kL2 + ": data 10 % below the floor.", 10},
                {K::kLoopCpu, kE1, kE1 + ": its workers spent 8.0 % more CPU.", 8},
                {K::kDrift, kE1, kE1 + ": its loader was 6.0 % slower after.", 6},
                {K::kPhysicalFloor, kE2, kE2 + ": data 30 % below the floor.", 30},
                {K::kBusyMachine, "", "The machine was busy during the run."}};
  return t;
}

TEST(TrustSection, OrderedByConsequence) {
  using K = TrustWarning::Kind;
  std::vector<K> kinds;
  for (const auto& g : group_warnings(every_kind())) kinds.push_back(g.kind);
  EXPECT_EQ(kinds, (std::vector<K>{K::kBusyMachine, K::kDrift, K::kLoopCpu, K::kPhysicalFloor,
                                   K::kContention, K::kSaturatedCores, K::kWarmRun}));
  for (size_t i = 1; i < kinds.size(); ++i)
    EXPECT_LT(consequence_rank(kinds[i - 1]), consequence_rank(kinds[i]));
}

TEST(TrustSection, AtMostFiveLinesUnlessVerbose) {
  const Trust t = every_kind();
  const auto lines = trust_lines(t, false);
  ASSERT_EQ(lines.size(), kTrustMaxLines);
  EXPECT_EQ(lines[0], "Warning: Busy machine: The machine was busy during the run.");
  EXPECT_EQ(lines[1], "Warning: Loader drift (" + kE1 + "): its loader was 6.0 % slower after.");
  EXPECT_EQ(lines[3].rfind("Warning: Physical floor (2 cases: " + kL2 + ", " + kE2 + "): data per batch "
                           "up to 30 % below the physical floor", 0), 0u) << lines[3];
  EXPECT_EQ(lines[4], "(3 more: pipebench-report --verbose)");

  // Five causes fit: no "more" line.
  Trust five = t;
  five.warnings.erase(five.warnings.begin(), five.warnings.begin() + 2);  // no warm run, no saturated
  const auto fit = trust_lines(five, false);
  ASSERT_EQ(fit.size(), 5u);
  EXPECT_EQ(fit.back().rfind("Warning: Contention (", 0), 0u) << fit.back();

  // --verbose: every per-case warning as found, no cap.
  const auto all = trust_lines(t, true);
  ASSERT_EQ(all.size(), t.warnings.size());
  for (size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], "Warning: " + t.warnings[i].text);

  EXPECT_TRUE(trust_lines(Trust{}, false).empty());
  EXPECT_TRUE(trust_lines(Trust{}, true).empty());
}

TEST(TrustSection, TheReportPrintsGroupsAndItsJsonKeepsEveryWarning) {
  using nlohmann::json;
  using testing::row;
  const auto e2e = [](int w, double data, double drift) {
    return row("BM_EndToEnd/imagenet_train/emulated/workers:" + std::to_string(w) + "/iterations:30/real_time",
               {{"workers", w}, {"data_ms", data}, {"compute_ms", 10}, {"step_ms", data + 0.5},
                {"batch_size", 64}, {"data_drift_pct", drift}});
  };
  const json doc = {{"context", {{"recipe", "imagenet_train"}, {"baseline", "emulated"}, {"batch_size", "64"},
                                 {"hardware_threads", "8"}, {"cores_available", "8.000000"},
                                 {"dataset", "/data/photos"}, {"busy_machine", "false"}}},
                    {"benchmarks", {e2e(1, 64, 6.5), e2e(2, 32, -8.0), e2e(4, 16, 15.1)}}};
  Report r = testing::report_of(doc);
  ASSERT_EQ(r.trust.warnings.size(), 3u);
  const std::string text = format_text(r);
  EXPECT_NE(text.find("\nTrust:\n  Warning: Loader drift (3 cases: BM_EndToEnd/imagenet_train/emulated/workers:1, "),
            std::string::npos) << text;
  EXPECT_EQ(text.find("Warning: BM_EndToEnd/"), std::string::npos) << text;
  r.trust.verbose = true;
  const std::string verbose = format_text(r);
  EXPECT_NE(verbose.find("  Warning: BM_EndToEnd/imagenet_train/emulated/workers:4: its loader"), std::string::npos)
      << verbose;

  const json j = to_json(r);
  ASSERT_EQ(j["trust_warnings"].size(), 3u);
  ASSERT_EQ(j["trust_warnings_grouped"].size(), 1u);
  EXPECT_EQ(j["trust_warnings_grouped"][0]["kind"], "loader_drift");
  EXPECT_EQ(j["trust_warnings_grouped"][0]["cases"].size(), 3u);
  EXPECT_EQ(j["trust_warnings_grouped"][0]["warnings"], 3);
}

}  // namespace
}  // namespace pipebench::report
