// Files that change under a running loader (the fault matrix, tests/README.md): after the
// first batch of a two-epoch run, 5 files are deleted and 5 truncated to a third of their
// bytes. Expected outcomes, never a crash or a hang (ctest's 300 s timeout is the guard):
//   OnError::kSkip  every epoch ends; the second epoch (which reads every file after the
//                   change) skips exactly the 10 changed files, each named with its reason
//                   ("No such file" / truncated); every other sample is delivered once per
//                   epoch.
//   OnError::kStop  next() throws LoaderError naming one of the changed files, and again on
//                   every later call; the destructor returns.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "datasets/file_io.h"
#include "datasets/image_folder.h"
#include "pipeline/loader.h"
#include "tests/test_data.h"
#include "transforms/recipes.h"

namespace pipebench {
namespace {

namespace fs = std::filesystem;

constexpr int kImages = 40;

fs::path make_set(const std::string& name) {
  SyntheticOptions o;
  o.count = kImages;
  o.classes = 4;
  o.min_width = o.max_width = 96;
  o.min_height = o.max_height = 80;
  o.seed = 17;
  return testing::make_dataset(name, o);
}

LoaderOptions options(OnError on_error) {
  LoaderOptions o;
  o.pipeline = build_recipe("imagenet_train", 32);
  o.batch_size = 6;
  o.workers = 2;
  o.prefetch_depth_batches = 2;
  o.epochs = 2;
  o.on_error = on_error;
  o.sampler.seed = 99;
  return o;
}

// Deletes samples 3, 7, ..., 19 and truncates 23, 27, ..., 39 (every fourth, by index);
// returns their paths.
std::set<std::string> change_files(const ImageFolder& ds) {
  std::set<std::string> changed;
  for (int i = 3; i < kImages; i += 4) {
    const fs::path& p = ds.sample(static_cast<size_t>(i)).path;
    if (i < 20) {
      fs::remove(p);
    } else {
      std::vector<uint8_t> bytes;
      read_file(p, bytes);
      write_file(p, bytes.data(), bytes.size() / 3);
    }
    changed.insert(p.string());
  }
  return changed;
}

TEST(FaultLoader, FilesDeletedAndTruncatedMidRunAreSkipped) {
  ImageFolder ds(make_set("fault_loader_skip"));
  Loader loader(ds, options(OnError::kSkip));
  std::vector<int> per_epoch(2, 0);
  auto first = loader.next();
  ASSERT_TRUE(first.has_value());
  per_epoch[(*first)->epoch] += (*first)->size;
  first->release();
  const std::set<std::string> changed = change_files(ds);
  while (auto b = loader.next()) per_epoch[(*b)->epoch] += (*b)->size;
  const LoaderStats st = loader.stats();
  // Epoch 2 reads every file after the change: exactly the 10 changed ones fail there;
  // epoch 1 loses those not read before the change (at most all 10).
  EXPECT_EQ(per_epoch[1], kImages - 10);
  EXPECT_GE(per_epoch[0], kImages - 10);
  EXPECT_EQ(st.skipped, 2 * kImages - per_epoch[0] - per_epoch[1]);
  for (const auto& s : st.skipped_samples) {
    EXPECT_TRUE(changed.count(s.path)) << s.path << " was not changed";
    const bool deleted = !fs::exists(s.path);
    EXPECT_NE(s.reason.find(deleted ? "No such file" : "truncated"), std::string::npos)
        << s.path << ": " << s.reason;
  }
}

TEST(FaultLoader, FilesDeletedAndTruncatedMidRunStopTheLoaderNamingTheFile) {
  ImageFolder ds(make_set("fault_loader_stop"));
  Loader loader(ds, options(OnError::kStop));
  auto first = loader.next();
  ASSERT_TRUE(first.has_value());
  first->release();
  const std::set<std::string> changed = change_files(ds);
  std::string file;
  try {
    while (loader.next()) {
    }
    FAIL() << "the loader ran both epochs over deleted files";
  } catch (const LoaderError& e) {
    file = e.file();
    EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
  }
  EXPECT_TRUE(changed.count(file)) << "'" << file << "' was not changed";
  EXPECT_THROW(loader.next(), LoaderError);  // and again: no hang, no half batch
}

}  // namespace
}  // namespace pipebench
