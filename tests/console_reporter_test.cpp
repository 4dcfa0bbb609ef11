// The console table's counters (bench/run/console_reporter.h): no millisecond counter is shown
// with an SI fraction prefix (Google Benchmark 1.7.1 prints 0.000257 ms as "257u"); each
// counter is shown in its schema entry's console unit (model/counters.h), the same in
// every row (a per-sample ms counter under its "_us" name, x 1000), and large values stay
// readable.
// The reporter writes into a stringstream; the expected texts are worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "bench/run/console_reporter.h"

namespace pb = pipebench::bench;
using BenchRun = benchmark::BenchmarkReporter::Run;

namespace {

BenchRun make_run(const std::string& name, std::map<std::string, double> counters) {
  BenchRun run;
  run.run_name.function_name = name;
  run.iterations = 10;
  run.real_accumulated_time = 0.5;  // seconds in all: 50 ms per iteration
  run.cpu_accumulated_time = 0.25;
  run.time_unit = benchmark::kMillisecond;
  for (const auto& [k, v] : counters) run.counters[k] = benchmark::Counter(v);
  return run;
}

// The reporter's whole output for `runs`, in one ReportRuns call per run.
std::string report(const std::vector<BenchRun>& runs, bool tabular) {
  std::ostringstream out;
  std::ostringstream err;
  pb::UnitsConsoleReporter reporter(tabular ? benchmark::ConsoleReporter::OO_Tabular
                                            : benchmark::ConsoleReporter::OO_None);
  reporter.SetOutputStream(&out);
  reporter.SetErrorStream(&err);
  benchmark::BenchmarkReporter::Context context;
  context.name_field_width = 40;
  reporter.ReportContext(context);
  for (const auto& r : runs) reporter.ReportRuns({r});
  reporter.Finalize();
  return out.str();
}

// Every "name=value" pair of a non-tabular table.
std::vector<std::pair<std::string, std::string>> pairs(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::regex re(R"(([A-Za-z0-9_]+)=(\S+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it)
    out.emplace_back((*it)[1], (*it)[2]);
  return out;
}

const std::regex kPlainDecimal(R"(-?[0-9]+(\.[0-9]+)?)");

}  // namespace

TEST(ConsoleCounterValue, PlainDecimalsWithoutFractionPrefixes) {
  EXPECT_EQ(pb::format_counter_value(0), "0");
  EXPECT_EQ(pb::format_counter_value(0.257), "0.257");
  EXPECT_EQ(pb::format_counter_value(0.00961), "0.00961");  // issue 14: was "9.61m"
  EXPECT_EQ(pb::format_counter_value(-0.25), "-0.250");
  EXPECT_EQ(pb::format_counter_value(3.14159), "3.142");
  EXPECT_EQ(pb::format_counter_value(133.24), "133.2");
  EXPECT_EQ(pb::format_counter_value(2530.4), "2530");
  EXPECT_EQ(pb::format_counter_value(64), "64");
  EXPECT_EQ(pb::format_counter_value(99999.7), "100000");
  EXPECT_EQ(pb::format_counter_value(1.5e-9), "1.50e-09");
}

TEST(ConsoleCounterValue, LargeValuesKeepLargePrefixes) {
  EXPECT_EQ(pb::format_counter_value(38535168), "38.5M");
  EXPECT_EQ(pb::format_counter_value(250000), "250k");
  EXPECT_EQ(pb::format_counter_value(-2.5e9), "-2.50G");
  EXPECT_EQ(pb::format_counter_value(1048576, 1024), "1.00Mi");
  EXPECT_EQ(pb::format_counter_value(3.0 * 1024 * 1024 * 1024, 1024), "3.00Gi");
}

TEST(ConsoleCounter, TinyMillisecondsAreShownInMicroseconds) {
  const auto c = pb::console_counter("collate_ms", benchmark::Counter(0.000257), false);
  EXPECT_EQ(c.name, "collate_us");
  EXPECT_EQ(c.text, "0.257");
  const auto w = pb::console_counter("worker_wait_ms", benchmark::Counter(0.0133), false);
  EXPECT_EQ(w.name, "worker_wait_us");
  EXPECT_EQ(w.text, "13.30");
  // The column's unit, not the row's: a per-sample counter is in us at any size, a
  // per-batch one in ms at any size.
  const auto slow = pb::console_counter("collate_ms", benchmark::Counter(2.5), false);
  EXPECT_EQ(slow.name, "collate_us");
  EXPECT_EQ(slow.text, "2500");
  EXPECT_EQ(pb::console_counter("step_ms", benchmark::Counter(0.001), false).name, "step_ms");
  EXPECT_EQ(pb::console_counter("step_ms", benchmark::Counter(0.1), false).name, "step_ms");
  EXPECT_EQ(pb::console_counter("step_ms", benchmark::Counter(0.0), false).text, "0");
  const auto big = pb::console_counter("data_ms", benchmark::Counter(12345.6), false);
  EXPECT_EQ(big.name, "data_ms");
  EXPECT_EQ(big.text, "12346");
  // A counter the schema does not hold is shown as it is.
  EXPECT_EQ(pb::console_counter("ms_total", benchmark::Counter(0.001), false).name, "ms_total");
  EXPECT_EQ(pb::console_counter("mine_ms", benchmark::Counter(0.001), false).name, "mine_ms");
  // A pattern's counter takes its entry's unit: op:<step>_ms per sample, region:<key>_ms per step.
  EXPECT_EQ(pb::console_counter("op:resize+crop_ms", benchmark::Counter(0.5), false).name, "op:resize+crop_us");
  EXPECT_EQ(pb::console_counter("region:IO_ms", benchmark::Counter(0.05), false).name, "region:IO_ms");
}

TEST(ConsoleCounter, RatesAndPercentRows) {
  const auto rate = pb::console_counter(
      "items_per_second", benchmark::Counter(2530.4, benchmark::Counter::kIsRate), false);
  EXPECT_EQ(rate.text, "2530/s");
  const auto bytes = pb::console_counter(
      "bytes_per_second",
      benchmark::Counter(2.0 * 1024 * 1024 * 1024, benchmark::Counter::kIsRate,
                         benchmark::Counter::kIs1024),
      false);
  EXPECT_EQ(bytes.text, "2.00Gi/s");
  const auto cv = pb::console_counter("collate_ms", benchmark::Counter(0.0512), true);
  EXPECT_EQ(cv.name, "collate_ms");  // a coefficient of variation has no unit
  EXPECT_EQ(cv.text, "5.12%");
}

TEST(UnitsConsoleReporter, NoMillisecondCounterCarriesAnSiSuffix) {
  // The async callbacks pair of issue 14: tiny waits and a large loop.
  const std::vector<BenchRun> runs = {
      make_run("BM_EndToEnd/imagenet_train/emulated/workers:2/callbacks:async",
               {{"consumer_wait_ms", 0.000257}, {"preempted_ms", 3.1e-5}, {"collate_ms", 0.0424},
                {"callbacks_ms", 0.00091}, {"step_ms", 25.3}, {"data_ms", 12345.6},
                {"batch_bytes", 38535168}, {"prediction_error_pct", 0.00961}}),
      make_run("BM_Sample/imagenet_train", {{"transform_ms", 13.324}, {"decode_ms", 1.5e-9}})};
  const std::string text = report(runs, false);
  const std::map<std::string, double> expected_us = {{"consumer_wait_us", 0.257},
                                                     {"preempted_us", 0.031},
                                                     {"collate_us", 42.4},
                                                     {"callbacks_us", 0.91},
                                                     {"decode_us", 1.5e-6},
                                                     {"transform_us", 13324}};
  int checked = 0;
  for (const auto& [name, value] : pairs(text)) {
    const bool ms = name.ends_with("_ms");
    const bool us = name.ends_with("_us");
    if (!ms && !us) continue;
    ++checked;
    EXPECT_TRUE(std::regex_match(value, kPlainDecimal)) << name << "=" << value << "\n" << text;
    if (us) {
      EXPECT_NEAR(std::stod(value), expected_us.at(name), 1e-9) << name;
    }
  }
  EXPECT_EQ(checked, 8) << text;
  EXPECT_NE(text.find("transform_us=13324"), std::string::npos) << text;
  EXPECT_NE(text.find("step_ms=25.30"), std::string::npos) << text;
  EXPECT_NE(text.find("data_ms=12346"), std::string::npos) << text;
  EXPECT_NE(text.find("decode_us=0.00000150"), std::string::npos) << text;
  EXPECT_NE(text.find("batch_bytes=38.5M"), std::string::npos) << text;
  EXPECT_NE(text.find("prediction_error_pct=0.00961"), std::string::npos) << text;
  // The time columns: 0.5 s over 10 iterations is 50 ms real, 25 ms CPU.
  EXPECT_NE(text.find("50.0 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("25.0 ms"), std::string::npos) << text;
  // No value anywhere ends in an SI fraction prefix.
  EXPECT_FALSE(std::regex_search(text, std::regex(R"(=[-0-9.]+[munpf]\b)"))) << text;
}

TEST(UnitsConsoleReporter, TabularColumnsKeepOneUnit) {
  // The unit is the column's (the schema's), never the row's: rows of 0.2 us and 2.5 ms of
  // collate share one header, collate_us, and one unit.
  const std::vector<BenchRun> runs = {make_run("BM_A", {{"collate_ms", 0.0002}, {"step_ms", 25.0}}),
                                      make_run("BM_B", {{"collate_ms", 0.0003}, {"step_ms", 0.02}}),
                                      make_run("BM_C", {{"collate_ms", 2.5}, {"step_ms", 26.0}})};
  const std::string text = report(runs, true);
  std::vector<std::string> headers;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("Benchmark", 0) == 0) headers.push_back(line);
  ASSERT_EQ(headers.size(), 1u) << text;
  EXPECT_NE(headers[0].find("collate_us"), std::string::npos) << text;
  EXPECT_EQ(headers[0].find("collate_ms"), std::string::npos) << text;
  EXPECT_NE(headers[0].find("step_ms"), std::string::npos) << text;
  EXPECT_NE(text.find("0.200"), std::string::npos) << text;  // 0.0002 ms in us
  EXPECT_NE(text.find("0.0200"), std::string::npos) << text;  // 0.02 ms stays ms in the step_ms column
  // Each value is right-aligned under its column: the cell ends where the header's name ends.
  const size_t row_c = text.find("BM_C");
  const std::string row = text.substr(row_c, text.find('\n', row_c) - row_c);
  const size_t end_header = headers[0].find("collate_us") + std::string("collate_us").size();
  EXPECT_EQ(row.find("2500") + 4, end_header) << text;
}

TEST(UnitsConsoleReporter, CompactHeadingsEndInTheirColumnsUnit) {
  using model_id = pipebench::model::CounterId;
  for (const char* family : {"Read", "Decode", "Transform", "Sample", "Loader", "StageTimers",
                             "SystemSampler", "TrainStep", "EndToEnd"})
    for (const model_id id : pb::compact_counters(family)) {
      const auto& spec = pipebench::model::counter_spec(id);
      const std::string heading(pb::compact_heading(id));
      const std::string unit(pipebench::model::unit_text(spec.shown));
      const std::string tail = unit == "%" ? "pct" : unit.ends_with("/s") ? "/s" : unit;
      if (spec.shown == pipebench::model::Unit::kCores) continue;  // "cores" says it
      EXPECT_NE(heading.find(tail), std::string::npos) << heading << " shows " << unit;
    }
  EXPECT_EQ(pb::compact_heading(model_id::kItemsPerSecond), "images/s");
}

TEST(UnitsConsoleReporter, APairedCaseShowsTheCandidatesOwnRate) {
  // bench/cases/sample_bench.cpp writes the candidate's own rate as items_per_second (not the
  // A B B A pair's): the compact Sample row shows it under images/s, its saving in us.
  BenchRun paired = make_run("BM_Sample/imagenet_train/decode:auto",
                             {{"items_per_second", 2441.0}, {"us_per_image", 409.7},
                              {"paired_saving_ms", 0.1493}, {"paired_saving_ci_ms", 0.0304}});
  std::ostringstream out, err;
  pb::UnitsConsoleReporter reporter(benchmark::ConsoleReporter::OO_Tabular,
                                    [](const std::string&) { return std::string("Sample"); }, 40);
  reporter.SetOutputStream(&out);
  reporter.SetErrorStream(&err);
  benchmark::BenchmarkReporter::Context context;
  context.name_field_width = 40;
  reporter.ReportContext(context);
  reporter.ReportRuns({paired});
  const std::string text = out.str();
  EXPECT_NE(text.find("images/s"), std::string::npos) << text;
  EXPECT_NE(text.find("saving_us"), std::string::npos) << text;
  EXPECT_NE(text.find(" 2441"), std::string::npos) << text;
  EXPECT_NE(text.find(" 149.3"), std::string::npos) << text;
  EXPECT_NE(text.find(" 30.40"), std::string::npos) << text;
}

TEST(UnitsConsoleReporter, ErroredCasesStillSayErrorOccurred) {
  BenchRun bad = make_run("BM_Decode/turbo_full", {});
  bad.error_occurred = true;
  bad.error_message = "photos/x.jpg: truncated";
  const std::string text = report({bad}, false);
  EXPECT_NE(text.find("ERROR OCCURRED: 'photos/x.jpg: truncated'"), std::string::npos) << text;
}
