// What a slow, idle, pipelining or malformed client can and cannot do to `quarry serve`
// (docs/reliability.md), over raw sockets against the real server: a worker is never held by a
// client that has not finished sending, deadlines close what dawdles, a malformed request ends
// its connection after one answer, and a busy port fails at start.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "numbered.h"
#include "server_fixture.h"

namespace quarry::testing {
using quarry::testing::numbered;
namespace {
using nlohmann::json;
using namespace std::chrono_literals;

// A raw TCP connection to the server under test.
class Raw {
 public:
  explicit Raw(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~Raw() {
    if (fd_ >= 0) close(fd_);
  }
  Raw(const Raw&) = delete;
  Raw& operator=(const Raw&) = delete;
  bool ok() const { return ok_; }

  bool send(const std::string& s) {
    std::size_t at = 0;
    while (at < s.size()) {
      ssize_t n = ::send(fd_, s.data() + at, s.size() - at, MSG_NOSIGNAL);
      if (n <= 0) return false;
      at += static_cast<std::size_t>(n);
    }
    return true;
  }

  // Everything that arrives until the peer closes or `wait` passes with nothing new.
  std::string read_all(std::chrono::milliseconds wait = 3000ms) {
    std::string out;
    char buf[65536];
    while (true) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) {
        timed_out_ = true;
        break;
      }
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_ = true;
        break;
      }
      out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
  }

  // One response (head and Content-Length body); "" when none came within `wait`.
  std::string read_response(std::chrono::milliseconds wait = 10000ms) {
    char buf[65536];
    while (true) {
      const auto end = in_.find("\r\n\r\n");
      if (end != std::string::npos) {
        std::size_t length = 0;
        const auto cl = in_.find("Content-Length: ");
        if (cl != std::string::npos && cl < end) length = std::stoul(in_.substr(cl + 16));
        if (in_.size() >= end + 4 + length) {
          std::string r = in_.substr(0, end + 4 + length);
          in_.erase(0, end + 4 + length);
          return r;
        }
      }
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(wait.count())) <= 0) return "";
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) {
        closed_ = true;
        return "";
      }
      in_.append(buf, static_cast<std::size_t>(n));
    }
  }

  // True when the server has closed the connection (EOF within `wait`).
  bool closed_by_server(std::chrono::milliseconds wait = 5000ms) {
    const std::string rest = read_all(wait);
    return closed_ && rest.empty() && in_.empty();
  }
  bool closed() const { return closed_; }

 private:
  int fd_ = -1;
  bool ok_ = false;
  bool closed_ = false;
  bool timed_out_ = false;
  std::string in_;
};

int status_of(const std::string& response) {
  return response.size() > 12 ? std::atoi(response.c_str() + 9) : 0;
}

