#include "pipeline/callbacks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "measure/stage_timers.h"
#include "measure/own_threads.h"
#include "pipeline/train_step.h"

namespace pipebench {
namespace {

[[noreturn]] void bad(const std::string& text, const std::string& why) {
  throw std::invalid_argument("--callback=" + text + ": " + why);
}

// Writes `n` bytes of `data` to `path` (append or truncate) and fsyncs it.
void write_synced(const std::filesystem::path& path, const char* data, size_t n, bool append) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd < 0) throw std::runtime_error(path.string() + ": cannot open: " + std::strerror(errno));
  size_t done = 0;
  while (done < n) {
    const ssize_t k = ::write(fd, data + done, n - done);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      const int err = errno;
      ::close(fd);
      throw std::runtime_error(path.string() + ": write failed: " + std::strerror(err));
    }
    done += static_cast<size_t>(k);
  }
  const bool synced = ::fsync(fd) == 0;
  const int err = errno;
  ::close(fd);
  if (!synced) throw std::runtime_error(path.string() + ": fsync failed: " + std::strerror(err));
}

std::filesystem::path private_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/pipebench-callbacks-XXXXXX";
  if (!::mkdtemp(templ.data()))
    throw std::runtime_error(templ + ": cannot create the callbacks' folder: " + std::strerror(errno));
  return templ;
}

}  // namespace

std::string CallbackSpec::text() const {
  std::string s = kind + ":every=" + std::to_string(every);
  if (kind == "checkpoint") {
    char buf[32];
    std::snprintf(buf, sizeof buf, ",mib=%g", mib);
    s += buf;
  }
  return s + (async ? ",async" : ",sync");
}

std::string CallbackSpec::label() const { return kind + (async ? "-async" : "-sync"); }

CallbackSpec parse_callback(const std::string& text) {
  CallbackSpec c;
  const size_t colon = text.find(':');
  c.kind = text.substr(0, colon);
  if (c.kind != "log" && c.kind != "metric" && c.kind != "checkpoint")
    bad(text, "unknown callback '" + c.kind + "' (log, metric, checkpoint)");
  std::string rest = colon == std::string::npos ? "" : text.substr(colon + 1);
  size_t pos = 0;
  while (pos < rest.size()) {
    const size_t comma = std::min(rest.find(',', pos), rest.size());
    const std::string opt = rest.substr(pos, comma - pos);
    pos = comma + 1;
    if (opt == "sync" || opt == "async") {
      c.async = opt == "async";
      continue;
    }
    const size_t eq = opt.find('=');
    const std::string key = opt.substr(0, eq), value = eq == std::string::npos ? "" : opt.substr(eq + 1);
    char* end = nullptr;
    const double v = std::strtod(value.c_str(), &end);
    if (value.empty() || end != value.c_str() + value.size()) bad(text, "option '" + opt + "' needs a number");
    if (key == "every") {
      if (v < 1 || v > 1e6 || v != static_cast<int>(v)) bad(text, "every must be a whole number 1..1000000, got " + value);
      c.every = static_cast<int>(v);
    } else if (key == "mib" && c.kind == "checkpoint") {
      if (!(v > 0) || v > 65536) bad(text, "mib must be in (0, 65536], got " + value);
      c.mib = v;
    } else {
      bad(text, "unknown option '" + key + "' for " + c.kind +
                    (c.kind == "checkpoint" ? " (every, mib, sync, async)" : " (every, sync, async)"));
    }
  }
  if (c.kind == "metric" && c.async)
    bad(text, "metric waits for the accelerator by definition, so it has no async form; "
              "thin it with every=N");
  return c;
}

CallbackRunner::CallbackRunner(std::vector<CallbackSpec> specs, TrainStep& step)
    : specs_(std::move(specs)), step_(step), dir_(private_dir()),
      thread_ms_(specs_.size(), 0.0), runs_(specs_.size(), 0) {
  for (const auto& s : specs_)
    if (s.kind == "checkpoint")
      checkpoint_bytes_.resize(std::max(checkpoint_bytes_.size(), static_cast<size_t>(s.mib * (1 << 20))), 'c');
  thread_ = start_own_thread("callbacks", [this] { worker(); });
}

CallbackRunner::~CallbackRunner() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

void CallbackRunner::run_one(size_t i, int64_t step_index) {
  const CallbackSpec& s = specs_[i];
  if (s.kind == "metric") {
    step_.synchronize();
  } else if (s.kind == "log") {
    char line[96];
    const int n = std::snprintf(line, sizeof line, "step %lld t_ns %lld\n",
                                static_cast<long long>(step_index), static_cast<long long>(now_ns()));
    write_synced(dir_ / ("log-" + std::to_string(i) + ".txt"), line, static_cast<size_t>(n), true);
  } else {
    write_synced(dir_ / ("checkpoint-" + std::to_string(i) + ".bin"), checkpoint_bytes_.data(),
                 static_cast<size_t>(s.mib * (1 << 20)), false);
  }
}

void CallbackRunner::after_step(int64_t step_index) {
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (step_index % specs_[i].every != 0) continue;
    const int64_t t0 = now_ns();
    if (!specs_[i].async) {
      run_one(i, step_index);
    } else {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return queue_.size() < kQueueDepth; });
      queue_.push_back([this, i, step_index] { run_one(i, step_index); });
      lock.unlock();
      cv_.notify_all();
    }
    thread_ms_[i] += (now_ns() - t0) / 1e6;
    ++runs_[i];
  }
}

void CallbackRunner::drain() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && busy_ == 0; });
  if (!error_.empty()) throw std::runtime_error(error_);
}

void CallbackRunner::worker() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stop_ and nothing left
    auto task = std::move(queue_.front());
    queue_.pop_front();
    ++busy_;
    lock.unlock();
    cv_.notify_all();  // room in the queue
    try {
      task();
    } catch (const std::exception& e) {
      std::lock_guard g(mu_);
      if (error_.empty()) error_ = e.what();
    }
    lock.lock();
    --busy_;
    cv_.notify_all();
  }
}

}  // namespace pipebench
