// read_peer and add_peer (report/peer.h).
#include "report/peer.h"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace pipebench::report {
namespace {

using nlohmann::json;

std::vector<std::string> reasons(const json& list) {
  std::vector<std::string> out;
  for (const auto& e : list)
    out.push_back(e.value("operator", "?") + " (" + e.value("reason", "") + ")");
  return out;
}

// The count the row is priced at (peer.h).
const PeerPoint& chosen(const PeerLoader& peer, int eval_workers, double cores) {
  for (const auto& p : peer.results)
    if (p.num_workers == eval_workers) return p;
  const auto faster = [](const PeerPoint& a, const PeerPoint& b) {
    return a.images_per_second < b.images_per_second;
  };
  std::vector<PeerPoint> within;
  for (const auto& p : peer.results)
    if (cores <= 0 || p.num_workers <= cores) within.push_back(p);
  const auto& pool = within.empty() ? peer.results : within;
  const PeerPoint best = *std::max_element(pool.begin(), pool.end(), faster);
  for (const auto& p : peer.results)
    if (p.num_workers == best.num_workers) return p;
  return peer.results.front();
}

// BM_Loader/<recipe>/workers:<n>'s images/s in the run, if measured.
std::optional<double> pipebench_loader(const BenchRun& run, const std::string& recipe, int workers) {
  model::CaseKey k;
  k.family = model::Family::kLoader;
  k.pipeline = recipe;
  k.workers = workers;
  if (auto v = run.value(k, CounterId::kItemsPerSecond); v && *v > 0) return v;
  return std::nullopt;
}

}  // namespace

PeerLoader read_peer(const std::filesystem::path& file) {
  std::ifstream f(file);
  if (!f) throw std::runtime_error(file.string() + ": cannot open the torch peer's JSON");
  json j;
  try {
    j = json::parse(f);
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": not JSON: " + e.what());
  }
  PeerLoader p;
  p.file = file.string();
  try {
    const json& v = j.at("versions");
    p.versions = "torch " + v.at("torch").get<std::string>() + ", torchvision " +
                 v.at("torchvision").get<std::string>();
    p.batch = j.at("batch_size").get<int>();
    p.pin_memory = j.value("pin_memory_effective", false);
    for (const auto& r : j.at("results"))
      p.results.push_back({r.at("num_workers").get<int>(), r.at("images_per_second").get<double>()});
    p.left_out = reasons(j.value("left_out", json::array()));
    p.approximated = reasons(j.value("approximated", json::array()));
  } catch (const json::exception& e) {
    throw std::runtime_error(file.string() + ": not a torch_peer.py result: " + e.what());
  }
  if (p.results.empty()) throw std::runtime_error(file.string() + ": no results (an empty num_workers sweep)");
  for (const auto& r : p.results)
    if (!(r.images_per_second > 0))
      throw std::runtime_error(file.string() + ": images_per_second must be > 0 at num_workers " +
                               std::to_string(r.num_workers));
  return p;
}

void add_peer(Report& report, const BenchRun& run, const PeerLoader& peer) {
  WhatIf& w = report.what_if;
  const PeerPoint& at = chosen(peer, w.eval_workers, w.cores);
  PeerSummary s;
  s.file = peer.file;
  s.versions = peer.versions;
  s.workers = at.num_workers;
  s.images_per_second = at.images_per_second;
  s.pipebench_images_per_second = pipebench_loader(run, report.recipe, at.num_workers);
  s.pin_memory = peer.pin_memory;
  s.left_out = peer.left_out;
  s.approximated = peer.approximated;
  w.peer = s;
  if (w.empty()) return;
  WhatIfRow r;
  r.kind = CandidateKind::kPeer;
  r.label = "your framework's loader";
  r.case_name = peer.file;
  r.workers = at.num_workers;
  r.data_ms = w.batch * 1000.0 / at.images_per_second;
  r.step_ms = std::max(r.data_ms, w.compute_ms);
  r.au_pct = 100.0 * w.compute_ms / r.step_ms;
  r.images_per_second = w.batch * 1000.0 / r.step_ms;
  r.cores_needed = std::max(1, at.num_workers);  // num_workers=0: the main process
  const auto first_price = std::find_if(w.rows.begin(), w.rows.end(), [](const WhatIfRow& x) {
    return x.kind == CandidateKind::kPrice;
  });
  w.rows.insert(first_price, r);
}

}  // namespace pipebench::report
