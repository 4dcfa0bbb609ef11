#include "report/run.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "model/record.h"

namespace pipebench::report {
namespace {

using nlohmann::json;

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

model::CaseKey key_of_row(const json& row, size_t index, int version) {
  try {
    return model::row_key(row, version);
  } catch (const std::invalid_argument& e) {
    throw ReportError("benchmarks[" + std::to_string(index) + "]: " + e.what());
  }
}

void add_row(BenchRun& run, const json& row, size_t index,
             std::map<std::string, std::map<std::string, int>>& counts) {
  if (!row.is_object()) return;
  if (bool_field(row, index, "error_occurred")) return;  // zeros, not times
  if (string_field(row, index, "run_name", string_field(row, index, "name", "")).empty()) return;
  const std::string run_type = string_field(row, index, "run_type", "iteration");
  if (run_type != "iteration" && run_type != "aggregate") return;
  const model::CaseKey key = key_of_row(row, index, run.record_version);
  const std::string name = key.name();
  run.keys.emplace(name, key);
  if (run_type == "aggregate") {
    add_aggregate(run, name, row, index);
    return;
  }
  CaseMeans& c = run.cases[name];
  c.key = key;
  ++c.repetitions;
  for (const auto& [field, v] : row.items()) {
    if (!v.is_number()) continue;
    c.values[field] += v.get<double>();
    ++counts[name][field];
  }
}

}  // namespace

std::optional<double> CaseMeans::get(CounterId id) const {
  const auto it = values.find(std::string(model::counter_name(id)));
  return it == values.end() ? std::nullopt : std::optional<double>(it->second);
}

std::optional<double> CaseMeans::get(CounterId id, std::string_view part) const {
  const auto it = values.find(model::counter_name(id, part));
  return it == values.end() ? std::nullopt : std::optional<double>(it->second);
}

const CaseMeans* BenchRun::find(const std::string& name) const {
  const auto it = cases.find(name);
  return it == cases.end() ? nullptr : &it->second;
}

std::vector<const CaseMeans*> BenchRun::where(const std::function<bool(const model::CaseKey&)>& pred) const {
  std::vector<const CaseMeans*> out;
  for (const auto& [name, c] : cases)
    if (pred(c.key)) out.push_back(&c);
  return out;
}

std::optional<double> BenchRun::aggregate(const std::string& name, const std::string& stat, CounterId id) const {
  const auto a = aggregates.find(name);
  if (a == aggregates.end()) return std::nullopt;
  auto s = a->second.find(stat);
  if (s == a->second.end()) return std::nullopt;
  auto f = s->second.find(std::string(model::counter_name(id)));
  if (f == s->second.end()) return std::nullopt;
  return f->second;
}

std::optional<double> BenchRun::value(const std::string& name, CounterId id) const {
  const CaseMeans* c = find(name);
  return c ? c->get(id) : std::nullopt;
}

std::optional<double> BenchRun::value(const std::string& name, CounterId id, std::string_view part) const {
  const CaseMeans* c = find(name);
  return c ? c->get(id, part) : std::nullopt;
}

std::optional<double> BenchRun::ms_per_item(const std::string& name) const {
  auto ips = value(name, CounterId::kItemsPerSecond);
  if (!ips || !(*ips > 0)) return std::nullopt;
  return 1000.0 / *ips;
}

std::string BenchRun::context_or(const std::string& key, const std::string& fallback) const {
  auto it = context.find(key);
  return it == context.end() ? fallback : it->second;
}

std::optional<double> BenchRun::number(const std::string& key) const {
  auto it = numbers.find(key);
  return it == numbers.end() ? std::nullopt : std::optional<double>(it->second);
}

int BenchRun::count(const std::string& key, int fallback) const {
  const auto v = number(key);
  if (!v) return fallback;
  return static_cast<int>(std::clamp(std::round(*v), 0.0, 1e9));
}

std::optional<bool> BenchRun::flag(const std::string& key) const {
  auto it = flags.find(key);
  return it == flags.end() ? std::nullopt : std::optional<bool>(it->second);
}

BenchRun load_run(const json& doc) {
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw ReportError("not a Google Benchmark JSON file (no \"benchmarks\" array)");
  BenchRun run;
  try {
    run.record_version = model::record_version(doc);
  } catch (const std::invalid_argument& e) {
    throw ReportError(e.what());
  }
  std::map<std::string, std::map<std::string, int>> counts;
  const json& rows = doc["benchmarks"];
  for (size_t i = 0; i < rows.size(); ++i) add_row(run, rows[i], i, counts);
  for (auto& [name, c] : run.cases)
    for (auto& [field, sum] : c.values) sum /= counts[name][field];
  if (doc.contains("context") && doc["context"].is_object()) {
    const json& ctx = doc["context"];
    for (const auto& [key, v] : ctx.items()) {
      if (v.is_string()) run.context[key] = v.get<std::string>();
      else if (v.is_boolean()) run.context[key] = v.get<bool>() ? "true" : "false";
      else if (v.is_number_integer()) run.context[key] = std::to_string(v.get<long long>());
      else if (v.is_number()) run.context[key] = v.dump();
      if (const auto n = model::context_number(ctx, key)) run.numbers[key] = *n;
      if (const auto b = model::context_bool(ctx, key)) run.flags[key] = *b;
    }
  }
  if (const auto it = doc.find("pipeline_variants"); it != doc.end() && it->is_array())
    for (const auto& v : *it)
      if (v.is_object() && v.contains("recipe") && v["recipe"].is_string() && v.contains("fixes") &&
          v["fixes"].is_string())
        run.declared_variants.emplace_back(v["recipe"].get<std::string>(), v["fixes"].get<std::string>());
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
