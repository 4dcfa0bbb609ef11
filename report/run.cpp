#include "report/run.h"

#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

namespace pipebench::report {
namespace {

using nlohmann::json;

// One trailing part that Google Benchmark adds to a case's name for a setting of the
// case (benchmark_register.cc), never one of pipebench's own parts such as workers:N.
bool is_setting_suffix(const std::string& part) {
  static const std::regex setting(
      "(iterations|repeats|threads|min_time|min_warmup_time):[0-9.e+-]+s?|real_time|"
      "manual_time|process_time");
  return std::regex_match(part, setting);
}

// A field of a row that must have one type when present: a wrong type is a clear
// ReportError naming the row and the field, never nlohmann's type_error escaping
// parse_run (found by tests/fuzz/fuzz_report_json, tests/fuzz/regressions/README.md).
std::string string_field(const json& row, size_t index, const char* key, const std::string& fallback) {
  const auto it = row.find(key);
  if (it == row.end()) return fallback;
  if (!it->is_string())
    throw ReportError("benchmarks[" + std::to_string(index) + "]: \"" + key + "\" is " +
                      it->type_name() + ", expected a string");
  return it->get<std::string>();
}

bool bool_field(const json& row, size_t index, const char* key) {
  const auto it = row.find(key);
  if (it == row.end()) return false;
  if (!it->is_boolean())
    throw ReportError("benchmarks[" + std::to_string(index) + "]: \"" + key + "\" is " +
                      it->type_name() + ", expected true or false");
  return it->get<bool>();
}

// An aggregate row as written, apart from the means (it would count twice there).
void add_aggregate(BenchRun& run, const std::string& name, const json& row, size_t index) {
  const std::string stat = string_field(row, index, "aggregate_name", "");
  if (stat.empty()) return;
  auto& fields = run.aggregates[name][stat];
  for (const auto& [field, v] : row.items())
    if (v.is_number()) fields[field] = v.get<double>();
}

void add_row(BenchRun& run, const json& row, size_t index,
             std::map<std::string, std::map<std::string, int>>& counts) {
  if (!row.is_object()) return;
  if (bool_field(row, index, "error_occurred")) return;  // zeros, not times
  const std::string name =
      string_field(row, index, "run_name", string_field(row, index, "name", ""));
  if (name.empty()) return;
  const std::string run_type = string_field(row, index, "run_type", "iteration");
  if (run_type != "iteration") {
    if (run_type == "aggregate") add_aggregate(run, name, row, index);
    return;
  }
  CaseMeans& c = run.cases[name];
  ++c.repetitions;
  for (const auto& [field, v] : row.items()) {
    if (!v.is_number()) continue;
    c.values[field] += v.get<double>();
    ++counts[name][field];
  }
}

}  // namespace

std::string strip_case_suffixes(const std::string& name) {
  std::string out = name;
  for (auto slash = out.rfind('/'); slash != std::string::npos && slash > 0; slash = out.rfind('/')) {
    if (!is_setting_suffix(out.substr(slash + 1))) break;
    out.resize(slash);
  }
  return out;
}

namespace {

// The entry named `name`, or the one named `name` plus Google Benchmark's suffixes.
template <class T>
const T* find_case(const std::map<std::string, T>& by_name, const std::string& name) {
  if (auto it = by_name.find(name); it != by_name.end()) return &it->second;
  // Names are sorted, so a suffixed form of `name` starts right after it.
  for (auto it = by_name.lower_bound(name + "/"); it != by_name.end(); ++it) {
    if (it->first.compare(0, name.size() + 1, name + "/") != 0) break;
    if (strip_case_suffixes(it->first) == name) return &it->second;
  }
  return nullptr;
}

}  // namespace

const CaseMeans* BenchRun::find(const std::string& name) const { return find_case(cases, name); }

std::optional<double> BenchRun::aggregate(const std::string& name, const std::string& stat,
                                          const std::string& field) const {
  const CaseAggregates* a = find_case(aggregates, name);
  if (!a) return std::nullopt;
  auto s = a->find(stat);
  if (s == a->end()) return std::nullopt;
  auto f = s->second.find(field);
  if (f == s->second.end()) return std::nullopt;
  return f->second;
}

std::optional<double> BenchRun::value(const std::string& name, const std::string& field) const {
  const CaseMeans* c = find(name);
  if (!c) return std::nullopt;
  auto it = c->values.find(field);
  if (it == c->values.end()) return std::nullopt;
  return it->second;
}

std::optional<double> BenchRun::ms_per_item(const std::string& name) const {
  auto ips = value(name, "items_per_second");
  if (!ips || !(*ips > 0)) return std::nullopt;
  return 1000.0 / *ips;
}

std::string BenchRun::context_or(const std::string& key, const std::string& fallback) const {
  auto it = context.find(key);
  return it == context.end() ? fallback : it->second;
}

BenchRun load_run(const json& doc) {
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw ReportError("not a Google Benchmark JSON file (no \"benchmarks\" array)");
  BenchRun run;
  std::map<std::string, std::map<std::string, int>> counts;
  const json& rows = doc["benchmarks"];
  for (size_t i = 0; i < rows.size(); ++i) add_row(run, rows[i], i, counts);
  for (auto& [name, c] : run.cases)
    for (auto& [field, sum] : c.values) sum /= counts[name][field];
  if (doc.contains("context") && doc["context"].is_object()) {
    for (const auto& [key, v] : doc["context"].items()) {
      if (v.is_string()) run.context[key] = v.get<std::string>();
      else if (v.is_number_integer()) run.context[key] = std::to_string(v.get<long long>());
      else if (v.is_number()) run.context[key] = v.dump();
    }
  }
  return run;
}

BenchRun parse_run(const std::string& text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw ReportError(std::string("not valid JSON: ") + e.what());
  }
  return load_run(doc);
}

BenchRun read_run(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReportError("cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ReportError("cannot read the file");
  return parse_run(text.str());
}

}  // namespace pipebench::report
