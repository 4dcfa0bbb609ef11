// The report's storage section (report/storage.h) on runs built by hand: the fetch/prep
// split worked out on paper from DS-Analyzer's definitions, the throttle prediction, the
// pack-into-shards line, and the warnings for a cold run served from memory.
#include "report/storage.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/report_rows.h"

namespace pipebench::report {
namespace {

using nlohmann::json;
using testing::row;

// A cold, throttled run of "p" at 2 workers: cold 80 ms, warm 30 ms, step 25 ms per batch.
json cold_run() {
  json doc;
  doc["context"] = {{"storage_layout", "files"}, {"cache_mode", "cold"},
                    {"read_throttle_mib_s", "20"}, {"dataset_images", "1000"},
                    {"dataset_bytes", "32768000"}, {"compute_ms", "25"},
                    {"cold_resident_pct", "0.5"}, {"packed_shard_images", "256"}};
  doc["benchmarks"] = json::array({
      row("BM_Loader/p/workers:2", {{"data_ms", 80.0}, {"items_per_second", 800.0},
                                    {"disk_read_mib_per_s", 24.0}}),
      row("BM_Loader/p/files/warm/workers:2", {{"data_ms", 30.0}}),
      row("BM_Read/files/cold", {{"items_per_second", 600.0}, {"bytes_per_second", 2e7}}),
      row("BM_Read/shards-256/cold", {{"items_per_second", 6000.0}, {"bytes_per_second", 2e8}}),
      row("BM_Loader/p/shards-256/cold/workers:2", {{"data_ms", 50.0}}),
  });
  return doc;
}

TEST(StorageReport, SplitsTheStallIntoFetchAndPrep) {
  const Storage s = storage_split(parse_run(cold_run().dump()), "p", 25.0);
  ASSERT_TRUE(s.cold_data_ms && s.warm_data_ms);
  EXPECT_EQ(s.workers, 2);
  EXPECT_DOUBLE_EQ(s.stall_ms, 55.0);        // 80 - 25
  EXPECT_DOUBLE_EQ(s.prep_stall_ms, 5.0);    // 30 - 25
  EXPECT_DOUBLE_EQ(s.fetch_stall_ms, 50.0);  // the rest
  EXPECT_EQ(s.fix_first(), "fetch");
  // 20 MiB/s over a mean of 32768 B: 640 images/s.
  ASSERT_TRUE(s.predicted_fetch_images_per_second);
  EXPECT_DOUBLE_EQ(*s.predicted_fetch_images_per_second, 640.0);
  ASSERT_NE(s.best_packed(), nullptr);
  EXPECT_DOUBLE_EQ(*s.best_packed()->data_ms, 50.0);
  EXPECT_TRUE(s.warnings.empty());
  std::string text;
  append_storage_text(text, s);
  EXPECT_NE(text.find("fetch stall 50.00 ms (91 %"), std::string::npos) << text;
  EXPECT_NE(text.find("saves 30.00 ms per batch"), std::string::npos) << text;
  EXPECT_NE(text.find("10.00x the files' MB/s"), std::string::npos) << text;
  EXPECT_NE(text.find("an emulation"), std::string::npos) << text;
  EXPECT_EQ(storage_json(s)["fix_first"], "fetch");
}

TEST(StorageReport, PrepBoundWhenWarmIsAsSlowAsCold) {
  json doc = cold_run();
  doc["benchmarks"][1]["data_ms"] = 78.0;
  const Storage s = storage_split(parse_run(doc.dump()), "p", 25.0);
  EXPECT_DOUBLE_EQ(s.prep_stall_ms, 53.0);
  EXPECT_DOUBLE_EQ(s.fetch_stall_ms, 2.0);
  EXPECT_EQ(s.fix_first(), "prep");
}

TEST(StorageReport, WarnsWhenColdWasServedFromMemory) {
  json doc = cold_run();
  doc["context"]["cold_resident_pct"] = "97";
  doc["benchmarks"][0]["disk_read_mib_per_s"] = 0.01;  // 800 images/s x 32768 B = 25 MiB/s consumed
  const Storage s = storage_split(parse_run(doc.dump()), "p", 25.0);
  ASSERT_EQ(s.warnings.size(), 2u);
  EXPECT_NE(s.warnings[0].find("97 %"), std::string::npos);
  EXPECT_NE(s.warnings[1].find("0.01 MiB/s"), std::string::npos);
}

// A what-if table with one today row and one operator price, batch 64, step 25 ms.
WhatIf small_table() {
  WhatIf w;
  w.batch = 64;
  w.compute_ms = 25;
  WhatIfRow today;
  today.kind = CandidateKind::kToday;
  today.label = "today";
  WhatIfRow price;
  price.kind = CandidateKind::kPrice;
  price.label = "without:normalize";
  w.rows = {today, price};
  w.recommendation.text = "Use 2 workers.";
  return w;
}

TEST(StorageReport, PackIntoShardsJoinsTheWhatIfTableWhenFetchDominates) {
  const Storage s = storage_split(parse_run(cold_run().dump()), "p", 25.0);
  WhatIf w = small_table();
  add_storage_rows(w, s);
  ASSERT_EQ(w.rows.size(), 4u);  // today, files cold, pack, then the price
  EXPECT_EQ(w.rows[1].label, "files, cold");
  EXPECT_EQ(w.rows[1].case_name, "BM_Loader/p/workers:2");
  EXPECT_EQ(w.rows[2].label, "pack into shards-256");
  EXPECT_EQ(w.rows[2].case_name, "BM_Loader/p/shards-256/cold/workers:2");
  EXPECT_EQ(w.rows[3].kind, CandidateKind::kPrice);
  // Packed: 50 ms per batch against a 25 ms step: AU 50 %, 64 / 50 ms = 1280 images/s; the
  // files: 80 ms, AU 31.25 %, 800 images/s; 30 ms per batch saved.
  EXPECT_DOUBLE_EQ(w.rows[2].step_ms, 50.0);
  EXPECT_DOUBLE_EQ(w.rows[2].au_pct, 50.0);
  EXPECT_DOUBLE_EQ(w.rows[2].images_per_second, 1280.0);
  EXPECT_DOUBLE_EQ(w.rows[2].data_saving_ms, 30.0);
  EXPECT_DOUBLE_EQ(w.rows[1].au_pct, 31.25);
  EXPECT_DOUBLE_EQ(w.rows[1].data_saving_ms, 0.0);
  // Fetch first: the storage sentence leads, the CPU advice follows.
  EXPECT_EQ(w.recommendation.text.find("Fix storage first. Read cold, 91 % of the data stall is "
                                       "fetch: packed into shards-256 the loader measured 50.00 ms"),
            0u) << w.recommendation.text;
  EXPECT_NE(w.recommendation.text.find("(the CPU candidates, priced warm): Use 2 workers."),
            std::string::npos) << w.recommendation.text;
}

TEST(StorageReport, SeveralShardSizesEachMeasuredTheBestNamed) {
  json doc = cold_run();
  doc["context"]["packed_shard_images"] = "64,256";
  doc["benchmarks"].push_back(row("BM_Loader/p/shards-64/cold/workers:2", {{"data_ms", 40.0}}));
  doc["benchmarks"].push_back(row("BM_Read/shards-64/cold", {{"items_per_second", 5000.0},
                                                              {"bytes_per_second", 1.6e8}}));
  const Storage s = storage_split(parse_run(doc.dump()), "p", 25.0);
  ASSERT_EQ(s.packed.size(), 2u);
  EXPECT_EQ(s.packed[0].layout, "shards-64");
  EXPECT_DOUBLE_EQ(*s.packed[0].data_ms, 40.0);
  EXPECT_DOUBLE_EQ(*s.packed[1].data_ms, 50.0);
  ASSERT_NE(s.best_packed(), nullptr);
  EXPECT_EQ(s.best_packed()->layout, "shards-64");  // the least data ms
  EXPECT_EQ(storage_json(s)["pack_into_shards"]["layout"], "shards-64");
  std::string text;
  append_storage_text(text, s);
  EXPECT_NE(text.find("Pack into shards (shards-64, cold, 2 workers): 40.00 ms per batch against 80.00 "
                      "for the files (saves 40.00 ms per batch); one cold reader reads 8.00x the "
                      "files' MB/s (shards / files) (the best size here)."), std::string::npos) << text;
  EXPECT_NE(text.find("(shards-256, cold, 2 workers): 50.00 ms"), std::string::npos) << text;
  EXPECT_EQ(storage_json(s)["pack_into_shards"]["sizes"].size(), 2u);
  WhatIf w = small_table();
  add_storage_rows(w, s);
  ASSERT_EQ(w.rows.size(), 5u);  // today, files, shards-64, shards-256, the price
  EXPECT_EQ(w.rows[2].label, "pack into shards-64");
  EXPECT_EQ(w.rows[3].label, "pack into shards-256");
  EXPECT_NE(w.recommendation.text.find("packed into shards-64 the loader measured 40.00 ms"),
            std::string::npos) << w.recommendation.text;
}

TEST(StorageReport, PackIntoShardsStaysOutOfTheTableWhenPrepDominates) {
  json doc = cold_run();
  doc["benchmarks"][1]["data_ms"] = 79.0;  // warm 79 against cold 80: fetch 1 ms of a 55 ms stall
  const Storage s = storage_split(parse_run(doc.dump()), "p", 25.0);
  ASSERT_LT(100 * s.fetch_stall_ms / s.stall_ms, kSignificantFetchPct);
  WhatIf w = small_table();
  add_storage_rows(w, s);
  EXPECT_EQ(w.rows.size(), 2u);
  EXPECT_EQ(w.recommendation.text, "Use 2 workers.");
}

TEST(StorageReport, WarmRunWithoutTheStudyIsEmpty) {
  json doc;
  doc["context"] = {{"cache_mode", "warm"}, {"dataset_bytes", "1000"},
                    {"host_available_memory_bytes", "100000"}};
  doc["benchmarks"] = json::array({row("BM_Loader/p/workers:2", {{"data_ms", 30.0}})});
  EXPECT_TRUE(storage_split(parse_run(doc.dump()), "p", 25.0).empty());
  doc["context"]["dataset_bytes"] = "200000";  // larger than the available memory
  const Storage s = storage_split(parse_run(doc.dump()), "p", 25.0);
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_NE(s.warnings[0].find("--cache=cold"), std::string::npos);
}

}  // namespace
}  // namespace pipebench::report