std::string body_of(const std::string& response) {
  const auto end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

const std::string kHealth = "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";

class Connections : public ServerTest {
 protected:
  void start_with(server::ServeOptions o) {
    o.indexer = false;
    o.pump = false;
    o.threads = 2;  // few workers: a design that lets a client hold one shows at once
    start(o);
  }
  int port() const { return srv->port(); }

  // /health answers on a fresh connection (within a generous bound: not a timing test, a
  // liveness one: a blocked server would not answer at all while the clients below hold on).
  bool health_answers() {
    Raw c(port());
    return c.ok() && c.send(kHealth) && status_of(c.read_response(10000ms)) == 200;
  }
};

TEST_F(Connections, ABusyPortFailsAtStartWithItsReason) {
  start_with({});
  server::ServeOptions o;
  o.port = port();
  o.indexer = false;
  o.pump = false;
  EngineOptions eo;
  eo.data_dir = (dir / "other").string();
  try {
    server::HttpServer::bind(eo, o);
    FAIL() << "a second server bound port " << o.port;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::io_error);
    EXPECT_NE(e.message().find("already in use"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("--port"), std::string::npos) << e.message();
  }
  EXPECT_TRUE(health_answers());
}

TEST_F(Connections, TricklingClientsHoldNoWorker) {
  start_with({});
  // Far more clients than workers, each mid-request and sending one byte now and then.
  std::vector<std::unique_ptr<Raw>> slow;
  for (int i = 0; i < 64; ++i) {
    slow.push_back(std::make_unique<Raw>(port()));
    ASSERT_TRUE(slow.back()->send("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: "));
  }
  for (int round = 0; round < 3; ++round) {
    for (auto& s : slow) ASSERT_TRUE(s->send("a"));
    EXPECT_TRUE(health_answers()) << "round " << round;
    std::this_thread::sleep_for(100ms);
  }
  // The trickling clients still get their answers once they finish.
  for (auto& s : slow) {
    ASSERT_TRUE(s->send("\r\n\r\n"));
    EXPECT_EQ(status_of(s->read_response()), 200);
  }
}

TEST_F(Connections, IdleConnectionsHoldNoWorker) {
  start_with({});
  std::vector<std::unique_ptr<Raw>> idle;
  for (int i = 0; i < 300; ++i) {
    idle.push_back(std::make_unique<Raw>(port()));
    ASSERT_TRUE(idle.back()->ok());
  }
  EXPECT_TRUE(health_answers());
  // An idle keep-alive connection still serves its next request.
  ASSERT_TRUE(idle.front()->send(kHealth));
  EXPECT_EQ(status_of(idle.front()->read_response()), 200);
}

TEST_F(Connections, AHeadThatDawdlesGets408AndIsClosed) {
  server::ServeOptions o;
  o.header_timeout_s = 1;
  start_with(o);
  Raw slow(port());
  ASSERT_TRUE(slow.send("GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n"));
  // Trickling does not reset the deadline: it runs from the request's first byte.
  std::string got;
  for (int i = 0; i < 40 && !slow.closed(); ++i) {
    if (!slow.send("X-A: b\r\n")) break;
    got += slow.read_all(100ms);
  }
  got += slow.read_all(3000ms);
  EXPECT_EQ(status_of(got), 408) << got;
  EXPECT_NE(got.find("\"timeout\""), std::string::npos) << got;
  EXPECT_NE(got.find("--header-timeout"), std::string::npos) << got;
  EXPECT_TRUE(slow.closed());
}

TEST_F(Connections, ABodyThatDawdlesGets408) {
  server::ServeOptions o;
  o.read_timeout_s = 1;
  start_with(o);
  Raw slow(port());
  ASSERT_TRUE(
      slow.send("POST /api/v1/kbs HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"));
  const std::string got = slow.read_all(5000ms);
  EXPECT_EQ(status_of(got), 408) << got;
  EXPECT_NE(got.find("--read-timeout"), std::string::npos) << got;
  EXPECT_TRUE(slow.closed());
}

TEST_F(Connections, UnfinishedRequestsAreBoundedOverAllClients) {
  server::ServeOptions o;
  o.max_incomplete = 4;
  start_with(o);
  std::vector<std::unique_ptr<Raw>> slow;
  for (int i = 0; i < 6; ++i) {
    slow.push_back(std::make_unique<Raw>(port()));
    ASSERT_TRUE(slow.back()->send("GET /api/v1/health HTTP/1.1\r\n"));
    std::this_thread::sleep_for(20ms);  // a definite order of arrival
  }
  // The two that started longest ago made room, with a 503 saying why.
  for (int i = 0; i < 2; ++i) {
    const std::string got = slow[static_cast<std::size_t>(i)]->read_all(3000ms);
    EXPECT_EQ(status_of(got), 503) << i << ": " << got;
    EXPECT_NE(got.find("unfinished requests"), std::string::npos) << got;
  }
  ASSERT_TRUE(slow[5]->send("Host: 127.0.0.1\r\n\r\n"));
  EXPECT_EQ(status_of(slow[5]->read_response()), 200);
  EXPECT_TRUE(health_answers());
}

TEST_F(Connections, PastTheConnectionLimitTheLongestIdleMakesRoom) {
  server::ServeOptions o;
  o.max_connections = 8;
  start_with(o);
  std::vector<std::unique_ptr<Raw>> idle;
  for (int i = 0; i < 8; ++i) idle.push_back(std::make_unique<Raw>(port()));
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(health_answers());
  EXPECT_TRUE(idle.front()->closed_by_server(3000ms));
}

TEST_F(Connections, AMalformedRequestEndsItsConnectionAfterOneAnswer) {
  start_with({});
  // A boundary longer than RFC 2046 allows: the body holds what looks like requests; none of
  // it may be read as one, with or without Connection: close.
  const std::string boundary(5000, 'x');
  const std::string inner = kHealth + kHealth;
  const std::string body = "--" + boundary +
                           "\r\nContent-Disposition: form-data; name=\"file\"; "
                           "filename=\"a.md\"\r\n\r\n" +
                           inner + "\r\n--" + boundary + "--\r\n";
  ASSERT_EQ(send("POST", "/kbs", {{"name", "k"}}).status, 201);
  for (const std::string connection : {"", "Connection: close\r\n"}) {
    Raw c(port());
    ASSERT_TRUE(c.send("POST /api/v1/kbs/k/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n" + connection +
                       "Content-Type: multipart/form-data; boundary=" + boundary +
                       numbered("\r\nContent-Length: ", body.size()) + "\r\n\r\n" + body));
    const std::string all = c.read_all(3000ms);
    EXPECT_EQ(status_of(all), 400) << all.substr(0, 300);
    EXPECT_NE(all.find("at most 70"), std::string::npos) << all.substr(0, 300);
    // Exactly one answer on the connection.
    std::size_t answers = 0;
    for (auto at = all.find("HTTP/1.1 "); at != std::string::npos;
         at = all.find("HTTP/1.1 ", at + 1))
      ++answers;
    EXPECT_EQ(answers, 1u) << all;
  }
  // A request refused by the parser closes its connection: the bytes after it are not parsed.
  Raw c(port());
  ASSERT_TRUE(c.send(
      "GET /api/v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n" + kHealth));
  const std::string all = c.read_all(3000ms);
  EXPECT_EQ(status_of(all), 400);
  EXPECT_NE(all.find("more than one Host header"), std::string::npos) << all;
  EXPECT_EQ(all.find("200 OK"), std::string::npos) << all;
  EXPECT_TRUE(c.closed());
}

TEST_F(Connections, FramingErrorsAre400NotGuesses) {
  start_with({});
  struct Case {
    std::string head;
    int status;
  };
  const std::vector<Case> cases = {
      {"POST /api/v1/kbs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n", 400},
      {"POST /api/v1/kbs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n"
       "Transfer-Encoding: chunked\r\n\r\n",
       400},
      {"GET /api/v1/health HTTP/1.1\r\n\r\n", 400},
      {"POST /api/v1/kbs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999\r\n\r\n", 413},
  };
  for (const auto& k : cases) {
    Raw c(port());
    ASSERT_TRUE(c.send(k.head));
    const std::string got = c.read_all(3000ms);
    EXPECT_EQ(status_of(got), k.status) << k.head << "\n" << got;
    const json j = json::parse(body_of(got), nullptr, false);
    EXPECT_TRUE(j.contains("error")) << got;
    EXPECT_TRUE(c.closed());
  }
}

TEST_F(Connections, PipelinedRequestsAreAnsweredInOrder) {
  start_with({});
  ASSERT_EQ(send("POST", "/kbs", {{"name", "k"}}).status, 201);
  Raw c(port());
  ASSERT_TRUE(
      c.send(kHealth + "GET /api/v1/kbs/k HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" +
             "GET /api/v1/kbs/nope HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"));
  EXPECT_EQ(status_of(c.read_response()), 200);
  const std::string kb = c.read_response();
  EXPECT_EQ(status_of(kb), 200);
  EXPECT_NE(kb.find("\"name\":\"k\""), std::string::npos);
  EXPECT_EQ(status_of(c.read_response()), 404);
  EXPECT_TRUE(c.closed_by_server());
}

TEST_F(Connections, ExpectContinueAndChunkedUploadsWork) {
  start_with({});
  ASSERT_EQ(send("POST", "/kbs", {{"name", "k"}}).status, 201);
  const std::string doc = R"({"filename": "a.md", "content": "# Title\n\nchunked body text"})";
  Raw c(port());
  ASSERT_TRUE(
      c.send("POST /api/v1/kbs/k/documents HTTP/1.1\r\nHost: 127.0.0.1\r\n"
             "Content-Type: application/json\r\nExpect: 100-continue\r\n"
             "Transfer-Encoding: chunked\r\n\r\n"));
  const std::string cont = c.read_all(2000ms);
  EXPECT_EQ(cont, "HTTP/1.1 100 Continue\r\n\r\n");
  char size[16];
  std::snprintf(size, sizeof size, "%zx", doc.size() - 10);
  ASSERT_TRUE(c.send(std::string(size) + "\r\n" + doc.substr(0, doc.size() - 10) + "\r\na\r\n" +
                     doc.substr(doc.size() - 10) + "\r\n0\r\n\r\n"));
  const std::string r = c.read_response();
  EXPECT_EQ(status_of(r), 201) << r;
  EXPECT_EQ(get("/kbs/k").json.value("documents", 0), 1);
}

TEST_F(Connections, APostFromAWebPageMustBeJsonOrMultipart) {
  start_with({});
  ASSERT_EQ(send("POST", "/kbs", {{"name", "k"}}).status, 201);
  auto c = client();
  // A page on another local port posting as a form or plain text: refused, naming why.
  for (const char* type : {"text/plain", "application/x-www-form-urlencoded"}) {
    auto r =
        c.Post("/api/v1/kbs", {{"Origin", "http://localhost:3000"}}, R"({"name": "k2"})", type);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << type;
    EXPECT_NE(r->body.find("Origin"), std::string::npos) << r->body;
  }
  EXPECT_EQ(get("/kbs/k2").status, 404);
  // The same page sending JSON, and curl -d (a form label, no Origin), keep working.
  auto ok = c.Post("/api/v1/kbs", {{"Origin", "http://localhost:3000"}}, R"({"name": "k3"})",
                   "application/json");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 201) << ok->body;
  EXPECT_EQ(
      send_raw("POST", "/kbs", R"({"name": "k4"})", "application/x-www-form-urlencoded").status,
      201);
}

