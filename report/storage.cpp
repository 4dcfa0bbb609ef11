#include "report/storage.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "model/bound.h"
#include "report/appendf.h"

namespace pipebench::report {
namespace {

// The warm loader of the study: BM_Loader/<pipeline>/<layout>/warm/workers:<w>.
std::optional<std::pair<std::string, int>> warm_case(const BenchRun& run, const std::string& pipeline,
                                                     const std::string& layout) {
  for (const CaseMeans* c : run.where([&](const model::CaseKey& k) {
         return k.family == model::Family::kLoader && k.pipeline == pipeline && k.layout == layout &&
                k.cache == "warm" && k.shards == 0 && k.workers > 0;
       }))
    return std::make_pair(c->key.name(), c->key.workers);
  return std::nullopt;
}

std::optional<double> mb_per_second(const BenchRun& run, const std::string& name) {
  const auto b = run.value(name, CounterId::kBytesPerSecond);
  if (!b) return std::nullopt;
  return *b / 1e6;
}

void add_warnings(const BenchRun& run, const std::string& cold_name, Storage& s) {
  const auto resident = run.number("cold_resident_pct");
  if (s.cache_mode == "cold" && resident && *resident > 10)
    s.warnings.push_back("after the drop, " + std::to_string(std::lround(*resident)) +
                         " % of the files' pages were still in the page cache: this filesystem "
                         "ignores posix_fadvise(DONTNEED) (tmpfs, some overlays), so the cold "
                         "run was served from memory");
  const auto disk = run.value(cold_name, CounterId::kDiskReadMibPerS);
  const auto ips = run.value(cold_name, CounterId::kItemsPerSecond);
  const auto images = run.number("dataset_images");
  const auto bytes = run.number("dataset_bytes");
  if (s.cache_mode == "cold" && disk && ips && images && bytes && *images > 0) {
    const double consumed_mib_s = *ips * (*bytes / *images) / (1024.0 * 1024.0);
    if (*disk < 0.01 * consumed_mib_s) {
      std::string w;
      appendf(w, "the cold loader read %.2f MiB/s from the device while it consumed about %.0f "
              "MiB/s: the data came from memory, not storage", *disk, consumed_mib_s);
      s.warnings.push_back(std::move(w));
    }
  }
  const auto avail = run.number("host_available_memory_bytes");
  if (s.cache_mode == "warm" && avail && bytes && *bytes > *avail)
    s.warnings.push_back("the dataset (" + std::to_string(std::lround(*bytes / 1048576)) +
                         " MiB) is larger than the available memory (" +
                         std::to_string(std::lround(*avail / 1048576)) +
                         " MiB): a warm run cannot hold it in the page cache; run --cache=cold");
}

}  // namespace

const PackedLayout* Storage::best_packed() const {
  const PackedLayout* best = nullptr;
  for (const auto& p : packed)
    if (p.data_ms && (!best || *p.data_ms < *best->data_ms)) best = &p;
  return best;
}

std::string Storage::fix_first() const {
  if (stall_ms <= 0) return "";
  return fetch_stall_ms > prep_stall_ms ? "fetch" : "prep";
}

Storage storage_split(const BenchRun& run, const std::string& pipeline, std::optional<double> compute_ms) {
  Storage s;
  s.layout = run.context_or("storage_layout", "files");
  s.cache_mode = run.context_or("cache_mode", "warm");
  if (const auto t = run.number("read_throttle_mib_s"); t && *t > 0) s.throttle_mib_s = t;
  const auto warm = warm_case(run, pipeline, s.layout);
  const std::string cold_name = model::loader_case(pipeline, warm ? warm->second : 0).name();
  add_warnings(run, cold_name, s);
  if (!warm || (s.cache_mode != "cold" && !s.throttle_mib_s)) return s;
  s.workers = warm->second;
  s.cold_case = cold_name;
  s.cold_data_ms = run.value(cold_name, CounterId::kDataMs);
  s.warm_data_ms = run.value(warm->first, CounterId::kDataMs);
  s.compute_ms = compute_ms ? compute_ms : run.number("compute_ms");
  s.cold_images_per_second = run.value(cold_name, CounterId::kItemsPerSecond);
  const std::string read_cold = model::read_case(s.layout, "cold").name();
  s.fetch_images_per_second = run.value(read_cold, CounterId::kItemsPerSecond);
  s.fetch_mb_per_second = mb_per_second(run, read_cold);
  if (s.cold_data_ms && s.warm_data_ms && s.compute_ms) {
    // The step model's stall (model/bound.h predict_from_parts: max(data, compute) - compute).
    const auto stall = [&](double data_ms) { return predict_from_parts(data_ms, *s.compute_ms, 2).step_ms - *s.compute_ms; };
    s.stall_ms = stall(*s.cold_data_ms);
    s.prep_stall_ms = stall(std::min(*s.warm_data_ms, *s.cold_data_ms));
    s.fetch_stall_ms = std::max(0.0, s.stall_ms - s.prep_stall_ms);
  }
  const auto images = run.number("dataset_images");
  const auto bytes = run.number("dataset_bytes");
  if (s.throttle_mib_s && images && bytes && *images > 0 && *bytes > 0)
    s.predicted_fetch_images_per_second = *s.throttle_mib_s * 1048576.0 / (*bytes / *images);
  // The packed copies: their cold loaders at the study's count, by images per shard.
  for (const CaseMeans* c : run.where([&](const model::CaseKey& k) {
         return k.family == model::Family::kLoader && k.pipeline == pipeline && k.shards > 0 &&
                k.cache == "cold" && k.workers == s.workers;
       })) {
    PackedLayout p;
    p.layout = "shards-" + std::to_string(c->key.shards);
    p.loader_case = c->key.name();
    p.data_ms = run.value(p.loader_case, CounterId::kDataMs);
    p.read_mb_per_second = mb_per_second(run, model::read_case("shards", "cold", c->key.shards).name());
    s.packed.push_back(p);
  }
  std::sort(s.packed.begin(), s.packed.end(), [](const PackedLayout& a, const PackedLayout& b) {
    return a.layout.size() != b.layout.size() ? a.layout.size() < b.layout.size() : a.layout < b.layout;
  });
  return s;
}

void add_storage_rows(WhatIf& w, const Storage& s) {
  const PackedLayout* best = s.best_packed();
  if (w.empty() || !s.cold_data_ms || !best || s.stall_ms <= 0) return;
  if (100 * s.fetch_stall_ms / s.stall_ms < kSignificantFetchPct) return;
  const double compute_ms = w.compute_ms > 0 ? w.compute_ms : s.compute_ms.value_or(0);
  if (compute_ms <= 0 || *s.cold_data_ms <= 0 || *best->data_ms <= 0) return;
  const auto row = [&](std::string label, std::string case_name, double data_ms) {
    WhatIfRow r;
    r.kind = CandidateKind::kStorage;
    r.label = std::move(label);
    r.case_name = std::move(case_name);
    r.workers = s.workers;
    r.cores_needed = s.workers;
    r.data_ms = data_ms;
    const model::StepPrediction p = predict_from_parts(data_ms, compute_ms, 2);  // the step model
    r.step_ms = p.step_ms;
    r.au_pct = p.au_pct;
    r.images_per_second = w.batch * 1000.0 / r.step_ms;
    r.data_saving_ms = *s.cold_data_ms - data_ms;
    return r;
  };
  const WhatIfRow files = row(s.layout + ", cold", s.cold_case, *s.cold_data_ms);
  std::vector<WhatIfRow> rows = {files};
  WhatIfRow packed;  // the best size's row
  for (const auto& p : s.packed) {  // every size measured, ascending
    if (!p.data_ms || *p.data_ms <= 0) continue;
    rows.push_back(row("pack into " + p.layout, p.loader_case, *p.data_ms));
    rows.back().variant = "pack";  // a storage layout, not a sample candidate
    rows.back().variant_param = p.layout;
    if (&p == best) packed = rows.back();
  }
  const auto first_price = std::find_if(w.rows.begin(), w.rows.end(), [](const WhatIfRow& x) {
    return x.kind == CandidateKind::kPrice;
  });
  w.rows.insert(first_price, rows.begin(), rows.end());
  std::string storage;
  appendf(storage, "Read cold, %.0f %% of the data stall is fetch: packed into %s the loader "
          "measured %.2f ms per batch against %.2f for the files (AU %.1f %% against %.1f %%, "
          "at %d workers)%s.", 100 * s.fetch_stall_ms / s.stall_ms, best->layout.c_str(),
          packed.data_ms, files.data_ms, packed.au_pct, files.au_pct, s.workers,
          packed.data_saving_ms > 0 ? "" : ": packing does not help here");
  std::string& text = w.recommendation.text;
  if (s.fix_first() == "fetch" && packed.data_saving_ms > 0) {
    // Storage first: the CPU candidates are priced as if every byte were in memory.
    text = "Fix storage first. " + storage +
           (text.empty() ? std::string() : " Then, with reads keeping up (the CPU candidates, priced warm): " + text);
  } else {
    if (!text.empty() && text.back() != ' ') text += ' ';
    text += storage;
  }
}

void append_storage_text(std::string& out, const Storage& s) {
  if (s.empty()) return;
  appendf(out, "\nStorage (%s, page cache %s%s):\n", s.layout.c_str(), s.cache_mode.c_str(),
          s.throttle_mib_s ? ", reads throttled (an emulation)" : "");
  if (s.throttle_mib_s)
    appendf(out, "  Emulated storage: every read shared one link of %.1f MiB/s "
            "(--read-throttle-mib-s); not this machine's disk.\n", *s.throttle_mib_s);
  if (s.cold_data_ms && s.warm_data_ms && s.compute_ms) {
    appendf(out, "  At %d workers: data %.2f ms per batch cold, %.2f ms warm (every byte in "
            "memory), step %.2f ms.\n", s.workers, *s.cold_data_ms, *s.warm_data_ms, *s.compute_ms);
    if (s.stall_ms <= 0) {
      appendf(out, "  No data stall: even cold, the loader keeps up with the step.\n");
    } else {
      const double fetch_pct = 100 * s.fetch_stall_ms / s.stall_ms;
      appendf(out, "  Data stall %.2f ms per step: fetch stall %.2f ms (%.0f %%, waiting for "
              "storage), prep stall %.2f ms (%.0f %%, CPU work). Fix %s first: %s.\n",
              s.stall_ms, s.fetch_stall_ms, fetch_pct, s.prep_stall_ms, 100 - fetch_pct,
              s.fix_first().c_str(),
              s.fix_first() == "fetch"
                  ? "faster storage, a page cache that holds the dataset, or fewer, larger "
                    "reads (pack into shards)"
                  : "the CPU stages (see the table above), or more cores");
    }
  }
  if (s.fetch_images_per_second)
    appendf(out, "  Storage alone (BM_Read/%s/cold, one reader): %.0f images/s, %.1f MB/s.\n",
            s.layout.c_str(), *s.fetch_images_per_second, s.fetch_mb_per_second.value_or(0));
  if (s.predicted_fetch_images_per_second && s.cold_images_per_second)
    appendf(out, "  Fetch-bound prediction (link rate / mean sample size): %.0f images/s; the cold "
            "loader measured %.0f images/s (%+.1f %%).\n", *s.predicted_fetch_images_per_second,
            *s.cold_images_per_second,
            100 * (*s.cold_images_per_second / *s.predicted_fetch_images_per_second - 1));
  for (const auto& p : s.packed) {
    if (!p.data_ms || !s.cold_data_ms) continue;
    const double saving = *s.cold_data_ms - *p.data_ms;
    appendf(out, "  Pack into shards (%s, cold, %d workers): %.2f ms per batch against %.2f for "
            "the files (%s %.2f ms per batch)", p.layout.c_str(), s.workers, *p.data_ms,
            *s.cold_data_ms, saving >= 0 ? "saves" : "costs", std::abs(saving));
    if (p.read_mb_per_second && s.fetch_mb_per_second && *s.fetch_mb_per_second > 0)
      appendf(out, "; one cold reader reads %.2fx the files' MB/s (shards / files)",
              *p.read_mb_per_second / *s.fetch_mb_per_second);
    appendf(out, "%s.\n", s.packed.size() > 1 && &p == s.best_packed() ? " (the best size here)" : "");
  }
  for (const auto& w : s.warnings) appendf(out, "  Warning: %s.\n", w.c_str());
}

nlohmann::json storage_json(const Storage& s) {
  using nlohmann::json;
  const auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(); };
  json j = {{"layout", s.layout}, {"cache_mode", s.cache_mode},
            {"read_throttle_mib_s", opt(s.throttle_mib_s)}, {"workers", s.workers},
            {"cold_data_ms", opt(s.cold_data_ms)}, {"warm_data_ms", opt(s.warm_data_ms)},
            {"compute_ms", opt(s.compute_ms)}, {"stall_ms", s.stall_ms},
            {"fetch_stall_ms", s.fetch_stall_ms}, {"prep_stall_ms", s.prep_stall_ms},
            {"fix_first", s.fix_first().empty() ? json() : json(s.fix_first())},
            {"fetch_images_per_second", opt(s.fetch_images_per_second)},
            {"fetch_mb_per_second", opt(s.fetch_mb_per_second)},
            {"cold_images_per_second", opt(s.cold_images_per_second)},
            {"predicted_fetch_images_per_second", opt(s.predicted_fetch_images_per_second)},
            {"warnings", s.warnings}};
  if (!s.packed.empty()) {
    const PackedLayout* best = s.best_packed();
    j["pack_into_shards"] = {{"layout", best ? json(best->layout) : json()},
                             {"data_ms", best ? opt(best->data_ms) : json()},
                             {"read_mb_per_second", best ? opt(best->read_mb_per_second) : json()},
                             {"files_read_mb_per_second", opt(s.fetch_mb_per_second)},
                             {"sizes", json::array()}};
    for (const auto& p : s.packed)
      j["pack_into_shards"]["sizes"].push_back({{"layout", p.layout}, {"data_ms", opt(p.data_ms)},
                                                {"read_mb_per_second", opt(p.read_mb_per_second)}});
  }
  return j;
}

}  // namespace pipebench::report
