// Helpers shared by the test suites: a temporary directory removed at scope exit, file I/O, and
// the error a call throws.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

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

}  // namespace quarry::testing
