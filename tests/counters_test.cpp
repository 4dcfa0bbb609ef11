// The counter schema (model/counters.h): one row per counter, names unique, patterns
// found with their part, units by name (the rank figures' too), the loader stages'
// counters in the catalogue's order, and the docs table generated from every row.
#include <gtest/gtest.h>

#include <iterator>
#include <set>
#include <stdexcept>
#include <string>

#include "model/catalogue.h"
#include "model/counters.h"
#include "model/rank_fields.h"

namespace pipebench::model {
namespace {

TEST(CounterSchema, OneRowPerIdNamesUniqueMeaningsGiven) {
  const auto table = counter_table();
  ASSERT_EQ(table.size(), static_cast<size_t>(CounterId::kCount_));
  std::set<std::string_view> names;
  for (size_t i = 0; i < table.size(); ++i) {
    const CounterSpec& s = table[i];
    EXPECT_EQ(static_cast<size_t>(s.id), i) << s.name;
    EXPECT_TRUE(names.insert(s.name).second) << "twice: " << s.name;
    EXPECT_FALSE(s.meaning.empty()) << s.name;
    EXPECT_EQ(s.meaning.find('|'), std::string_view::npos) << s.name << ": '|' breaks the docs table";
    // The console shows a counter in its own unit, or a millisecond one in microseconds.
    EXPECT_TRUE(s.shown == s.unit || (s.unit == Unit::kMs && s.shown == Unit::kUs)) << s.name;
    // A name ending in _ms is in ms; one ending in _us in us; _pct in %.
    if (s.name.ends_with("_ms")) {
      EXPECT_EQ(s.unit, Unit::kMs) << s.name;
    }
    if (s.name.ends_with("_us") || s.name.starts_with("us_")) {
      EXPECT_EQ(s.unit, Unit::kUs) << s.name;
    }
    if (s.name.ends_with("_pct")) {
      EXPECT_EQ(s.unit, Unit::kPercent) << s.name;
    }
    if (s.shown == Unit::kUs && s.unit == Unit::kMs) {
      EXPECT_TRUE(s.name.ends_with("_ms")) << s.name << ": the console shows it as <name less _ms>_us";
    }
    EXPECT_EQ(&counter_spec(s.id), &s);
  }
}

TEST(CounterSchema, FixedNamesAndPatterns) {
  EXPECT_EQ(counter_name(CounterId::kDataMs), "data_ms");
  EXPECT_EQ(counter_name(CounterId::kOpMs, "resize+crop"), "op:resize+crop_ms");
  EXPECT_EQ(counter_name(CounterId::kNetIfaceRxMibPerS, "eth0"), "net:eth0_rx_mib_per_s");
  EXPECT_THROW(counter_name(CounterId::kOpMs), std::invalid_argument);
  EXPECT_THROW(counter_name(CounterId::kDataMs, "x"), std::invalid_argument);
  EXPECT_THROW(counter_name(CounterId::kOpMs, ""), std::invalid_argument);
  const auto m = find_counter("region:IO_p99_ms");
  ASSERT_TRUE(m);
  EXPECT_EQ(m->spec->id, CounterId::kRegionP99Ms);  // the longest literal, not region:{}_ms
  EXPECT_EQ(m->part, "IO");
  EXPECT_EQ(find_counter("region:IO_ms")->spec->id, CounterId::kRegionMs);
  EXPECT_EQ(find_counter("callback:checkpoint-sync_ms")->part, "checkpoint-sync");
  EXPECT_EQ(find_counter("data_ms")->part, "");
  EXPECT_FALSE(find_counter("someone_elses_counter"));
  EXPECT_FALSE(find_counter("op:_ms"));  // a pattern's part is never empty
  // Every name counter_name makes is found again, with its part.
  for (const CounterSpec& s : counter_table()) {
    const std::string name = is_pattern(s) ? counter_name(s.id, "7_x") : std::string(s.name);
    const auto back = find_counter(name);
    ASSERT_TRUE(back) << name;
    EXPECT_EQ(back->spec->id, s.id) << name;
  }
}

TEST(CounterSchema, UnitsByNameTheRankFiguresToo) {
  EXPECT_EQ(unit_of("paired_saving_ms"), Unit::kMs);
  EXPECT_EQ(shown_unit_of("paired_saving_ms"), Unit::kUs);
  EXPECT_EQ(shown_unit_of("step_ms"), Unit::kMs);
  EXPECT_EQ(unit_of("items_per_second"), Unit::kImagesPerSecond);
  for (int f = 0; f < static_cast<int>(RankField::kCount); ++f) {
    const auto field = static_cast<RankField>(f);
    if (field == RankField::kItems) continue;  // in the total only, never a counter
    const std::string name = rank_counter(3, field);
    EXPECT_TRUE(unit_of(name)) << name << ": every rank figure has a schema entry";
  }
  EXPECT_EQ(unit_of(rank_counter(0, RankField::kDataMs)), Unit::kMs);
  EXPECT_EQ(unit_of(rank_counter(12, RankField::kAuPct)), Unit::kPercent);
  EXPECT_FALSE(unit_of("rankx_data_ms"));
  EXPECT_FALSE(unit_of("rank1_nothing"));
}

TEST(CounterSchema, StageCountersFollowTheCatalogue) {
  for (size_t i = 0; i < std::size(kStageNames); ++i)
    EXPECT_EQ(counter_name(stage_counter(i)), std::string(kStageNames[i]) + "_ms");
  EXPECT_THROW(stage_counter(std::size(kStageNames)), std::out_of_range);
}

TEST(CounterSchema, TheDocsTableHoldsEveryRow) {
  const std::string md = counters_markdown();
  for (const CounterSpec& s : counter_table()) {
    const std::string row = "| `" + std::string(s.name) + "` | " + std::string(unit_text(s.unit)) + " | ";
    EXPECT_NE(md.find(row), std::string::npos) << row;
  }
  EXPECT_NE(md.find("### " + std::string(family_text(CounterFamily::kPaired))), std::string::npos);
}

}  // namespace
}  // namespace pipebench::model
