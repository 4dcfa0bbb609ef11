// The counter schema: every counter a pipebench run writes on its JSON rows (Google
// Benchmark's user counters, the rows' own numeric fields the report reads, and the
// RegionTimer rows' figures), as one table: each counter's name, unit, family and one-line
// meaning. Everything that names a counter reads it from here:
//   - bench writes through it (bench/run/counter_put.h: put(state, CounterId::kDataMs, v));
//   - the report reads through it (report/run.h: run.value(name, CounterId::kDataMs));
//   - the console formats by its unit (bench/run/console_reporter.h: a millisecond counter
//     shown in microseconds is so in every row, one unit per column);
//   - docs/counters.md's counter list is counters_markdown() (`pipebench
//     --list-counters=markdown`; tests/scripts/pipebench_cli_test.py fails on drift).
// Adding a counter: its CounterId and its row in kCounterTable (model/counters.cpp, in
// the enum's order: a static_assert and tests/counters_test.cpp check it), its producer
// (put(...) in bench/), its reader, and the regenerated docs/counters.md table.
//
// Names: a fixed name ("data_ms") or a pattern with one part the run fills in, written
// "{}": "op:{}_ms" is op:decode_ms, op:resize+crop_ms ...; "rank{}" is rank<k>_<figure>
// (model/rank_fields.h), whose unit is the figure's own (Unit::kOfFigure).
// Units: the value's unit in the JSON (Unit, unit_text()); a millisecond counter may be
// shown on the console in microseconds (CounterSpec::shown == Unit::kUs), the JSON keeps ms.
// Errors: counter_name() throws std::invalid_argument for a pattern without its part, or
// a fixed name given one. Nothing else throws.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace pipebench::model {

/// A counter's unit: the value's unit in the JSON.
enum class Unit : std::uint8_t {
  kMs,                   ///< milliseconds
  kUs,                   ///< microseconds
  kRowTime,              ///< the row's time_unit (Google Benchmark's real_time, cpu_time)
  kImagesPerSecond,      ///< images/s
  kBytesPerSecond,       ///< bytes/s
  kMegapixelsPerSecond,  ///< MP/s (1e6 pixels)
  kGBPerSecond,          ///< GB/s (1e9 bytes)
  kMiBPerSecond,         ///< MiB/s
  kPerSecond,            ///< events/s
  kBytes,
  kMiB,
  kPercent,              ///< %, 0-100 (or beyond, for an error or a drift)
  kRatio,                ///< a plain ratio (1 = equal)
  kCount,                ///< a count: workers, iterations, blocks, ...
  kImages,
  kFlag,                 ///< 0 or 1
  kCores,                ///< CPU cores (a CPU time over a wall time)
  kMHz,
  kPx,
  kGflop,
  kDb,                   ///< decibels (PSNR: 10 log10 of a power ratio)
  kMegapixels,           ///< MP (1e6 pixels, width x height)
  kMsPerMegapixel,       ///< ms per megapixel (a cost line's slope)
  kOfFigure,             ///< a pattern's: the unit of the figure its part names (rank<k>_<figure>)
};

/// Which part of pipebench writes a counter, and what it is about.
enum class CounterFamily : std::uint8_t {
  kRow,        ///< Google Benchmark's own row fields
  kRate,       ///< rates of the timed work
  kImage,      ///< per image of a round (read, decode, transform, sample cases)
  kStage,      ///< the loader's stage and operator timers, per sample
  kLoader,     ///< the loader's window (loader and end-to-end cases)
  kLoop,       ///< the training loop: bound, AU, stall (end-to-end and train-step cases)
  kCallbacks,  ///< training extras on the loop's thread (end-to-end cases with callbacks)
  kPaired,     ///< a paired BM_Sample case: candidate B against today's A, A B B A
  kBatch,      ///< batch operators priced per batch (CPU and device)
  kOverhead,   ///< on/off pairs pricing pipebench's own instruments
  kSystem,     ///< the system sampler's summary of the case
  kRanks,      ///< data-parallel runs (mpirun): the ranks' figures on rank 0's row
  kRegion,     ///< RegionTimer rows (measure/region_timer.h, a user's loop)
};

