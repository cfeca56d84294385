// quarry mcp [--kb NAME] [--read-only] [--no-indexer]: the MCP server over stdio, for agents
// that launch Quarry as a subprocess (docs/mcp.md). stdout is the protocol channel and carries
// nothing else: the original stdout is kept for the protocol and fd 1 is pointed at stderr, so
// a stray print anywhere in the process cannot corrupt the stream. Vectors of what the agent
// writes are built by an in-process indexer; it stops cleanly when the client closes stdin.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <iostream>
#include <streambuf>

#include "cli/commands.h"
#include "server/serve.h"

namespace quarry::cli {

namespace {

// A buffered output stream on a file descriptor (the protocol channel).
class FdBuf : public std::streambuf {
 public:
  explicit FdBuf(int fd) : fd_(fd) { setp(buf_, buf_ + sizeof buf_); }
  ~FdBuf() override {
    sync();
    ::close(fd_);
  }

 protected:
  int overflow(int c) override {
    if (sync() != 0) return traits_type::eof();
    if (c != traits_type::eof()) {
      *pptr() = static_cast<char>(c);
      pbump(1);
    }
    return traits_type::not_eof(c);
  }
  int sync() override {
    for (const char* p = pbase(); p < pptr();) {
      ssize_t n = ::write(fd_, p, static_cast<std::size_t>(pptr() - p));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return -1;  // EPIPE: the client went away (SIGPIPE is ignored)
      p += n;
    }
    setp(buf_, buf_ + sizeof buf_);
    return 0;
  }

 private:
  int fd_;
  char buf_[1 << 16];
};

struct McpArgs {
  std::string kb;
  bool read_only = false;
  bool no_indexer = false;
};

// Takes the process's stdout for the protocol and sends fd 1 to stderr; returns the new fd.
int take_stdout() {
  std::cout.flush();
  int proto = ::dup(STDOUT_FILENO);
  if (proto < 0 || ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    throw Error(Code::io_error, "cannot set up stdout as the MCP channel");
  return proto;
}

int run_mcp(const Globals& g, const McpArgs& a) {
  std::signal(SIGPIPE, SIG_IGN);  // a client that exits mid-reply is EOF, not a crash
  EngineOptions base{g.data_dir, "local", "mcp", g.lock_timeout_ms};
  server::McpStdioOptions mo;
  mo.kb = a.kb;
  mo.read_only = a.read_only;
  mo.indexer = !a.no_indexer;
  // Opens the data directory (and finds --kb) now, so a wrong path or name fails at start with
  // its error on stderr, not at the agent's first call.
  auto mcp = server::McpStdio::open(base, mo);
  FdBuf buf(take_stdout());
  std::ostream out(&buf);

  std::cerr << "quarry mcp: serving " << g.data_dir << " over stdio"
            << (a.kb.empty() ? "" : " (knowledge base " + a.kb + ")")
            << (a.read_only ? ", read-only" : "") << "\n";
  if (::isatty(STDIN_FILENO))
    std::cerr << "quarry mcp: waiting for JSON-RPC messages on stdin; this command is meant to "
                 "be started by an MCP client (see docs/mcp.md)\n";
  mcp->run(std::cin, out);
  return 0;
}

}  // namespace

void add_mcp_command(CLI::App& app, Globals& g, int& exit_code) {
  auto a = std::make_shared<McpArgs>();
  auto* cmd = app.add_subcommand(
      "mcp", "Serve the Model Context Protocol over stdio (register it in an agent's MCP config)");
  cmd->add_option("--kb", a->kb,
                  "Serve only this knowledge base (tools' kb argument defaults to it)");
  cmd->add_flag("--read-only", a->read_only, "No add/edit/delete tools");
  cmd->add_flag("--no-indexer", a->no_indexer,
                "Do not build vectors in this process (another process does)");
  cmd->callback([&g, &exit_code, a] { exit_code = run_mcp(g, *a); });
}

}  // namespace quarry::cli
