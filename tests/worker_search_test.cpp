// --workers=auto's search (pipeline/worker_search.h) on fake cost models whose answer is
// known by brute force: it finds the smallest count reaching AU >= 90 %, never measures a
// count above the budget or one count twice, and says when nothing within the budget
// reaches it.
#include "pipeline/worker_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

namespace pipebench {
namespace {

// A loader whose per-batch time falls as 1 / w up to `cores`, with a per-worker efficiency
// (0.8: each added worker gives 80 % of a core) and no gain beyond the cores.
struct FakeLoader {
  double per_sample_ms;
  int batch;
  int cores;
  double efficiency;
  std::map<int, int> calls;
  double operator()(int w) {
    ++calls[w];
    const double effective = 1 + (std::min(w, cores) - 1) * efficiency;
    return per_sample_ms * batch / effective;
  }
};

// The answer by brute force over 1..budget: the smallest w with AU >= 90 %, or 0.
int brute_force(FakeLoader f, double compute_ms, int budget) {
  for (int w = 1; w <= budget; ++w)
    if (100.0 * compute_ms / std::max(f(w), compute_ms) >= kTargetAuPct) return w;
  return 0;
}

TEST(WorkerSearch, FindsTheSmallestCountOverManyCostModels) {
  int cases = 0;
  for (double per_sample : {0.2, 0.5, 1.3, 2.9})
    for (double eff : {1.0, 0.8, 0.5})
      for (double compute : {10.0, 25.0, 60.0})
        for (int budget : {1, 2, 4, 16}) {
          FakeLoader f{per_sample, 64, 32, eff, {}};
          const int want = brute_force(f, compute, budget);
          const WorkerSearch r = search_workers(std::ref(f), per_sample, 64, compute, budget, 64);
          SCOPED_TRACE(testing::Message() << "per_sample " << per_sample << " eff " << eff
                                          << " compute " << compute << " budget " << budget);
          for (const auto& [w, n] : f.calls) {
            EXPECT_LE(w, budget);
            EXPECT_GE(w, 1);
            EXPECT_EQ(n, 1) << "count " << w << " measured twice";
          }
          if (want > 0) {
            EXPECT_TRUE(r.reached);
            EXPECT_EQ(r.chosen, want);
          } else {
            EXPECT_FALSE(r.reached);
            EXPECT_EQ(r.chosen, budget) << "the highest AU is at the budget here";
          }
          ++cases;
        }
  EXPECT_EQ(cases, 144);
}

TEST(WorkerSearch, AGoodFirstGuessCostsTwoMeasurements) {
  // 0.5 ms x 64 = 32 ms at 1 worker; a 25 ms step needs ceil(32 * 0.9 / 25) = 2.
  FakeLoader f{0.5, 64, 8, 1.0, {}};
  const WorkerSearch r = search_workers(std::ref(f), 0.5, 64, 25, 8);
  EXPECT_EQ(r.chosen, 2);
  ASSERT_EQ(r.trials.size(), 2u);  // 2 passes, 1 checked and fails
  EXPECT_EQ(r.trials[0].workers, 2);
  EXPECT_EQ(r.trials[1].workers, 1);
  EXPECT_NEAR(r.trials[1].au_pct, 100.0 * 25 / 32, 1e-9);
  EXPECT_NE(r.summary(25).find("chose 2 of a budget of 8 cores"), std::string::npos);
}

TEST(WorkerSearch, SubLinearScalingIsCorrectedFromMeasurements) {
  // The per-sample guess says 4; at 30 % efficiency 4 workers are far from enough.
  FakeLoader f{1.5, 64, 64, 0.3, {}};
  const double compute = 25;
  const WorkerSearch r = search_workers(std::ref(f), 1.5, 64, compute, 64, 64);
  EXPECT_TRUE(r.reached);
  EXPECT_EQ(r.chosen, brute_force(f, compute, 64));
  EXPECT_LE(r.trials.size(), 6u) << "a guided search, not a sweep";
}

TEST(WorkerSearch, ReportsWhenTheBudgetIsTooSmall) {
  FakeLoader f{2.0, 64, 2, 1.0, {}};  // 64 ms at 2 cores, flat beyond
  const WorkerSearch r = search_workers(std::ref(f), 2.0, 64, 25, 2);
  EXPECT_FALSE(r.reached);
  EXPECT_EQ(r.chosen, 2);
  EXPECT_NE(r.summary(25).find("no count within the budget"), std::string::npos);
}

TEST(WorkerSearch, RefusesMeaninglessInputs) {
  const auto m = [](int) { return 1.0; };
  EXPECT_THROW(search_workers(m, 0, 64, 25, 2), std::invalid_argument);
  EXPECT_THROW(search_workers(m, 1, 64, NAN, 2), std::invalid_argument);
  EXPECT_THROW(search_workers(m, 1, 0, 25, 2), std::invalid_argument);
  EXPECT_THROW(search_workers(m, 1, 64, 25, 0), std::invalid_argument);
}

}  // namespace
}  // namespace pipebench