/// Every counter, in kCounterTable's order.
enum class CounterId : std::uint16_t {
  // kRow
  kRealTime, kCpuTime, kIterations,
  // kRate
  kItemsPerSecond, kBytesPerSecond, kSourceMegapixelsPerSecond, kGBPerSecond,
  // kImage
  kUsPerImage, kImagesPerRound, kPresizeShorterSidePx, kPresizeJpegQuality, kPresizeMinMegapixels,
  kPresizeChangedPct,
  // kStage (the first six in model/catalogue.h's kStageNames order)
  kReadMs, kDecodeMs, kTransformMs, kCollateMs, kBatchOpsMs, kH2dMs, kOpMs, kOpPct,
  // kLoader
  kWorkers, kDataMs, kSampleCpuMs, kPreemptedMs, kBatchBytes, kBatchUint8, kWallUsPerImage,
  kProcessCpuMs, kConsumerCpuMs, kWorkersCpuMs, kCpuCoresUsed, kConsumerWaitMs, kWorkerWaitMs,
  kReadThrottleMibS, kPrefetchDepthBatches,
  kSamplesTimed, kSampleMsMean, kSampleMsP50, kSampleMsP95, kSampleMsP99, kSampleMsMax, kCostliestMs,
  kCostFitFiles, kCostFitR2, kCostFitMsPerMp, kCostsFittedPct,
  // kLoop
  kBatchSize, kImagesPerBatch, kComputeMs, kComputeGflop, kStepMs, kStepMsCi, kStepMsBlocks, kStepP99Ms,
  kBoundMs, kAuPct, kStallPct, kPredictionErrorPct, kDataDriftPct, kDataWorkDriftPct, kAloneSampleCpuMs,
  kLoopCpuDriftPct, kLoopWorkDriftPct, kSyncMs, kSyncCpuMs, kSyncModelMs, kRegionMs, kRegionP99Ms,
  kPredStepP50Ms, kPredStepP95Ms, kPredStepP99Ms, kPredAuPct, kPredStallPct, kTailStallSharePct,
  kPredStepDeepPrefetchMs, kPredStepOutOfOrderMs, kFixPredStepMs, kFixPredictionErrorPct, kFixHostMib, kFixCostRatio, kFixCostMatched, kFixCostMeasuredPct, kFixProbedFiles,
  // kCallbacks
  kCallbackMs, kCallbackEvery, kCallbacksMs, kCallbacksPct, kCallbacksAsync,
  // kPaired
  kPairedTodayUs, kPairedSavingMs, kPairedSavingCiMs, kPairedRatio, kPairedRatioLo,
  kPairedRatioHi, kPairedBlocks, kPairedRounds, kPairedByPosition, kPairedRoundShare,
  kFidelitySamples, kFidelityIdenticalPct, kFidelityPsnrMedianDb, kFidelityPsnrP5Db,
  kFidelitySsimMedian, kFidelitySsimP5, kFidelityMs, kUpsampledTodayPct, kUpsampledCandidatePct,
  // kBatch
  kBatchMs, kBatchMsCi, kBatchImages, kBatchIterations,
  // kOverhead
  kBatches, kOnMs, kOffMs, kOverheadPct, kOverheadCiPct, kPairs, kSamplerCores, kSamplerCostPct,
  // kSystem
  kCpuUtilPctMean, kCpuUtilPctMax, kCpuBusyCoresMean, kCpuUserPctMean, kCpuSystemPctMean,
  kCpuCoreUtilPctMax, kRssMibMax, kMemAvailableMibMin, kDiskReadMibPerS, kDiskReadIops,
  kProcessReadMibPerS, kNetRxMibPerS, kNetTxMibPerS, kNetIfaceRxMibPerS, kNetIfaceTxMibPerS,
  kVoluntarySwitchesPerS, kInvoluntarySwitchesPerS, kContextSwitchesPerS, kMajorFaults,
  kGpuUtilPctMean, kGpuUtilPctMax, kGpuMemUsedMibMax, kGpuPcieRxMibPerS, kGpuPcieTxMibPerS,
  kGpuSmClockMhzMean,
  // kRanks
  kWorldSize, kDataMsMean, kAuPctMin, kAuPass, kImagesPerSecondTotal, kLoadImbalance,
  kSlowestRank, kStragglerPredMs, kStragglerIidMaxMs, kStragglerPredErrorPct,
  kStragglerIidErrorPct, kRankImagesPerSecond, kSyncWaitMs, kRankFigure,
  // kRegion
  kTimerCount, kTimerTotalMs, kTimerMeanMs, kTimerP50Ms, kTimerP99Ms,
  kCount_  ///< not a counter: the number of them
};

/// One row of the schema.
struct CounterSpec {
  CounterId id;
  std::string_view name;     ///< the JSON name, or a pattern with one "{}"
  Unit unit;                 ///< of the JSON value
  CounterFamily family;
  std::string_view meaning;  ///< one line, for docs/counters.md
  Unit shown;                ///< the console's unit: unit, or kUs for a millisecond counter
                             ///< whose values are fractions of a millisecond
};

/// The whole schema, in CounterId order.
std::span<const CounterSpec> counter_table();
/// The entry of `id`.
const CounterSpec& counter_spec(CounterId id);
/// Whether the entry's name is a pattern ("{}").
bool is_pattern(const CounterSpec& spec);
/// A fixed counter's JSON name. Throws std::invalid_argument for a pattern.
std::string_view counter_name(CounterId id);
/// A pattern's JSON name with `part` in place of "{}" (counter_name(kOpMs, "decode") is
/// "op:decode_ms"). Throws std::invalid_argument for a fixed name or an empty part.
std::string counter_name(CounterId id, std::string_view part);

/// The entry a JSON name belongs to, and a pattern's part ("" for a fixed name).
struct CounterMatch {
  const CounterSpec* spec = nullptr;
  std::string part;
};
/// The entry of a JSON name: a fixed name first, then the patterns; nullopt for a name
/// the schema does not hold (another program's counter).
std::optional<CounterMatch> find_counter(std::string_view name);
/// The unit a JSON name's value is in: the entry's, or for rank<k>_<figure> the figure's;
/// nullopt for a name the schema does not hold.
std::optional<Unit> unit_of(std::string_view name);
/// The console's unit of a JSON name, as unit_of (a ms counter shown in us: kUs).
std::optional<Unit> shown_unit_of(std::string_view name);

/// "ms", "images/s", "%", ... as docs/counters.md writes them.
std::string_view unit_text(Unit unit);
/// "loader", "end to end", ... (docs/counters.md's sections).
std::string_view family_text(CounterFamily family);

/// The loader stage counter of model/catalogue.h's kStageNames[index] ("<stage>_ms"):
/// kReadMs ... kH2dMs. index must be below std::size(kStageNames).
CounterId stage_counter(std::size_t index);

/// docs/counters.md's counter list: one Markdown table per family, every entry.
std::string counters_markdown();

}  // namespace pipebench::model
