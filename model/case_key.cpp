#include "model/case_key.h"

#include <array>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

namespace pipebench::model {
namespace {

constexpr std::array<std::pair<Family, std::string_view>, 13> kFamilies = {{
    {Family::kRead, "Read"},
    {Family::kDecode, "Decode"},
    {Family::kTransform, "Transform"},
    {Family::kSample, "Sample"},
    {Family::kCollate, "Collate"},
    {Family::kH2D, "H2D"},
    {Family::kStageTimers, "StageTimers"},
    {Family::kLoader, "Loader"},
    {Family::kSystemSampler, "SystemSampler"},
    {Family::kTrainStep, "TrainStep"},
    {Family::kEndToEnd, "EndToEnd"},
    {Family::kRegion, "Region"},
    {Family::kOther, "Other"},
}};

std::string storage_part(const CaseKey& k) {
  return k.shards > 0 ? "shards-" + std::to_string(k.shards) : k.layout;
}

std::string with_detail(std::string name, const std::string& detail) {
  if (!detail.empty()) name += "/" + detail;
  return name;
}

}  // namespace

std::string_view family_name(Family f) {
  for (const auto& [family, text] : kFamilies)
    if (family == f) return text;
  return "?";
}

Family parse_family(std::string_view text) {
  for (const auto& [family, name] : kFamilies)
    if (name == text) return family;
  throw std::invalid_argument("unknown case family '" + std::string(text) + "'");
}

std::string CaseKey::variant_label() const {
  return variant.empty() ? std::string() : variant + ":" + variant_param;
}

std::string CaseKey::callbacks_label() const {
  std::string out;
  for (size_t i = 0; i < callbacks.size(); ++i) out.append(i ? "+" : "").append(callbacks[i]);
  return out;
}

namespace {

// The detail of a Transform's name: a batch operator's price in a pipeline, or the detail.
std::string transform_detail(const CaseKey& k) {
  if (k.pipeline.empty()) return k.detail;
  std::string d = "pipeline:" + k.pipeline;
  if (k.occurrence > 1) d.append("#").append(std::to_string(k.occurrence));  // not "#" + s: GCC 12's -Wrestrict
  return d;
}

}  // namespace

std::string CaseKey::name() const {
  const std::string fam = "BM_" + std::string(family_name(family));
  const std::string label = variant_label();
  switch (family) {
    case Family::kRead:
      return fam + "/" + storage_part(*this) + "/" + cache;
    case Family::kTransform:
      return with_detail(fam + "/" + op, transform_detail(*this));
    case Family::kDecode:
    case Family::kCollate:
    case Family::kH2D:
      return with_detail(fam + "/" + op, detail);
    case Family::kSample:
      return with_detail(fam + "/" + pipeline, label);
    case Family::kStageTimers:
    case Family::kLoader:
    case Family::kSystemSampler: {
      std::string n = fam + "/" + pipeline;
      if (!layout.empty() || shards > 0) n += "/" + storage_part(*this) + "/" + cache;
      return n + "/workers:" + std::to_string(workers);
    }
    case Family::kTrainStep:
      return fam + "/" + baseline;
    case Family::kEndToEnd: {
      std::string n = with_detail(fam + "/" + pipeline, label);
      n += "/" + baseline + "/workers:" + std::to_string(workers);
      if (!callbacks.empty()) n += "/callbacks:" + callbacks_label();
      return n;
    }
    case Family::kRegion:
      return "RegionTimer/" + op;
    case Family::kOther:
      return op;
  }
  return fam;
}

CaseKey sample_case(const std::string& pipeline, const std::string& variant, const std::string& param) {
  CaseKey k;
  k.family = Family::kSample;
  k.pipeline = pipeline;
  k.variant = variant;
  k.variant_param = param;
  return k;
}

CaseKey transform_case(const std::string& op, const std::string& detail) {
  CaseKey k;
  k.family = Family::kTransform;
  k.op = op;
  k.detail = detail;
  return k;
}

CaseKey batch_op_price_case(const std::string& op, const std::string& pipeline, int occurrence) {
  CaseKey k = transform_case(op);
  k.pipeline = pipeline;
  k.occurrence = occurrence;
  return k;
}

CaseKey presized(CaseKey base, int px, std::string_view kind) {
  base.variant = std::string(kind);
  base.variant_param = std::to_string(px);
  base.presize_px = px;
  return base;
}

CaseKey decode_case(const std::string& op, const std::string& detail) {
  CaseKey k;
  k.family = Family::kDecode;
  k.op = op;
  k.detail = detail;
  return k;
}

CaseKey device_op_case(const std::string& op, const std::string& format, int batch) {
  CaseKey k = transform_case(op, "device/" + format + "/batch:" + std::to_string(batch));
  k.timed_by = "manual_time";
  return k;
}

CaseKey loader_case(const std::string& pipeline, int workers, const std::string& layout,
                    const std::string& cache, int shards) {
  CaseKey k;
  k.family = Family::kLoader;
  k.pipeline = pipeline;
  k.workers = workers;
  k.layout = layout;
  k.cache = cache;
  k.shards = shards;
  k.timed_by = "real_time";
  return k;
}

CaseKey end_to_end_case(const std::string& pipeline, const std::string& baseline, int workers,
                        const std::string& variant, const std::string& param,
                        const std::vector<std::string>& callbacks) {
  CaseKey k;
  k.family = Family::kEndToEnd;
  k.pipeline = pipeline;
  k.baseline = baseline;
  k.workers = workers;
  k.variant = variant;
  k.variant_param = param;
  k.callbacks = callbacks;
  k.timed_by = "real_time";
  return k;
}

CaseKey read_case(const std::string& layout, const std::string& cache, int shards) {
  CaseKey k;
  k.family = Family::kRead;
  k.layout = layout;
  k.cache = cache;
  k.shards = shards;
  k.timed_by = "real_time";
  return k;
}

nlohmann::json to_json(const CaseKey& k) {
  return {{"name", k.name()},         {"family", family_name(k.family)},
          {"pipeline", k.pipeline},   {"variant", k.variant},
          {"variant_param", k.variant_param}, {"baseline", k.baseline},
          {"layout", k.layout},       {"cache", k.cache},
          {"shards", k.shards},       {"workers", k.workers},
          {"callbacks", k.callbacks_label()}, {"callback_set", k.callbacks},
          {"op", k.op},               {"detail", k.detail},
          {"occurrence", k.occurrence}, {"presize_px", k.presize_px},
          {"timed_by", k.timed_by}};
}

namespace {

std::string text_field(const nlohmann::json& j, const char* field) {
  const auto it = j.find(field);
  if (it == j.end()) return "";
  if (!it->is_string())
    throw std::invalid_argument(std::string("key.") + field + " is " + it->type_name() + ", expected a string");
  return it->get<std::string>();
}

std::vector<std::string> text_list(const nlohmann::json& j, const char* field) {
  const auto it = j.find(field);
  if (it == j.end()) return {};
  std::vector<std::string> out;
  if (it->is_array())
    for (const auto& v : *it)
      if (v.is_string()) out.push_back(v.get<std::string>());
  if (!it->is_array() || out.size() != it->size())
    throw std::invalid_argument(std::string("key.") + field + " must be an array of strings, got " + it->dump());
  return out;
}

int int_field(const nlohmann::json& j, const char* field) {
  const auto it = j.find(field);
  if (it == j.end()) return 0;
  if (!it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > (1 << 30))
    throw std::invalid_argument(std::string("key.") + field + " must be an integer >= 0, got " + it->dump());
  return it->get<int>();
}

}  // namespace

CaseKey key_from_json(const nlohmann::json& j) {
  if (!j.is_object()) throw std::invalid_argument("key is " + std::string(j.type_name()) + ", expected an object");
  if (!j.contains("family")) throw std::invalid_argument("key has no family");
  CaseKey k;
  k.family = parse_family(text_field(j, "family"));
  k.pipeline = text_field(j, "pipeline");
  k.variant = text_field(j, "variant");
  k.variant_param = text_field(j, "variant_param");
  k.baseline = text_field(j, "baseline");
  k.layout = text_field(j, "layout");
  k.cache = text_field(j, "cache");
  k.shards = int_field(j, "shards");
  k.workers = int_field(j, "workers");
  k.callbacks = text_list(j, "callback_set");
  k.op = text_field(j, "op");
  k.detail = text_field(j, "detail");
  k.occurrence = int_field(j, "occurrence");
  k.presize_px = int_field(j, "presize_px");
  k.timed_by = text_field(j, "timed_by");
  if (k.timed_by.empty()) k.timed_by = "cpu_time";
  return k;
}

}  // namespace pipebench::model
