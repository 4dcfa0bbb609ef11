#include "bench/cases/what_if_candidates.h"

#include <cstddef>
#include <map>
#include <stdexcept>

#include "transforms/spec.h"

namespace pipebench::bench {

std::vector<Candidate> what_if_candidates(const Pipeline& p) {
  std::vector<Candidate> out;
  const PipelineSpec& spec = p.spec();
  const auto add = [&](const std::string& kind, const std::string& param, const PipelineSpec& changed) {
    try {
      out.push_back({kind, param, Pipeline::build(changed, p.decode_options())});
    } catch (const std::invalid_argument&) {  // the rest does not build without it
    }
  };
  if (spec.decode_mode != "auto" && spec.decode_mode != "roi") {
    PipelineSpec s = spec;
    s.decode_mode = "auto";
    try {
      auto c = Pipeline::build(s, p.decode_options());
      if (c->decode_plan() != p.decode_plan()) out.push_back({"decode", "auto", c});
    } catch (const std::invalid_argument&) {
    }
  }
  // Hand work to the accelerator: uint8 batches (a quarter of float32's bytes) with a
  // trailing normalize done after the H2D copy (transforms/pipeline_output.h), where the
  // spec builds that way (check_collate refuses operators that need the float tensor).
  if (spec.collate_dtype == "float32") {
    PipelineSpec s = spec;
    s.collate_dtype = "uint8";
    add("collate", "uint8", s);
  }
  std::map<std::string, int> seen;
  const auto param_of = [&](const std::string& op) {
    const int k = ++seen[op];
    std::string param = op;
    if (k > 1) param += '#' + std::to_string(k);  // appended: GCC 12's -Wrestrict misfires on "#" + s
    return param;
  };
  for (size_t i = 0; i < spec.transforms.size(); ++i) {
    PipelineSpec s = spec;
    s.transforms.erase(s.transforms.begin() + static_cast<std::ptrdiff_t>(i));
    add("without", param_of(spec.transforms[i].name), s);
  }
  // Batch operators are not priced here: they run once per batch, not per sample, and the
  // paired sample case runs per-sample operators only; BM_Transform/<op> prices each per
  // batch (issue 26).
  return out;
}


}  // namespace pipebench::bench
