#include "model/legacy.h"

#include <charconv>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pipebench::model {
namespace {

std::vector<std::string> split(std::string_view name) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t i = 0; i <= name.size(); ++i)
    if (i == name.size() || name[i] == '/') {
      parts.emplace_back(name.substr(start, i - start));
      start = i + 1;
    }
  return parts;
}

std::string join(const std::vector<std::string>& parts, size_t from, size_t to) {
  std::string out;
  for (size_t i = from; i < to; ++i) out += (i > from ? "/" : "") + parts[i];
  return out;
}

bool starts_with(const std::string& s, std::string_view prefix) { return s.rfind(prefix, 0) == 0; }

// A Google Benchmark setting that follows the case's own name.
bool is_setting(const std::string& part) {
  if (part == "real_time" || part == "manual_time" || part == "process_time") return true;
  for (std::string_view p : {"iterations:", "repeats:", "threads:", "min_time:", "min_warmup_time:"})
    if (starts_with(part, p)) return true;
  return false;
}

int to_int(std::string_view text, std::string_view name) {
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < 0)
    throw std::invalid_argument(std::string(name) + ": '" + std::string(text) + "' is not a count");
  return v;
}

void storage(CaseKey& k, const std::string& part, std::string_view name) {
  if (starts_with(part, "shards-")) {
    k.layout = "shards";
    k.shards = to_int(std::string_view(part).substr(7), name);
  } else {
    k.layout = part;
  }
}

void variant(CaseKey& k, const std::string& label) {
  const auto colon = label.find(':');
  k.variant = label.substr(0, colon);
  k.variant_param = colon == std::string::npos ? "" : label.substr(colon + 1);
}

int workers_of(const std::string& part, std::string_view name) {
  if (!starts_with(part, "workers:")) throw std::invalid_argument(std::string(name) + ": no workers:N where expected");
  return to_int(std::string_view(part).substr(8), name);
}

CaseKey parse_legacy(std::string_view name, CaseKey& k, std::vector<std::string>& parts);

std::vector<std::string> split_set(std::string_view set) {
  std::vector<std::string> out;
  if (set.empty()) return out;
  size_t start = 0;
  for (size_t i = 0; i <= set.size(); ++i)
    if (i == set.size() || set[i] == '+') {
      out.emplace_back(set.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

// The typed fields of version 2 out of the text a version 1 or 0 key held them in.
void type_text_fields(CaseKey& k, std::string_view name) {
  constexpr std::string_view kPriced = "pipeline:";
  if (k.family == Family::kTransform && k.detail.starts_with(kPriced) && k.pipeline.empty()) {
    const std::string rest = k.detail.substr(kPriced.size());
    const size_t hash = rest.rfind('#');
    k.pipeline = rest.substr(0, hash);
    k.occurrence = hash == std::string::npos ? 1 : to_int(std::string_view(rest).substr(hash + 1), name);
    k.detail.clear();
  }
  if ((k.variant == "presized" || k.variant == "presized_large") && k.presize_px == 0)
    k.presize_px = to_int(k.variant_param, name);
}

}  // namespace

CaseKey legacy_key_v1(const nlohmann::json& key) {
  CaseKey k = key_from_json(key);
  const auto set = key.find("callbacks");
  if (set != key.end() && !set->is_string())
    throw std::invalid_argument("key.callbacks is " + std::string(set->type_name()) + ", expected a string");
  if (set != key.end()) k.callbacks = split_set(set->get<std::string>());
  type_text_fields(k, k.name());
  return k;
}

CaseKey legacy_key(std::string_view name) {
  CaseKey k;
  std::vector<std::string> parts;
  try {
    parse_legacy(name, k, parts);
    type_text_fields(k, name);
    return k;
  } catch (const std::invalid_argument&) {
    CaseKey other;
    other.family = Family::kOther;
    other.op = join(parts, 0, parts.size());
    other.timed_by = k.timed_by;
    return other;
  }
}

namespace {

CaseKey parse_legacy(std::string_view name, CaseKey& k, std::vector<std::string>& parts) {
  parts = split(name);
  while (parts.size() > 1 && is_setting(parts.back())) {
    if (parts.back() == "real_time" || parts.back() == "manual_time") k.timed_by = parts.back();
    parts.pop_back();
  }
  const auto bad = [&](const char* why) {
    return std::invalid_argument("case '" + std::string(name) + "' (a file written before the run record): " + why);
  };
  const std::string& head = parts.front();
  const size_t n = parts.size();
  if (head == "RegionTimer") {
    if (n != 2) throw bad("expected RegionTimer/<key>");
    k.family = Family::kRegion;
    k.op = parts[1];
    return k;
  }
  if (!starts_with(head, "BM_") || n < 2) throw bad("not a pipebench case");
  k.family = parse_family(std::string_view(head).substr(3));  // throws for another family
  switch (k.family) {
    case Family::kRead:
      if (n != 3) throw bad("expected BM_Read/<layout>/<cache>");
      storage(k, parts[1], name);
      k.cache = parts[2];
      break;
    case Family::kDecode:
    case Family::kTransform:
    case Family::kCollate:
    case Family::kH2D:
      k.op = parts[1];
      k.detail = join(parts, 2, n);
      break;
    case Family::kSample:
      k.pipeline = parts[1];
      if (n > 2) variant(k, join(parts, 2, n));
      break;
    case Family::kStageTimers:
    case Family::kLoader:
    case Family::kSystemSampler:
      if (n != 3 && n != 5) throw bad("expected BM_<family>/<pipeline>[/<layout>/<cache>]/workers:N");
      k.pipeline = parts[1];
      if (n == 5) {
        storage(k, parts[2], name);
        k.cache = parts[3];
      }
      k.workers = workers_of(parts[n - 1], name);
      break;
    case Family::kTrainStep:
      k.baseline = join(parts, 1, n);
      break;
    case Family::kEndToEnd: {
      size_t w = 2;
      while (w < n && !starts_with(parts[w], "workers:")) ++w;
      if (w >= n || w < 3 || w > 4) throw bad("expected BM_EndToEnd/<pipeline>[/<candidate>]/<baseline>/workers:N");
      k.pipeline = parts[1];
      if (w == 4) variant(k, parts[2]);
      k.baseline = parts[w - 1];
      k.workers = workers_of(parts[w], name);
      if (w + 1 < n) {
        if (w + 2 != n || !starts_with(parts[w + 1], "callbacks:")) throw bad("unexpected parts after workers:N");
        k.callbacks = split_set(std::string_view(parts[w + 1]).substr(10));
      }
      break;
    }
    case Family::kRegion:
    case Family::kOther:
      throw bad("not a pipebench family");
  }
  return k;
}

}  // namespace
}  // namespace pipebench::model
