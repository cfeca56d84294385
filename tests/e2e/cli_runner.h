// Runs the real `quarry` binary (QUARRY_BINARY) with --data-dir in a TempDir and captures its
// exit status, stdout and stderr. stdin is /dev/null (not a terminal) unless input is given.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "test_util.h"

extern char** environ;

namespace quarry::e2e {

struct RunResult {
  int status = -1;  // exit status; -1 when the process did not exit normally
  std::string out, err;
  nlohmann::json json;  // stdout parsed (discarded when it is not JSON)
};

class Cli {
 public:
  explicit Cli(const quarry::testing::TempDir& dir) : dir_(dir), data_((dir / "data").string()) {}

  const std::string& data_dir() const { return data_; }

  // quarry --data-dir DATA --json ARGS...
  RunResult json(const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> full = {"--data-dir", data_, "--json"};
    full.insert(full.end(), args.begin(), args.end());
    RunResult r = run(full, input);
    r.json = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    EXPECT_FALSE(r.json.is_discarded()) << "stdout of `" << join(args) << "` is not JSON:\n"
                                        << r.out << "\nstderr:\n"
                                        << r.err;
    return r;
  }

  // quarry --data-dir DATA ARGS... (human output)
  RunResult text(const std::vector<std::string>& args, const std::string& input = "") {
    std::vector<std::string> full = {"--data-dir", data_};
    full.insert(full.end(), args.begin(), args.end());
    return run(full, input);
  }

  RunResult run(const std::vector<std::string>& args, const std::string& input) {
    const std::string tag = std::to_string(++calls_);
    const std::string out_path = (dir_ / ("stdout-" + tag)).string();
    const std::string err_path = (dir_ / ("stderr-" + tag)).string();
    std::string in_path = "/dev/null";
    if (!input.empty()) {
      in_path = (dir_ / ("stdin-" + tag)).string();
      quarry::testing::write_file(in_path, input);
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, in_path.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> argv_s = {QUARRY_BINARY};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    RunResult r;
    pid_t pid = 0;
    int rc = posix_spawn(&pid, QUARRY_BINARY, &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      ADD_FAILURE() << "cannot start " << QUARRY_BINARY;
      return r;
    }
    int st = 0;
    waitpid(pid, &st, 0);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r.out = quarry::testing::read_file(out_path);
    r.err = quarry::testing::read_file(err_path);
    return r;
  }

  static std::string join(const std::vector<std::string>& args) {
    std::string s;
    for (const auto& a : args) s += (s.empty() ? "" : " ") + a;
    return s;
  }

 private:
  const quarry::testing::TempDir& dir_;
  std::string data_;
  int calls_ = 0;
};

}  // namespace quarry::e2e
