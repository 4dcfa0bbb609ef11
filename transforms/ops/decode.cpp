// decode: the schema of the first stage, for --list-ops and docs/operators.md's table. The spec
// parser reads it (spec.cpp) and the Pipeline's planner runs it (pipeline.cpp):
//   full    TurboJPEG, full resolution
//   scaled  TurboJPEG DCT scaling to the smallest n/8 scale keeping both sides >= the first
//           crop's size (a smaller image, hence smaller crops and resizes)
//   roi     libjpeg ROI decode of only the first crop's window (it must follow decode),
//           DCT-downscaled by 1/2, 1/4 or 1/8 when the crop resizes anyway
//   auto    roi when a crop follows decode, else full; the run's context says which
#include <stdexcept>

#include "transforms/registry.h"

namespace pipebench {

void register_decode_ops(OpRegistry& r) {
  r.add({"decode", OpStage::kDecode, "decode_jpeg",
         "JPEG bytes -> uint8 HWC RGB (first in the list, or `decode:` in a spec map)",
         {{"mode", ParamType::kString, "full", -1e300, 1e300, {"full", "scaled", "roi", "auto"}, 0, {},
           "full | scaled (DCT scaling) | roi (only the next crop's window) | auto (roi when a crop follows)"}},
         {},
         [](const OpParams&, const OpBuildContext&) -> std::unique_ptr<Operator> {
           throw std::logic_error("decode is planned by the Pipeline, not built as an operator");
         }});
}

}  // namespace pipebench
