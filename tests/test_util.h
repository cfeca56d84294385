// Helpers shared by the test suites: a temporary directory removed at scope exit, file I/O, the
// error a call throws, and a FIFO whose reader must never block.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>

#include "quarry/error.h"

namespace quarry::testing {

// The quarry::Error `fn` throws; one with Code::ok when it throws none (so EXPECT_EQ on its
// code shows what happened instead of an uncaught exception).
template <typename Fn>
quarry::Error error_of(Fn&& fn) {
  try {
    fn();
  } catch (const quarry::Error& e) {
    return e;
  }
  return quarry::Error(Code::ok, "no error");
}

// The code of the quarry::Error `fn` throws (Code::ok when none), and optionally its details
// and message.
template <typename Fn>
Code code_of(Fn&& fn, std::map<std::string, std::string>* details = nullptr,
             std::string* message = nullptr) {
  quarry::Error e = error_of(std::forward<Fn>(fn));
  if (details) *details = e.details();
  if (message) *message = e.message();
  return e.code();
}

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "quarry-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) std::abort();
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& p) const { return path_ / p; }

 private:
  std::filesystem::path path_;
};

// Sets (or clears, with nullptr) an environment variable for the scope of a test and restores
// it afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old, had_ = true;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      ::setenv(name_.c_str(), old_.c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

inline void write_file(const std::filesystem::path& p, const std::string& bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream f(p, std::ios::binary);
  f << bytes;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A FIFO at `path` (mkfifo) and a watchdog for a call that must never block on it: if the
// call has not finished after `seconds`, the watchdog opens the FIFO for writing and closes it,
// which lets a reader stuck in open() go on (it reads end of file), so a regression fails its
// test instead of hanging it. Call done() when the call under test has returned.
class FifoWatchdog {
 public:
  FifoWatchdog(const std::filesystem::path& path, int seconds) : path_(path.string()) {
    std::filesystem::create_directories(path.parent_path());
    made_ = ::mkfifo(path_.c_str(), 0644) == 0;
    thread_ = std::thread([this, seconds] {
      std::unique_lock lock(mu_);
      if (cv_.wait_for(lock, std::chrono::seconds(seconds), [this] { return done_; })) return;
      fired_ = true;
      const int fd = ::open(path_.c_str(), O_WRONLY | O_NONBLOCK);
      if (fd >= 0) ::close(fd);
    });
  }
  ~FifoWatchdog() {
    done();
    thread_.join();
  }
  FifoWatchdog(const FifoWatchdog&) = delete;
  FifoWatchdog& operator=(const FifoWatchdog&) = delete;

  bool made() const { return made_; }
  void done() {
    std::lock_guard lock(mu_);
    done_ = true;
    cv_.notify_all();
  }
  // True when the call under test had to be released (it blocked on the FIFO).
  bool fired() {
    std::lock_guard lock(mu_);
    return fired_;
  }

 private:
  std::string path_;
  bool made_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false, fired_ = false;
  std::thread thread_;
};

}  // namespace quarry::testing
