// Region timers (measure/region_timer.h) on a fake clock the test moves by hand: nesting,
// overlap, handles, the scoped guard, percentiles against hand-computed values, the JSON
// shape parsed back, and the trace spans. The CUDA-event clock skips without a device.
#include "measure/region_timer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <stdexcept>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "device/cuda.h"
#include "measure/stage_timers.h"
#include "measure/trace.h"
#include "tests/fake_region_clock.h"
#include "tests/test_data.h"

namespace pipebench {
namespace {

using FakeClock = testing::FakeRegionClock;

constexpr int64_t kMs = 1000000;

struct Fixture {
  int64_t base = now_ns();
  int64_t now = base;
  RegionTimer timer{std::make_unique<FakeClock>(&now)};
  void at(double ms) { now = base + static_cast<int64_t>(ms * kMs); }
  std::map<std::string, RegionStats> by_key() {
    std::map<std::string, RegionStats> out;
    for (auto& s : timer.stats()) out[s.key] = s;
    return out;
  }
};

TEST(RegionTimer, SameKeyNestsInnermostFirst) {
  Fixture f;
  f.at(0);
  f.timer.start(Region::Batch);  // outer
  f.at(2);
  f.timer.start(Region::Batch);  // inner
  f.at(5);
  f.timer.end(Region::Batch);  // closes the inner: 3 ms
  f.at(10);
  f.timer.end(Region::Batch);  // the outer: 10 ms, not shortened by the inner
  const auto s = f.by_key().at("Batch");
  EXPECT_EQ(s.count, 2);
  EXPECT_DOUBLE_EQ(s.total_ms, 13);
  EXPECT_DOUBLE_EQ(s.p50_ms, 6.5);  // two values 3, 10: halfway
}

// IO over [0, 3) ms and ToDevice over [1, 6) ms: two keys that overlap.
void overlap_io_and_to_device(Fixture& f) {
  f.at(0);
  f.timer.start(Region::IO);
  f.at(1);
  f.timer.start(Region::ToDevice);
  f.at(3);
  f.timer.end(Region::IO);
  f.at(6);
  f.timer.end(Region::ToDevice);
}

TEST(RegionTimer, DifferentKeysOverlap) {
  Fixture f;
  overlap_io_and_to_device(f);
  const auto s = f.by_key();
  EXPECT_DOUBLE_EQ(s.at("IO").total_ms, 3);
  EXPECT_DOUBLE_EQ(s.at("ToDevice").total_ms, 5);
}

TEST(RegionTimer, HandlesCloseOverlappingRegionsOfOneKey) {
  Fixture f;
  f.at(0);
  const auto a = f.timer.start("allreduce");  // a user key
  f.at(2);
  const auto b = f.timer.start("allreduce");
  f.at(5);
  f.timer.end(a);  // the first one, though the second is innermost: 5 ms
  f.at(9);
  f.timer.end(b);  // 7 ms
  const auto s = f.by_key().at("allreduce");
  EXPECT_EQ(s.count, 2);
  EXPECT_DOUBLE_EQ(s.total_ms, 12);
  EXPECT_THROW(f.timer.end(a), std::logic_error);  // closed already
}

TEST(RegionTimer, EndWithoutStartNamesTheKey) {
  Fixture f;
  try {
    f.timer.end(Region::Forward);
    FAIL() << "expected std::logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("\"Forward\""), std::string::npos) << e.what();
  }
}

TEST(RegionTimer, ScopeEndsAtDestructionAndToleratesAnEarlyEnd) {
  Fixture f;
  f.at(1);
  {
    auto r = f.timer.scope(Region::Forward);
    f.at(4);
  }
  {
    auto r = f.timer.scope(Region::Backward);
    f.at(6);
    f.timer.end(Region::Backward);  // closed by key: the guard must not close it again
    f.at(50);
  }
  const auto s = f.by_key();
  EXPECT_DOUBLE_EQ(s.at("Forward").total_ms, 3);
  EXPECT_EQ(s.at("Backward").count, 1);
  EXPECT_DOUBLE_EQ(s.at("Backward").total_ms, 2);
}

TEST(RegionTimer, OpenRegionsAreNotCounted) {
  Fixture f;
  f.timer.start(Region::Epoch);
  EXPECT_TRUE(f.timer.stats().empty());
}

// Durations 4, 1, 10, 3, 2 ms (in that order). By hand, sorted 1 2 3 4 10: total 20,
// mean 4; Hyndman-Fan 7 (numpy.percentile's default): p50 at h = 4 x 0.5 = 2 -> 3;
// p99 at h = 4 x 0.99 = 3.96 -> 4 + 0.96 x (10 - 4) = 9.76.
void five_steps(Fixture& f) {
  double t = 0;
  for (double d : {4.0, 1.0, 10.0, 3.0, 2.0}) {
    f.at(t);
    f.timer.start(Region::IO);
    t += d;
    f.at(t);
    f.timer.end(Region::IO);
    t += 1;
  }
}

