// Batch operators: mixup, cutmix, timm's switch between them and label smoothing, against
// naive references written here (copies of the batch, mixed element by element); the
// spec's placement rules for batch operators; and the loader running them: soft labels on
// every batch, bit-identical at any worker count.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "datasets/image_folder.h"
#include "pipeline/loader.h"
#include "tests/test_data.h"
#include "transforms/batch_mix.h"
#include "transforms/pipeline.h"
#include "transforms/spec.h"

namespace pipebench {
namespace {

// A batch of n samples of 3 x h x w with distinct values, and its labels.
struct TestBatch {
  std::vector<float> data;
  std::vector<int32_t> labels;
  std::vector<float> soft;
  BatchData b;
  TestBatch(int n, int h, int w, int classes) {
    data.resize(static_cast<size_t>(n) * 3 * h * w);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 37) % 1001) / 7.0f;
    for (int i = 0; i < n; ++i) labels.push_back(i % classes);
    soft.resize(static_cast<size_t>(n) * classes);
    b = BatchData{data.data(), n, 3, h, w, labels.data(), soft.data(), classes};
    one_hot_labels(b);
  }
};

TEST(BatchMix, OneHotAndBadLabel) {
  TestBatch t(5, 2, 2, 3);
  for (int i = 0; i < 5; ++i)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(t.soft[i * 3 + k], k == i % 3 ? 1.0f : 0.0f);
  t.labels[2] = 3;
  EXPECT_THROW(one_hot_labels(t.b), std::invalid_argument);
}

TEST(BatchMix, MixupPairsEachSampleWithItsFlippedPartner) {
  for (int n : {4, 5}) {
    TestBatch t(n, 3, 4, 4);
    const std::vector<float> x = t.data, y = t.soft;
    const float lam = 0.3f;
    mix_batch(t.b, lam);
    const size_t m = 3 * 3 * 4;
    for (int i = 0; i < n; ++i) {
      const int j = n - 1 - i;
      for (size_t k = 0; k < m; ++k)
        ASSERT_NEAR(t.data[i * m + k], lam * x[i * m + k] + (1 - lam) * x[j * m + k], 1e-4) << i;
      for (int c = 0; c < 4; ++c)
        ASSERT_NEAR(t.soft[i * 4 + c], lam * y[i * 4 + c] + (1 - lam) * y[j * 4 + c], 1e-6);
    }
  }
  TestBatch t(2, 1, 1, 2);
  EXPECT_THROW(mix_batch(t.b, 1.5f), std::invalid_argument);
}

TEST(BatchMix, CutmixSwapsTheBoxAndMixesLabelsByArea) {
  const int n = 4, h = 6, w = 8;
  TestBatch t(n, h, w, 4);
  const std::vector<float> x = t.data;
  const CropWindow box{2, 1, 3, 4};  // x, y, width, height
  const float lam = cut_batch(t.b, box);
  EXPECT_FLOAT_EQ(lam, 1.0f - 12.0f / 48.0f);
  const size_t m = 3 * h * w;
  for (int i = 0; i < n; ++i) {
    const int j = n - 1 - i;
    for (int c = 0; c < 3; ++c)
      for (int y = 0; y < h; ++y)
        for (int xx = 0; xx < w; ++xx) {
          const bool in = xx >= 2 && xx < 5 && y >= 1 && y < 5;
          const size_t off = static_cast<size_t>(c) * h * w + static_cast<size_t>(y) * w + xx;
          ASSERT_EQ(t.data[i * m + off], x[(in ? j : i) * m + off]);
        }
    EXPECT_NEAR(t.soft[i * 4 + t.labels[i]], i == j ? 1.0f : lam, 1e-6);
    EXPECT_NEAR(t.soft[i * 4 + t.labels[j]], i == j ? 1.0f : 1 - lam, 1e-6);
  }
  EXPECT_THROW(cut_batch(t.b, CropWindow{6, 0, 3, 1}), std::invalid_argument);
}

