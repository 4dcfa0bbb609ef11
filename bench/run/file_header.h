// A file's header as the cost fit reads it (model/cost_fit.h; bench/cases/dataset_costs.h):
// its pixels and its class (the format; for JPEG, progressive or baseline and the chroma
// subsampling: "jpeg/baseline/4:2:0", "png", ...).
// Read from the file's first kHeadBytes (a JPEG's SOF follows its APP segments, at most
// 64 KiB each), the whole file where the header lies beyond them (a large EXIF thumbnail).
// Errors: none thrown; nullopt for a file that cannot be opened or whose header cannot be
// parsed (transforms/image_format.h read_image_info).
#pragma once

#include <cstddef>
#include <optional>

#include "datasets/image_folder.h"
#include "model/cost_fit.h"

namespace pipebench::bench {

inline constexpr std::size_t kHeadBytes = 256 * 1024;

/// The header of `folder`'s file `i`.
std::optional<model::FileHeader> read_file_header(const ImageFolder& folder, std::size_t i);

}  // namespace pipebench::bench
