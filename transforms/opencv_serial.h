// Internal to transforms/: keeps OpenCV's own threading off. pipebench parallelises across
// samples (one worker per thread), so a per-sample cv::resize or cv::dilate must run on the
// calling thread only; otherwise a "one thread" measurement would silently use OpenCV's
// TBB/pthreads pool too. cv::setNumThreads(0) makes cv::parallel_for_ run serially; it is a
// process-wide OpenCV setting, applied once, the first time a transform calls OpenCV.
#pragma once

#include <opencv2/core/utility.hpp>

namespace pipebench::detail {

inline void opencv_serial() {
  static const bool done = [] {
    cv::setNumThreads(0);
    return true;
  }();
  (void)done;
}

}  // namespace pipebench::detail