TEST(RegionTimer, PercentilesMatchHandComputedValues) {
  Fixture f;
  five_steps(f);
  const auto s = f.by_key().at("IO");
  EXPECT_EQ(s.count, 5);
  EXPECT_DOUBLE_EQ(s.total_ms, 20);
  EXPECT_DOUBLE_EQ(s.mean_ms, 4);
  EXPECT_DOUBLE_EQ(s.p50_ms, 3);
  EXPECT_NEAR(s.p99_ms, 9.76, 1e-12);
  EXPECT_DOUBLE_EQ(region_percentile({7.0}, 0.99), 7);
  EXPECT_DOUBLE_EQ(region_percentile({}, 0.5), 0);
}

TEST(RegionTimer, JsonIsAGoogleBenchmarkRunThatParsesBack) {
  Fixture f;
  five_steps(f);
  f.at(100);
  f.timer.start(Region::Forward);
  f.at(106);
  f.timer.end(Region::Forward);
  f.timer.set_context("batch_size", "32");
  const auto file = testing::scratch_dir("region_timer") / "regions.json";
  f.timer.write_json(file);
  nlohmann::json doc;
  std::ifstream(file) >> doc;
  ASSERT_TRUE(doc["benchmarks"].is_array());
  ASSERT_EQ(doc["benchmarks"].size(), 2u);
  const auto& io = doc["benchmarks"][0];  // first-use order
  EXPECT_EQ(io["name"], "RegionTimer/IO");
  EXPECT_EQ(io["run_name"], "RegionTimer/IO");
  EXPECT_EQ(io["run_type"], "iteration");
  EXPECT_EQ(io["time_unit"], "ms");
  EXPECT_EQ(io["iterations"], 5);
  EXPECT_DOUBLE_EQ(io["real_time"].get<double>(), 4);
  EXPECT_DOUBLE_EQ(io["cpu_time"].get<double>(), 4);
  EXPECT_EQ(io["count"], 5);
  EXPECT_DOUBLE_EQ(io["total_ms"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(io["p50_ms"].get<double>(), 3);
  EXPECT_NEAR(io["p99_ms"].get<double>(), 9.76, 1e-12);
  EXPECT_EQ(doc["benchmarks"][1]["name"], "RegionTimer/Forward");
  EXPECT_DOUBLE_EQ(doc["benchmarks"][1]["mean_ms"].get<double>(), 6);
  EXPECT_EQ(doc["context"]["batch_size"], "32");
  EXPECT_EQ(doc["context"]["region_timer"], "fake");
}

TEST(RegionTimer, UnwritableFileNamesIt) {
  Fixture f;
  try {
    f.timer.write_json("/nonexistent-dir/regions.json");
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/regions.json"), std::string::npos);
  }
}

TEST(RegionTimer, TraceSpansOnATrackPerKey) {
  Fixture f;
  overlap_io_and_to_device(f);
  TraceRecorder trace;
  f.timer.write_trace(trace);
  const auto file = testing::scratch_dir("region_timer") / "regions.trace.json";
  trace.write(file);
  nlohmann::json doc;
  std::ifstream(file) >> doc;
  std::map<std::string, nlohmann::json> spans;
  std::map<int, std::string> track_names;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["cat"] == "region") spans[e["name"]] = e;
    if (e["ph"] == "M" && e.contains("args") && e["args"].contains("name"))
      track_names[e["tid"].get<int>()] = e["args"]["name"];
  }
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_NEAR(spans["IO"]["dur"].get<double>(), 3000, 1e-6);  // us
  EXPECT_NEAR(spans["ToDevice"]["dur"].get<double>(), 5000, 1e-6);
  EXPECT_NEAR(spans["ToDevice"]["ts"].get<double>() - spans["IO"]["ts"].get<double>(), 1000, 1e-3);
  EXPECT_EQ(track_names[spans["IO"]["tid"].get<int>()], "region: IO");
  EXPECT_EQ(track_names[spans["ToDevice"]["tid"].get<int>()], "region: ToDevice");
}

// The clock records on the stream the work runs on: it must be named (no default, which was
// the legacy null stream, unordered with pipebench's non-blocking streams).
static_assert(!std::is_default_constructible_v<CudaEventRegionClock>);
static_assert(std::is_constructible_v<CudaEventRegionClock, const CudaStream&>);
static_assert(std::is_constructible_v<CudaEventRegionClock, void*>);

TEST(RegionTimer, CudaEventClock) {
  if (!cuda_available()) {
    EXPECT_THROW(CudaEventRegionClock clock(nullptr), CudaUnavailable);
    GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  }
  CudaStream stream;  // non-blocking, as every stream pipebench creates
  RegionTimer timer(std::make_unique<CudaEventRegionClock>(stream));
  const size_t bytes = size_t{64} << 20;
  HostBuffer host(bytes, MemoryKind::kPinned);
  DeviceBuffer device(bytes);
  for (int i = 0; i < 3; ++i) {
    auto r = timer.scope(Region::ToDevice);
    copy_to_device(device.data(), host.data(), bytes, &stream);
  }
  const auto s = timer.stats();  // synchronises the last event
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].key, "ToDevice");
  EXPECT_EQ(s[0].count, 3);
  EXPECT_GT(s[0].total_ms, 0);  // 64 MiB cannot cross PCIe in no time
  EXPECT_EQ(timer.clock().name(), "cuda_event");
}

}  // namespace
}  // namespace pipebench
