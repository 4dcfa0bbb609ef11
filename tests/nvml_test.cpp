// GPU metrics through NVML (device/nvml.h, measure/system_metrics.h): a library that is
// not there gives one note and no GPU fields, never an error; the summary of GPU fields is
// checked against hand-made samples. A real reading only where a driver is installed.
#include "device/nvml.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device/cuda.h"
#include "measure/system_metrics.h"

namespace pipebench {
namespace {

TEST(Nvml, AnAbsentLibraryGivesANoteNotAnError) {
  const Nvml nvml("libpipebench-no-such-nvml.so.1");
  EXPECT_FALSE(nvml.available());
  EXPECT_EQ(nvml.note().rfind("none: libpipebench-no-such-nvml.so.1 not loaded (", 0), 0u) << nvml.note();
  EXPECT_FALSE(nvml.read().has_value());
}

TEST(Nvml, AnAbsentLibraryGivesANoteAlsoByBusId) {
  const Nvml nvml("libpipebench-no-such-nvml.so.1", "0000:41:00.0");
  EXPECT_FALSE(nvml.available());
  EXPECT_EQ(nvml.note().rfind("none: libpipebench-no-such-nvml.so.1 not loaded (", 0), 0u) << nvml.note();
}

// The process's NVML reads the GPU the CUDA code uses (by PCI bus id), not NVML's index 0.
TEST(Nvml, ReadsTheCudaDeviceByBusId) {
  if (!process_nvml().available()) GTEST_SKIP() << "no GPU metrics here: " << process_nvml().note();
  if (!cuda_available()) {
    EXPECT_NE(process_nvml().note().find("(NVML index 0)"), std::string::npos) << process_nvml().note();
    GTEST_SKIP() << "NVML without a CUDA device: " << cuda_info().reason;
  }
  ASSERT_FALSE(cuda_info().pci_bus_id.empty());
  EXPECT_NE(process_nvml().note().find("(PCI " + cuda_info().pci_bus_id + ")"), std::string::npos)
      << process_nvml().note();
  // A bus id no GPU has: a note, no device.
  const Nvml none("libnvidia-ml.so.1", "ffff:ff:1f.7");
  EXPECT_FALSE(none.available());
  EXPECT_EQ(none.note().rfind("none: no NVML device at PCI ffff:ff:1f.7 (", 0), 0u) << none.note();
}

TEST(Nvml, SamplesHaveGpuFieldsExactlyWhenNvmlIsAvailable) {
  const SystemSample s = read_system_sample(0, 0, /*gpu_pcie=*/true);
  if (!process_nvml().available()) {
    EXPECT_FALSE(s.gpu_util_pct.has_value());
    EXPECT_FALSE(summarize({s, s}).gpu_util_pct_mean.has_value());
    GTEST_SKIP() << "no GPU metrics here: " << process_nvml().note();
  }
  ASSERT_TRUE(s.gpu_util_pct.has_value());
  EXPECT_GE(*s.gpu_util_pct, 0);
  EXPECT_LE(*s.gpu_util_pct, 100);
  EXPECT_GT(s.gpu_mem_used_mib.value_or(0), 0);  // the driver's own context holds some
}

// By hand: util 20, 60, absent -> mean 40, max 60; memory max 300; PCIe only on the first
// sample -> its value; SM clock 1000, 2000 -> 1500.
TEST(Nvml, SummaryOfGpuFieldsCountsTheSamplesThatHaveThem) {
  std::vector<SystemSample> v(3);
  for (int i = 0; i < 3; ++i) v[i].t_ns = i * 50000000;
  v[0].gpu_util_pct = 20, v[1].gpu_util_pct = 60;
  v[0].gpu_mem_used_mib = 100, v[1].gpu_mem_used_mib = 300;
  v[0].gpu_pcie_rx_mib_per_s = 512, v[0].gpu_pcie_tx_mib_per_s = 8;
  v[0].gpu_sm_clock_mhz = 1000, v[1].gpu_sm_clock_mhz = 2000;
  const SystemSummary s = summarize(v);
  EXPECT_DOUBLE_EQ(s.gpu_util_pct_mean.value(), 40);
  EXPECT_DOUBLE_EQ(s.gpu_util_pct_max.value(), 60);
  EXPECT_DOUBLE_EQ(s.gpu_mem_used_mib_max.value(), 300);
  EXPECT_DOUBLE_EQ(s.gpu_pcie_rx_mib_per_s.value(), 512);
  EXPECT_DOUBLE_EQ(s.gpu_pcie_tx_mib_per_s.value(), 8);
  EXPECT_DOUBLE_EQ(s.gpu_sm_clock_mhz_mean.value(), 1500);
}

}  // namespace
}  // namespace pipebench
