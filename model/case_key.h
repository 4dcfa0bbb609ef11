// The case key: what one benchmark case of a run measures, as typed fields. bench builds a
// key for every case it registers and registers it under key.name(); the run's JSON carries
// the key on every row ("key", model/record.h); report/ and scripts/ read the fields and
// never look inside a name.
//
// name() is the Google Benchmark case name, one grammar for every family:
//   BM_Read/<layout | shards-N>/<cache>
//   BM_Decode/<op>[/<detail>]              op: turbo_full, turbo_scaled, roi, ...; detail: target:S
//   BM_Transform/<op>[/<detail>]           detail: the example's parameters, k:v/k:v;
//                                          device/<format>/batch:<n> (on the device)
//   BM_Transform/<op>/pipeline:<pipeline>[#k]   a batch operator's price in the run's
//                                          pipeline: its k-th occurrence (occurrence k,
//                                          "#k" written from the second on)
//   BM_Sample/<pipeline>[/<variant>:<param>]
//   BM_Collate/<op>/<detail>, BM_H2D/<op>/<detail>
//   BM_StageTimers|BM_Loader|BM_SystemSampler/<pipeline>[/<layout | shards-N>/<cache>]/workers:W
//   BM_TrainStep/<baseline>
//   BM_EndToEnd/<pipeline>[/<variant>:<param>]/<baseline>/workers:W[/callbacks:<a>+<b>...]
//   RegionTimer/<op>                       a user's loop (measure/region_timer.h)
//   <op>                                   kOther: a case the legacy adapter could not place
// Google Benchmark appends its own settings to the name it writes (/iterations:N,
// /real_time, ...); the key's name never has them.
//
// The fields that were small grammars inside text in record version 1 are typed from
// version 2 on (model/constants.h): a batch operator's occurrence (was "#k" at the end of
// detail), the callback set (was one text joined with '+'), a presized candidate's kept
// shorter side (was only its variant_param text); the legacy adapter (model/legacy.h) reads
// them out of a version 1 or 0 file.
//
// Units: workers are threads, shards images per shard, presize_px pixels.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace pipebench::model {

enum class Family {
  kRead,
  kDecode,
  kTransform,
  kSample,
  kCollate,
  kH2D,
  kStageTimers,
  kLoader,
  kSystemSampler,
  kTrainStep,
  kEndToEnd,
  kRegion,
  kOther,  ///< a case pipebench does not know (a file written before the record): op holds its name
};

/// "Read", "Decode", ... as the record writes them.
std::string_view family_name(Family f);
/// The inverse of family_name; std::invalid_argument naming the text otherwise.
Family parse_family(std::string_view text);

struct CaseKey {
  Family family = Family::kSample;
  std::string pipeline;       ///< the pipeline's name (a recipe or a spec's name); "" where none
  std::string variant;        ///< what-if candidate kind (model/catalogue.h); "" = today's pipeline
  std::string variant_param;  ///< its parameter: "auto", "256", "uint8", "horizontal_flip#2"
  std::string baseline;       ///< training step (model/catalogue.h); TrainStep and EndToEnd
  std::string layout;         ///< "files" | "shards"; Read always, Loader in the storage study
  std::string cache;          ///< "warm" | "cold", with layout
  int shards = 0;             ///< images per shard of a packed copy; 0: the dataset as given
  int workers = 0;            ///< StageTimers, Loader, SystemSampler, EndToEnd
  std::vector<std::string> callbacks;  ///< EndToEnd with training extras: {"checkpoint-sync", "log-async"}
  std::string op;             ///< Decode backend, Transform operator, Collate format, H2D memory, region
  std::string detail;         ///< the rest of a stage case's name (target:224, pageable/sync/batch:64)
  int occurrence = 0;         ///< Transform priced in `pipeline`: which occurrence of op (1, 2, ...)
  int presize_px = 0;         ///< variant "presized" or "presized_large": the copy's shorter side, px
  std::string timed_by = "cpu_time";  ///< "real_time" | "manual_time" | "cpu_time"

  /// The case's Google Benchmark name (the grammar above).
  std::string name() const;
  /// "decode:auto", "without:horizontal_flip"; "" for today's pipeline.
  std::string variant_label() const;
  /// The callback set as the name writes it: "checkpoint-sync+log-async"; "" for none.
  std::string callbacks_label() const;
  /// A plain case of the pipeline: no candidate, no callbacks, not the storage study.
  bool plain() const { return variant.empty() && callbacks.empty() && layout.empty() && shards == 0; }

  bool operator==(const CaseKey&) const = default;
};

/// BM_Decode/<op>[/<detail>]: one decode backend over the run's round of images
/// (bench/cases/decode_bench.cpp): turbo_full, nvjpeg, ...
CaseKey decode_case(const std::string& op, const std::string& detail = "");
/// BM_Transform/<op>/device/<format>/batch:<n>: a device batch operator on a batch of n
/// samples already in device memory, timed with CUDA events (bench/cases/device_op_bench.cpp);
/// format "uint8_nhwc" | "float32_nchw" (transforms/batch_ops_device.h).
CaseKey device_op_case(const std::string& op, const std::string& format, int batch);
/// BM_Sample/<pipeline>[/<variant>:<param>]: one worker's cost per sample.
CaseKey sample_case(const std::string& pipeline, const std::string& variant = "",
                    const std::string& param = "");
/// BM_Transform/<op>[/<detail>].
CaseKey transform_case(const std::string& op, const std::string& detail = "");
/// BM_Transform/<op>/pipeline:<pipeline>[#k]: the price of the `occurrence`-th batch
/// operator `op` (1, 2, ...) of the run's pipeline (bench/cases/transform_bench.cpp).
CaseKey batch_op_price_case(const std::string& op, const std::string& pipeline, int occurrence);
/// BM_Sample/<pipeline>/presized:<px> and BM_EndToEnd/<pipeline>/presized:<px>/...: the
/// key of `base` (a sample or end-to-end case) made the presized candidate of side `px`;
/// `kind` "presized_large" for the copy that presized only the large images.
CaseKey presized(CaseKey base, int px, std::string_view kind = "presized");
/// BM_Loader/<pipeline>[/<layout | shards-N>/<cache>]/workers:W (layout "" = the sweep).
CaseKey loader_case(const std::string& pipeline, int workers, const std::string& layout = "",
                    const std::string& cache = "", int shards = 0);
/// BM_EndToEnd/<pipeline>[/<variant>:<param>]/<baseline>/workers:W[/callbacks:<set>].
CaseKey end_to_end_case(const std::string& pipeline, const std::string& baseline, int workers,
                        const std::string& variant = "", const std::string& param = "",
                        const std::vector<std::string>& callbacks = {});
/// BM_Read/<layout | shards-N>/<cache>.
CaseKey read_case(const std::string& layout, const std::string& cache, int shards = 0);

/// The key as the record's "key" object (record version 2): every field, plus "name"; the
/// callback set as "callback_set" (an array) and, for the scripts, "callbacks" (its label).
nlohmann::json to_json(const CaseKey& key);
/// The record's "key" object of version 2 back. Throws std::invalid_argument naming the
/// field that is missing or of the wrong type. A version 1 object goes through the legacy
/// adapter (model/legacy.h, legacy_key_v1).
CaseKey key_from_json(const nlohmann::json& j);

}  // namespace pipebench::model
