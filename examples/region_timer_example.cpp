// A user's own training loop timed with pipebench::RegionTimer (measure/region_timer.h),
// docs/region-timers.md's example, compiled and run by the test
// region_timer_example (tests/CMakeLists.txt), which then runs pipebench-report on the JSON.
//
// The loop stands in for one that calls LibTorch: next_batch() for a DataLoader's next
// batch (a synchronous load of 3 ms: nothing prefetches, so the loop waits for all of it),
// forward() and backward() for the model (1 ms each). Expected verdict: data-bound, the
// loop waiting for data about 60 % of each step.
//
// Usage: region_timer_example OUT.json [STEPS]   (default 20 steps, about 0.1 s)
// Errors: exit 2 with a message for bad arguments or an unwritable OUT.json.
#include <chrono>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

#include "measure/region_timer.h"

namespace {

void work(double ms) { std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms)); }
int next_batch() { work(3); return 0; }  // torch: auto batch = *it++ (a DataLoader)
void forward(int) { work(1); }           // torch: auto loss = model->forward(x) ...
void backward() { work(1); }             // torch: loss.backward(); optimizer.step();

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s OUT.json [STEPS]\n", argv[0]);
    return 2;
  }
  int steps = 20;
  try {
    if (argc == 3) steps = std::stoi(argv[2]);
  } catch (const std::exception&) {
    steps = 0;
  }
  if (steps <= 0) {
    std::fprintf(stderr, "region_timer_example: STEPS must be a positive integer, got '%s'\n", argv[2]);
    return 2;
  }
  pipebench::RegionTimer timer;  // steady clock; CudaEventRegionClock for GPU phases
  for (int step = 0; step < steps; ++step) {
    auto whole = timer.scope(pipebench::Region::Batch);
    int batch;
    { auto r = timer.scope(pipebench::Region::IO);       batch = next_batch(); }
    { auto r = timer.scope(pipebench::Region::Forward);  forward(batch); }
    { auto r = timer.scope(pipebench::Region::Backward); backward(); }
  }
  timer.set_context("batch_size", "64");
  try {
    timer.write_json(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "region_timer_example: %s\n", e.what());
    return 2;
  }
  return 0;
}
