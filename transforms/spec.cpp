#include "transforms/spec.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "transforms/registry.h"

namespace pipebench {
namespace {

const std::set<std::string> kTopKeys = {"name", "decode", "transforms", "collate", "batch", "variants"};
const std::vector<std::string> kVariantStages = {"read", "decode", "transform", "collate", "batch_ops"};
const std::vector<std::string> kDecodeModes = {"full", "scaled", "roi", "auto"};

SpecMark mark_of(const YAML::Node& n, const std::string& source) {
  const YAML::Mark m = n.Mark();
  SpecMark s;
  s.source = source;
  if (!m.is_null()) {
    s.line = m.line + 1;
    s.column = m.column + 1;
  }
  return s;
}

[[noreturn]] void fail(const SpecMark& m, const std::string& what) {
  throw SpecError(m.source, m.line, m.column, what);
}

// A node's text as the user wrote it, for "got ..." in messages.
std::string shown(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "nothing";
  if (n.IsScalar()) return "'" + n.Scalar() + "'";
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
  return s;
}

double to_number(const YAML::Node& n, bool integer, const std::string& what,
                 const SpecMark& m) {
  if (!n.IsScalar()) fail(m, what + " must be " + (integer ? "an int" : "a number") + ", got " + shown(n));
  try {
    if (integer) return static_cast<double>(n.as<int64_t>());
    return n.as<double>();
  } catch (const YAML::Exception&) {
    fail(m, what + " must be " + (integer ? "an int" : "a number") + ", got " + shown(n));
  }
}

void check_range(const ParamSchema& p, double v, const std::string& what, const SpecMark& m,
                 const YAML::Node& n) {
  if (v < p.min || v > p.max)
    fail(m, what + " must be in " + param_range_text(p) + ", got " + shown(n));
}

ParamValue parse_param(const ParamSchema& p, const YAML::Node& n, const std::string& op,
                       const SpecMark& m) {
  const std::string what = op + ": " + p.name;
  switch (p.type) {
    case ParamType::kInt: {
      const double v = to_number(n, true, what, m);
      check_range(p, v, what, m, n);
      return static_cast<int64_t>(v);
    }
    case ParamType::kFloat: {
      const double v = to_number(n, false, what, m);
      check_range(p, v, what, m, n);
      return v;
    }
    case ParamType::kBool:
      try {
        if (n.IsScalar()) return n.as<bool>();
      } catch (const YAML::Exception&) {
      }
      fail(m, what + " must be true or false, got " + shown(n));
    case ParamType::kString: {
      if (!n.IsScalar()) fail(m, what + " must be text, got " + shown(n));
      const std::string v = n.Scalar();
      if (!p.choices.empty() &&
          std::find(p.choices.begin(), p.choices.end(), v) == p.choices.end())
        fail(m, what + " must be " + param_range_text(p) + ", got " + shown(n));
      return v;
    }
    case ParamType::kFloatList: {
      std::vector<double> v;
      if (n.IsScalar()) {
        for (const auto& [name, list] : p.named_lists)
          if (n.Scalar() == name) return list;
        v.push_back(to_number(n, false, what, m));
      } else if (n.IsSequence()) {
        for (const auto& e : n) v.push_back(to_number(e, false, what + " element", m));
      } else {
        fail(m, what + " must be a list of numbers, got " + shown(n));
      }
      if (p.list_size > 0 && static_cast<int>(v.size()) != p.list_size) {
        std::string named;
        for (const auto& [name, list] : p.named_lists) named += " or '" + name + "'";
        fail(m, what + " must be a list of " + std::to_string(p.list_size) + " numbers" + named +
                    ", got " + shown(n));
      }
      for (double x : v)
        if (x < p.min || x > p.max)
          fail(m, what + " elements must be in " + param_range_text(p) + ", got " + shown(n));
      return v;
    }
  }
  fail(m, what + ": unknown parameter type");
}

ParamValue default_value(const ParamSchema& p, int default_size) {
  if (p.default_text == "--size") {
    if (default_size < p.min || default_size > p.max)
      throw SpecError("--size", 0, 0, "--size must be in " + param_range_text(p) + ", got " +
                                          std::to_string(default_size));
    return static_cast<int64_t>(default_size);
  }
  const YAML::Node n = YAML::Load(p.default_text);
  return parse_param(p, n, "default", SpecMark{"schema", 0, 0});
}

OpSpec parse_op(const YAML::Node& item, const std::string& source, int default_size) {
  OpSpec op;
  op.mark = mark_of(item, source);
  YAML::Node params;
  if (item.IsScalar()) {
    op.name = item.Scalar();
  } else if (item.IsMap() && item.size() == 1) {
    const auto it = item.begin();
    op.name = it->first.Scalar();
    op.mark = mark_of(it->first, source);
    params = it->second;
  } else {
    fail(op.mark, "an operator is a name or {name: {parameters}}, got " + shown(item));
  }
  const OpSchema* schema = OpRegistry::instance().find(op.name);
  if (schema == nullptr) {
    fail(op.mark, "unknown operator '" + op.name + "'; nearest: " +
                      join(OpRegistry::instance().nearest(op.name)) +
                      " (pipebench --list-ops lists them all)");
  }
  if (params.IsDefined() && !params.IsNull() && !params.IsMap())
    fail(mark_of(params, source), op.name + ": parameters must be a map {name: value}, got " + shown(params));
  std::set<std::string> given;
  if (params.IsMap()) {
    for (const auto& kv : params) {
      const std::string key = kv.first.Scalar();
      const SpecMark km = mark_of(kv.first, source);
      const auto p = std::find_if(schema->params.begin(), schema->params.end(),
                                  [&](const ParamSchema& s) { return s.name == key; });
      if (p == schema->params.end()) {
        std::vector<std::string> names;
        for (const auto& s : schema->params) names.push_back(s.name);
        fail(km, op.name + ": unknown parameter '" + key + "'; its parameters: " +
                     (names.empty() ? "none" : join(names)));
      }
      op.params.set(key, parse_param(*p, kv.second, op.name, mark_of(kv.second, source)));
      given.insert(key);
    }
  }
  for (const auto& p : schema->params) {
    if (given.count(p.name)) continue;
    if (p.default_text.empty())
      fail(op.mark, op.name + ": parameter '" + p.name + "' is required (" + param_type_name(p) +
                        ", " + param_range_text(p) + ")");
    op.params.set(p.name, default_value(p, default_size));
  }
  return op;
}

void parse_decode(const YAML::Node& n, const std::string& source, PipelineSpec& spec) {
  spec.decode_mark = mark_of(n, source);
  YAML::Node mode;
  if (n.IsScalar()) {
    mode = n;  // decode: roi
  } else if (n.IsMap()) {
    for (const auto& kv : n) {
      if (kv.first.Scalar() != "mode")
        fail(mark_of(kv.first, source), "decode: unknown parameter '" + kv.first.Scalar() + "'; its parameters: mode");
      mode = kv.second;
    }
  } else if (!n.IsNull()) {
    fail(spec.decode_mark, "decode must be {mode: MODE}, got " + shown(n));
  }
  if (!mode.IsDefined() || mode.IsNull()) return;
  const std::string m = mode.IsScalar() ? mode.Scalar() : "";
  if (std::find(kDecodeModes.begin(), kDecodeModes.end(), m) == kDecodeModes.end())
    fail(mark_of(mode, source), "decode: mode must be one of " + join(kDecodeModes) + ", got " + shown(mode));
  spec.decode_mode = m;
}

void parse_transforms(const YAML::Node& list, const std::string& source, int default_size,
                      PipelineSpec& spec) {
  if (!list.IsSequence())
    fail(mark_of(list, source), "transforms must be a list of operators, got " + shown(list));
  std::optional<OpSpec> first_batch_op;  // in this list (a `batch:` key may come first)
  for (const auto& item : list) {
    // decode may stand first in the list, as in the one-line form.
    const bool is_decode = (item.IsScalar() && item.Scalar() == "decode") ||
                           (item.IsMap() && item.size() == 1 && item.begin()->first.Scalar() == "decode");
    if (is_decode) {
      if (!spec.transforms.empty())
        fail(mark_of(item, source), "decode must come before every other operator");
      parse_decode(item.IsScalar() ? YAML::Node() : item.begin()->second, source, spec);
      spec.decode_mark = mark_of(item, source);
      continue;
    }
    OpSpec op = parse_op(item, source, default_size);
    const bool batch_op = OpRegistry::instance().find(op.name)->stage == OpStage::kBatch;
    if (batch_op) {
      if (!first_batch_op) first_batch_op = op;
      spec.batch.push_back(std::move(op));
    } else if (first_batch_op) {
      fail(first_batch_op->mark, first_batch_op->name + " is a batch operator: it runs after "
           "collate, so it must come after every per-sample operator (here " + op.name + " follows it)");
    } else {
      spec.transforms.push_back(std::move(op));
    }
  }
}

void parse_variants(const YAML::Node& list, const std::string& source, PipelineSpec& spec) {
  if (!list.IsSequence())
    fail(mark_of(list, source), "variants must be a list of {recipe: NAME, fixes: STAGE}, got " + shown(list));
  for (const auto& item : list) {
    if (!item.IsMap()) fail(mark_of(item, source), "a variant is {recipe: NAME, fixes: STAGE}, got " + shown(item));
    SpecVariant v;
    for (const auto& kv : item) {
      const std::string key = kv.first.Scalar();
      if (!kv.second.IsScalar()) fail(mark_of(kv.second, source), "variants: " + key + " must be text, got " + shown(kv.second));
      if (key == "recipe") {
        v.recipe = kv.second.Scalar();
      } else if (key == "fixes") {
        v.fixes = kv.second.Scalar();
        if (std::find(kVariantStages.begin(), kVariantStages.end(), v.fixes) == kVariantStages.end())
          fail(mark_of(kv.second, source), "variants: fixes must be one of " + join(kVariantStages) + ", got " + shown(kv.second));
      } else {
        fail(mark_of(kv.first, source), "variants: unknown key '" + key + "'; a variant has recipe, fixes");
      }
    }
    if (v.recipe.empty() || v.fixes.empty())
      fail(mark_of(item, source), "a variant needs both recipe and fixes, got " + shown(item));
    spec.variants.push_back(std::move(v));
  }
}

void parse_batch(const YAML::Node& list, const std::string& source, int default_size,
                 PipelineSpec& spec) {
  if (!list.IsSequence())
    fail(mark_of(list, source), "batch must be a list of batch operators, got " + shown(list));
  for (const auto& item : list) {
    OpSpec op = parse_op(item, source, default_size);
    if (OpRegistry::instance().find(op.name)->stage != OpStage::kBatch)
      fail(op.mark, op.name + " is a per-sample operator; batch lists batch operators only "
                    "(mixup, cutmix, mixup_cutmix, label_smoothing): move it to transforms");
    spec.batch.push_back(std::move(op));
  }
}

void parse_collate(const YAML::Node& n, const std::string& source, PipelineSpec& spec) {
  spec.collate_mark = mark_of(n, source);
  if (!n.IsMap()) fail(mark_of(n, source), "collate must be {dtype: ..., layout: ...}, got " + shown(n));
  for (const auto& kv : n) {
    const std::string key = kv.first.Scalar();
    const std::string v = kv.second.IsScalar() ? kv.second.Scalar() : shown(kv.second);
    const SpecMark m = mark_of(kv.second, source);
    if (key == "dtype") {
      if (v != "float32" && v != "uint8") fail(m, "collate: dtype must be one of float32, uint8, got " + shown(kv.second));
      spec.collate_dtype = v;
    } else if (key == "layout") {
      if (v != "NCHW" && v != "NHWC") fail(m, "collate: layout must be one of NCHW, NHWC, got " + shown(kv.second));
      spec.collate_layout = v;
    } else if (key == "finish") {
      if (v != "host" && v != "device") fail(m, "collate: finish must be one of host, device, got " + shown(kv.second));
      spec.collate_finish = v;
    } else {
      fail(mark_of(kv.first, source), "collate: unknown parameter '" + key + "'; its parameters: dtype, layout, finish");
    }
  }
}

// "collate: {dtype: uint8, layout: NHWC} (line 7)", for the combination errors.
std::string collate_text(const PipelineSpec& spec) {
  std::string s = "collate: {dtype: " + spec.collate_dtype + ", layout: " + spec.collate_layout +
                  (spec.collate_finish == "device" ? ", finish: device}" : "}");
  if (spec.collate_mark.line > 0) s += " (line " + std::to_string(spec.collate_mark.line) + ")";
  return s;
}

// Batch operators that only touch the labels; the others mix pixels of float32 NCHW batches.
bool labels_only(const std::string& batch_op) { return batch_op == "label_smoothing"; }

void emit_value(YAML::Emitter& e, const ParamValue& v) {
  std::visit([&](const auto& x) {
    using T = std::decay_t<decltype(x)>;
    if constexpr (std::is_same_v<T, std::vector<double>>) {
      e << YAML::Flow << YAML::BeginSeq;
      for (double d : x) e << d;
      e << YAML::EndSeq;
    } else {
      e << x;
    }
  }, v);
}

void emit_ops(YAML::Emitter& e, const std::vector<OpSpec>& ops) {
  e << YAML::BeginSeq;
  for (const auto& op : ops) {
    e << YAML::BeginMap << YAML::Key << op.name << YAML::Value << YAML::BeginMap;
    for (const auto& [k, v] : op.params.values()) {
      e << YAML::Key << k << YAML::Value;
      emit_value(e, v);
    }
    e << YAML::EndMap << YAML::EndMap;
  }
  e << YAML::EndSeq;
}

}  // namespace

namespace {
// "SOURCE:LINE:COLUMN: what" (no position when line is 0). Built in steps: GCC 12 warns
// (-Wrestrict, a false positive) on the one-expression form.
std::string spec_message(const std::string& source, int line, int column, const std::string& what) {
  std::string m = source;
  if (line > 0) {
    m += ':';
    m += std::to_string(line);
    m += ':';
    m += std::to_string(column);
  }
  m += ": ";
  m += what;
  return m;
}
}  // namespace

SpecError::SpecError(const std::string& source, int line, int column, const std::string& what)
    : std::invalid_argument(spec_message(source, line, column, what)),
      source_(source),
      line_(line),
      column_(column) {}

double OpParams::get_float(const std::string& name) const {
  const ParamValue& v = values_.at(name);
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

void check_collate(const PipelineSpec& spec) {
  const bool on_device = spec.collate_finish == "device";
  if (on_device && (spec.collate_dtype != "uint8" || spec.collate_layout != "NHWC"))
    fail(spec.collate_mark, "collate: finish: device needs {dtype: uint8, layout: NHWC} (the device's "
                            "flip, mixup and cutmix take uint8 NHWC batches), got " + collate_text(spec));
  if (spec.collate_dtype == "uint8") {
    for (size_t i = 0; i < spec.transforms.size(); ++i) {
      const OpSpec& op = spec.transforms[i];
      const OpSchema* schema = OpRegistry::instance().find(op.name);
      if (schema == nullptr || schema->stage != OpStage::kTensor || op.name == "normalize") continue;
      fail(op.mark, op.name + " needs the float32 tensor, but " + collate_text(spec) +
                        " keeps samples as uint8 images on the CPU: only a normalize ending the "
                        "per-sample operators runs after the copy to the accelerator. Use "
                        "collate dtype float32, or remove " + op.name);
    }
    for (size_t i = 0; i + 1 < spec.transforms.size(); ++i) {
      const OpSpec& op = spec.transforms[i];
      if (op.name != "normalize") continue;
      fail(op.mark, "normalize must end the per-sample operators with " + collate_text(spec) +
                        ": it runs after the copy to the accelerator, so " +
                        spec.transforms[i + 1].name + " cannot follow it. Move it last, or use "
                        "collate dtype float32");
    }
    for (const OpSpec& op : spec.batch) {
      if (labels_only(op.name) || on_device) continue;  // on the device: mixed after the copy
      fail(op.mark, op.name + " mixes the pixels of float32 batches, but " + collate_text(spec) +
                        " gives uint8 batches, normalized only after the copy; on the CPU pipebench "
                        "does not mix uint8 pixels. Add finish: device to collate (the device mixes "
                        "them after the copy, rounding as timm's FastCollateMixup), use collate "
                        "dtype float32, or remove " + op.name);
    }
  }
  if (spec.collate_layout == "NHWC" && !on_device) {  // the device cuts uint8 NHWC boxes
    for (const OpSpec& op : spec.batch) {
      if (op.name != "cutmix" && op.name != "mixup_cutmix") continue;
      fail(op.mark, op.name + " cuts its boxes out of NCHW batches, but " + collate_text(spec) +
                        " collates NHWC. Use layout NCHW, or mixup");
    }
  }
}

PipelineSpec parse_pipeline_spec(const std::string& text, const std::string& source,
                                 int default_size) {
  PipelineSpec spec;
  spec.source = source;
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw SpecError(source, e.mark.is_null() ? 0 : e.mark.line + 1,
                    e.mark.is_null() ? 0 : e.mark.column + 1, "not valid YAML: " + e.msg);
  }
  try {
    if (root.IsSequence()) {
      parse_transforms(root, source, default_size, spec);
    } else if (root.IsMap()) {
      for (const auto& kv : root) {
        const std::string key = kv.first.IsScalar() ? kv.first.Scalar() : shown(kv.first);
        if (!kTopKeys.count(key))
          fail(mark_of(kv.first, source), "unknown key '" + key + "'; a spec has name, decode, transforms, collate, batch, variants");
        if (key == "name") {
          if (!kv.second.IsScalar()) fail(mark_of(kv.second, source), "name must be text, got " + shown(kv.second));
          spec.name = kv.second.Scalar();
        } else if (key == "decode") {
          parse_decode(kv.second, source, spec);
        } else if (key == "transforms") {
          parse_transforms(kv.second, source, default_size, spec);
        } else if (key == "collate") {
          parse_collate(kv.second, source, spec);
        } else if (key == "batch") {
          parse_batch(kv.second, source, default_size, spec);
        } else if (key == "variants") {
          parse_variants(kv.second, source, spec);
        }
      }
    } else {
      fail(mark_of(root, source), "a spec is a list of operators or a map with transforms, got " + shown(root));
    }
  } catch (const SpecError&) {
    throw;
  } catch (const YAML::Exception& e) {  // a conversion the checks above did not foresee
    throw SpecError(source, e.mark.is_null() ? 0 : e.mark.line + 1,
                    e.mark.is_null() ? 0 : e.mark.column + 1, e.msg);
  }
  if (spec.transforms.empty() && spec.batch.empty() && spec.decode_mark.line == 0)
    throw SpecError(source, 0, 0, "the spec has no operator");
  check_collate(spec);
  return spec;
}

PipelineSpec load_pipeline_spec(const std::filesystem::path& file, int default_size) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw SpecError(file.string(), 0, 0, "cannot read the pipeline spec file");
  std::ostringstream text;
  text << in.rdbuf();
  PipelineSpec spec = parse_pipeline_spec(text.str(), file.string(), default_size);
  if (spec.name == "custom") spec.name = file.stem().string();
  return spec;
}

