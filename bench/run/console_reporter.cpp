#include "bench/run/console_reporter.h"

#include <algorithm>
#include <map>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <ostream>

namespace pipebench::bench {
namespace {

__attribute__((format(printf, 1, 2))) std::string strf(const char* format, ...) {
  char buf[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

std::string pad_left(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string pad_right(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

// The time columns: ten characters, fewer decimals as the value grows (the unit, ns to s,
// is Google Benchmark's per-case time unit and follows in its own column).
std::string format_time(double t) {
  if (std::fabs(t) > 9999999999.0) return strf("%10.4e", t);
  const int decimals = t < 1 ? 3 : t < 10 ? 2 : t < 100 ? 1 : 0;
  return strf("%10.*f", decimals, t);
}

const char* big_o_name(benchmark::BigO o) {
  switch (o) {
    case benchmark::o1: return "(1)";
    case benchmark::oN: return "N";
    case benchmark::oNSquared: return "N^2";
    case benchmark::oNCubed: return "N^3";
    case benchmark::oLogN: return "lgN";
    case benchmark::oNLogN: return "NlgN";
    case benchmark::oLambda: return "f(N)";
    default: return "";
  }
}

// A rate unit: its values get "/s" on the console.
bool is_rate(model::Unit u) {
  using U = model::Unit;
  return u == U::kImagesPerSecond || u == U::kBytesPerSecond || u == U::kMegapixelsPerSecond || u == U::kGBPerSecond;
}

// ANSI colours, as Google Benchmark's console uses them (names green, times yellow, ...).
enum class Color { kNone, kRed, kGreen, kYellow, kBlue, kCyan };

std::vector<ConsoleCounter> shown_counters(const benchmark::BenchmarkReporter::Run& run) {
  const bool percent_row = run.run_type == benchmark::BenchmarkReporter::Run::RT_Aggregate &&
                           run.aggregate_unit == benchmark::kPercentage;
  std::vector<ConsoleCounter> out;
  out.reserve(run.counters.size());
  for (const auto& [name, counter] : run.counters)
    out.push_back(console_counter(name, counter, percent_row));
  return out;
}

std::vector<std::string> names_of(const std::vector<ConsoleCounter>& counters) {
  std::vector<std::string> names;
  for (const auto& c : counters) names.push_back(c.name);
  return names;
}

}  // namespace

std::string format_counter_value(double value, int one_k) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  const double mag = std::fabs(value);
  if (mag == 0) return "0";
  if (mag >= 1e5) {
    // Large values: k, M, G, ... (Ki, Mi, ... for 1024-based counters), three digits or so.
    const char* prefixes = one_k == 1024 ? "KMGTPE" : "kMGTPE";
    double scaled = value;
    int i = -1;
    while (std::fabs(scaled) >= one_k && i < 5) {
      scaled /= one_k;
      ++i;
    }
    const double s = std::fabs(scaled);
    const int decimals = s < 10 ? 2 : s < 100 ? 1 : 0;
    return strf("%.*f%c%s", decimals, scaled, prefixes[i], one_k == 1024 ? "i" : "");
  }
  if (value == std::round(value)) return strf("%.0f", value);  // counts, sizes, workers
  int decimals = 0;
  if (mag >= 1000) {
    decimals = 0;
  } else if (mag >= 1) {
    decimals = mag >= 100 ? 1 : mag >= 10 ? 2 : 3;
  } else {
    // Three significant digits: 0.257, 0.0257, 0.00961.
    decimals = 2 - static_cast<int>(std::floor(std::log10(mag)));
    if (decimals > 9) return strf("%.2e", value);
  }
  return strf("%.*f", decimals, value);
}

ConsoleCounter console_counter(const std::string& name, const benchmark::Counter& counter,
                               bool percent_row) {
  if (percent_row) return {name, strf("%.2f%%", 100.0 * counter.value)};
  double value = counter.value;
  std::string shown = name;
  const auto unit = model::unit_of(name);
  const char* suffix = "";
  if (unit) {  // the schema's entry decides, the same for every row (one unit per column)
    if (*unit == model::Unit::kMs && model::shown_unit_of(name) == model::Unit::kUs) {
      shown.replace(shown.size() - 3, 3, "_us");  // every such entry's name ends in _ms
      value *= 1000.0;
    }
    suffix = is_rate(*unit) ? "/s" : "";
  } else if ((counter.flags & benchmark::Counter::kIsRate) != 0) {  // another program's counter
    suffix = (counter.flags & benchmark::Counter::kInvert) != 0 ? "s" : "/s";
  }
  return {shown, format_counter_value(value, static_cast<int>(counter.oneK)) + suffix};
}

const std::vector<model::CounterId>& compact_counters(const std::string& family) {
  using C = model::CounterId;
  static const std::map<std::string, std::vector<C>> kColumns = {
      {"Read", {C::kUsPerImage}},
      {"Decode", {C::kUsPerImage, C::kSourceMegapixelsPerSecond}},
      {"Transform", {C::kUsPerImage}},
      {"Sample", {C::kUsPerImage, C::kPairedSavingMs, C::kPairedSavingCiMs}},
      {"Loader", {C::kDataMs, C::kCpuCoresUsed, C::kSampleCpuMs}},
      {"StageTimers", {C::kOverheadPct}},
      {"SystemSampler", {C::kSamplerCores, C::kOverheadPct}},
      {"TrainStep", {C::kComputeMs}},
      {"EndToEnd", {C::kStepMs, C::kAuPct, C::kStallPct, C::kPredictionErrorPct}},
  };
  static const std::vector<C> kNone;
  const auto it = kColumns.find(family);
  return it == kColumns.end() ? kNone : it->second;
}

std::string_view compact_heading(model::CounterId id) {
  using C = model::CounterId;
  // Short headings for the compact columns, each ending in the column's console unit (the
  // JSON keeps the counters' own names): tests/console_reporter_test.cpp checks them.
  static const std::map<C, std::string_view> kShort = {
      {C::kItemsPerSecond, "images/s"}, {C::kUsPerImage, "us/image"},
      {C::kPairedSavingMs, "saving_us"}, {C::kPairedSavingCiMs, "ci95_us"},
      {C::kCpuCoresUsed, "cores"},       {C::kSourceMegapixelsPerSecond, "MP/s"},
      {C::kSampleCpuMs, "cpu_us"},       {C::kAuPct, "AU_pct"},
      {C::kPredictionErrorPct, "err_pct"}};
  const auto it = kShort.find(id);
  return it == kShort.end() ? model::counter_spec(id).name : it->second;
}

std::vector<ConsoleCounter> UnitsConsoleReporter::shown(const Run& run) const {
  std::vector<ConsoleCounter> all = shown_counters(run);
  if (!family_of_) return all;
  const std::string family = family_of_(run.run_name.function_name);
  const auto& keep = compact_counters(family);
  if (keep.empty() && family.empty()) return all;  // a case no family names: as it is
  std::vector<ConsoleCounter> out;
  const bool percent_row = run.run_type == Run::RT_Aggregate && run.aggregate_unit == benchmark::kPercentage;
  const auto pick = [&](model::CounterId id) {
    const auto c = run.counters.find(std::string(model::counter_name(id)));
    if (c == run.counters.end()) return;
    ConsoleCounter shown = console_counter(c->first, c->second, percent_row);
    shown.name = compact_heading(id);
    if (!percent_row && shown.text.ends_with("/s")) shown.text.resize(shown.text.size() - 2);  // the heading says /s
    out.push_back(std::move(shown));
  };
  pick(model::CounterId::kItemsPerSecond);
  for (const auto id : keep) pick(id);
  return out;
}

std::string UnitsConsoleReporter::wrapped_name(const std::string& name) const {
  // Compact: a name longer than the column gets a line of its own, its figures the next.
  if (name_width_ > 0 && name.size() > name_field_width_) return name + "\n" + std::string(name_field_width_, ' ');
  return pad_right(name, name_field_width_);
}

std::string UnitsConsoleReporter::shown_name(const Run& run) const {
  if (name_width_ == 0) return run.benchmark_name();
  std::string name = run.run_name.function_name;
  if (run.run_type == Run::RT_Aggregate) name += "_" + run.aggregate_name;
  return name;
}

bool UnitsConsoleReporter::ReportContext(const Context& context) {
  const bool ok = ConsoleReporter::ReportContext(context);
  if (name_width_ > 0) name_field_width_ = std::min(name_width_, kMaxNameWidth);
  header_names_.clear();
  return ok;
}

void UnitsConsoleReporter::ReportRuns(const std::vector<Run>& reports) {
  for (const auto& run : reports) {
    const auto counters = shown(run);
    auto names = names_of(counters);
    // A new header when none was printed, or, in the tabular layout, when the columns a
    // row shows differ from the last header's (an errored row shows no counters and
    // keeps the header it follows).
    const bool columns_change = tabular() && !run.error_occurred && names != header_names_;
    if (!printed_header_ || columns_change) {
      printed_header_ = true;
      header_names_ = std::move(names);
      print_header(counters);
    }
    print_row(run, counters);
  }
}

void UnitsConsoleReporter::PrintHeader(const Run& run) { print_header(shown(run)); }

void UnitsConsoleReporter::PrintRunData(const Run& run) { print_row(run, shown(run)); }

void UnitsConsoleReporter::print_header(const std::vector<ConsoleCounter>& counters) {
  // Compact: no Iterations column (the JSON has it), so a row fits 160 characters.
  std::string head = name_width_ > 0 ? strf("%-*s %13s %15s", static_cast<int>(name_field_width_), "Benchmark", "Time", "CPU")
                                     : strf("%-*s %13s %15s %12s", static_cast<int>(name_field_width_),
                                            "Benchmark", "Time", "CPU", "Iterations");
  if (!counters.empty()) {
    if (tabular()) {
      for (const auto& c : counters) {
        head += ' ';  // appended piecewise: GCC 12 misreads " " + string (-Wrestrict)
        head += pad_left(c.name, 10);
      }
    } else {
      head += " UserCounters...";
    }
  }
  const std::string rule(head.size(), '-');
  GetOutputStream() << rule << "\n" << head << "\n" << rule << "\n";
}

void UnitsConsoleReporter::print_row(const Run& run, const std::vector<ConsoleCounter>& counters) {
  std::ostream& out = GetOutputStream();
  const bool color = (output_options_ & OO_Color) != 0;
  const auto paint = [&](Color c, const std::string& text) {
    static const char* const codes[] = {"", "31", "32", "33", "34", "36"};
    if (!color || c == Color::kNone) {
      out << text;
    } else {
      out << "\033[0;" << codes[static_cast<int>(c)] << "m" << text << "\033[m";
    }
  };
  paint(run.report_big_o || run.report_rms ? Color::kBlue : Color::kGreen,
        wrapped_name(shown_name(run)) + " ");
  if (run.error_occurred) {
    paint(Color::kRed, "ERROR OCCURRED: '" + run.error_message + "'");
    out << "\n";
    return;
  }
  const double real = run.GetAdjustedRealTime();
  const double cpu = run.GetAdjustedCPUTime();
  if (run.report_big_o) {
    const char* o = big_o_name(run.complexity);
    paint(Color::kYellow, strf("%10.2f %-4s %10.2f %-4s ", real, o, cpu, o));
  } else if (run.report_rms) {
    paint(Color::kYellow, strf("%10.0f %-4s %10.0f %-4s ", real * 100, "%", cpu * 100, "%"));
  } else if (run.run_type == Run::RT_Aggregate && run.aggregate_unit == benchmark::kPercentage) {
    paint(Color::kYellow, strf("%10.2f %-4s %10.2f %-4s ", 100 * run.real_accumulated_time, "%",
                               100 * run.cpu_accumulated_time, "%"));
  } else {
    const char* unit = benchmark::GetTimeUnitString(run.time_unit);
    paint(Color::kYellow, format_time(real) + " " + pad_right(unit, 4) + " " + format_time(cpu) +
                              " " + pad_right(unit, 4) + " ");
  }
  if (!run.report_big_o && !run.report_rms && name_width_ == 0)
    paint(Color::kCyan, strf("%10lld", static_cast<long long>(run.iterations)));
  for (const auto& c : counters) {
    if (tabular()) {
      out << " " << pad_left(c.text, std::max<size_t>(10, c.name.size()));
    } else {
      out << " " << c.name << "=" << c.text;
    }
  }
  if (!run.report_label.empty()) out << " " << run.report_label;
  out << "\n";
}

}  // namespace pipebench::bench
