#include "bench/run_output.h"

#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "datasets/file_io.h"

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

JsonFileReporter::JsonFileReporter() {
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
    r.error_message = to_valid_utf8(r.error_message);
    r.run_name.function_name = to_valid_utf8(r.run_name.function_name);
    clean.push_back(std::move(r));
  }
  if (!clean.empty()) json_.ReportRuns(clean);
}

void JsonFileReporter::Finalize() { json_.Finalize(); }

void write_run_json(const std::string& document, const RunEpilogue& epilogue,
                    const std::filesystem::path& path) {
  nlohmann::ordered_json doc;
  try {
    doc = nlohmann::ordered_json::parse(document);
  } catch (const std::exception& e) {
    throw std::runtime_error(path.string() + ": internal error: the run's JSON does not parse (" +
                             e.what() + ")");
  }
  auto& context = doc["context"];
  // Strings, as every other context value Google Benchmark writes; the list is an array.
  context["errored_cases"] = std::to_string(epilogue.errored_cases);
  context["skipped_files_total"] = std::to_string(epilogue.skipped_total);
  context["skipped_files"] = epilogue.skipped_files;
  for (const auto& [key, value] : epilogue.context) context[key] = to_valid_utf8(value);
  for (const auto& [key, text] : epilogue.sections) doc[key] = nlohmann::ordered_json::parse(text);
  try {
    replace_file(path, doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n");
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (the results of this run were not saved)");
  }
}

}  // namespace pipebench::bench
