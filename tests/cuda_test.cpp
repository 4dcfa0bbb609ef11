// CUDA helpers (device/): what works without a device (pageable buffers, a clear reason
// why not, the kernels' launch shape) and, where a device exists, pinned/device buffers and
// a round trip through the GPU.
#include "device/cuda.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <numeric>
#include <utility>
#include <vector>

#include "datasets/image_folder.h"
#include "device/cublas.h"
#include "device/launch.h"
#include "pipeline/loader.h"
#include "tests/test_data.h"
#include "transforms/recipes.h"

namespace pipebench {
namespace {

TEST(Cuda, InfoIsConsistent) {
  const CudaInfo& info = cuda_info();
  EXPECT_EQ(&info, &cuda_info());  // probed once
  EXPECT_EQ(info.available, cuda_available());
  if (!info.available) {
    EXPECT_FALSE(info.reason.empty());
    EXPECT_TRUE(info.device_name.empty());
    EXPECT_EQ(info.device, -1);
  } else {
    EXPECT_TRUE(info.compiled);
    EXPECT_FALSE(info.device_name.empty());
    EXPECT_EQ(info.device, device_for_local_rank(info.local_rank, info.device_count));
    EXPECT_FALSE(info.pci_bus_id.empty());
  }
#ifdef PIPEBENCH_HAVE_CUDA
  EXPECT_TRUE(info.compiled);
  EXPECT_FALSE(info.runtime_version.empty());
#else
  EXPECT_FALSE(info.compiled);
  EXPECT_EQ(info.reason, "built without CUDA");
#endif
}

// Sets (or, with nullptr, unsets) an environment variable for the life of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value) setenv(name, value, 1); else unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_) setenv(name_.c_str(), old_.c_str(), 1); else unsetenv(name_.c_str());
  }

 private:
  std::string name_, old_;
  bool had_ = false;
};

