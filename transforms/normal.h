// Fast standard normal variates for filling tensors (random_erasing's per-pixel values):
// the ziggurat method of Marsaglia and Tsang ("The Ziggurat Method for Generating Random
// Variables", Journal of Statistical Software 5(8), 2000), 128 layers. Most draws cost one
// 64-bit random number, a table lookup and a multiply; Box-Muller (Rng::normal) costs a log,
// a sqrt and a cosine, ~10x more per value measured here. Layer index and magnitude come
// from disjoint bits of the 64-bit draw (low 7 bits, high 32 bits), avoiding the
// correlation Doornik (2005) found in the original's shared bits.
#pragma once

#include "transforms/rng.h"

namespace pipebench {

/// One N(0, 1) variate from rng.
float ziggurat_normal(Rng& rng);

}  // namespace pipebench
