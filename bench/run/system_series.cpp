#include "bench/run/system_series.h"

#include <cmath>

#include <nlohmann/json.hpp>

namespace pipebench::bench {
namespace {

double round_to(double v, double step) { return std::round(v / step) * step; }

}  // namespace

void SystemSeries::add(const std::string& case_name, const std::vector<SystemSample>& samples) {
  if (samples.size() < 2) return;
  Series s;
  bool gpu = true;
  for (size_t i = 1; i < samples.size(); ++i) {
    const SystemInterval iv = interval_between(samples[i - 1], samples[i]);
    s.t_s.push_back(round_to((samples[i].t_ns - samples.front().t_ns) / 1e9, 1e-3));
    const double cores = static_cast<double>(iv.core_util_pct.size());
    s.cpu_busy_cores.push_back(round_to(iv.cpu_busy_cores, 1e-3));
    s.cpu_user_cores.push_back(round_to(iv.cpu_user_pct / 100.0 * cores, 1e-3));
    s.cpu_system_cores.push_back(round_to(iv.cpu_system_pct / 100.0 * cores, 1e-3));
    s.pipebench_cores.push_back(round_to(iv.process_cores, 1e-3));
    std::vector<double> per_core;
    per_core.reserve(iv.core_util_pct.size());
    for (double u : iv.core_util_pct) per_core.push_back(round_to(u, 0.1));
    s.core_util_pct.push_back(std::move(per_core));
    gpu = gpu && samples[i].gpu_util_pct.has_value();
    if (gpu) s.gpu_util_pct.push_back(round_to(*samples[i].gpu_util_pct, 0.1));
  }
  if (!gpu) s.gpu_util_pct.clear();
  cases_[case_name] = std::move(s);
}

std::string SystemSeries::to_json() const {
  nlohmann::json cases = nlohmann::json::object();
  for (const auto& [name, s] : cases_) {
    nlohmann::json c = {{"t_s", s.t_s},
                        {"cpu_busy_cores", s.cpu_busy_cores},
                        {"cpu_user_cores", s.cpu_user_cores},
                        {"cpu_system_cores", s.cpu_system_cores},
                        {"pipebench_cores", s.pipebench_cores},
                        {"core_util_pct", s.core_util_pct}};
    if (!s.gpu_util_pct.empty()) c["gpu_util_pct"] = s.gpu_util_pct;
    cases[name] = std::move(c);
  }
  return nlohmann::json{{"rate_hz", rate_hz_}, {"cases", cases}}.dump();
}

}  // namespace pipebench::bench
