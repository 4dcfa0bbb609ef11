#include "bench/run/run_output.h"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "datasets/file_io.h"
#include "model/constants.h"
#include "model/record.h"

namespace pipebench::bench {
namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 if there is none (RFC 3629:
// no overlong forms, no surrogates, nothing above U+10FFFF).
size_t utf8_sequence(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;  // overlong
    if (c == 0xED && b(1) > 0x9F) return 0;  // surrogate
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;  // overlong
    if (c == 0xF4 && b(1) > 0x8F) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string to_valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const size_t n = utf8_sequence(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

JsonFileReporter::JsonFileReporter(KeyLookup key_of) : key_of_(std::move(key_of)) {
  json_.SetOutputStream(&buffer_);
  json_.SetErrorStream(&buffer_);
}

bool JsonFileReporter::ReportContext(const Context& context) {
  return json_.ReportContext(context);
}

void JsonFileReporter::ReportRuns(const std::vector<Run>& runs) {
  std::vector<Run> clean;
  clean.reserve(runs.size());
  for (const Run& run : runs) {
    // An aggregate over times that are not finite (a CV of a zero mean) says nothing.
    if (!std::isfinite(run.real_accumulated_time) || !std::isfinite(run.cpu_accumulated_time))
      continue;
    Run r = run;
    for (auto it = r.counters.begin(); it != r.counters.end();) {
      if (std::isfinite(it->second.value)) {
        ++it;
      } else {
        it = r.counters.erase(it);
      }
    }
    const model::CaseKey* key = key_of_ ? key_of_(run.run_name.function_name) : nullptr;
    if (key == nullptr)
      throw std::logic_error("internal error: case " + run.run_name.function_name + " has no registered key");
    model::CaseKey k = *key;
    k.timed_by = run.run_name.time_type.empty() ? "cpu_time" : run.run_name.time_type;
    row_keys_.push_back(std::move(k));
    r.error_message = to_valid_utf8(r.error_message);
    r.run_name.function_name = to_valid_utf8(r.run_name.function_name);
    clean.push_back(std::move(r));
  }
  if (!clean.empty()) json_.ReportRuns(clean);
}

void JsonFileReporter::Finalize() { json_.Finalize(); }

void write_run_json(const std::string& document, const std::vector<model::CaseKey>& row_keys,
                    const RunEpilogue& epilogue, const std::filesystem::path& path) {
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(document);
  } catch (const std::exception& e) {
    throw std::runtime_error(path.string() + ": internal error: the run's JSON does not parse (" +
                             e.what() + ")");
  }
  {
    auto& context = doc["context"];
    // Counts as numbers (typed below); the list is an array.
    context["errored_cases"] = epilogue.errored_cases;
    context["skipped_files_total"] = epilogue.skipped_total;
    context["skipped_files"] = epilogue.skipped_files;
    for (const auto& [key, value] : epilogue.context) context[key] = to_valid_utf8(value);
    // The run record (model/record.h): the context typed, each row's key.
    context["pipebench_record"] = model::kRecordVersion;
    nlohmann::json typed = nlohmann::json::parse(context.dump());
    model::type_context(typed);
    for (const auto& f : model::typed_context_fields()) {
      const std::string key(f.key);
      if (typed.contains(key)) context[key] = nlohmann::ordered_json::parse(typed[key].dump());
    }
  }
  auto& rows = doc["benchmarks"];
  if (!rows.is_array() || rows.size() != row_keys.size())
    throw std::runtime_error(path.string() + ": internal error: " + std::to_string(row_keys.size()) +
                             " case keys for " + std::to_string(rows.is_array() ? rows.size() : 0) + " rows");
  for (size_t i = 0; i < row_keys.size(); ++i)
    rows[i]["key"] = nlohmann::ordered_json::parse(model::to_json(row_keys[i]).dump());
  // Last: adding top-level objects moves the others (an ordered_json object is a vector).
  for (const auto& [key, text] : epilogue.sections) doc[key] = nlohmann::ordered_json::parse(text);
  try {
    replace_file(path, doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (the results of this run were not saved)");
  }
}

}  // namespace pipebench::bench
