// The what-if candidates of a pipeline (issue 8), measured beside it as
// BM_Sample/<pipeline>/<label> so that pipebench-report can price each change; the decode
// fix is also run end to end (BM_EndToEnd/<pipeline>/decode:auto/<baseline>/workers:<w>,
// bench/cases/end_to_end_bench.cpp) so that the report can check its prediction against the
// real loop.
// Labels:
//   decode:auto          the same spec with the ROI / DCT-scaled decode planner, when the
//                        spec asks for another decode and the planner would change it;
//   collate:uint8        the same spec collated as uint8, its trailing normalize moved
//                        after the H2D copy (where the spec allows it): the CPU saving is
//                        measured; the accelerator's share is not (labelled estimated);
//   without:<op>[#k]     the spec without that one per-sample operator, when
//                        the rest still builds: what the operator costs (it changes what
//                        the model sees, so it is a price, not a fix);
//   presized:<N>         the same spec on a copy of the data presized to shorter side N
//                        (--presize; bench/run/presized_copy.h; registered by
//                        register_sample_benchmarks, and end to end by
//                        register_end_to_end_benchmarks).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "transforms/pipeline.h"

namespace pipebench::bench {

/// One candidate: its kind (model/catalogue.h) and parameter, as the case key records
/// them, and the pipeline it runs.
struct Candidate {
  std::string kind;   ///< "decode", "collate", "without"
  std::string param;  ///< "auto", "uint8", "horizontal_flip#2"
  std::shared_ptr<const Pipeline> pipeline;
};

/// Each candidate of `p` that builds, fixes (decode) first.
std::vector<Candidate> what_if_candidates(const Pipeline& p);

}  // namespace pipebench::bench
