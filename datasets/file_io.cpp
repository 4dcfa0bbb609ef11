// Whole-file reads and writes with POSIX calls, and page-cache eviction via posix_fadvise.
#include "datasets/file_io.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "datasets/image_folder.h"

namespace pipebench {
namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* what, int err) {
  throw DatasetError(path.string() + ": " + what + ": " + std::strerror(err));
}

/// Closes a file descriptor on scope exit.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Writes all of `text` to fd; false with errno set on a short or failed write.
bool write_all(int fd, std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

// O_NONBLOCK: opening a fifo put where an image was expected must not block; for a
// regular file it changes nothing, and anything else is refused after fstat.
constexpr int kReadFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;

size_t read_file(const std::filesystem::path& path, std::vector<uint8_t>& out) {
  Fd f{::open(path.c_str(), kReadFlags)};
  if (f.fd < 0) fail(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail(path, "cannot stat", errno);
  if (!S_ISREG(st.st_mode)) throw DatasetError(path.string() + ": not a regular file");
  const size_t size = static_cast<size_t>(st.st_size);
  out.resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(f.fd, out.data() + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, "read failed", errno);
    }
    if (n == 0) {
      throw DatasetError(path.string() + ": file shrank while reading (expected " +
                         std::to_string(size) + " bytes, got " + std::to_string(done) + ")");
    }
    done += static_cast<size_t>(n);
  }
  return size;
}

size_t read_file(const std::filesystem::path& path, uint64_t expected, std::vector<uint8_t>& out) {
  // A fifo put in the file's place reads as 0 bytes: an empty file takes the checked read.
  if (expected > 0) {
    Fd f{::open(path.c_str(), kReadFlags)};
    if (f.fd >= 0) {
      // One byte more than expected: a regular file returns fewer bytes than asked only at
      // its end, so getting exactly `expected` bytes means the file is still that size.
      out.resize(static_cast<size_t>(expected) + 1);
      ssize_t n;
      do {
        n = ::read(f.fd, out.data(), out.size());
      } while (n < 0 && errno == EINTR);
      if (n >= 0 && static_cast<uint64_t>(n) == expected) {
        out.resize(static_cast<size_t>(expected));
        return static_cast<size_t>(expected);
      }
    }
  }
  // Not there, not a regular file any more (a directory or fifo in its place), or another
  // size: the checked read says which, or reads the file as it is now.
  return read_file(path, out);
}

size_t read_head(const std::filesystem::path& path, uint8_t* out, size_t n) {
  Fd f{::open(path.c_str(), kReadFlags)};
  if (f.fd < 0) fail(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail(path, "cannot stat", errno);
  if (!S_ISREG(st.st_mode)) throw DatasetError(path.string() + ": not a regular file");
  size_t done = 0;
  while (done < n) {
    const ssize_t got = ::read(f.fd, out + done, n - done);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail(path, "read failed", errno);
    }
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

void drop_page_cache(const std::filesystem::path& path, bool sync) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) fail(path, "cannot open", errno);
  if (sync) ::fdatasync(f.fd);  // dirty pages cannot be dropped; advisory, errors ignored
  ::posix_fadvise(f.fd, 0, 0, POSIX_FADV_DONTNEED);
}

double page_cache_resident(const std::filesystem::path& path) {
  Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) fail(path, "cannot open", errno);
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) fail(path, "cannot stat", errno);
  if (st.st_size == 0) return 0.0;
  const auto size = static_cast<size_t>(st.st_size);
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, f.fd, 0);
  if (map == MAP_FAILED) fail(path, "cannot map", errno);
  const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> pages((size + page - 1) / page);
  const int rc = ::mincore(map, size, pages.data());
  const int err = errno;
  ::munmap(map, size);
  if (rc != 0) fail(path, "mincore failed", err);
  size_t resident = 0;
  for (unsigned char p : pages) resident += p & 1u;
  return static_cast<double>(resident) / static_cast<double>(pages.size());
}

std::string folder_name(const std::filesystem::path& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(dir, ec), ec);
  if (p.filename().empty()) p = p.parent_path();
  const std::string name = p.filename().string();
  return name.empty() ? "dataset" : name;
}

void write_file(const std::filesystem::path& path, const uint8_t* data, size_t size) {
  if (path.has_parent_path()) {
    std::error_code ec;
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) throw DatasetError(path.parent_path().string() + ": cannot create directory: " +
                               ec.message());
  }
  Fd f{::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (f.fd < 0) fail(path, "cannot create", errno);
  if (!write_all(f.fd, std::string_view(reinterpret_cast<const char*>(data), size)))
    fail(path, "write failed", errno);
  const int fd = f.fd;
  f.fd = -1;
  if (::close(fd) != 0) fail(path, "close failed", errno);
}

void replace_file(const std::filesystem::path& path, std::string_view text) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(path, ec) && !fs::is_regular_file(path, ec)) {  // nothing to rename over
    Fd f{::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC)};
    if (f.fd < 0) fail(path, "cannot open", errno);
    if (!write_all(f.fd, text)) fail(path, "write failed", errno);
    const int fd = f.fd;
    f.fd = -1;
    if (::close(fd) != 0) fail(path, "write failed", errno);
    return;
  }
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::string tmp_name = ".";  // built in steps: GCC 12 warns (-Wrestrict) on "." + string
  tmp_name += path.filename().string();
  tmp_name += ".tmp-";
  tmp_name += std::to_string(::getpid());
  const fs::path tmp = dir / tmp_name;
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail(path, ("cannot create " + tmp.string()).c_str(), errno);
  bool ok = write_all(fd, text) && ::fsync(fd) == 0;
  int err = ok ? 0 : errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    fs::remove(tmp, ec);
    fail(path, "write failed", err);
  }
}

}  // namespace pipebench
