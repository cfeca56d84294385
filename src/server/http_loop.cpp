// The epoll loop of http_loop.h: one thread owns every connection; complete requests go to a
// pool of workers through a queue, their answers come back through a second queue and an
// eventfd. Deadlines are kept by a sweep over the connections ten times a second.
#include "server/http_loop.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "quarry/error.h"

namespace quarry::server::http {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::chrono::milliseconds kLinger{2000};  // reading (and dropping) before a close
constexpr std::chrono::milliseconds kTick{100};
constexpr std::size_t kReadChunk = 64 * 1024;
constexpr int kReadsPerEvent = 4;  // then other connections get their turn

enum class Phase { idle, reading, processing, writing, lingering };

struct Conn {
  int fd = -1;
  std::uint64_t id = 0;
  RequestParser parser;
  std::string pending;  // bytes that came after the current request (pipelining)
  std::string out;
  std::size_t out_off = 0;
  Phase phase = Phase::idle;
  Clock::time_point since;  // when the current phase began
  bool close_after = false;
  bool continue_sent = false;
  bool peer_gone = false;  // hung up while its request was being answered
  std::uint32_t events = 0;

  explicit Conn(const Limits& l) : parser(l) {}
};

struct Task {
  int fd;
  std::uint64_t id;
  Request request;
};

struct Done {
  int fd;
  std::uint64_t id;
  std::string bytes;
  bool keep_alive;
};

std::string seconds(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

class LoopImpl final : public Loop {
 public:
  LoopImpl(const LoopOptions& o, Handler handler, ErrorRenderer render)
      : o_(o), handler_(std::move(handler)), render_(std::move(render)) {
    raise_open_files_limit();
    if (o_.max_connections == 0) o_.max_connections = default_max_connections();
    open_listener();
    epfd_ = epoll_create1(EPOLL_CLOEXEC);
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (epfd_ < 0 || wake_fd_ < 0) {
      cleanup_fds();
      throw Error(Code::io_error,
                  std::string("cannot start the server's event loop: ") + std::strerror(errno));
    }
    add(listen_fd_, EPOLLIN, kListenTag);
    add(wake_fd_, EPOLLIN, kWakeTag);
  }

  ~LoopImpl() override {
    stop();
    cleanup_fds();
  }

  int port() const override { return port_; }

  void stop() override {
    stopping_.store(true);
    if (wake_fd_ >= 0) {
      const std::uint64_t one = 1;
      [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
    }
  }

  void run() override {
    for (int i = 0; i < std::max(1, o_.workers); ++i) workers_.emplace_back([this] { work(); });
    std::vector<epoll_event> events(256);
    auto last_sweep = Clock::now();
    while (!stopping_.load()) {
      const int n = epoll_wait(epfd_, events.data(), static_cast<int>(events.size()),
                               static_cast<int>(kTick.count()));
      if (n < 0 && errno != EINTR) break;
      for (int i = 0; i < n; ++i) {
        const auto tag = events[i].data.u64;
        if (tag == kListenTag)
          accept_all();
        else if (tag == kWakeTag)
          drain_wake();
        else
          on_event(static_cast<int>(tag), events[i].events);
      }
      finish_done();
      const auto now = Clock::now();
      if (now - last_sweep >= kTick) {
        sweep(now);
        last_sweep = now;
      }
    }
    shutdown_all();
  }

 private:
  static constexpr std::uint64_t kListenTag = ~std::uint64_t{0};
  static constexpr std::uint64_t kWakeTag = ~std::uint64_t{0} - 1;

  // --- setup ------------------------------------------------------------------------------

  static void raise_open_files_limit() {
    rlimit r{};
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
      r.rlim_cur = std::min<rlim_t>(r.rlim_max, 65536);
      setrlimit(RLIMIT_NOFILE, &r);
    }
  }

  static std::size_t default_max_connections() {
    rlimit r{};
    std::size_t files = 1024;
    if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
      files = static_cast<std::size_t>(r.rlim_cur);
    // Leave room for the catalog, stores and models the engines open.
    return std::clamp<std::size_t>(files > 256 ? files - 256 : 64, 64, 10'000);
  }

  void open_listener() {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const std::string where = o_.host + ":" + std::to_string(o_.port);
    if (int rc = getaddrinfo(o_.host.c_str(), std::to_string(o_.port).c_str(), &hints, &res);
        rc != 0)
      throw Error(Code::invalid_argument,
                  "cannot listen on " + where + ": " + gai_strerror(rc) + " (check --host)",
                  {{"field", "host"}});
    int err = 0;
    for (addrinfo* a = res; a; a = a->ai_next) {
      int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) {
        err = errno;
        continue;
      }
      // SO_REUSEADDR lets a restart bind past connections in TIME_WAIT; it does not let two
      // servers listen on one port (that would be SO_REUSEPORT, which Quarry never sets).
      int on = 1;
      setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
      if (bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0) {
        listen_fd_ = fd;
        break;
      }
      err = errno;
      ::close(fd);
    }
    freeaddrinfo(res);
    if (listen_fd_ < 0) {
      if (err == EADDRINUSE)
        throw Error(Code::io_error,
                    "cannot listen on " + where +
                        ": the address is already in use (another quarry serve or another "
                        "program holds it); stop it or choose another --port",
                    {{"field", "port"}});
      if (err == EACCES)
        throw Error(Code::io_error,
                    "cannot listen on " + where +
                        ": permission denied (ports below 1024 need "
                        "privileges; choose another --port)",
                    {{"field", "port"}});
      throw Error(Code::io_error, "cannot listen on " + where + ": " + std::strerror(err),
                  {{"field", "host"}});
    }
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    port_ = ss.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port)
                                     : ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  }

  void cleanup_fds() {
    for (int* fd : {&listen_fd_, &epfd_, &wake_fd_})
      if (*fd >= 0) {
        ::close(*fd);
        *fd = -1;
      }
  }

  void add(int fd, std::uint32_t events, std::uint64_t tag) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = tag;
    epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev);
  }

  void interest(Conn& c, std::uint32_t events) {
    if (c.events == events) return;
    epoll_event ev{};
    ev.events = events;
    ev.data.u64 = static_cast<std::uint64_t>(c.fd);
    epoll_ctl(epfd_, EPOLL_CTL_MOD, c.fd, &ev);
    c.events = events;
  }

  // --- accepting --------------------------------------------------------------------------

  void accept_all() {
    while (true) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if ((errno == EMFILE || errno == ENFILE) && evict_idle()) continue;
        return;  // EAGAIN, or out of descriptors with nothing idle: the backlog waits
      }
      if (conns_.size() >= o_.max_connections && !evict_idle()) {
        const std::string busy =
            serialize(render_(503, "busy",
                              "the server has " + std::to_string(conns_.size()) +
                                  " open connections, its limit; retry shortly"),
                      false, false);
        // Read what of the request has already arrived before closing: a close with unread
        // input sends RST, and a client that gets RST may lose the 503 before it reads it.
        char sink[4096];
        for (int i = 0; i < 16 && recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0; ++i) {
        }
        [[maybe_unused]] auto n = send(fd, busy.data(), busy.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        shutdown(fd, SHUT_WR);
        ::close(fd);
        continue;
      }
      int on = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
      auto c = std::make_unique<Conn>(o_.limits);
      c->fd = fd;
      c->id = next_id_++;
      c->since = Clock::now();
      c->events = EPOLLIN;
      add(fd, EPOLLIN, static_cast<std::uint64_t>(fd));
      conns_[fd] = std::move(c);
    }
  }

  // Closes the connection idle longest; false when none is idle.
  bool evict_idle() {
    Conn* oldest = nullptr;
    for (auto& [fd, c] : conns_)
      if (c->phase == Phase::idle && (!oldest || c->since < oldest->since)) oldest = c.get();
    if (!oldest) return false;
    close_conn(*oldest);
    return true;
  }

  // --- reading ----------------------------------------------------------------------------

  void on_event(int fd, std::uint32_t events) {
    auto it = conns_.find(fd);
    if (it == conns_.end()) return;
    Conn& c = *it->second;
    if (c.phase == Phase::processing) {
      if (events & (EPOLLHUP | EPOLLERR)) {  // the answer has nowhere to go
        c.peer_gone = true;
        epoll_ctl(epfd_, EPOLL_CTL_DEL, c.fd, nullptr);
        c.events = 0;
      }
      return;
    }
    if (events & EPOLLERR) return close_conn(c);
    const std::uint64_t id = c.id;
    if (events & EPOLLOUT) write_some(c);  // may close c, or answer a pipelined request
    it = conns_.find(fd);
    if (it == conns_.end() || it->second->id != id) return;
    if (events & (EPOLLIN | EPOLLHUP)) read_some(*it->second);
  }

  void read_some(Conn& c) {
    for (int i = 0; i < kReadsPerEvent; ++i) {
      if (c.phase != Phase::idle && c.phase != Phase::reading && c.phase != Phase::lingering)
        return;
      const ssize_t n = recv(c.fd, buf_, sizeof buf_, 0);
      if (n == 0) return close_conn(c);  // the client went away (or finished, when lingering)
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
        return close_conn(c);
      }
      if (c.phase == Phase::lingering) continue;  // dropped: nothing after an error is parsed
      if (!ingest(c, std::string_view(buf_, static_cast<std::size_t>(n)))) return;
    }
  }

  // Feeds bytes to the connection's parser; false when the connection left the reading phases
  // (closed, or its request is complete or refused).
  bool ingest(Conn& c, std::string_view data) {
    const std::size_t used = c.parser.feed(data);
    if (c.phase == Phase::idle && c.parser.started()) {
      c.phase = Phase::reading;
      c.since = Clock::now();
      ++incomplete_;
      if (incomplete_ > o_.max_incomplete && !evict_oldest_incomplete(c)) return false;
    }
    if (c.parser.failed()) {
      const ParseError& e = c.parser.error();
      respond_error(c, e.status, e.status == 413 ? "payload_too_large" : "invalid_argument",
                    e.message);
      return false;
    }
    if (c.parser.done()) {
      c.pending.append(data.substr(used));
      dispatch(c);
      return false;
    }
    if (c.parser.head_complete() && c.parser.expects_continue() && !c.continue_sent) {
      c.continue_sent = true;
      c.out += "HTTP/1.1 100 Continue\r\n\r\n";
      return write_some(c);
    }
    return true;
  }

  // Over max_incomplete: the connection mid-request longest is closed. False when that was
  // `self`.
  bool evict_oldest_incomplete(Conn& self) {
    Conn* oldest = nullptr;
    for (auto& [fd, c] : conns_)
      if (c->phase == Phase::reading && (!oldest || c->since < oldest->since)) oldest = c.get();
    if (!oldest) return true;
    const bool is_self = oldest == &self;
    respond_error(*oldest, 503, "busy",
                  "the server has " + std::to_string(o_.max_incomplete) +
                      " connections with unfinished requests, its limit; this one was the "
                      "oldest");
    return !is_self;
  }

  void dispatch(Conn& c) {
    --incomplete_;
    c.phase = Phase::processing;
    c.since = Clock::now();
    interest(c, 0);
    Task t{c.fd, c.id, std::move(c.parser.request())};
    c.parser.reset();
    c.continue_sent = false;
    {
      std::lock_guard lk(queue_mu_);
      if (queue_.size() < o_.max_queued) {
        queue_.push_back(std::move(t));
        queue_cv_.notify_one();
        return;
      }
    }
    c.phase = Phase::reading;  // respond_error's accounting expects a request in hand
    ++incomplete_;
    respond_error(c, 503, "busy",
                  std::to_string(o_.max_queued) + " requests are already waiting; retry shortly");
  }

  // --- answering --------------------------------------------------------------------------

  void work() {
    while (true) {
      Task t;
      {
        std::unique_lock lk(queue_mu_);
        queue_cv_.wait(lk, [this] { return stopping_.load() || !queue_.empty(); });
        if (stopping_.load()) return;
        t = std::move(queue_.front());
        queue_.pop_front();
      }
      Response r;
      try {
        r = handler_(t.request);
      } catch (...) {
        try {
          r = render_(500, "internal", "internal error");
        } catch (...) {
          r = Response{500,
                       "application/json",
                       {},
                       R"({"error":{"code":"internal","message":"internal error","details":{}}})",
                       true};
        }
      }
      const bool keep = t.request.keep_alive && !r.close;
      Done d{t.fd, t.id, serialize(r, keep, t.request.method == "HEAD"), keep};
      {
        std::lock_guard lk(done_mu_);
        done_.push_back(std::move(d));
      }
      const std::uint64_t one = 1;
      [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
    }
  }

  void drain_wake() {
    std::uint64_t v;
    while (::read(wake_fd_, &v, sizeof v) > 0) {
    }
  }

  void finish_done() {
    std::vector<Done> done;
    {
      std::lock_guard lk(done_mu_);
      done.swap(done_);
    }
    for (auto& d : done) {
      auto it = conns_.find(d.fd);
      if (it == conns_.end() || it->second->id != d.id) continue;  // closed meanwhile
      Conn& c = *it->second;
      if (c.peer_gone) {
        close_conn(c);
        continue;
      }
      c.out = std::move(d.bytes);
      c.out_off = 0;
      c.close_after = !d.keep_alive;
      c.phase = Phase::writing;
      c.since = Clock::now();
      write_some(c);
    }
  }

  void respond_error(Conn& c, int status, const char* code, const std::string& message) {
    if (c.phase == Phase::reading) --incomplete_;
    Response r;
    try {
      r = render_(status, code, message);
    } catch (...) {
      r.status = status;
    }
    c.out += serialize(r, false, false);
    c.close_after = true;
    c.phase = Phase::writing;
    c.since = Clock::now();
    c.pending.clear();
    write_some(c);
  }

  // Sends what the connection has to send; false when it was closed.
  bool write_some(Conn& c) {
    while (c.out_off < c.out.size()) {
      const ssize_t n =
          send(c.fd, c.out.data() + c.out_off, c.out.size() - c.out_off, MSG_NOSIGNAL);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          interest(c, c.phase == Phase::reading ? EPOLLIN | EPOLLOUT : EPOLLOUT);
          return true;
        }
        close_conn(c);
        return false;
      }
      c.out_off += static_cast<std::size_t>(n);
    }
    c.out.clear();
    c.out_off = 0;
    if (c.out.capacity() > (1u << 20)) c.out.shrink_to_fit();
    if (c.phase == Phase::reading) {  // a 100 Continue went out; the body comes next
      interest(c, EPOLLIN);
      return true;
    }
    if (c.phase != Phase::writing) return true;
    if (c.close_after) {
      // Read (and drop) what the client still sends before closing, so its unread bytes do
      // not turn the close into a reset that destroys the answer in flight.
      ::shutdown(c.fd, SHUT_WR);
      c.phase = Phase::lingering;
      c.since = Clock::now();
      interest(c, EPOLLIN);
      return true;
    }
    c.phase = Phase::idle;
    c.since = Clock::now();
    interest(c, EPOLLIN);
    if (!c.pending.empty()) {  // a pipelined request arrived with the previous one
      std::string p = std::move(c.pending);
      c.pending.clear();
      ingest(c, p);
    }
    return true;
  }

  // --- deadlines --------------------------------------------------------------------------

  void sweep(Clock::time_point now) {
    std::vector<Conn*> expired;
    for (auto& [fd, c] : conns_) {
      const auto age = now - c->since;
      switch (c->phase) {
        case Phase::idle:
          if (age > o_.idle_timeout) expired.push_back(c.get());
          break;
        case Phase::reading:
          if ((!c->parser.head_complete() && age > o_.header_timeout) || age > o_.read_timeout)
            expired.push_back(c.get());
          break;
        case Phase::writing:
          if (age > o_.write_timeout) expired.push_back(c.get());
          break;
        case Phase::lingering:
          if (age > kLinger) expired.push_back(c.get());
          break;
        case Phase::processing:
          break;
      }
    }
    for (Conn* c : expired) {
      if (c->phase == Phase::reading) {
        const bool head = !c->parser.head_complete();
        respond_error(*c, 408, "timeout",
                      head ? "the request's headers did not arrive within " +
                                 seconds(o_.header_timeout) + " (--header-timeout)"
                           : "the request did not arrive within " + seconds(o_.read_timeout) +
                                 " (--read-timeout)");
      } else {
        close_conn(*c);
      }
    }
  }

  void close_conn(Conn& c) {
    if (c.phase == Phase::reading) --incomplete_;
    ::close(c.fd);  // also leaves the epoll set
    conns_.erase(c.fd);
  }

  void shutdown_all() {
    {
      std::lock_guard lk(queue_mu_);
      queue_.clear();
    }
    queue_cv_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
    for (auto& [fd, c] : conns_) ::close(fd);
    conns_.clear();
    if (listen_fd_ >= 0) {
      ::close(listen_fd_);
      listen_fd_ = -1;
    }
  }

  LoopOptions o_;
  Handler handler_;
  ErrorRenderer render_;
  int listen_fd_ = -1, epfd_ = -1, wake_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::unordered_map<int, std::unique_ptr<Conn>> conns_;
  std::uint64_t next_id_ = 1;
  std::size_t incomplete_ = 0;
  char buf_[kReadChunk];

  std::mutex queue_mu_;
  std::condition_variable queue_cv_;
  std::deque<Task> queue_;
  std::vector<std::thread> workers_;

  std::mutex done_mu_;
  std::vector<Done> done_;
};

}  // namespace

std::unique_ptr<Loop> Loop::listen(const LoopOptions& options, Handler handler,
                                   ErrorRenderer render_error) {
  return std::make_unique<LoopImpl>(options, std::move(handler), std::move(render_error));
}

}  // namespace quarry::server::http
