// The straggler prediction (pipeline/dist/straggler.h) on distributions whose answers are
// worked out by hand, and the report's ranks section (report/ranks.h) on a run built in
// memory: global figures recomputed from the per-rank rows, slowest rank, imbalance.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "pipeline/dist/straggler.h"
#include "pipeline/dist/sync_step.h"
#include "report/format.h"
#include "report/ranks.h"
#include "tests/report_rows.h"

namespace pipebench {
namespace {

using dist::predict_synchronised_step;

// Ring allreduce, worked by hand: 8 ranks, 1 GB on 100 GB/s, 10 us per ring step:
// 2 x 7 / 8 x 1e9 B / 1e11 B/s = 17.5 ms, plus 2 x 7 x 10 us = 0.14 ms.
TEST(SyncStep, RingAllreduceTimeIsTheBusBandwidthFormula) {
  const dist::LinkModel link{100, 10};
  EXPECT_NEAR(dist::ring_allreduce_ms(1e9, 8, link), 17.64, 1e-9);
  EXPECT_NEAR(dist::ring_allreduce_ms(1e9, 2, link), 10.02, 1e-9);  // 2 x 1/2 x 10 ms + 2 x 10 us
  EXPECT_EQ(dist::ring_allreduce_ms(1e9, 1, link), 0);                // nothing to exchange
  EXPECT_THROW(dist::ring_allreduce_ms(-1, 2, link), std::invalid_argument);
  EXPECT_THROW(dist::ring_allreduce_ms(1, 0, link), std::invalid_argument);
  EXPECT_THROW(dist::ring_allreduce_ms(1, 2, dist::LinkModel{0, 5}), std::invalid_argument);
  EXPECT_THROW(dist::ring_allreduce_ms(1, 2, dist::LinkModel{1, -1}), std::invalid_argument);
  EXPECT_EQ(dist::parse_sync_mode("emulated"), dist::SyncMode::kEmulated);
  EXPECT_STREQ(dist::sync_mode_name(dist::SyncMode::kEmulated), "emulated");
  EXPECT_THROW(dist::parse_sync_mode("ring"), std::invalid_argument);
}

TEST(Straggler, OneRankConstantDataIsTheLargerOfDataAndCompute) {
  const auto p = predict_synchronised_step({{10, 10, 10}}, 4, 2);
  EXPECT_NEAR(p.iid_max_ms, 10, 1e-9);
  EXPECT_NEAR(p.queue_ms, 10, 1e-9);
  EXPECT_NEAR(p.naive_ms, 10, 1e-9);
  const auto q = predict_synchronised_step({{10, 10}}, 30, 2);
  EXPECT_NEAR(q.iid_max_ms, 30, 1e-9);
  EXPECT_NEAR(q.queue_ms, 30, 1e-9);
}

// Rank 0 always 10 ms, rank 1 0 or 20 ms with equal odds: E[max] = (10 + 20) / 2 = 15,
// while the mean-based bound sees 10 on both ranks.
TEST(Straggler, ExpectedMaxOfTwoRanks) {
  const std::vector<std::vector<double>> data = {{10}, {0, 20}};
  const auto p = predict_synchronised_step(data, 0, 1);
  EXPECT_NEAR(p.naive_ms, 10, 1e-9);
  EXPECT_NEAR(p.iid_max_ms, 15, 0.3);  // 20000 draws: standard error 0.035
  // Prefetch 1 and no compute: batch k starts when step k-1 starts, so each step takes
  // the larger of the two draws: the simulated loop is E[max] as well.
  EXPECT_NEAR(p.queue_ms, 15, 0.3);
  EXPECT_EQ(p.slowest_rank, 0);  // means 10 and 10: the first of the largest
  // A deep prefetch queue lets rank 0's batches wait for rank 1's late ones: towards 10.
  const auto deep = predict_synchronised_step(data, 0, 64);
  EXPECT_LT(deep.queue_ms, 12.0);
  EXPECT_GE(deep.queue_ms, 10.0 - 0.3);
}

// Two ranks whose loaders deliver in bunches, as two workers do: intervals 2 and 70 ms in
// turn (a mean of 36), every bunch of two 72 ms. Drawn in runs of 2 the cumulative
// arrivals keep that pace (the ranks' bunches out of phase now and then, which costs a
// little: between 36 and 40 ms with a 25 ms compute); drawn one by one, runs of 70s that
// never happen make the synchronised step much longer.
TEST(Straggler, BunchedArrivalsNeedBlockDraws) {
  std::vector<double> bunched;
  for (int i = 0; i < 40; ++i) bunched.push_back(i % 2 == 0 ? 2.0 : 70.0);
  const std::vector<std::vector<double>> data = {bunched, bunched};
  dist::StragglerOptions runs;
  runs.block = 2;
  const auto blocked = predict_synchronised_step(data, 25, 2, runs);
  EXPECT_GE(blocked.queue_ms, 36.0 - 0.5);
  EXPECT_LE(blocked.queue_ms, 40.0);
  const auto single = predict_synchronised_step(data, 25, 2);
  EXPECT_GT(single.queue_ms, 1.15 * blocked.queue_ms) << single.queue_ms;
  // A block longer than the samples is all of them, in order: both ranks in phase, 36 ms.
  dist::StragglerOptions huge;
  huge.block = 1000;
  EXPECT_NEAR(predict_synchronised_step(data, 25, 2, huge).queue_ms, 36.0, 0.1);
}

TEST(Straggler, SlowestRankIsTheLargestMean) {
  EXPECT_EQ(predict_synchronised_step({{5, 5}, {8, 9}, {7}}, 1, 2).slowest_rank, 1);
}

TEST(Straggler, BadInputNamesTheRank) {
  EXPECT_THROW(predict_synchronised_step({}, 1, 2), std::invalid_argument);
  try {
    predict_synchronised_step({{1}, {}}, 1, 2);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(predict_synchronised_step({{-1}}, 1, 2), std::invalid_argument);
  EXPECT_THROW(predict_synchronised_step({{1}}, 1, 0), std::invalid_argument);
}

TEST(Straggler, ErrorPercent) {
  EXPECT_DOUBLE_EQ(dist::prediction_error_pct(11, 10), 10.0);
  EXPECT_DOUBLE_EQ(dist::prediction_error_pct(9, 10), -10.0);
  EXPECT_DOUBLE_EQ(dist::prediction_error_pct(9, 0), 0.0);
}

// A two-rank run as rank 0 writes it: per-rank counters and the job's figures bench
// aggregated from them once (bench/run/ranks.cpp: the means, the minimum, the total, the
// slowest rank and the imbalance, worked out by hand here), which pipebench-report reads.
nlohmann::json two_rank_run() {
  using report::testing::row;
  const std::string name = "BM_EndToEnd/imagenet_train/emulated/workers:2/iterations:30/real_time";
  nlohmann::json c = {{"workers", 2}, {"batch_size", 64}, {"world_size", 2},
                      {"data_ms", 30.0}, {"compute_ms", 25.0}, {"step_ms", 31.0},
                      {"items_per_second", 4000.0},
                      {"data_ms_mean", 25.0}, {"au_pct", 75.0}, {"au_pct_min", 70.0}, {"au_pass", 0},
                      {"images_per_second_total", 4100.0}, {"load_imbalance", 30.0 / 25.0},
                      {"slowest_rank", 1},
                      {"straggler_pred_ms", 30.69}, {"straggler_iid_max_ms", 32.55},
                      {"rank0_data_ms", 20.0}, {"rank0_step_ms", 31.0}, {"rank0_au_pct", 80.0},
                      {"rank0_images_per_second", 2000.0}, {"rank0_sync_wait_ms", 9.0},
                      {"rank0_decode_ms", 0.4}, {"rank0_read_ms", 0.01}, {"rank0_transform_ms", 0.1},
                      {"rank1_data_ms", 30.0}, {"rank1_step_ms", 31.0}, {"rank1_au_pct", 70.0},
                      {"rank1_images_per_second", 2100.0}, {"rank1_sync_wait_ms", 0.5},
                      {"rank1_decode_ms", 0.9}, {"rank1_read_ms", 0.02}, {"rank1_transform_ms", 0.1}};
  return {{"context", {{"recipe", "imagenet_train"}, {"batch_size", "64"}, {"hardware_threads", "2"},
                       {"world_size", "2"}, {"hosts", "a,b"}, {"sync", "barrier"}}},
          {"benchmarks", {row(name, c)}}};
}

TEST(ReportRanks, GlobalFiguresFromThePerRankRows) {
  const auto r = report::rank_figures(report::parse_run(two_rank_run().dump()));
  ASSERT_EQ(r.cases.size(), 1u);
  const auto& c = r.cases[0];
  EXPECT_EQ(r.world, 2);
  EXPECT_EQ(r.hosts, "a,b");
  ASSERT_EQ(c.ranks.size(), 2u);
  EXPECT_DOUBLE_EQ(c.images_per_second, 4100.0);  // 2000 + 2100
  EXPECT_DOUBLE_EQ(c.au_pct, 75.0);               // (80 + 70) / 2
  EXPECT_DOUBLE_EQ(c.au_pct_min, 70.0);
  EXPECT_FALSE(c.au_pass);                        // 75 < 90
  EXPECT_DOUBLE_EQ(c.step_ms, 31.0);
  EXPECT_EQ(c.slowest_rank, 1);                   // data 30 > 20
  EXPECT_DOUBLE_EQ(c.load_imbalance, 30.0 / 25.0);
  ASSERT_TRUE(c.pred_error_pct);
  EXPECT_NEAR(*c.pred_error_pct, 100 * (30.69 - 31.0) / 31.0, 1e-9);
  EXPECT_NEAR(*c.iid_error_pct, 100 * (32.55 - 31.0) / 31.0, 1e-9);
}

TEST(ReportRanks, TextHasTheTableTheSlowestRankAndThePrediction) {
  const auto text = report::format_text(report::testing::report_of(two_rank_run()));
  EXPECT_NE(text.find("Ranks (mpirun: world size 2, hosts a,b; sync barrier)"), std::string::npos) << text;
  EXPECT_NE(text.find("4100 images/s over 2 ranks"), std::string::npos) << text;
  EXPECT_NE(text.find("MLPerf AU >= 90 %: FAIL"), std::string::npos) << text;
  EXPECT_NE(text.find("Load imbalance (max / mean data time): 1.20. Slowest rank: 1"), std::string::npos) << text;
  EXPECT_NE(text.find("decode 0.900"), std::string::npos) << text;
  EXPECT_NE(text.find("30.69 ms per step"), std::string::npos) << text;
  EXPECT_NE(text.find("-1.0 %, within 5 %"), std::string::npos) << text;
}

TEST(ReportRanks, OneProcessRunHasNoRanksSection) {
  auto doc = two_rank_run();
  doc["benchmarks"][0]["world_size"] = 1;
  const auto rep = report::testing::report_of(doc);
  EXPECT_TRUE(rep.ranks.empty());
  EXPECT_EQ(report::format_text(rep).find("Ranks ("), std::string::npos);
}

// A sweep of workers per rank at 2 ranks: AU (mean over ranks) 60, 92.5, 99 at 1, 2, 4
// workers; plus a callbacks case at 1 worker with AU 95, which is not a sweep point.
TEST(ReportRanks, CoresPerRankIsTheFewestWorkersReachingNinety) {
  using report::testing::row;
  auto doc = two_rank_run();
  const auto at = [&](int w, double au0, double au1, const std::string& suffix = "") {
    const std::string name = "BM_EndToEnd/imagenet_train/emulated/workers:" + std::to_string(w) +
                             suffix + "/iterations:30/real_time";
    nlohmann::json c = doc["benchmarks"][0];
    c["workers"] = w;
    c["rank0_au_pct"] = au0;
    c["rank1_au_pct"] = au1;
    c["au_pct"] = (au0 + au1) / 2;  // as bench aggregates them
    c["au_pct_min"] = std::min(au0, au1);
    c["au_pass"] = (au0 + au1) / 2 >= 90 ? 1 : 0;
    return row(name, c);
  };
  doc["benchmarks"] = {at(1, 55, 65), at(2, 90, 95), at(4, 99, 99), at(1, 95, 95, "/callbacks:log")};
  const auto r = report::rank_figures(report::parse_run(doc.dump()));
  ASSERT_TRUE(r.cores);
  ASSERT_TRUE(r.cores->workers);
  EXPECT_EQ(*r.cores->workers, 2);
  EXPECT_DOUBLE_EQ(r.cores->au_pct, 92.5);
  ASSERT_EQ(r.cores->sweep.size(), 3u);  // the callbacks case left out
  std::string text;
  report::append_ranks_text(text, r);
  EXPECT_NE(text.find("this pipeline needs 2 cores per accelerator; 2 ranks on a node need 4 cores "
                      "(this node has 2: measured oversubscribed)"), std::string::npos) << text;
  // None reaching 90 %: the best is named.
  doc["benchmarks"] = {at(1, 55, 65), at(2, 80, 84)};
  const auto none = report::rank_figures(report::parse_run(doc.dump()));
  ASSERT_TRUE(none.cores);
  EXPECT_FALSE(none.cores->workers);
  EXPECT_EQ(none.cores->best_workers, 2);
  EXPECT_DOUBLE_EQ(none.cores->au_pct, 82.0);
}

}  // namespace
}  // namespace pipebench
