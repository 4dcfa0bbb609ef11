#include "bench/run/per_image.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace pipebench::bench {

PerImageCosts::PerImageCosts(size_t dataset_size)
    : size_(dataset_size), enabled_(dataset_size <= kMaxImages) {}

void PerImageCosts::begin_case(const std::string& name) {
  if (!enabled_) return;
  for (auto& c : cases_) {
    if (c.name == name) {  // a case runs several times (estimation, repetitions)
      current_ = &c;
      return;
    }
  }
  cases_.push_back(Case{name, CostClock::kThreadCpu, {}, {}, false});
  current_ = &cases_.back();
}

void PerImageCosts::add(size_t index, int64_t ns, CostClock clock) {
  if (!enabled_ || current_ == nullptr || index >= size_) return;
  Case& c = *current_;
  if (c.ns.empty()) {  // sized on first use: cases outside the round families cost nothing
    c.ns.assign(size_, 0);
    c.visits.assign(size_, 0);
  }
  c.clock = clock;
  c.ns[index] += ns;
  ++c.visits[index];
  c.any = true;
}

std::string PerImageCosts::to_json(const std::vector<std::string>& files) const {
  nlohmann::ordered_json doc;
  doc["images"] = size_;
  doc["files"] = files;
  nlohmann::ordered_json cases = nlohmann::ordered_json::object();
  for (const auto& c : cases_) {
    if (!c.any) continue;
    nlohmann::ordered_json index = nlohmann::ordered_json::array(),
                           us = nlohmann::ordered_json::array(),
                           visits = nlohmann::ordered_json::array();
    for (size_t i = 0; i < c.ns.size(); ++i) {
      if (c.visits[i] == 0) continue;
      index.push_back(i);
      // Rounded to 0.01 us: the figures are means of noisy timings, and the file stays small.
      us.push_back(std::round(static_cast<double>(c.ns[i]) / c.visits[i] / 10.0) / 100.0);
      visits.push_back(c.visits[i]);
    }
    cases[c.name] = {{"clock", c.clock == CostClock::kWall ? "wall" : "thread_cpu"},
                     {"index", index},
                     {"us", us},
                     {"visits", visits}};
  }
  doc["cases"] = cases;
  return doc.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace pipebench::bench
