// A RegionClock (measure/region_timer.h) the test moves by hand: marks are whatever
// *now holds, in ns (pick a base near now_ns() so trace spans land inside the recorder's
// time line); ms_between is the plain difference. Shared by the region-timer tests.
#pragma once

#include <cstdint>
#include <string>

#include "measure/region_timer.h"

namespace pipebench::testing {

class FakeRegionClock : public RegionClock {
 public:
  explicit FakeRegionClock(int64_t* now) : now_(now) {}
  int64_t mark() override { return *now_; }
  double ms_between(int64_t a, int64_t b) override { return static_cast<double>(b - a) / 1e6; }
  int64_t host_ns(int64_t mark) override { return mark; }
  std::string name() const override { return "fake"; }

 private:
  int64_t* now_;
};

}  // namespace pipebench::testing
