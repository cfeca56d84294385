// quarry-bench probe --dataset DIR --quarry LABEL=BIN[,LABEL=BIN...] [--seconds 15] [--rate 50]
//                    [--idle 500] [--trickle 64] [--wrk 8] [--work DIR]
//
// What other clients cost a well-behaved one (issue 23, docs/benchmarks.md "Serving under
// idle, slow and busy peers"). Each binary serves a keyword-only KB of the dataset (built
// once, in-process); a probe client sends GET /api/v1/health and a keyword search (the
// dataset's queries) at a fixed rate each, on keep-alive connections, while N other
// connections are
//   - none:    nobody else;
//   - idle:    open and silent;
//   - trickle: each mid-request, sending one byte every 2 s (reconnecting when closed);
//   - wrk:     driven flat out by wrk on the same keyword searches.
// Latency is measured from each request's scheduled time (no coordinated omission); a request
// with no answer within 10 s counts as a failure at 10 s.
#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "beir.h"
#include "bench.h"
#include "quarry/engine.h"

namespace quarry::bench {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr double kFailMs = 10000;

// A `quarry serve` child process on 127.0.0.1, stopped by PID.
class Child {
 public:
  Child(const std::string& bin, const fs::path& data, const fs::path& work) {
    const fs::path port_file = work / "port";
    fs::remove(port_file);
    std::fflush(stdout);  // else the child inherits (and prints) what is buffered
    pid_ = fork();
    if (pid_ == 0) {
      const std::string log = (work / "serve.log").string();
      std::freopen(log.c_str(), "w", stdout);
      std::freopen(log.c_str(), "a", stderr);
      execl(bin.c_str(), bin.c_str(), "--data-dir", data.c_str(), "serve", "--port", "0",
            "--no-indexer", "--port-file", port_file.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    for (int i = 0; i < 300 && !fs::exists(port_file); ++i) std::this_thread::sleep_for(50ms);
    std::ifstream(port_file) >> port_;
    if (port_ <= 0)
      throw std::runtime_error(bin + " did not start: see " + (work / "serve.log").string());
  }
  ~Child() {
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i)
      std::this_thread::sleep_for(50ms);
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  int port() const { return port_; }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
};

int connect_to(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// N connections held open while the probe runs: silent, or trickling a request's head.
class Peers {
 public:
  Peers(int port, int n, bool trickle) : port_(port), trickle_(trickle) {
    for (int i = 0; i < n; ++i) fds_.push_back(open_one());
    if (trickle_) thread_ = std::thread([this] { trickle_loop(); });
  }
  ~Peers() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (int fd : fds_)
      if (fd >= 0) close(fd);
  }
  long reconnects() const { return reconnects_; }

 private:
  int open_one() {
    int fd = connect_to(port_);
    if (fd >= 0 && trickle_) {
      const std::string head = "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
      (void)!send(fd, head.data(), head.size(), MSG_NOSIGNAL);
    }
    return fd;
  }
  void trickle_loop() {
    while (!stop_) {
      for (int& fd : fds_) {
        pollfd p{fd, POLLIN, 0};
        const bool closed = fd < 0 || (poll(&p, 1, 0) > 0) || send(fd, "a", 1, MSG_NOSIGNAL) != 1;
        if (closed) {  // answered (408) or dropped: come back, as an attacker would
          if (fd >= 0) close(fd);
          fd = open_one();
          ++reconnects_;
        }
      }
      for (int i = 0; i < 20 && !stop_; ++i) std::this_thread::sleep_for(100ms);
    }
  }
  int port_;
  bool trickle_;
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::atomic<long> reconnects_{0};
  std::thread thread_;
};

struct Series {
  std::vector<double> ms;
  long failures = 0;
};

// Sends `request(i)` at `rate` per second for `seconds` on one keep-alive connection.
Series probe(int port, double rate, int seconds,
             const std::function<httplib::Result(httplib::Client&, std::size_t)>& request) {
  httplib::Client c("127.0.0.1", port);
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);
  c.set_connection_timeout(10, 0);
  c.set_read_timeout(10, 0);
  c.set_write_timeout(10, 0);
  Series s;
  const auto start = Clock::now();
  const auto period = std::chrono::duration<double>(1.0 / rate);
  const auto n = static_cast<std::size_t>(rate * seconds);
  // A server that stalls must not stall the benchmark: past `seconds` + 10 s the requests not
  // yet sent count as failures.
  const auto give_up = start + std::chrono::seconds(seconds + 10);
  for (std::size_t i = 0; i < n; ++i) {
    const auto due =
        start + std::chrono::duration_cast<Clock::duration>(period * static_cast<double>(i));
    if (Clock::now() > give_up) {
      s.failures += static_cast<long>(n - i);
      s.ms.insert(s.ms.end(), n - i, kFailMs);
      break;
    }
    std::this_thread::sleep_until(due);
    auto r = request(c, i);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - due).count();
    if (!r || r->status != 200) {
      ++s.failures;
      s.ms.push_back(std::max(ms, kFailMs));
    } else {
      s.ms.push_back(ms);
    }
  }
  return s;
}

json summary(const Series& s) {
  return {{"p50_ms", percentile(s.ms, 50)},
          {"p99_ms", percentile(s.ms, 99)},
          {"max_ms", s.ms.empty() ? 0 : *std::max_element(s.ms.begin(), s.ms.end())},
          {"requests", s.ms.size()},
          {"failures", s.failures}};
}

}  // namespace

