#include "model/record.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/constants.h"
#include "model/legacy.h"

namespace pipebench::model {
namespace {

using T = ContextType;

// bench/run/run_context.cpp, bench/run/main.cpp and bench/run/run_output.cpp write these.
constexpr std::array<ContextField, 39> kTyped = {{
    {"batch_size", T::kNumber, "images"},
    {"crop_size", T::kNumber, "px"},
    {"seed", T::kNumber, ""},
    {"compute_ms", T::kNumber, "ms"},
    {"prefetch_depth_batches", T::kNumber, "batches"},
    {"system_sample_hz", T::kNumber, "Hz"},
    {"hardware_threads", T::kNumber, "threads"},
    {"dataset_images", T::kNumber, "images"},
    {"dataset_bytes", T::kNumber, "bytes"},
    {"read_throttle_mib_s", T::kNumber, "MiB/s"},
    {"min_psnr_db", T::kNumber, "dB"},
    {"host_memory_bytes", T::kNumber, "bytes"},
    {"host_available_memory_bytes", T::kNumber, "bytes"},
    {"cold_files_checked", T::kNumber, "files"},
    {"cold_resident_pct", T::kNumber, "%"},
    {"world_size", T::kNumber, "ranks"},
    {"grad_mib", T::kNumber, "MiB"},
    {"link_gb_per_s", T::kNumber, "GB/s"},
    {"link_latency_us", T::kNumber, "us"},
    {"budget_s", T::kNumber, "s"},
    {"budget_probe_sample_ms", T::kNumber, "ms"},
    {"load_average_start", T::kNumber, ""},
    {"load_average_end", T::kNumber, ""},
    {"other_processes_cpu_cores", T::kNumber, "cores"},
    {"job_cpu_cores", T::kNumber, "cores"},
    {"job_processes_on_host", T::kNumber, "processes"},
    {"cores_available", T::kNumber, "cores"},
    {"load_window_s", T::kNumber, "s"},
    {"errored_cases", T::kNumber, "cases"},
    {"skipped_files_total", T::kNumber, "files"},
    {"workers_auto_budget_cores", T::kNumber, "cores"},
    {"workers_auto_chosen", T::kNumber, "workers"},
    {"drop_last", T::kBool, ""},
    {"busy_machine", T::kBool, ""},
    {"gpu_available", T::kBool, ""},  // a CUDA device ran the run's device cases (context "gpu" names it, or says why not)
    {"au_target_pct", T::kNumber, "%"},  // model::kAuTargetPct, the AU the --workers=auto search aimed at
    {"workers_auto_reached_au_target", T::kBool, ""},
    {"workers_auto_reached_au90", T::kBool, ""},  // its name in files written before it (the target was 90 %)
    {"pipebench_record", T::kNumber, ""},
}};

}  // namespace

std::span<const ContextField> typed_context_fields() { return kTyped; }

const ContextField* find_context_field(std::string_view key) {
  for (const auto& f : kTyped)
    if (f.key == key) return &f;
  return nullptr;
}

std::optional<double> parse_number(std::string_view text) {
  // std::from_chars: no leading space, no '+', no hex, no locale; the whole text.
  double v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<bool> parse_bool(std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return std::nullopt;
}

std::optional<double> context_number(const nlohmann::json& context, const std::string& key) {
  if (!context.is_object()) return std::nullopt;
  const auto it = context.find(key);
  if (it == context.end()) return std::nullopt;
  if (it->is_number()) {
    const double v = it->get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
  }
  if (it->is_string()) return parse_number(it->get<std::string>());
  return std::nullopt;
}

std::optional<bool> context_bool(const nlohmann::json& context, const std::string& key) {
  if (!context.is_object()) return std::nullopt;
  const auto it = context.find(key);
  if (it == context.end()) return std::nullopt;
  if (it->is_boolean()) return it->get<bool>();
  if (it->is_string()) return parse_bool(it->get<std::string>());
  return std::nullopt;
}

void type_context(nlohmann::json& context) {
  if (!context.is_object()) return;
  for (const auto& f : kTyped) {
    const auto it = context.find(std::string(f.key));
    if (it == context.end() || !it->is_string()) continue;
    const std::string text = it->get<std::string>();
    if (f.type == T::kBool) {
      if (const auto b = parse_bool(text)) *it = *b;
    } else if (const auto v = parse_number(text)) {
      if (std::floor(*v) == *v && std::fabs(*v) < 9e15) *it = static_cast<long long>(*v);
      else *it = *v;
    }
  }
}

int record_version(const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("context") || !doc["context"].is_object()) return 0;
  const nlohmann::json& ctx = doc["context"];
  const auto it = ctx.find("pipebench_record");
  if (it == ctx.end()) return 0;
  if (!it->is_number_integer() || it->get<long long>() < 1)
    throw std::invalid_argument("context.pipebench_record must be an integer >= 1, got " + it->dump());
  const long long v = it->get<long long>();
  if (v > kRecordVersion) {
    const auto by = ctx.find("pipebench_version");
    const std::string who = by != ctx.end() && by->is_string() ? "pipebench " + by->get<std::string>() : "a newer pipebench";
    throw std::invalid_argument("written by " + who + " (run record version " + std::to_string(v) +
                                "); this build reads up to version " + std::to_string(kRecordVersion) +
                                ": use that pipebench's pipebench-report");
  }
  return static_cast<int>(v);
}

CaseKey row_key(const nlohmann::json& row, int version) {
  if (version >= 1) {
    const auto it = row.find("key");
    if (it == row.end()) throw std::invalid_argument("no \"key\" (every row of a run record has one)");
    return version == 1 ? legacy_key_v1(*it) : key_from_json(*it);
  }
  const auto name = row.find("run_name") != row.end() ? row.find("run_name") : row.find("name");
  if (name == row.end() || !name->is_string()) throw std::invalid_argument("no run_name or name");
  return legacy_key(name->get<std::string>());
}

}  // namespace pipebench::model
