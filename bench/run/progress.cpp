#include "bench/run/progress.h"

#include <cmath>
#include <cstdio>
#include <regex>
#include <sstream>

#include "measure/stage_timers.h"

namespace pipebench::bench {
namespace {

std::string duration(double s) {
  std::ostringstream o;
  if (s < 90) {
    o << static_cast<int>(std::lround(s)) << " s";
  } else {
    o << static_cast<int>(std::lround(s / 60)) << " min";
  }
  return o.str();
}

}  // namespace

std::vector<std::string> selected_cases(const std::vector<std::string>& names,
                                        const std::string& filter) {
  if (filter.empty() || filter == "all" || filter == ".") return names;
  const bool negate = filter[0] == '-';
  std::vector<std::string> out;
  try {
    const std::regex re(negate ? filter.substr(1) : filter);
    for (const auto& n : names)
      if (std::regex_search(n, re) != negate) out.push_back(n);
  } catch (const std::regex_error&) {
    return names;  // Google Benchmark reports a bad filter itself
  }
  return out;
}

ProgressReporter::ProgressReporter(OutputOptions options, std::vector<std::string> cases,
                                   int repetitions,
                                   FamilyLookup family_of, size_t name_width)
    : UnitsConsoleReporter(options, std::move(family_of), name_width),
      cases_(std::move(cases)),
      total_(cases_.size() * static_cast<size_t>(std::max(1, repetitions))),
      start_ns_(now_ns()) {}

std::string ProgressReporter::line(size_t done, size_t total, double elapsed_s,
                                   const std::string& next) {
  std::ostringstream o;
  o << "[" << done << "/" << total << "] " << duration(elapsed_s);
  if (done > 0 && done < total)
    o << ", about " << duration(elapsed_s / done * (total - done)) << " left";
  if (!next.empty()) o << "; next: " << next;
  return o.str();
}

void ProgressReporter::clear() {
  if (shown_) std::fputs("\r\033[K", stderr);
  shown_ = false;
}

bool ProgressReporter::ReportContext(const Context& context) {
  const bool ok = UnitsConsoleReporter::ReportContext(context);
  std::fflush(stdout);
  show();
  return ok;
}

void ProgressReporter::ReportRuns(const std::vector<Run>& reports) {
  clear();
  UnitsConsoleReporter::ReportRuns(reports);
  std::fflush(stdout);
  // One call per repetition of a case, and one for its aggregates: count the runs only.
  for (const auto& r : reports)
    if (r.run_type == Run::RT_Iteration) ++done_;
  show();
}

void ProgressReporter::show() {
  if (done_ >= total_) return;
  const size_t reps = total_ / std::max<size_t>(1, cases_.size());
  const size_t next = done_ / std::max<size_t>(1, reps);
  std::string text = line(done_, total_, (now_ns() - start_ns_) / 1e9,
                          next < cases_.size() ? cases_[next] : "");
  if (text.size() > 150) text.resize(150);
  std::fprintf(stderr, "%s", text.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void ProgressReporter::Finalize() {
  clear();
  UnitsConsoleReporter::Finalize();
}

}  // namespace pipebench::bench