PipelineSpec pipeline_spec_from_flag(const std::string& value, int default_size) {
  std::error_code ec;
  const bool looks_like_file = value.ends_with(".yaml") || value.ends_with(".yml");
  if (std::filesystem::is_regular_file(value, ec) || looks_like_file)
    return load_pipeline_spec(value, default_size);
  return parse_pipeline_spec(value, "--pipeline", default_size);
}

std::string PipelineSpec::to_yaml() const {
  YAML::Emitter e;
  e << YAML::Flow << YAML::BeginMap;
  e << YAML::Key << "name" << YAML::Value << name;
  e << YAML::Key << "decode" << YAML::Value << YAML::BeginMap << YAML::Key << "mode"
    << YAML::Value << decode_mode << YAML::EndMap;
  e << YAML::Key << "transforms" << YAML::Value;
  emit_ops(e, transforms);
  e << YAML::Key << "collate" << YAML::Value << YAML::BeginMap << YAML::Key << "dtype"
    << YAML::Value << collate_dtype << YAML::Key << "layout" << YAML::Value << collate_layout;
  if (collate_finish != "host") e << YAML::Key << "finish" << YAML::Value << collate_finish;
  e << YAML::EndMap;
  if (!batch.empty()) {
    e << YAML::Key << "batch" << YAML::Value;
    emit_ops(e, batch);
  }
  if (!variants.empty()) {
    e << YAML::Key << "variants" << YAML::Value << YAML::BeginSeq;
    for (const auto& v : variants)
      e << YAML::BeginMap << YAML::Key << "recipe" << YAML::Value << v.recipe << YAML::Key << "fixes"
        << YAML::Value << v.fixes << YAML::EndMap;
    e << YAML::EndSeq;
  }
  e << YAML::EndMap;
  return e.c_str();
}

}  // namespace pipebench