// cuBLAS is loaded on first use (device/cublas.h), not linked: a process that runs no CUDA
// step never maps libcublas and libcublasLt (540 MB). Loading needs no GPU.
TEST(Cuda, CublasIsLoadedOnFirstUseNotAtStart) {
#ifdef PIPEBENCH_HAVE_CUDA
  const auto mapped = [] {
    std::ifstream maps("/proc/self/maps");
    const std::string text((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
    return text.find("libcublas") != std::string::npos;
  };
  static bool first_run = true;  // --gtest_repeat: loaded by the run before
  if (first_run) {
    EXPECT_FALSE(mapped()) << "libcublas is mapped before any cuBLAS call: linked again?";
  }
  first_run = false;
  ASSERT_EQ(cublas_missing(), "");
  EXPECT_TRUE(mapped());
  const CublasApi& api = cublas();
  EXPECT_NE(api.library.find("libcublas.so."), std::string::npos) << api.library;
  EXPECT_STREQ(api.status_string(CUBLAS_STATUS_SUCCESS), "success");  // cuBLAS 13's wording
  EXPECT_EQ(&cublas(), &api);  // once per process
#else
  EXPECT_NE(cublas_missing().find("no CUDA"), std::string::npos);
#endif
}

// The node-local rank's sources in their order; a malformed value is skipped.
TEST(Cuda, NodeLocalRankFromTheLaunchersVariables) {
  ScopedEnv a("PIPEBENCH_LOCAL_RANK", nullptr), b("OMPI_COMM_WORLD_LOCAL_RANK", nullptr),
      c("MPI_LOCALRANKID", nullptr), d("SLURM_LOCALID", nullptr);
  EXPECT_EQ(node_local_rank().rank, 0);
  EXPECT_EQ(node_local_rank().source, "");
  {
    ScopedEnv s("SLURM_LOCALID", "5");
    EXPECT_EQ(node_local_rank().rank, 5);
    EXPECT_EQ(node_local_rank().source, "SLURM_LOCALID");
    ScopedEnv o("OMPI_COMM_WORLD_LOCAL_RANK", "3");  // Open MPI's comes before Slurm's
    EXPECT_EQ(node_local_rank().rank, 3);
    EXPECT_EQ(node_local_rank().source, "OMPI_COMM_WORLD_LOCAL_RANK");
    ScopedEnv p("PIPEBENCH_LOCAL_RANK", "2");  // MPI_Comm_split_type's answer, first
    EXPECT_EQ(node_local_rank().rank, 2);
    EXPECT_EQ(node_local_rank().source, "PIPEBENCH_LOCAL_RANK");
  }
  for (const char* bad : {"", "x", "-1", "1.5", "3 ", "99999999999"}) {
    ScopedEnv o("OMPI_COMM_WORLD_LOCAL_RANK", bad);
    ScopedEnv m("MPI_LOCALRANKID", "7");
    EXPECT_EQ(node_local_rank().rank, 7) << "'" << bad << "'";
    EXPECT_EQ(node_local_rank().source, "MPI_LOCALRANKID") << "'" << bad << "'";
  }
}

TEST(Cuda, DeviceForLocalRankIsRoundRobin) {
  EXPECT_EQ(device_for_local_rank(0, 1), 0);
  EXPECT_EQ(device_for_local_rank(3, 1), 0);  // CUDA_VISIBLE_DEVICES of one GPU per rank
  EXPECT_EQ(device_for_local_rank(0, 8), 0);
  EXPECT_EQ(device_for_local_rank(5, 8), 5);
  EXPECT_EQ(device_for_local_rank(9, 8), 1);  // more ranks than GPUs: shared round-robin
  EXPECT_THROW(device_for_local_rank(0, 0), std::invalid_argument);
  EXPECT_THROW(device_for_local_rank(-1, 2), std::invalid_argument);
}

// device/launch.h: every kernel's grid covers n elements in one pass up to 65535 blocks
// (the grid-stride loop does the rest) and launches at least one block.
TEST(Cuda, BlocksForCoversNWithinTheGridLimit) {
  EXPECT_EQ(kThreadsPerBlock, 256);
  EXPECT_EQ(blocks_for(0), 1u);
  EXPECT_EQ(blocks_for(1), 1u);
  EXPECT_EQ(blocks_for(256), 1u);
  EXPECT_EQ(blocks_for(257), 2u);
  EXPECT_EQ(blocks_for(size_t{65535} * 256), 65535u);
  EXPECT_EQ(blocks_for(size_t{65535} * 256 + 1), 65535u);
  EXPECT_EQ(blocks_for(size_t{1} << 40), 65535u);
}

TEST(Cuda, MemoryKindNames) {
  EXPECT_STREQ(memory_kind_name(MemoryKind::kPageable), "pageable");
  EXPECT_STREQ(memory_kind_name(MemoryKind::kPinned), "pinned");
}

TEST(Cuda, PageableHostBufferWorksAndMoves) {
  HostBuffer a(1000, MemoryKind::kPageable);
  ASSERT_NE(a.data(), nullptr);
  EXPECT_EQ(a.bytes(), 1000u);
  EXPECT_EQ(a.kind(), MemoryKind::kPageable);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % 64, 0u);
  std::memset(a.data(), 0xAB, 1000);
  void* p = a.data();
  HostBuffer b(std::move(a));
  EXPECT_EQ(b.data(), p);
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.bytes(), 0u);
  EXPECT_EQ(b.as<uint8_t>()[999], 0xAB);
  HostBuffer c(16, MemoryKind::kPageable);
  c = std::move(b);
  EXPECT_EQ(c.data(), p);
  EXPECT_EQ(c.bytes(), 1000u);
  HostBuffer empty(0, MemoryKind::kPageable);
  EXPECT_EQ(empty.bytes(), 0u);
}

TEST(Cuda, WithoutDeviceEverythingNeedingOneThrowsCudaUnavailable) {
  if (cuda_available()) GTEST_SKIP() << "a CUDA device is present: " << cuda_info().device_name;
  try {
    HostBuffer pinned(1024, MemoryKind::kPinned);
    FAIL() << "expected CudaUnavailable";
  } catch (const CudaUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find(cuda_info().reason), std::string::npos) << e.what();
  }
  EXPECT_THROW(require_cuda(), CudaUnavailable);
  EXPECT_THROW(DeviceBuffer(1024), CudaUnavailable);
  EXPECT_THROW(CudaStream(), CudaUnavailable);
  EXPECT_THROW(CudaEvent(), CudaUnavailable);
  // (void): as a statement, "CudaEvent(CudaEvent::Timing::kUntimed);" declares a variable
  // to clang (the asan build), which refuses the qualified name.
  EXPECT_THROW((void)CudaEvent(CudaEvent::Timing::kUntimed), CudaUnavailable);
  EXPECT_THROW(device_synchronize(), CudaUnavailable);
  std::vector<uint8_t> host(16);
  EXPECT_THROW(copy_to_device(nullptr, host.data(), 16, nullptr), CudaUnavailable);
  EXPECT_THROW(copy_to_host(host.data(), nullptr, 16, nullptr), CudaUnavailable);
}

