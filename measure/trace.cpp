#include "measure/trace.h"

#include <fstream>
#include <functional>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "datasets/file_io.h"
#include "measure/stage_timers.h"

#ifdef PIPEBENCH_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>  // header-only NVTX v3, shipped with the CUDA toolkit
#endif

namespace pipebench {

TraceRecorder::TraceRecorder() : origin_ns_(now_ns()) { events_.reserve(1 << 16); }

int TraceRecorder::thread_id() {
  const size_t key = std::hash<std::thread::id>{}(std::this_thread::get_id());
  auto [it, inserted] = tids_.try_emplace(key, static_cast<int>(tids_.size()) + 1);
  return it->second;
}

void TraceRecorder::span(const char* name, const char* category, int64_t start_ns,
                         int64_t end_ns, int64_t sample) {
  std::lock_guard lock(mu_);
  events_.push_back({name, category, start_ns, end_ns, sample, thread_id()});
}

void TraceRecorder::name_thread(const std::string& name) {
  std::lock_guard lock(mu_);
  thread_names_[thread_id()] = name;
}

int TraceRecorder::track(const std::string& name) {
  std::lock_guard lock(mu_);
  for (const auto& [tid, n] : thread_names_)
    if (tid >= 1000 && n == name) return tid;
  const int tid = next_virtual_tid_++;
  thread_names_[tid] = name;
  return tid;
}

void TraceRecorder::span_on(int track, const char* name, const char* category, int64_t start_ns,
                            int64_t end_ns) {
  std::lock_guard lock(mu_);
  events_.push_back({name, category, start_ns, end_ns, -1, track});
}

void TraceRecorder::counter(const char* name, int64_t t_ns, double value) {
  std::lock_guard lock(mu_);
  counters_.push_back({name, t_ns, value});
}

const char* TraceRecorder::intern(const std::string& text) {
  std::lock_guard lock(mu_);
  return interned_.emplace_back(text).c_str();
}

size_t TraceRecorder::size() const {
  std::lock_guard lock(mu_);
  return events_.size();
}

void TraceRecorder::write(const std::filesystem::path& file) const {
  using nlohmann::json;
  json events = json::array();
  {
    std::lock_guard lock(mu_);
    for (const auto& [tid, name] : thread_names_) {
      events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", tid},
                        {"args", {{"name", name}}}});
    }
    for (const auto& e : events_) {
      json ev = {{"name", e.name},
                 {"cat", e.category},
                 {"ph", "X"},
                 {"pid", 1},
                 {"tid", e.tid},
                 {"ts", (e.start_ns - origin_ns_) / 1e3},
                 {"dur", (e.end_ns - e.start_ns) / 1e3}};
      if (e.sample >= 0) ev["args"] = {{"sample", e.sample}};
      events.push_back(std::move(ev));
    }
    for (const auto& c : counters_)
      events.push_back({{"name", c.name}, {"ph", "C"}, {"pid", 1},
                        {"ts", (c.t_ns - origin_ns_) / 1e3}, {"args", {{"value", c.value}}}});
  }
  json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}};
  std::error_code ec;
  if (file.has_parent_path()) std::filesystem::create_directories(file.parent_path(), ec);
  // Whole or not at all: a full disk leaves no partial trace (datasets/file_io.h).
  try {
    replace_file(file, doc.dump());
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (the trace file)");
  }
}

NvtxRange::NvtxRange([[maybe_unused]] const char* name) {
#ifdef PIPEBENCH_HAVE_CUDA
  nvtxRangePushA(name);
#endif
}

NvtxRange::~NvtxRange() {
#ifdef PIPEBENCH_HAVE_CUDA
  nvtxRangePop();
#endif
}

TraceSpan::TraceSpan(TraceRecorder* recorder, const char* name, const char* category,
                     int64_t sample)
    : recorder_(recorder), name_(name), category_(category), sample_(sample), start_ns_(0) {
#ifdef PIPEBENCH_HAVE_CUDA
  nvtxRangePushA(name);
#endif
  if (recorder_) start_ns_ = now_ns();
}

TraceSpan::~TraceSpan() {
  if (recorder_) {
    try {
      recorder_->span(name_, category_, start_ns_, now_ns(), sample_);
    } catch (...) {
      // Recording is best effort: never throw from a destructor.
    }
  }
#ifdef PIPEBENCH_HAVE_CUDA
  nvtxRangePop();
#endif
}

}  // namespace pipebench
