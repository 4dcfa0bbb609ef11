#include "transforms/recipes.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace pipebench {

// recipes_index.cpp (generated from transforms/recipes/*.yaml by CMake).
const std::map<std::string, std::string>& shipped_recipe_texts();

std::vector<std::string> recipe_names() {
  std::vector<std::string> names;
  for (const auto& [name, text] : shipped_recipe_texts()) names.push_back(name);
  return names;
}

const std::string& recipe_text(const std::string& name) {
  const auto& all = shipped_recipe_texts();
  const auto it = all.find(name);
  if (it == all.end()) {
    std::string known;
    for (const auto& [n, t] : all) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown recipe '" + name + "'; known recipes: " + known +
                                " (or give your own spec with --pipeline)");
  }
  return it->second;
}

PipelineSpec recipe_spec(const std::string& name, int default_size) {
  return parse_pipeline_spec(recipe_text(name), "recipe:" + name, default_size);
}

std::shared_ptr<const Pipeline> build_recipe(const std::string& name, int default_size,
                                             const DecodeOptions& decode) {
  return Pipeline::build(recipe_spec(name, default_size), decode);
}

}  // namespace pipebench
