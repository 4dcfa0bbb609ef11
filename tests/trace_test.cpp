// The Chrome trace file must open in Perfetto / chrome://tracing: a traceEvents array of
// complete events with microsecond timestamps, one track per thread, named tracks.
#include "measure/trace.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include <nlohmann/json.hpp>

#include "measure/stage_timers.h"
#include "tests/test_data.h"

namespace pipebench {
namespace {

TEST(TraceRecorder, WritesCompleteEventsPerThreadTrack) {
  TraceRecorder rec;
  rec.name_thread("consumer");
  {
    TraceSpan s(&rec, "train_step", "step", -1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  std::thread t([&] {
    rec.name_thread("worker 0");
    TraceSpan s(&rec, "decode", "stage", 7);
  });
  t.join();
  EXPECT_EQ(rec.size(), 2u);

  auto file = testing::scratch_dir("trace") / "run.trace.json";
  rec.write(file);
  nlohmann::json doc;
  std::ifstream(file) >> doc;
  ASSERT_TRUE(doc.contains("traceEvents"));
  std::set<int> tids;
  int complete = 0, names = 0;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X") {
      ++complete;
      tids.insert(e["tid"].get<int>());
      EXPECT_GE(e["dur"].get<double>(), 0);
      if (e["name"] == "train_step") {
        EXPECT_GE(e["dur"].get<double>(), 2000);  // us
      }
      if (e["name"] == "decode") {
        EXPECT_EQ(e["args"]["sample"], 7);
      }
    } else if (e["ph"] == "M") {
      ++names;
    }
  }
  EXPECT_EQ(complete, 2);
  EXPECT_EQ(names, 2);
  EXPECT_EQ(tids.size(), 2u);
}

TEST(TraceRecorder, NamedTracksHoldSpansOfNoThread) {
  TraceRecorder rec;
  const int acc = rec.track("accelerator");
  EXPECT_EQ(rec.track("accelerator"), acc);  // same name, same track
  EXPECT_NE(rec.track("copy engine"), acc);
  const int64_t t0 = now_ns();
  rec.span_on(acc, "train_step", "step", t0, t0 + 25'000'000);
  auto file = testing::scratch_dir("trace-tracks") / "t.json";
  rec.write(file);
  nlohmann::json doc;
  std::ifstream(file) >> doc;
  bool span = false, named = false;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "train_step") {
      span = true;
      EXPECT_EQ(e["tid"].get<int>(), acc);
      EXPECT_NEAR(e["dur"].get<double>(), 25000.0, 1e-6);  // us
    }
    if (e["ph"] == "M" && e["tid"].get<int>() == acc) {
      named = true;
      EXPECT_EQ(e["args"]["name"], "accelerator");
    }
  }
  EXPECT_TRUE(span);
  EXPECT_TRUE(named);
}

TEST(TraceRecorder, CountersAreCounterEventsWithTheirValues) {
  TraceRecorder rec;
  const int64_t t0 = now_ns();
  rec.counter("cpu cores busy", t0 + 1'000'000, 1.5);
  rec.counter("cpu cores busy", t0 + 51'000'000, 2.0);
  auto file = testing::scratch_dir("trace-counters") / "t.json";
  rec.write(file);
  nlohmann::json doc;
  std::ifstream(file) >> doc;
  std::vector<double> values, ts;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "C") continue;
    EXPECT_EQ(e["name"], "cpu cores busy");
    values.push_back(e["args"]["value"].get<double>());
    ts.push_back(e["ts"].get<double>());
  }
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0], 1.5);
  EXPECT_EQ(values[1], 2.0);
  EXPECT_NEAR(ts[1] - ts[0], 50000.0, 1e-6);  // us
}

TEST(TraceRecorder, UnwritablePathNamesTheFile) {
  TraceRecorder rec;
  try {
    rec.write("/proc/definitely/not/here.json");
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/definitely/not/here.json"), std::string::npos);
  }
}

}  // namespace
}  // namespace pipebench
