// quarry serve — REST under /api/v1, MCP at /mcp, and the background indexer (SPEC §9, §10).
// SIGINT/SIGTERM stop it cleanly: in-flight requests finish, the indexer's sweep is cancelled
// at a committed page and resumes on the next start.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <thread>

#include "cli/commands.h"
#include "server/http_server.h"

namespace quarry::cli {

void add_serve_command(CLI::App& app, Globals& g, int& /*exit_code*/) {
  struct Args {
    server::ServeOptions o;
    int max_body_mb = 64;
    bool no_indexer = false, no_mcp = false, no_pump = false;
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
  serve->add_option("--read-timeout", a->o.read_timeout_s, "Seconds a client has to send a request")
      ->check(CLI::Range(1, 3600));
  serve->add_flag("--no-indexer", a->no_indexer, "Do not embed pending vectors in the background");
  serve->add_flag("--no-mcp", a->no_mcp, "Do not serve MCP at /mcp");
  serve->add_flag("--no-pump", a->no_pump,
                  "Do not run pump use cases as triggers (events, cron, re-pokes) queue them");
  serve->add_flag("--mcp-read-only", a->o.mcp_read_only, "MCP without the write tools");
  serve->add_option("--port-file", a->port_file,
                    "Write the bound port to this file once listening (for scripts and tests)");
  serve->callback([&g, a] {
    a->o.max_body_bytes = static_cast<std::size_t>(a->max_body_mb) << 20;
    a->o.indexer = !a->no_indexer;
    a->o.mcp = !a->no_mcp;
    a->o.pump = !a->no_pump;
    // Block the stop signals in every thread the server starts; one thread waits for them.
    sigset_t stop_signals;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
    signal(SIGPIPE, SIG_IGN);

    EngineOptions eo;
    eo.data_dir = g.data_dir;
    eo.surface = "rest";
    eo.lock_timeout_ms = g.lock_timeout_ms;
    auto server = server::HttpServer::bind(eo, a->o);
    const std::string url = "http://" + a->o.host + ":" + std::to_string(server->port());
    if (g.json)
      print_json({{"url", url}, {"port", server->port()}, {"mcp", url + "/mcp"}});
    else
      std::cout << "quarry: serving " << url << "/api/v1 (REST) and " << url << "/mcp (MCP)"
                << std::endl;
    if (!a->port_file.empty()) {
      std::string tmp = a->port_file + ".tmp";
      std::ofstream(tmp) << server->port() << "\n";
      std::rename(tmp.c_str(), a->port_file.c_str());
    }
    // A signal may come before the server is listening, when stop() does nothing yet: the
    // waiter repeats stop() until run() has returned.
    std::atomic<bool> done{false};
    std::thread waiter([&server, &done, stop_signals] {
      int sig = 0;
      sigwait(&stop_signals, &sig);
      while (!done.load()) {
        server->stop();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    server->run();
    done.store(true);
    // run() returned without a signal (a listen failure): wake the waiter.
    pthread_kill(waiter.native_handle(), SIGTERM);
    waiter.join();
    std::cerr << "quarry: server stopped\n";
  });
}

}  // namespace quarry::cli