TEST_F(Connections, MultipartLimitsAreNamed) {
  start_with({});
  ASSERT_EQ(send("POST", "/kbs", {{"name", "k"}}).status, 201);
  std::string body;
  for (int i = 0; i < 1025; ++i)
    body += "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f" +
            std::to_string(i) + ".md\"\r\n\r\nx\r\n";
  body += "--b--\r\n";
  auto r = send_raw("POST", "/kbs/k/documents", body, "multipart/form-data; boundary=b");
  EXPECT_EQ(r.status, 400) << r.body;
  EXPECT_NE(r.body.find("1024"), std::string::npos) << r.body;
  const std::string empty =
      "--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\n\r\nx\r\n--b--\r\n";
  auto e = send_raw("POST", "/kbs/k/documents", empty, "multipart/form-data; boundary=b");
  EXPECT_EQ(e.status, 400) << e.body;
  EXPECT_NE(e.body.find("filename"), std::string::npos) << e.body;
  EXPECT_EQ(e.body.find("unknown form field"), std::string::npos) << e.body;
}

TEST_F(Connections, WrongMethodIs405WithAllow) {
  start_with({});
  auto c = client();
  auto r = c.Delete("/api/v1/health");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 405);
  EXPECT_EQ(r->get_header_value("Allow"), "GET");
  auto head = c.Head("/api/v1/health");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_TRUE(head->body.empty());
}

