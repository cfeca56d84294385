// quarry serve — REST under /api/v1, MCP at /mcp, and the background indexer (SPEC §9, §10).
// SIGINT/SIGTERM stop it cleanly: in-flight requests finish, the indexer's sweep is cancelled
// at a committed page and resumes on the next start.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "server/serve.h"

namespace quarry::cli {

namespace {
// SIGINT/SIGTERM write a byte here; a waiter thread reads it and stops the server. A handler
// (not a blocked signal and sigwait) because libraries start threads of their own before main
// (OpenBLAS does), and a signal delivered to one of those would otherwise kill the process.
int stop_pipe[2] = {-1, -1};
extern "C" void on_stop_signal(int) {
  const char c = 1;
  ssize_t n = write(stop_pipe[1], &c, 1);  // async-signal-safe
  (void)n;
}
}  // namespace

void add_serve_command(CLI::App& app, Globals& g, int& /*exit_code*/) {
  struct Args {
    server::ServeOptions o;
    int max_body_mb = 64;
    int deadline_s = 10, write_deadline_s = 600;
    bool no_indexer = false, no_mcp = false, no_pump = false, no_ui = false;
    std::string port_file;
  };
  auto a = std::make_shared<Args>();
  auto* serve = app.add_subcommand(
      "serve", "Serve the REST API (/api/v1) and MCP (/mcp); binds 127.0.0.1 by default");
  serve->add_option("--host", a->o.host, "Address to bind (non-loopback needs tokens)");
  serve->add_option("--port", a->o.port, "Port (0: any free port)")->check(CLI::Range(0, 65535));
  serve->add_flag("--require-token", a->o.require_token, "Require a bearer token on loopback too");
  serve->add_option("--threads", a->o.threads, "Worker threads (default: 4 per core, >= 8)")
      ->check(CLI::Range(1, 1024));
  serve->add_option("--max-body-mb", a->max_body_mb, "Largest request body in MiB")
      ->check(CLI::Range(1, 4096));
  serve
      ->add_option("--header-timeout", a->o.header_timeout_s,
                   "Seconds a client has to send a request's headers, from its first byte")
      ->check(CLI::Range(1, 3600));
  serve
      ->add_option("--read-timeout", a->o.read_timeout_s,
                   "Seconds a client has to send a whole request, from its first byte")
      ->check(CLI::Range(1, 3600));
  serve
      ->add_option("--write-timeout", a->o.write_timeout_s,
                   "Seconds a client has to take an answer")
      ->check(CLI::Range(1, 3600));
  serve
      ->add_option("--idle-timeout", a->o.idle_timeout_s,
                   "Seconds a keep-alive connection may stay idle between requests")
      ->check(CLI::Range(1, 86400));
  serve
      ->add_option("--max-connections", a->o.max_connections,
                   "Open connections at most (default: from the open-files limit, <= 10000)")
      ->check(CLI::Range(1, 1000000));
  serve
      ->add_option("--deadline", a->deadline_s,
                   "Seconds a read (search, grep, listing) may work before it stops with timeout")
      ->check(CLI::Range(1, 86400));
  serve
      ->add_option("--write-deadline", a->write_deadline_s,
                   "Seconds a write (upload, edit, reindex, KB change) or MCP call may work")
      ->check(CLI::Range(1, 86400));
  serve
      ->add_option("--max-incomplete", a->o.max_incomplete,
                   "Connections mid-request at most, over all clients (default 1024)")
      ->check(CLI::Range(1, 1000000));
  serve->add_flag("--no-indexer", a->no_indexer, "Do not embed pending vectors in the background");
  serve
      ->add_option("--index-duty", a->o.index_duty,
                   "Share of the time background embedding works while searches are answered "
                   "(1: no pacing)")
      ->check(CLI::Range(0.05, 1.0));
  serve->add_flag("--no-mcp", a->no_mcp, "Do not serve MCP at /mcp");
  serve->add_flag("--no-ui", a->no_ui, "Do not serve the web UI at /");
  serve->add_flag("--no-pump", a->no_pump,
                  "Do not run pump use cases as triggers (events, cron, re-pokes) queue them");
  serve->add_flag("--mcp-read-only", a->o.mcp_read_only, "MCP without the write tools");
  serve->add_option("--port-file", a->port_file,
                    "Write the bound port to this file once listening (for scripts and tests)");
  serve->callback([&g, a] {
    a->o.max_body_bytes = static_cast<std::size_t>(a->max_body_mb) << 20;
    a->o.deadline_ms = a->deadline_s * 1000;
    a->o.write_deadline_ms = a->write_deadline_s * 1000;
    a->o.indexer = !a->no_indexer;
    a->o.mcp = !a->no_mcp;
    a->o.ui = !a->no_ui;
    a->o.pump = !a->no_pump;
    if (stop_pipe[0] < 0 && pipe2(stop_pipe, O_CLOEXEC) != 0)
      throw Error(Code::io_error, "cannot create the server's stop pipe");
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);

    EngineOptions eo;
    eo.data_dir = g.data_dir;
    eo.surface = "rest";
    eo.lock_timeout_ms = g.lock_timeout_ms;
    auto server = server::HttpServer::bind(eo, a->o);
    const std::string url = "http://" + a->o.host + ":" + std::to_string(server->port());
    if (g.json) {
      nlohmann::json j = {{"url", url}, {"port", server->port()}, {"mcp", url + "/mcp"}};
      j["ui"] = a->o.ui ? nlohmann::json(url + "/") : nlohmann::json(nullptr);
      print_json(j);
    } else {
      std::cout << "quarry: serving " << url << "/api/v1 (REST) and " << url << "/mcp (MCP)";
      if (a->o.ui) std::cout << "; open " << url << "/ in a browser";
      std::cout << std::endl;
    }
    if (!a->port_file.empty()) {
      std::string tmp = a->port_file + ".tmp";
      std::ofstream(tmp) << server->port() << "\n";
      std::rename(tmp.c_str(), a->port_file.c_str());
    }
    // A signal may come before the server is listening, when stop() does nothing yet: the
    // waiter repeats stop() until run() has returned.
    std::atomic<bool> done{false};
    std::thread waiter([&server, &done] {
      char c = 0;
      while (read(stop_pipe[0], &c, 1) < 0 && errno == EINTR) {
      }
      while (!done.load()) {
        server->stop();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    server->run();
    done.store(true);
    // run() returned without a signal (a listen failure): wake the waiter.
    on_stop_signal(0);
    waiter.join();
    std::cerr << "quarry: server stopped\n";
  });
}

}  // namespace quarry::cli
