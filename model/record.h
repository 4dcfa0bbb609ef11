// The run record: what a pipebench JSON file carries beside Google Benchmark's rows, and
// how a reader gets it back.
//
// Writing (bench/run/run_output.h): every row of "benchmarks" gets a "key" object
// (model/case_key.h, to_json), the context gets "pipebench_record": kRecordVersion, and
// the context keys of typed_context_fields() are JSON numbers or booleans instead of
// Google Benchmark's strings. The format is bench/README.md's "JSON contract".
//
// Reading: record_version() says which version wrote a document; row_key() gives a row's
// key: its "key" object (version 2), through the legacy adapter (model/legacy.h) for a
// version 1 key (typed fields still text) or a file written before the record (version 0,
// from the name). A version above kRecordVersion is refused.
//
// Errors: std::invalid_argument with one line naming what is wrong.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "model/case_key.h"

namespace pipebench::model {

enum class ContextType { kNumber, kBool };

/// A context key whose value is a number or a boolean (every other key is text).
struct ContextField {
  std::string_view key;
  ContextType type;
  std::string_view unit;  ///< "images", "ms", "cores", "bytes", "MiB/s", "%", "" (a count)
};

/// Every typed context key pipebench writes.
std::span<const ContextField> typed_context_fields();
/// The entry of `key`, or nullptr.
const ContextField* find_context_field(std::string_view key);

/// The one parser of a number written as text: the whole text in C's decimal or
/// scientific form (std::from_chars), finite; nullopt otherwise ("25abc", "", " 25",
/// "+1", "0x10", "nan").
std::optional<double> parse_number(std::string_view text);
/// "true" / "false"; nullopt otherwise.
std::optional<bool> parse_bool(std::string_view text);

/// A context value as a number: a JSON number as is, text through parse_number; nullopt
/// when absent or neither.
std::optional<double> context_number(const nlohmann::json& context, const std::string& key);
/// A context value as a boolean: a JSON boolean as is, text through parse_bool.
std::optional<bool> context_bool(const nlohmann::json& context, const std::string& key);

/// Replaces, in a context object, the text of each typed key with its number or boolean.
/// Text that does not parse is left as it is (a reader's context_number gives nullopt).
void type_context(nlohmann::json& context);

/// The record version of a document: context.pipebench_record, 0 without. Throws when it
/// is not an integer, or newer than this build reads (naming the pipebench version that
/// wrote it).
int record_version(const nlohmann::json& doc);

/// The key of one row of "benchmarks" in a document of `version`. Throws when a
/// version >= 1 row has no valid "key", or a version 0 row's name does not follow the old
/// grammar.
CaseKey row_key(const nlohmann::json& row, int version);

}  // namespace pipebench::model