TEST(BatchMix, CutmixBoxStaysInsideAndHasTheRequestedArea) {
  Rng rng(3);
  double area = 0;
  for (int i = 0; i < 2000; ++i) {
    const CropWindow b = cutmix_box(224, 160, 0.75, rng);
    ASSERT_GE(b.x, 0);
    ASSERT_GE(b.y, 0);
    ASSERT_LE(b.x + b.width, 160);
    ASSERT_LE(b.y + b.height, 224);
    area += static_cast<double>(b.width) * b.height;
  }
  // Side ratio sqrt(1 - 0.75) = 0.5: a quarter of the area before clipping, less after.
  const double mean_fraction = area / 2000 / (224.0 * 160.0);
  EXPECT_LT(mean_fraction, 0.25);
  EXPECT_GT(mean_fraction, 0.12);
}

TEST(BatchMix, LabelSmoothingKeepsRowsSummingToOne) {
  TestBatch t(3, 1, 1, 10);
  smooth_labels(t.b, 0.1f);
  for (int i = 0; i < 3; ++i) {
    float sum = 0;
    for (int k = 0; k < 10; ++k) sum += t.soft[i * 10 + k];
    EXPECT_NEAR(sum, 1.0f, 1e-6);
    EXPECT_NEAR(t.soft[i * 10 + t.labels[i]], 0.9f + 0.01f, 1e-6);
    EXPECT_NEAR(t.soft[i * 10 + (t.labels[i] + 1) % 10], 0.01f, 1e-7);
  }
}

TEST(BatchMix, BetaAndGammaHaveTheirMeans) {
  Rng rng(9);
  for (double a : {0.2, 0.8, 1.0, 3.0}) {
    double sum = 0, sum_g = 0;
    const int n = 40000;
    for (int i = 0; i < n; ++i) {
      const double b = rng.beta(a, a);
      ASSERT_GE(b, 0.0);
      ASSERT_LE(b, 1.0);
      sum += b;
      sum_g += rng.gamma(a);
    }
    EXPECT_NEAR(sum / n, 0.5, 0.01) << a;     // Beta(a, a): mean 1/2
    EXPECT_NEAR(sum_g / n, a, 0.03 * a + 0.01) << a;  // Gamma(a, 1): mean a
  }
}

TEST(BatchMix, BetaOfTinyAlphaIsZeroOrOneNeverNaN) {
  Rng rng(2);
  int ones = 0;
  for (int i = 0; i < 20000; ++i) {
    const double b = rng.beta(0.001, 0.001);
    ASSERT_TRUE(b >= 0.0 && b <= 1.0) << b;  // both gammas underflow often at this shape
    ones += b > 0.5;
  }
  EXPECT_NEAR(ones / 20000.0, 0.5, 0.02);
}

TEST(BatchSpec, BatchOperatorsEndTheListOrGoUnderBatch) {
  const auto inline_spec = parse_pipeline_spec(
      "[{center_crop: {size: 16}}, normalize, {mixup: {alpha: 0.2}}, label_smoothing]", "t");
  ASSERT_EQ(inline_spec.transforms.size(), 2u);
  ASSERT_EQ(inline_spec.batch.size(), 2u);
  EXPECT_EQ(inline_spec.batch[0].name, "mixup");
  // The resolved spec round-trips through its one-line YAML.
  const auto again = parse_pipeline_spec(inline_spec.to_yaml(), "t");
  EXPECT_EQ(again.to_yaml(), inline_spec.to_yaml());
  ASSERT_EQ(again.batch.size(), 2u);

  const auto long_form = parse_pipeline_spec(
      "transforms: [{center_crop: {size: 16}}, normalize]\n"
      "batch:\n  - mixup_cutmix: {mixup_alpha: 0.8, cutmix_alpha: 1.0}\n", "f.yaml");
  EXPECT_EQ(long_form.batch.at(0).name, "mixup_cutmix");
  // YAML maps have no order: batch may come before transforms.
  const auto batch_first = parse_pipeline_spec(
      "batch: [mixup]\ntransforms: [{center_crop: {size: 16}}, normalize]\n", "f.yaml");
  EXPECT_EQ(batch_first.transforms.size(), 2u);
  EXPECT_EQ(batch_first.batch.size(), 1u);

  try {
    parse_pipeline_spec("[{center_crop: {size: 16}}, mixup, normalize]", "t");
    FAIL() << "a per-sample operator after a batch operator must be refused";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.column(), 29) << e.what();
    EXPECT_NE(std::string(e.what()).find("after collate"), std::string::npos) << e.what();
  }
  try {
    parse_pipeline_spec("transforms: [normalize]\nbatch: [horizontal_flip]\n", "f.yaml");
    FAIL() << "a per-sample operator under batch must be refused";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.line(), 2) << e.what();
  }
  EXPECT_THROW(Pipeline::build(parse_pipeline_spec(
                   "[{center_crop: {size: 16}}, normalize, {mixup_cutmix: {mixup_alpha: 0, cutmix_alpha: 0}}]", "t")),
               SpecError);
}

