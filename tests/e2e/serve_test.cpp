// `quarry serve` as a user runs it: the real binary on 127.0.0.1, stopped by PID. Its logs and
// answers never show a secret; SIGTERM stops it cleanly; a public address needs tokens.
#include <httplib.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "cli_runner.h"
#include "quarry/error.h"

namespace quarry::e2e {
namespace {
using nlohmann::json;
using quarry::testing::read_file;
using quarry::testing::TempDir;

class ServeProcess {
 public:
  ServeProcess(const TempDir& dir, const std::string& data, std::vector<std::string> extra)
      : port_file_((dir / "port").string()),
        out_((dir / "serve.out").string()),
        err_((dir / "serve.err").string()) {
    std::vector<std::string> args = {QUARRY_BINARY, "--data-dir", data,          "serve",
                                     "--port",      "0",          "--port-file", port_file_};
    args.insert(args.end(), extra.begin(), extra.end());
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&fa, 2, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, QUARRY_BINARY, &fa, nullptr, argv.data(), environ) != 0) pid_ = 0;
    posix_spawn_file_actions_destroy(&fa);
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (pid_ && !std::filesystem::exists(port_file_) &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (std::filesystem::exists(port_file_)) port_ = std::stoi(read_file(port_file_));
  }
  ~ServeProcess() {
    if (pid_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  // SIGTERM, then the exit status (-1 if it did not exit within 10 s).
  int terminate() {
    kill(pid_, SIGTERM);
    for (int i = 0; i < 1000; ++i) {
      int st = 0;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = 0;
        return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }
  std::string logs() const { return read_file(out_) + read_file(err_); }

 private:
  std::string port_file_, out_, err_;
  pid_t pid_ = 0;
  int port_ = 0;
};

TEST(Serve, LogsAndAnswersNeverShowSecretsAndSigtermStopsIt) {
  TempDir dir;
  Cli cli(dir);
  const std::string key = "sk-live-LOGSECRET-0987654321";
  ASSERT_EQ(cli.text({"secret", "set", "EMBED_KEY"}, key + "\n").status, 0);
  auto tok = cli.json({"token", "create", "--name", "ops", "--scope", "admin"});
  ASSERT_EQ(tok.status, 0) << tok.err;
  const std::string secret = tok.json["secret"];

  ServeProcess serve(dir, cli.data_dir(), {"--require-token"});
  ASSERT_GT(serve.port(), 0) << serve.logs();
  httplib::Client c("127.0.0.1", serve.port());
  httplib::Headers auth = {{"Authorization", "Bearer " + secret}};
  // An embedder that cannot be reached (a closed loopback port) with the key from the store.
  json cfg = {{"embedder",
               {{"provider", "openai:m"},
                {"settings",
                 {{"base_url", "http://127.0.0.1:1/v1"},
                  {"dimensions", 8},
                  {"allow_private", true},
                  {"api_key_secret", "EMBED_KEY"},
                  {"max_retries", 0}}}}}};
  auto made =
      c.Post("/api/v1/kbs", auth, json{{"name", "k"}, {"config", cfg}}.dump(), "application/json");
  ASSERT_TRUE(made);
  ASSERT_EQ(made->status, 201) << made->body;
  auto add = c.Post("/api/v1/kbs/k/documents", auth,
                    json{{"filename", "a.md"}, {"content", "hello"}}.dump(), "application/json");
  ASSERT_TRUE(add);
  EXPECT_EQ(add->status, 201);
  auto vec = c.Post("/api/v1/kbs/k/search", auth,
                    json{{"query", "hello"}, {"mode", "vector"}}.dump(), "application/json");
  ASSERT_TRUE(vec);
  EXPECT_NE(vec->status, 200);  // nothing serves vectors yet: a clear error, not a crash
  EXPECT_EQ(json::parse(vec->body)["error"]["code"].is_string(), true) << vec->body;
  auto unauth = c.Get("/api/v1/kbs");
  ASSERT_TRUE(unauth);
  EXPECT_EQ(unauth->status, 401);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // let the indexer try and fail

  EXPECT_EQ(serve.terminate(), 0);
  std::string logs = serve.logs();
  EXPECT_NE(logs.find("server stopped"), std::string::npos) << logs;
  EXPECT_EQ(logs.find("LOGSECRET"), std::string::npos) << logs;
  EXPECT_EQ(logs.find(secret), std::string::npos) << logs;
  for (const auto& body : {made->body, add->body, vec->body, unauth->body})
    EXPECT_EQ(body.find("LOGSECRET"), std::string::npos) << body;
}

TEST(Serve, APublicAddressWithoutTokensIsRefused) {
  TempDir dir;
  Cli cli(dir);
  auto r = cli.text({"serve", "--host", "0.0.0.0", "--port", "0"});
  EXPECT_EQ(r.status, quarry::exit_status(quarry::Code::invalid_argument));
  EXPECT_NE(r.err.find("token create"), std::string::npos) << r.err;
}

// Two servers on one port would split its requests between two data directories: the second
// one must fail at start, saying why, with io_error's exit status.
TEST(Serve, ABusyPortFailsAtStart) {
  TempDir dir;
  Cli cli(dir);
  ServeProcess first(dir, cli.data_dir(), {"--no-indexer", "--no-pump"});
  ASSERT_GT(first.port(), 0) << first.logs();
  TempDir other;
  Cli second(other);
  auto r = second.text({"serve", "--port", std::to_string(first.port()), "--no-indexer"});
  EXPECT_EQ(r.status, exit_status(Code::io_error)) << r.out << r.err;
  EXPECT_NE(r.err.find("already in use"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--port"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("serving"), std::string::npos) << r.out;
  httplib::Client c("127.0.0.1", first.port());
  auto health = c.Get("/api/v1/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
}

}  // namespace
}  // namespace quarry::e2e
