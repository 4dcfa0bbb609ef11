// What a what-if candidate changes in the pixels the model sees, in words (issue 35): the
// fidelity notes under the what-if table (report/format_whatif.cpp) and each JSON row's
// "notes" (report/format_whatif_json.cpp) print the same sentence. Internal to report/.
#pragma once

#include <string>

#include "report/whatif.h"

namespace pipebench::report {

/// "<label>: <what it changes>; <fidelity>[; crops enlarged ...][ (*: below --min-psnr ...)]",
/// e.g. "decode:auto: decodes only the crop's window, ...; PSNR 41.2 dB median, 36.0 dB
/// p5, SSIM 0.990 / 0.970, 10 % of 48 samples identical"; "fidelity not measured" where the
/// row has none.
std::string change_note(const WhatIfRow& row);

}  // namespace pipebench::report
