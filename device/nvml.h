// GPU metrics for the system sampler (measure/system_metrics.h) through NVML, the NVIDIA
// Management Library, loaded at run time with dlopen("libnvidia-ml.so.1"), so the build
// needs neither the driver nor an NVML header: the few NVML types and functions used are
// declared in nvml.cpp from NVIDIA's documented API (NVML API Reference, nvml.h of the
// driver: nvmlInit_v2, nvmlDeviceGetHandleByIndex_v2, nvmlDeviceGetHandleByPciBusId_v2,
// nvmlDeviceGetUtilizationRates, nvmlDeviceGetMemoryInfo, nvmlDeviceGetPcieThroughput,
// nvmlDeviceGetClockInfo, nvmlDeviceGetName, nvmlErrorString, nvmlShutdown).
//
// Which GPU: the one this process's CUDA code uses, matched by its PCI bus id
// (device/cuda.h: CudaInfo::pci_bus_id, from cudaDeviceGetPCIBusId), because NVML's
// indices count every GPU of the machine, whatever CUDA_VISIBLE_DEVICES says, and each MPI
// rank of a node uses its own GPU. Without a CUDA device (or its bus id): NVML's index 0.
//
// Readings (GpuSample) of that device:
//   util_pct             % of the last sample period (1/6 s to 1 s, by product) in which a
//                        kernel ran (nvmlUtilization_t.gpu)
//   mem_used_mib         device memory allocated, all processes (nvmlMemory_t.used / 2^20)
//   pcie_rx/tx_mib_per_s PCIe throughput, host -> device (rx) and device -> host (tx), NVML's
//                        KB/s x 1000 / 2^20 (its own 20 ms window: each call waits for it)
//   sm_clock_mhz         the SM clock now (NVML_CLOCK_SM)
// A reading NVML does not support on the device (e.g. PCIe in some VMs) is absent.
//
// No library, no init, no device: available() is false and note() says why in one line;
// nothing throws. Thread-safe (NVML is).
#pragma once

#include <optional>
#include <string>

namespace pipebench {

struct GpuSample {
  double util_pct = 0;
  double mem_used_mib = 0;
  std::optional<double> pcie_rx_mib_per_s, pcie_tx_mib_per_s;
  std::optional<double> sm_clock_mhz;
};

class Nvml {
 public:
  /// Loads `library` and initialises NVML for the device at PCI bus id `pci_bus_id`
  /// ("domain:bus:device.function" in hex, as cudaDeviceGetPCIBusId writes it), or NVML's
  /// index 0 when it is empty.
  explicit Nvml(const std::string& library = "libnvidia-ml.so.1", const std::string& pci_bus_id = "");
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return device_ != nullptr; }
  /// "NVML: <device name> (PCI <bus id>)" (" (NVML index 0)" when no bus id was given), or
  /// why there are no GPU metrics ("none: libnvidia-ml.so.1 not loaded (...)", "none: no
  /// NVML device at PCI <bus id> (...)").
  const std::string& note() const { return note_; }
  /// A reading now; nullopt when unavailable or when utilisation cannot be read. PCIe only
  /// with `pcie` (each of its two reads may wait for NVML's 20 ms window).
  std::optional<GpuSample> read(bool pcie = true) const;

 private:
  struct Api;
  void* lib_ = nullptr;
  Api* api_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t
  bool initialised_ = false;
  std::string note_;
};

/// The process's NVML, loaded on first use and kept (the sampler reads it at 20 Hz), for
/// the CUDA device of cuda_info() (its PCI bus id; index 0 without a CUDA device).
const Nvml& process_nvml();

}  // namespace pipebench
