// Region timers (see region_timer.h). The CUDA-event clock is in region_timer_cuda.cpp.
#include "measure/region_timer.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/case_key.h"
#include "model/constants.h"
#include "model/counters.h"
#include "measure/stage_timers.h"
#include "measure/trace.h"

namespace pipebench {

const char* region_name(Region r) {
  switch (r) {
    case Region::Epoch: return "Epoch";
    case Region::Batch: return "Batch";
    case Region::Forward: return "Forward";
    case Region::Backward: return "Backward";
    case Region::IO: return "IO";
    case Region::Comm: return "Comm";
    case Region::ToDevice: return "ToDevice";
    case Region::Other: return "Other";
  }
  return "Other";
}

int64_t SteadyRegionClock::mark() { return now_ns(); }

double region_percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  // Hyndman-Fan 7: h = (n - 1) q, interpolate between v[floor h] and v[floor h + 1].
  const double h = (static_cast<double>(sorted.size()) - 1) * std::clamp(q, 0.0, 1.0);
  const size_t lo = static_cast<size_t>(std::floor(h));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

RegionTimer::RegionTimer() : RegionTimer(std::make_unique<SteadyRegionClock>()) {}

RegionTimer::RegionTimer(std::unique_ptr<RegionClock> clock) : clock_(std::move(clock)) {
  if (!clock_) throw std::invalid_argument("RegionTimer: null clock");
}

RegionTimer::~RegionTimer() = default;

int RegionTimer::key_index(std::string_view key) {
  const std::string k(key);
  if (auto it = key_ids_.find(k); it != key_ids_.end()) return it->second;
  const int id = static_cast<int>(keys_.size());
  keys_.push_back(k);
  key_ids_.emplace(k, id);
  open_.emplace_back();
  return id;
}

RegionTimer::Handle RegionTimer::start(std::string_view key) {
  const int k = key_index(key);
  const int64_t id = next_id_++;
  open_key_.emplace(id, k);
  // The mark last, so the bookkeeping above is not inside the region.
  open_[k].push_back({id, 0});
  open_[k].back().start = clock_->mark();
  return Handle{id};
}

void RegionTimer::close(int key, size_t at, int64_t end_mark) {
  auto& stack = open_[key];
  closed_.push_back({key, stack[at].start, end_mark});
  open_key_.erase(stack[at].id);
  stack.erase(stack.begin() + static_cast<std::ptrdiff_t>(at));
}

void RegionTimer::end(std::string_view key) {
  const int64_t mark = clock_->mark();  // first, so the lookup is not inside the region
  const auto it = key_ids_.find(std::string(key));
  if (it == key_ids_.end() || open_[it->second].empty())
    throw std::logic_error("RegionTimer::end(\"" + std::string(key) + "\"): no open region of that key");
  close(it->second, open_[it->second].size() - 1, mark);
}

void RegionTimer::end(Handle handle) {
  const int64_t mark = clock_->mark();
  const auto it = open_key_.find(handle.id);
  if (it == open_key_.end())
    throw std::logic_error("RegionTimer::end(handle " + std::to_string(handle.id) +
                           "): not an open region (closed already, or from another timer)");
  const int k = it->second;
  auto& stack = open_[k];
  const auto pos = std::find_if(stack.begin(), stack.end(), [&](const Open& o) { return o.id == handle.id; });
  close(k, static_cast<size_t>(pos - stack.begin()), mark);
}

bool RegionTimer::close_if_open(Handle handle) noexcept {
  if (!open_key_.count(handle.id)) return false;
  try {
    end(handle);
  } catch (...) {  // a clock that throws (a CUDA error): the region stays unrecorded
    return false;
  }
  return true;
}

void RegionTimer::Scope::close() noexcept {
  if (!timer_) return;
  timer_->close_if_open(handle_);
  timer_ = nullptr;
}

std::vector<RegionStats> RegionTimer::stats() {
  clock_->resolve();
  std::vector<std::vector<double>> ms(keys_.size());
  for (const Closed& c : closed_) ms[c.key].push_back(clock_->ms_between(c.start, c.end));
  std::vector<RegionStats> out;
  for (size_t k = 0; k < keys_.size(); ++k) {
    if (ms[k].empty()) continue;
    auto& v = ms[k];
    std::sort(v.begin(), v.end());
    RegionStats s;
    s.key = keys_[k];
    s.count = static_cast<int64_t>(v.size());
    for (double x : v) s.total_ms += x;
    s.mean_ms = s.total_ms / static_cast<double>(s.count);
    s.p50_ms = region_percentile(v, 0.50);
    s.p99_ms = region_percentile(v, 0.99);
    out.push_back(std::move(s));
  }
  return out;
}

void RegionTimer::set_context(const std::string& key, const std::string& value) {
  context_[key] = value;
}

nlohmann::json RegionTimer::to_json() {
  using nlohmann::json;
  json doc;
  json& ctx = doc["context"];
  ctx = json::object();
  for (const auto& [k, v] : context_) ctx[k] = v;
  ctx["library"] = "pipebench RegionTimer";
  ctx["region_timer"] = clock_->name();
  ctx["pipebench_record"] = model::kRecordVersion;  // the run record: each row's key
  json rows = json::array();
  for (const RegionStats& s : stats()) {
    model::CaseKey key;
    key.family = model::Family::kRegion;
    key.op = s.key;
    key.timed_by = "manual_time";
    const std::string name = key.name();
    rows.push_back({{"name", name},
                    {"key", model::to_json(key)},
                    {"run_name", name},
                    {"run_type", "iteration"},
                    {"repetitions", 1},
                    {"repetition_index", 0},
                    {"threads", 1},
                    {"iterations", s.count},
                    {"real_time", s.mean_ms},
                    {"cpu_time", s.mean_ms},
                    {"time_unit", "ms"}});
    // The region's figures, named by the counter schema (model/counters.h, family kRegion).
    json& row = rows.back();
    using model::CounterId;
    const auto put = [&](CounterId id, const json& v) { row[std::string(model::counter_name(id))] = v; };
    put(CounterId::kTimerCount, s.count);
    put(CounterId::kTimerTotalMs, s.total_ms);
    put(CounterId::kTimerMeanMs, s.mean_ms);
    put(CounterId::kTimerP50Ms, s.p50_ms);
    put(CounterId::kTimerP99Ms, s.p99_ms);
  }
  doc["benchmarks"] = std::move(rows);
  return doc;
}

void RegionTimer::write_json(const std::filesystem::path& file) {
  const std::string text = to_json().dump(2) + "\n";
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error(file.string() + ": cannot open for writing the region timers");
  out << text;
  out.flush();
  if (!out) throw std::runtime_error(file.string() + ": cannot write the region timers");
}

void RegionTimer::write_trace(TraceRecorder& trace) {
  clock_->resolve();
  std::vector<int> tracks(keys_.size(), -1);
  std::vector<const char*> names(keys_.size(), nullptr);
  for (const Closed& c : closed_) {
    if (tracks[c.key] < 0) {
      tracks[c.key] = trace.track("region: " + keys_[c.key]);
      names[c.key] = trace.intern(keys_[c.key]);
    }
    trace.span_on(tracks[c.key], names[c.key], "region", clock_->host_ns(c.start), clock_->host_ns(c.end));
  }
}

void RegionTimer::clear() { closed_.clear(); }

}  // namespace pipebench
