#include "transforms/registry.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace pipebench {
namespace {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string number(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

const char* stage_name(OpStage s) {
  switch (s) {
    case OpStage::kDecode: return "decode";
    case OpStage::kImage: return "image";
    case OpStage::kTensor: return "tensor";
    case OpStage::kBatch: return "batch";
  }
  return "?";
}

}  // namespace

std::string param_type_name(const ParamSchema& p) {
  switch (p.type) {
    case ParamType::kInt: return "int";
    case ParamType::kFloat: return "float";
    case ParamType::kBool: return "bool";
    case ParamType::kString: return "string";
    case ParamType::kFloatList:
      return p.list_size > 0 ? "list of " + std::to_string(p.list_size) + " floats" : "list of floats";
  }
  return "?";
}

std::string param_range_text(const ParamSchema& p) {
  if (p.type == ParamType::kBool) return "true or false";
  if (p.type == ParamType::kString) {
    if (p.choices.empty()) return "any text";
    std::string s = "one of ";
    for (size_t i = 0; i < p.choices.size(); ++i) {
      if (i) s += ", ";
      s += p.choices[i];
    }
    return s;
  }
  const bool lo = p.min > -1e299, hi = p.max < 1e299;
  if (!lo && !hi) return "any";
  // Appended piece by piece: GCC 12's -Wrestrict misfires on "[" + std::string.
  std::string s = "[";
  s += lo ? number(p.min) : "-inf";
  s += ", ";
  s += hi ? number(p.max) : "inf";
  s += "]";
  return s;
}

const OpRegistry& OpRegistry::instance() {
  static const OpRegistry registry = [] {
    OpRegistry r;
    register_all_ops(r);
    std::sort(r.ops_.begin(), r.ops_.end(),
              [](const OpSchema& a, const OpSchema& b) { return a.name < b.name; });
    return r;
  }();
  return registry;
}

void OpRegistry::add(OpSchema schema) { ops_.push_back(std::move(schema)); }

const OpSchema* OpRegistry::find(std::string_view name) const {
  for (const auto& op : ops_)
    if (op.name == name) return &op;
  return nullptr;
}

std::vector<std::string> OpRegistry::nearest(std::string_view name, size_t n) const {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& op : ops_) scored.emplace_back(edit_distance(name, op.name), op.name);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < n; ++i) out.push_back(scored[i].second);
  return out;
}

std::string OpRegistry::describe() const {
  std::ostringstream s;
  s << "pipebench operators (spec grammar: transforms/README.md; torchvision names and defaults)\n";
  for (const auto& op : ops_) {
    s << "\n" << op.name << "  [" << stage_name(op.stage) << "]";
    if (!op.torchvision.empty()) s << "  torchvision " << op.torchvision;
    s << "\n  " << op.doc << "\n";
    for (const auto& p : op.params) {
      s << "    " << p.name << ": " << param_type_name(p) << ", "
        << (p.default_text.empty() ? "required" : "default " + p.default_text) << ", "
        << param_range_text(p) << ". " << p.doc << "\n";
    }
  }
  return s.str();
}

std::string OpRegistry::markdown_table() const {
  std::ostringstream s;
  s << "| torchvision | pipebench operator | parameters |\n| --- | --- | --- |\n";
  for (const auto& op : ops_) {
    s << "| " << (op.torchvision.empty() ? "-" : "`" + op.torchvision + "`") << " | `" << op.name
      << "` | ";
    for (size_t i = 0; i < op.params.size(); ++i) {
      const auto& p = op.params[i];
      s << (i ? ", " : "") << "`" << p.name << "`"
        << (p.default_text.empty() ? "" : " (" + p.default_text + ")");
    }
    s << " |\n";
  }
  return s.str();
}

}  // namespace pipebench