TEST(Cuda, PinnedRoundTripThroughDevice) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  const size_t n = 1 << 20;
  HostBuffer pinned(n * 4, MemoryKind::kPinned);
  EXPECT_EQ(pinned.kind(), MemoryKind::kPinned);
  // Distinct values (0 .. 2^20 - 1 are exact in float32), so a shifted or partial copy shows.
  std::iota(pinned.as<float>(), pinned.as<float>() + n, 0.0f);
  DeviceBuffer device(n * 4);
  CudaStream stream;
  CudaEvent start, stop;
  start.record(stream);
  copy_to_device(device.data(), pinned.data(), n * 4, &stream);
  stop.record(stream);
  // Back into a second pinned buffer, on the same stream (ordered after the upload).
  HostBuffer back(n * 4, MemoryKind::kPinned);
  std::memset(back.data(), 0xFF, n * 4);  // NaNs: a copy that did not happen cannot pass
  copy_to_host(back.data(), device.data(), n * 4, &stream);
  stream.synchronize();
  // 4 MiB cannot cross PCIe or NVLink in zero time (the events resolve ~0.5 us).
  EXPECT_GT(CudaEvent::elapsed_ms(start, stop), 0.0f);
  EXPECT_EQ(std::memcmp(back.data(), pinned.data(), n * 4), 0);
  EXPECT_EQ(back.as<float>()[n - 1], static_cast<float>(n - 1));
  // Pageable both ways, synchronous (cudaMemcpy), through a second device buffer.
  std::vector<uint8_t> bytes(n), again(n, 0);
  for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(i * 131 + 7);
  DeviceBuffer device2(n);
  copy_to_device(device2.data(), bytes.data(), n, nullptr);
  copy_to_host(again.data(), device2.data(), n, nullptr);
  EXPECT_EQ(again, bytes);
}

// The loader's H2D stage (pinned batches, copy_to_device): every delivered batch's device
// copy holds its host bytes, read back and compared (loader_test's PinnedWithDeviceCopy
// only checks that the stage took time).
TEST(Cuda, LoaderDeviceCopyHoldsTheHostBytes) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device: " << cuda_info().reason;
  SyntheticOptions data;
  data.count = 13;  // two batches of 6 and a short one of 1
  data.classes = 2;
  data.min_width = data.max_width = 64;
  data.min_height = data.max_height = 48;
  data.seed = 5;
  ImageFolder ds(testing::make_dataset("cuda_loader_copy", data));
  LoaderOptions o;
  o.pipeline = build_recipe("imagenet_train", 32);
  o.batch_size = 6;
  o.workers = 2;
  o.memory = MemoryKind::kPinned;
  o.copy_to_device = true;
  Loader loader(ds, o);
  int batches = 0, samples = 0;
  while (auto h = loader.next()) {
    const Batch& b = **h;
    ASSERT_NE(b.device_data, nullptr);
    std::vector<uint8_t> back(b.bytes());
    copy_to_host(back.data(), b.device_data, back.size(), nullptr);
    EXPECT_EQ(std::memcmp(back.data(), b.host_data(), back.size()), 0) << "batch " << b.index;
    ++batches;
    samples += b.size;
  }
  EXPECT_EQ(batches, 3);
  EXPECT_EQ(samples, 13);
  EXPECT_GT(loader.stats().stage_ns[static_cast<int>(Stage::kH2D)], 0);
}

TEST(Cuda, CheckMacroThrowsWithCallFileAndLine) {
  try {
    PIPEBENCH_CUDA_CHECK(1);  // any non-zero status
    FAIL() << "expected CudaError";
  } catch (const CudaError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("1 failed at"), std::string::npos) << what;
    EXPECT_NE(what.find("cuda_test.cpp:"), std::string::npos) << what;
  }
  EXPECT_NO_THROW(PIPEBENCH_CUDA_CHECK(0));
}

}  // namespace
}  // namespace pipebench
