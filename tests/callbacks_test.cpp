// Training extras (pipeline/callbacks.h): the spec grammar and its errors; each callback
// runs at the steps `every` selects and does its work (log lines appended, a checkpoint of
// the asked size, metric waiting on the step); async tasks run once each, in order, and a
// failed background write is reported by drain(), naming the file.
#include "pipeline/callbacks.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "pipeline/train_step.h"
#include "tests/test_data.h"

namespace pipebench {
namespace {

// A step that only counts synchronize() calls.
class CountingStep : public TrainStep {
 public:
  const std::string& name() const override {
    static const std::string n = "counting";
    return n;
  }
  void step(const StepInput&) override {}
  void synchronize() override { ++syncs; }
  double measure_compute_ms(int, int, int, int, int) override { return 1; }
  double compute_gflop(int, int, int, int) const override { return 0; }
  int syncs = 0;
};

// The callbacks' files, found under $TMPDIR while the runner lives.
struct ScratchTmp {
  ScratchTmp() : dir(testing::scratch_dir("callbacks")) {
    old = std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "";
    setenv("TMPDIR", dir.c_str(), 1);
  }
  ~ScratchTmp() {
    if (old.empty()) unsetenv("TMPDIR");
    else setenv("TMPDIR", old.c_str(), 1);
  }
  std::filesystem::path only_subdir() const {
    std::filesystem::path found;
    for (const auto& e : std::filesystem::directory_iterator(dir)) found = e.path();
    return found;
  }
  std::filesystem::path dir;
  std::string old;
};

TEST(Callbacks, SpecGrammar) {
  const auto c = parse_callback("checkpoint:mib=16,every=10,async");
  EXPECT_EQ(c.kind, "checkpoint");
  EXPECT_EQ(c.mib, 16);
  EXPECT_EQ(c.every, 10);
  EXPECT_TRUE(c.async);
  EXPECT_EQ(c.text(), "checkpoint:every=10,mib=16,async");
  EXPECT_EQ(parse_callback(c.text()).text(), c.text());
  EXPECT_EQ(c.label(), "checkpoint-async");
  const auto l = parse_callback("log");
  EXPECT_EQ(l.every, 1);
  EXPECT_FALSE(l.async);
  EXPECT_EQ(parse_callback("metric:every=5,sync").every, 5);
}

TEST(Callbacks, BadSpecsNameTheTextAndTheReason) {
  const auto message = [](const std::string& text) {
    try {
      parse_callback(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message("print").find("--callback=print: unknown callback 'print'"), std::string::npos);
  EXPECT_NE(message("log:every=0").find("every must be"), std::string::npos);
  EXPECT_NE(message("log:every=x").find("needs a number"), std::string::npos);
  EXPECT_NE(message("log:mib=3").find("unknown option 'mib' for log"), std::string::npos);
  EXPECT_NE(message("checkpoint:mib=0").find("mib must be"), std::string::npos);
  EXPECT_NE(message("metric:async").find("no async form"), std::string::npos);
}

TEST(Callbacks, EachRunsAtItsStepsAndDoesItsWork) {
  ScratchTmp tmp;
  CountingStep step;
  {
    CallbackRunner r({parse_callback("log:every=2"), parse_callback("metric:every=3"),
                      parse_callback("checkpoint:mib=0.25,every=5,async")},
                     step);
    const auto dir = tmp.only_subdir();
    for (int64_t s = 0; s < 10; ++s) r.after_step(s);
    r.drain();
    EXPECT_EQ(r.runs()[0], 5);  // steps 0 2 4 6 8
    EXPECT_EQ(r.runs()[1], 4);  // 0 3 6 9
    EXPECT_EQ(r.runs()[2], 2);  // 0 5
    EXPECT_EQ(step.syncs, 4);
    std::ifstream log(dir / "log-0.txt");
    int lines = 0;
    for (std::string line; std::getline(log, line);) {
      EXPECT_EQ(line.rfind("step " + std::to_string(2 * lines) + " ", 0), 0u) << line;
      ++lines;
    }
    EXPECT_EQ(lines, 5);
    EXPECT_EQ(std::filesystem::file_size(dir / "checkpoint-2.bin"), (1u << 20) / 4);
    // The sync log's appends and fsyncs took time on this thread; the async checkpoint's
    // cost here is only the enqueue.
    EXPECT_GT(r.thread_ms()[0], 0.0);
    EXPECT_EQ(r.thread_ms().size(), 3u);
  }
  EXPECT_TRUE(std::filesystem::is_empty(tmp.dir)) << "the runner removes its folder";
}

TEST(Callbacks, AFailedBackgroundWriteIsReportedByDrain) {
  ScratchTmp tmp;
  CountingStep step;
  CallbackRunner r({parse_callback("checkpoint:mib=0.01,async")}, step);
  const auto dir = tmp.only_subdir();
  std::filesystem::create_directory(dir / "checkpoint-0.bin");  // a folder where the file goes
  r.after_step(0);
  try {
    r.drain();
    FAIL() << "drain() did not report the failed write";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("checkpoint-0.bin"), std::string::npos) << e.what();
  }
  std::filesystem::remove(dir / "checkpoint-0.bin");
}

}  // namespace
}  // namespace pipebench
