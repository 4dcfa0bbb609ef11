// A sample's cost predicted from its file's header, for the files a run did not time
// (issue 34 item 2): the loader-alone windows time a share of the dataset (a random draw,
// the sampler's shuffle), and on a large heavy-tailed folder the few large originals may
// not be among them; their cost is then predicted from what their headers say.
//
//   fit        ordinary least squares of the cost per visit (ms, the mean over a file's
//              visits) on the file's pixels (megapixels, width x height / 1e6), per header
//              class: the format, and for JPEG whether it is progressive and its chroma
//              subsampling ("jpeg/baseline/4:2:0", "jpeg/progressive/4:4:4", "png", ...), since
//              a decode's cost per pixel differs between them (libjpeg-turbo: a progressive
//              scan decodes in several passes; 4:4:4 carries twice 4:2:0's chroma). A class
//              with at least kMinFitFiles timed files spanning more than one size gets its
//              own line; the others share one line over every timed file. A line whose
//              cost does not rise with the pixels (slope <= 0: a pooled line over small PNGs
//              and large JPEGs can fall) is no line: it would price every large file at the
//              cheapest one's cost, the tail this exists for.
//   predict    intercept + slope x megapixels, at least the smallest timed cost of the
//              fit's files (a line extrapolated below the data would price a tiny image at
//              nothing, or less).
//   quality    each fit's R^2 (1 - residual / total sum of squares; 1 when every cost is
//              equal) and its file count, recorded so that a user can tell a fit to trust.
// Units: ms per sample, megapixels. Errors: std::invalid_argument for a cost or a pixel
// count not finite and >= 0.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace pipebench::model {

/// A class needs this many timed files for its own line.
inline constexpr int kMinFitFiles = 8;

/// What the fit reads of a file's header.
struct FileHeader {
  double megapixels = 0;  ///< width x height / 1e6
  std::string klass;      ///< the header class above, e.g. "jpeg/baseline/4:2:0"
};

struct CostLine {
  double intercept_ms = 0;
  double ms_per_megapixel = 0;
  double floor_ms = 0;  ///< the smallest cost among its files: no prediction below it
  double r2 = 0;
  int files = 0;
  double predict(double megapixels) const;
};

struct CostFits {
  std::map<std::string, CostLine> by_class;  ///< classes with a line of their own
  std::optional<CostLine> pooled;            ///< over every timed file
  /// The class's line, else the pooled one; nullopt when there is none.
  std::optional<double> predict(const FileHeader& h) const;
};

/// One line over (megapixels, ms) points; nullopt with fewer than 2 points, every point at
/// one size, or a slope <= 0.
std::optional<CostLine> fit_line(const std::vector<std::pair<double, double>>& points);

/// The fits from the timed files: (header, mean ms per visit) each.
CostFits fit_costs(const std::vector<std::pair<FileHeader, double>>& timed);

}  // namespace pipebench::model