int run_probe(const Args& args) {
  const std::string dataset = args.get("dataset");
  const int seconds = static_cast<int>(args.num("seconds", 15));
  const double rate = args.num("rate", 50);
  const int idle = static_cast<int>(args.num("idle", 500));
  const int trickle = static_cast<int>(args.num("trickle", 64));
  const int wrk_connections = static_cast<int>(args.num("wrk", 8));
  const fs::path work =
      args.get("work", (fs::temp_directory_path() / "quarry-bench-probe").string());
  Dataset ds = load_dataset(dataset);
  fs::create_directories(work);

  // The KB, built once per work folder and dataset and reused by later runs.
  const fs::path data = work / ("data-" + fs::path(dataset).filename().string());
  if (!fs::exists(data / "done")) {
    fs::remove_all(data);
    auto e = Engine::open({data.string(), "bench", "library", 60000});
    e->create_kb("kb", "{}");
    for (const auto& d : ds.corpus) {
      try {
        e->ingest_bytes("kb", d.id + ".md", "# " + d.title + "\n\n" + d.text + "\n", {});
      } catch (const Error&) {
      }
    }
    std::ofstream(data / "done") << "1\n";
  }
  std::vector<std::string> bodies;
  for (const auto& q : ds.queries)
    bodies.push_back(json{{"query", q.text}, {"mode", "keyword"}}.dump());

  std::vector<std::pair<std::string, std::string>> binaries;
  for (std::string list = args.get("quarry"); !list.empty();) {
    const auto comma = list.find(',');
    const std::string item = list.substr(0, comma);
    const auto eq = item.find('=');
    binaries.emplace_back(eq == std::string::npos ? item : item.substr(0, eq),
                          eq == std::string::npos ? item : item.substr(eq + 1));
    list = comma == std::string::npos ? "" : list.substr(comma + 1);
  }

  json out = json::array();
  std::printf(
      "| build | others | health p50 | health p99 | health max | search p50 | search p99 | search "
      "max | failures |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& entry : binaries) {
    // Named references, not a structured binding: clang 14 cannot capture one in a lambda.
    const auto& label = entry.first;
    const auto& bin = entry.second;
    Child server(bin, data, work);
    httplib::Client warm("127.0.0.1", server.port());
    for (std::size_t i = 0; i < std::min<std::size_t>(bodies.size(), 200); ++i)
      warm.Post("/api/v1/kbs/kb/search", bodies[i], "application/json");
    for (const std::string scenario : {"none", "idle", "trickle", "wrk"}) {
      std::unique_ptr<Peers> peers;
      std::thread wrk;
      std::string others = "none";
      if (scenario == "idle") {
        peers = std::make_unique<Peers>(server.port(), idle, false);
        others = std::to_string(idle) + " idle";
      } else if (scenario == "trickle") {
        peers = std::make_unique<Peers>(server.port(), trickle, true);
        others = std::to_string(trickle) + " trickling";
      } else if (scenario == "wrk") {
        others = std::to_string(wrk_connections) + " wrk";
        const std::string url = "http://127.0.0.1:" + std::to_string(server.port());
        wrk = std::thread([&, url] {
          run_wrk(work, label + "-wrk", url, "/api/v1/kbs/kb/search", bodies, seconds + 2,
                  wrk_connections);
        });
        std::this_thread::sleep_for(1s);
      }
      std::this_thread::sleep_for(200ms);
      Series health, search;
      std::thread h([&] {
        health = probe(server.port(), rate, seconds,
                       [](httplib::Client& c, std::size_t) { return c.Get("/api/v1/health"); });
      });
      search = probe(server.port(), rate, seconds, [&](httplib::Client& c, std::size_t i) {
        return c.Post("/api/v1/kbs/kb/search", bodies[i % bodies.size()], "application/json");
      });
      h.join();
      if (wrk.joinable()) wrk.join();
      const json hs = summary(health), ss = summary(search);
      std::printf("| %s | %s | %.2f | %.2f | %.1f | %.2f | %.2f | %.1f | %ld |\n", label.c_str(),
                  others.c_str(), hs["p50_ms"].get<double>(), hs["p99_ms"].get<double>(),
                  hs["max_ms"].get<double>(), ss["p50_ms"].get<double>(),
                  ss["p99_ms"].get<double>(), ss["max_ms"].get<double>(),
                  health.failures + search.failures);
      std::fflush(stdout);
      out.push_back({{"build", label}, {"others", others}, {"health", hs}, {"search", ss}});
    }
  }
  std::ofstream(work / "probe.json") << out.dump(2) << "\n";
  std::fprintf(stderr, "probe: results in %s\n", (work / "probe.json").c_str());
  return 0;
}

}  // namespace quarry::bench