// --- through the loader -------------------------------------------------------------------

std::filesystem::path dataset() {
  static const std::filesystem::path root = [] {
    SyntheticOptions o;
    o.count = 24;
    o.classes = 3;
    o.min_width = o.max_width = 64;
    o.min_height = o.max_height = 48;
    o.seed = 5;
    return testing::make_dataset("batch_ops_set", o);
  }();
  return root;
}

struct LoaderRun {
  std::vector<std::vector<float>> data, soft;
};

LoaderRun run_loader(int workers, const std::string& spec) {
  ImageFolder ds(dataset());
  LoaderOptions o;
  o.pipeline = Pipeline::build(parse_pipeline_spec(spec, "t"));
  o.batch_size = 5;
  o.workers = workers;
  o.sampler.seed = 77;
  o.sampler.shuffle = true;
  Loader loader(ds, o);
  LoaderRun r;
  while (auto b = loader.next()) {
    const Batch& x = **b;
    EXPECT_EQ(x.num_classes, 3);
    if (x.soft_labels == nullptr) {
      ADD_FAILURE() << "no soft labels";
      break;
    }
    r.data.emplace_back(x.data, x.data + x.size * x.channels * x.height * x.width);
    r.soft.emplace_back(x.soft_labels, x.soft_labels + x.size * 3);
    for (int i = 0; i < x.size; ++i) {
      const float sum = std::accumulate(x.soft_labels + i * 3, x.soft_labels + i * 3 + 3, 0.0f);
      EXPECT_NEAR(sum, 1.0f, 1e-5);
    }
  }
  const LoaderStats st = loader.stats();
  EXPECT_GT(st.stage_ns[static_cast<int>(Stage::kBatchOps)], 0);
  EXPECT_EQ(st.step_labels.back(), "label_smoothing");
  return r;
}

TEST(BatchLoader, SoftLabelsOnEveryBatchAndTheSameAtAnyWorkerCount) {
  const std::string spec =
      "[{random_resized_crop: {size: 24}}, horizontal_flip, normalize, "
      "{mixup_cutmix: {mixup_alpha: 0.8, cutmix_alpha: 1.0}}, {label_smoothing: {smoothing: 0.1}}]";
  const LoaderRun one = run_loader(1, spec), three = run_loader(3, spec);
  ASSERT_EQ(one.data.size(), 5u);  // 24 samples in batches of 5
  EXPECT_EQ(one.data, three.data);
  EXPECT_EQ(one.soft, three.soft);
  // Mixed: some soft label is strictly between the smoothed off and on values.
  bool mixed = false;
  for (const auto& s : one.soft)
    for (float v : s) mixed = mixed || (v > 0.05f && v < 0.9f);
  EXPECT_TRUE(mixed);
}

}  // namespace
}  // namespace pipebench
