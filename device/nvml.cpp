// NVML through dlopen (see nvml.h). The declarations below follow NVIDIA's nvml.h (NVML API
// Reference Guide): the types are opaque pointers, unsigned ints and one struct each for
// utilisation and memory, with the documented layouts; every entry point returns an
// nvmlReturn_t, NVML_SUCCESS = 0.
#include "device/nvml.h"

#include <dlfcn.h>

#include "device/cuda.h"
#include "device/dl_symbol.h"

namespace pipebench {
namespace {

using nvmlReturn_t = int;             // enum nvmlReturn_enum; NVML_SUCCESS = 0
using nvmlDevice_t = void*;           // struct nvmlDevice_st*
struct nvmlUtilization_t {            // nvmlUtilization_st
  unsigned int gpu;                   // % of time a kernel was executing
  unsigned int memory;                // % of time device memory was read or written
};
struct nvmlMemory_t {                 // nvmlMemory_st (v1), bytes
  unsigned long long total, free, used;
};
constexpr int kPcieTxBytes = 0;       // NVML_PCIE_UTIL_TX_BYTES
constexpr int kPcieRxBytes = 1;       // NVML_PCIE_UTIL_RX_BYTES
constexpr int kClockSm = 1;           // NVML_CLOCK_SM
constexpr unsigned kNameLength = 96;  // NVML_DEVICE_NAME_V2_BUFFER_SIZE

}  // namespace

struct Nvml::Api {
  nvmlReturn_t (*init)();
  nvmlReturn_t (*shutdown)();
  nvmlReturn_t (*handle_by_index)(unsigned, nvmlDevice_t*);
  nvmlReturn_t (*handle_by_pci_bus_id)(const char*, nvmlDevice_t*);  // nvmlDeviceGetHandleByPciBusId_v2
  nvmlReturn_t (*utilization)(nvmlDevice_t, nvmlUtilization_t*);
  nvmlReturn_t (*memory)(nvmlDevice_t, nvmlMemory_t*);
  nvmlReturn_t (*pcie)(nvmlDevice_t, int, unsigned*);   // KB/s
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*);  // MHz
  nvmlReturn_t (*name)(nvmlDevice_t, char*, unsigned);
  const char* (*error_string)(nvmlReturn_t);
};

Nvml::Nvml(const std::string& library, const std::string& pci_bus_id) {
  lib_ = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib_) {
    const char* why = dlerror();
    note_ = "none: " + library + " not loaded (" + (why ? why : "dlopen failed") + ")";
    return;
  }
  auto* api = new Api{};
  api_ = api;
  if (!detail::bind_symbol(lib_, "nvmlInit_v2", api->init) || !detail::bind_symbol(lib_, "nvmlShutdown", api->shutdown) ||
      !detail::bind_symbol(lib_, "nvmlDeviceGetHandleByIndex_v2", api->handle_by_index) ||
      !detail::bind_symbol(lib_, "nvmlDeviceGetHandleByPciBusId_v2", api->handle_by_pci_bus_id) ||
      !detail::bind_symbol(lib_, "nvmlDeviceGetUtilizationRates", api->utilization) ||
      !detail::bind_symbol(lib_, "nvmlDeviceGetMemoryInfo", api->memory) ||
      !detail::bind_symbol(lib_, "nvmlDeviceGetPcieThroughput", api->pcie) ||
      !detail::bind_symbol(lib_, "nvmlDeviceGetClockInfo", api->clock) ||
      !detail::bind_symbol(lib_, "nvmlDeviceGetName", api->name) ||
      !detail::bind_symbol(lib_, "nvmlErrorString", api->error_string)) {
    note_ = "none: " + library + " lacks an NVML function pipebench uses";
    return;
  }
  if (const nvmlReturn_t r = api->init(); r != 0) {
    note_ = std::string("none: nvmlInit failed (") + api->error_string(r) + ")";
    return;
  }
  initialised_ = true;
  nvmlDevice_t device = nullptr;
  const std::string where = pci_bus_id.empty() ? "NVML index 0" : "PCI " + pci_bus_id;
  const nvmlReturn_t r = pci_bus_id.empty() ? api->handle_by_index(0, &device)
                                            : api->handle_by_pci_bus_id(pci_bus_id.c_str(), &device);
  if (r != 0) {
    note_ = "none: no NVML device at " + where + " (" + api->error_string(r) + ")";
    return;
  }
  char name[kNameLength] = {};
  if (api->name(device, name, kNameLength) != 0) name[0] = '\0';
  device_ = device;
  note_ = std::string("NVML: ") + (name[0] ? name : "a GPU") + " (" + where + ")";
}

Nvml::~Nvml() {
  if (initialised_) api_->shutdown();
  delete api_;
  if (lib_) dlclose(lib_);
}

std::optional<GpuSample> Nvml::read(bool pcie) const {
  if (!device_) return std::nullopt;
  nvmlUtilization_t util{};
  if (api_->utilization(device_, &util) != 0) return std::nullopt;
  GpuSample s;
  s.util_pct = util.gpu;
  nvmlMemory_t mem{};
  if (api_->memory(device_, &mem) == 0) s.mem_used_mib = static_cast<double>(mem.used) / (1 << 20);
  unsigned v = 0;
  if (pcie && api_->pcie(device_, kPcieRxBytes, &v) == 0) s.pcie_rx_mib_per_s = v * 1000.0 / (1 << 20);
  if (pcie && api_->pcie(device_, kPcieTxBytes, &v) == 0) s.pcie_tx_mib_per_s = v * 1000.0 / (1 << 20);
  if (api_->clock(device_, kClockSm, &v) == 0) s.sm_clock_mhz = v;
  return s;
}

const Nvml& process_nvml() {
  static const Nvml nvml("libnvidia-ml.so.1", cuda_info().available ? cuda_info().pci_bus_id : std::string());
  return nvml;
}

}  // namespace pipebench
