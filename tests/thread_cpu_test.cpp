// This process's CPU by thread role (measure/thread_cpu.h): the split's arithmetic, and on
// this machine a consumer thread and a worker thread that each burn a known amount of CPU
// time are told apart, with the system sampler's thread taken out of the workers'.
#include "measure/thread_cpu.h"

#include <gtest/gtest.h>

#include <thread>

#include "measure/stage_timers.h"
#include "measure/system_metrics.h"

namespace pipebench {
namespace {

constexpr int64_t kMs = 1'000'000;

// Spins until the calling thread has used `ns` more CPU time: a known amount of CPU
// whatever the machine's load (time waiting for a core does not count).
void burn_cpu(int64_t ns) {
  const int64_t end = thread_cpu_ns() + ns;
  volatile uint64_t x = 0;
  while (thread_cpu_ns() < end)
    for (int i = 0; i < 1000; ++i) x = x + 1;
}

TEST(ThreadCpu, SplitIsProcessMinusConsumerMinusSampler) {
  const RoleCpu r = split_role_cpu(100 * kMs, 30 * kMs, 10 * kMs);
  EXPECT_EQ(r.process_ns, 100 * kMs);
  EXPECT_EQ(r.consumer_ns, 30 * kMs);
  EXPECT_EQ(r.sampler_ns, 10 * kMs);
  EXPECT_EQ(r.workers_ns, 60 * kMs);
}

TEST(ThreadCpu, SplitNeverGoesNegativeAndStillAddsUp) {
  // The parts read a little more than the process (clock granularity): workers 0.
  RoleCpu r = split_role_cpu(100, 80, 30);
  EXPECT_EQ(r.workers_ns, 0);
  EXPECT_EQ(r.process_ns, 110);
  EXPECT_EQ(r.consumer_ns + r.sampler_ns + r.workers_ns, r.process_ns);
  r = split_role_cpu(-5, -1, -2);
  EXPECT_EQ(r.process_ns, 0);
  EXPECT_EQ(r.consumer_ns, 0);
  EXPECT_EQ(r.sampler_ns, 0);
  EXPECT_EQ(r.workers_ns, 0);
}

TEST(ThreadCpu, AThreadsClockReadsFromAnotherThread) {
  const pthread_t self = pthread_self();
  burn_cpu(20 * kMs);
  const auto own = thread_cpu_ns();
  std::optional<int64_t> seen;
  std::thread other([&] { seen = thread_cpu_ns_of(self); });
  other.join();
  ASSERT_TRUE(seen.has_value());
  EXPECT_GE(*seen, own);                // the clock only grows
  EXPECT_LT(*seen - own, 5 * kMs);      // and this thread did little since (it waited)
}

TEST(ThreadCpu, TheSamplersClockReadsOnlyWhileItRuns) {
  SystemSampler sampler;
  EXPECT_FALSE(sampler.running_thread_cpu_ns().has_value());
  sampler.start(100);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto running = sampler.running_thread_cpu_ns();
  ASSERT_TRUE(running.has_value());
  EXPECT_GT(*running, 0);
  sampler.stop();
  EXPECT_FALSE(sampler.running_thread_cpu_ns().has_value());
  EXPECT_GE(sampler.thread_cpu_ns(), *running);  // its whole life's CPU at its end
}

TEST(ThreadCpu, ConsumerAndWorkerCpuAreAttributedToTheirRoles) {
  // The consumer (this thread) burns 150 ms of CPU while a worker burns 300 ms, with a
  // sampler running: each role gets its own, the sampler's thread goes to neither.
  constexpr int64_t kConsumer = 150 * kMs, kWorker = 300 * kMs;
  SystemSampler sampler;
  sampler.start(100);
  const RoleCpuWindow window(&sampler);
  std::thread worker([] { burn_cpu(kWorker); });
  burn_cpu(kConsumer);
  worker.join();  // waits without CPU
  const RoleCpu r = window.finish();
  sampler.stop();
  // Generous tolerances: a shared 2-core machine; the thread's start and join, gtest.
  EXPECT_GE(r.consumer_ns, kConsumer);
  EXPECT_LT(r.consumer_ns, kConsumer + 20 * kMs);
  EXPECT_GE(r.workers_ns, kWorker - 5 * kMs);
  EXPECT_LT(r.workers_ns, kWorker + 30 * kMs);
  EXPECT_GT(r.sampler_ns, 0) << "the sampler ran for the whole window";
  // Its own cost is not what this test is about (BM_SystemSampler measures it; it grows
  // with the window's wall time, e.g. under ASan): the window's share of the sampler's
  // thread cannot exceed that thread's whole life, read by its own clock after stop().
  EXPECT_LE(r.sampler_ns, sampler.thread_cpu_ns());
  EXPECT_EQ(r.consumer_ns + r.sampler_ns + r.workers_ns, r.process_ns);
}

TEST(ThreadCpu, WithoutASamplerItsShareIsZero) {
  const RoleCpuWindow window;
  std::thread worker([] { burn_cpu(50 * kMs); });
  worker.join();
  const RoleCpu r = window.finish();
  EXPECT_EQ(r.sampler_ns, 0);
  EXPECT_GE(r.workers_ns, 45 * kMs);
  EXPECT_LT(r.consumer_ns, 10 * kMs) << "the consumer only waited";
}

}  // namespace
}  // namespace pipebench