// A deadline that has already passed (0 ms) stops every request at the first check in work
// that can be long (the SQLite progress handler, the keyword and grep loops); tiny work may
// finish before any check, so the KB here is big enough to reach them.
TEST_F(Connections, RequestsStopAtTheirDeadlineAndAStoppedWriteLeavesNothingBehind) {
  {
    auto e = engine();
    e->create_kb("k", "{}");
    IngestOptions io;
    io.metadata_json = R"({"team": "a"})";
    for (int i = 0; i < 300; ++i)
      e->ingest_bytes("k", numbered("d", i) + ".md",
                      numbered("# D", i) + numbered("\n\nalpha beta gamma ", i), io);
  }
  server::ServeOptions o;
  o.deadline_ms = 0;
  o.write_deadline_ms = 0;
  start_with(o);
  auto s = send("POST", "/kbs/k/search", {{"query", "alpha"}, {"mode", "keyword"}});
  EXPECT_EQ(s.status, 504) << s.body;
  EXPECT_EQ(error_code(s), "timeout");
  EXPECT_NE(s.body.find("this search took longer than its limit of 0 ms"), std::string::npos)
      << s.body;
  EXPECT_NE(s.body.find("--deadline"), std::string::npos) << s.body;
  auto g = send("POST", "/kbs/k/grep", {{"pattern", "gamma"}});
  EXPECT_EQ(g.status, 504) << g.body;
  EXPECT_EQ(error_code(g), "timeout");
  auto d = send("POST", "/kbs/k/documents/delete", {{"filter", {{"team", "a"}}}});
  EXPECT_EQ(d.status, 504) << d.body;
  EXPECT_EQ(error_code(d), "timeout");
  EXPECT_NE(d.body.find("--write-deadline"), std::string::npos) << d.body;
  EXPECT_EQ(get("/health").status, 200);
  // The delete was rolled back whole.
  EXPECT_EQ(engine()->list_kbs().front().documents, 300);
}

}  // namespace
}  // namespace quarry::testing
