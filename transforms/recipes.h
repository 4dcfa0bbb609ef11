// The shipped recipes: the spec files in transforms/recipes/*.yaml, compiled into the
// binary (so a relocated pipebench needs no data files), listed by --list-recipes and
// selected by --recipe=NAME. A recipe is an ordinary spec: copy one and edit it to make
// your own (--pipeline=FILE).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transforms/pipeline.h"

namespace pipebench {

/// Names of the shipped recipes, sorted.
std::vector<std::string> recipe_names();

/// The spec file's text of recipe `name`. Throws std::invalid_argument naming the unknown
/// recipe and the known ones.
const std::string& recipe_text(const std::string& name);

/// The recipe's parsed spec (source "recipe:NAME"); crop sizes left out default to
/// default_size (--size). Throws std::invalid_argument for an unknown name.
PipelineSpec recipe_spec(const std::string& name, int default_size = 224);

/// Pipeline::build(recipe_spec(name, default_size), decode).
std::shared_ptr<const Pipeline> build_recipe(const std::string& name, int default_size = 224,
                                             const DecodeOptions& decode = {});

}  // namespace pipebench
