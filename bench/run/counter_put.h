// Writing a case's counters through the counter schema (model/counters.h): bench names
// no counter itself, it puts a value under a schema entry (a pattern's with its part), so
// the name, the unit the value is in and the docs' line are one row of one table.
// Units: as the entry says (unit_text(counter_spec(id).unit)); a Google Benchmark rate or
// per-iteration counter is passed as a benchmark::Counter with its flags.
// Errors: a pattern put without its part, or a fixed name with one, throws
// std::invalid_argument (model::counter_name): a programming error, found by any run.
#pragma once

#include <benchmark/benchmark.h>

#include <string>
#include <string_view>

#include "model/counters.h"

namespace pipebench::bench {

using model::CounterId;

/// Sets the counter `id` of the case to `value` (a double converts to a plain counter).
inline void put(benchmark::State& state, CounterId id, const benchmark::Counter& value) {
  state.counters[std::string(model::counter_name(id))] = value;
}

/// Sets the pattern counter `id` with its part (op:<part>_ms, region:<part>_ms, ...).
inline void put(benchmark::State& state, CounterId id, std::string_view part, const benchmark::Counter& value) {
  state.counters[model::counter_name(id, part)] = value;
}

/// The value of a counter already put in this case; 0 when it has none.
inline double put_value(const benchmark::State& state, CounterId id) {
  const auto it = state.counters.find(std::string(model::counter_name(id)));
  return it == state.counters.end() ? 0.0 : static_cast<double>(it->second);
}

}  // namespace pipebench::bench
