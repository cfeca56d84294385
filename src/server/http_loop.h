// The connection side of `quarry serve`: one epoll thread owns every socket and reads and writes
// only what is ready, so a client that is slow, idle or trickling costs its buffer, never a
// thread; a request reaches the worker pool only once it has fully arrived (http1.h parses
// it), and its answer goes back through the loop.
//
// What a client cannot do (docs/reliability.md):
// - hold a worker while it sends: workers see complete requests only;
// - take longer than `header_timeout` to send a request's head, or `read_timeout` for the whole
//   request, from its first byte (408 and the connection closes);
// - stay idle on a keep-alive connection past `idle_timeout`;
// - keep more than `max_incomplete` connections mid-request: beyond that the one that started
//   its request longest ago is closed (a bound over all clients, not per address);
// - open more than `max_connections`: the longest-idle connection makes room, or the newcomer
//   gets 503;
// - have a byte after a malformed request read as another request: an error closes the
//   connection (after the answer, with a bounded lingering read that parses nothing).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "server/http1.h"

namespace quarry::server::http {

struct LoopOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port
  Limits limits;
  int workers = 8;
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds read_timeout{30'000};
  std::chrono::milliseconds write_timeout{30'000};
  std::chrono::milliseconds idle_timeout{60'000};
  std::size_t max_connections = 0;  // 0: from the open-files limit (at most 10,000)
  std::size_t max_incomplete = 1024;
  std::size_t max_queued = 1024;  // complete requests waiting for a worker; 503 beyond
};

// Runs on a worker thread with a complete request; returns the answer.
using Handler = std::function<Response(Request&)>;
// Renders an error the loop answers itself (malformed request, timeout, overload) in the
// server's one error envelope. `code` is a quarry error code name.
using ErrorRenderer = std::function<Response(int status, const char* code, const std::string&)>;

class Loop {
 public:
  // Binds and listens now (a busy address throws quarry::Error io_error naming it); serves once
  // run() is called.
  static std::unique_ptr<Loop> listen(const LoopOptions& options, Handler handler,
                                      ErrorRenderer render_error);
  virtual ~Loop() = default;
  virtual int port() const = 0;
  // Serves until stop(); then closes every connection and joins the workers.
  virtual void run() = 0;
  // Thread-safe; async-signal-safe.
  virtual void stop() = 0;
};

}  // namespace quarry::server::http
