// Hostile input and hostile callers (SPEC §10): bytes that are not UTF-8, JSON nested to blow
// the stack, web pages and proxies posing as the local user, empty credentials, server paths
// in error messages, and KB-limited admins aiming the embedder at their own host.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "server_fixture.h"

namespace quarry::testing {
namespace {
using nlohmann::json;

class Hardening : public ServerTest {
 protected:
  void SetUp() override {
    server::ServeOptions o;
    o.indexer = false;
    start(o);
    ASSERT_EQ(send("POST", "/kbs", {{"name", "k"}}).status, 201);
  }

  HttpResult raw_get(const std::string& path, const httplib::Headers& h = {}) {
    auto c = client();
    return result(c.Get(path.c_str(), h));
  }
  bool alive() { return get("/health").status == 200; }

  // The status of a request written byte for byte (the HTTP client sets its own Host).
  int raw_status(const std::string& request) {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(srv->port()));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      close(fd);
      return -1;
    }
    (void)!write(fd, request.data(), request.size());
    char buf[64] = {};
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n < 12) return -1;
    return std::atoi(buf + 9);  // "HTTP/1.1 403 ..."
  }
};

TEST_F(Hardening, InvalidUtf8InThePathIsAnErrorNotACrash) {
  auto r = raw_get("/%FF");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_code(r), "not_found");
  auto kb = raw_get("/api/v1/kbs/%FF%FE");
  EXPECT_GE(kb.status, 400);
  EXPECT_LT(kb.status, 500) << kb.body;
  EXPECT_TRUE(alive());
}

TEST_F(Hardening, DeeplyNestedJsonIsRefused) {
  std::string deep = std::string(200000, '[') + std::string(200000, ']');
  auto r = send_raw("POST", "/kbs/k/search", R"({"query": "x", "filter": {"a": )" + deep + "}}",
                    "application/json");
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(error_code(r), "invalid_argument");
  auto q = get("/kbs/k/documents?filter=" +
               httplib::detail::encode_query_param("{\"a\": " + std::string(5000, '[') +
                                                   std::string(5000, ']') + "}"));
  EXPECT_EQ(q.status, 400);
  EXPECT_TRUE(alive());
}

TEST_F(Hardening, WithoutATokenOnlyALocalCallerIsTheAdmin) {
  auto evil = raw_get("/api/v1/kbs", {{"Origin", "http://evil.example"}});
  EXPECT_EQ(evil.status, 403);
  EXPECT_EQ(error_code(evil), "forbidden");
  EXPECT_EQ(raw_get("/api/v1/kbs", {{"Origin", "http://localhost:3000"}}).status, 200);
  // DNS rebinding: a hostile name that resolves to 127.0.0.1.
  EXPECT_EQ(raw_status("GET /api/v1/kbs HTTP/1.1\r\nHost: evil.example:7720\r\n"
                       "Connection: close\r\n\r\n"),
            403);
  EXPECT_EQ(raw_status("GET /api/v1/kbs HTTP/1.1\r\nHost: localhost:7720\r\n"
                       "Connection: close\r\n\r\n"),
            200);
  // A proxy in front of a loopback server relays remote callers.
  EXPECT_EQ(raw_get("/api/v1/kbs", {{"X-Forwarded-For", "203.0.113.9"}}).status, 401);
  // A cross-origin form post cannot delete documents.
  auto c = client();
  auto del = c.Post("/api/v1/kbs/k/documents/delete", {{"Origin", "http://evil.example"}},
                    R"({"filter": {"a": 1}})", "text/plain");
  ASSERT_TRUE(del);
  EXPECT_EQ(del->status, 403);
}

TEST_F(Hardening, CurlStyleFormBodiesAreReadAsJsonWhateverTheirSize) {
  // `curl -d` labels a body application/x-www-form-urlencoded; httplib would cap it at 8 KiB.
  std::string text(20000, 'w');
  auto r = send_raw("POST", "/kbs/k/documents",
                    json{{"filename", "big.txt"}, {"content", "big " + text}}.dump(),
                    "application/x-www-form-urlencoded");
  EXPECT_EQ(r.status, 201) << r.body;
  auto body_less = client().Post("/api/v1/kbs/k/reindex");  // no body, no Content-Length
  ASSERT_TRUE(body_less);
  EXPECT_EQ(body_less->status, 503);  // this server runs without its indexer: says so at once
}

TEST_F(Hardening, ErrorsDoNotShowServerPaths) {
  auto added = send("POST", "/kbs/k/documents", {{"filename", "a.md"}, {"content", "hello"}});
  ASSERT_EQ(added.status, 201);
  std::string id = added.json["items"][0]["doc_id"];
  auto doc = get("/kbs/k/documents/" + id + "?markdown=false");
  // Lose the Markdown file behind the server's back.
  auto e = engine();
  std::filesystem::remove(e->get_document("k", id).markdown_path);
  auto r = get("/kbs/k/documents/" + id + "/markdown");
  EXPECT_GE(r.status, 400);
  const std::string dir = std::filesystem::canonical(data).string();
  EXPECT_EQ(r.body.find(dir), std::string::npos) << r.body;
  EXPECT_EQ(doc.body.find(dir), std::string::npos) << doc.body;
}

TEST_F(Hardening, AKbLimitedAdminCannotRedirectTheEmbedder) {
  token = engine()->create_token("team", "admin", {"k"}).secret;
  auto set = send("PATCH", "/kbs/k",
                  {{"settings", {{"embedder.settings.base_url", "https://evil.example/v1"}}}});
  EXPECT_EQ(set.status, 403) << set.body;
  json cfg = {{"embedder",
               {{"provider", "openai:x"},
                {"settings", {{"base_url", "https://evil.example/v1"}, {"dimensions", 8}}}}}};
  token = engine()->create_token("team2", "admin", {"k2"}).secret;
  EXPECT_EQ(send("POST", "/kbs", {{"name", "k2"}, {"config", cfg}}).status, 403);
  EXPECT_EQ(send("PATCH", "/kbs/k", {{"settings", {{"chunking.max_tokens", 100}}}}).status, 403);
  token = engine()->create_token("root", "admin", {}).secret;
  EXPECT_EQ(send("POST", "/kbs", {{"name", "k2"}, {"config", cfg}}).status, 201);
}

// Input that once reached SQLite's limits came back as 500 internal: an advanced query FTS5
// cannot parse ("*"), a $or of 494 branches ("Expression tree is too large"), an $in of 499
// values. Every filter the validator allows runs, in search, grep, listing and delete; what FTS5
// refuses is the caller's to fix (400 invalid_argument), in words without internal layer names.
TEST_F(Hardening, InputNeverReachesSqliteLimitsAsInternalErrors) {
  ASSERT_EQ(send("POST", "/kbs/k/documents",
                 {{"filename", "a.md"}, {"content", "# A\n\nalpha"}, {"metadata", {{"n", 7}}}})
                .status,
            201);
  for (const char* q : {"*", "alpha AND", "(alpha"}) {
    auto r = send("POST", "/kbs/k/search", {{"query", q}, {"advanced", true}, {"mode", "keyword"}});
    EXPECT_EQ(r.status, 400) << q << ": " << r.body;
    EXPECT_EQ(error_code(r), "invalid_argument") << r.body;
    const std::string m = r.json["error"].value("message", "");
    EXPECT_NE(m.find("invalid advanced query"), std::string::npos) << m;
    EXPECT_EQ(m.find("catalog error"), std::string::npos) << m;
  }
  json ors = json::array();
  for (int i = 0; i < 2000; ++i) ors.push_back({{"n", i}});
  json in = json::array();
  for (int i = 0; i < 1000; ++i) in.push_back(i);
  for (const json& f : {json{{"$or", ors}}, json{{"n", {{"$in", in}}}}}) {
    auto s =
        send("POST", "/kbs/k/search", {{"query", "alpha"}, {"mode", "keyword"}, {"filter", f}});
    EXPECT_EQ(s.status, 200) << s.body;
    EXPECT_EQ(s.json["hits"].size(), 1u) << s.body;
    auto g = send("POST", "/kbs/k/grep", {{"pattern", "alpha"}, {"filter", f}});
    EXPECT_EQ(g.status, 200) << g.body;
    EXPECT_EQ(g.json["matches"].size(), 1u) << g.body;
  }
  // A query string holds less: 600 values (the old limit was 499) fit in its 8 KB.
  json in600(in.begin(), in.begin() + 600);
  auto l = get("/kbs/k/documents?filter=" +
               httplib::detail::encode_query_param(json{{"n", {{"$in", in600}}}}.dump()));
  EXPECT_EQ(l.status, 200) << l.body;
  EXPECT_EQ(l.json["documents"].size(), 1u) << l.body;
  auto d = send("POST", "/kbs/k/documents/delete", {{"filter", {{"$or", ors}}}});
  EXPECT_EQ(d.status, 200) << d.body;
  EXPECT_EQ(d.json["deleted"].size(), 1u) << d.body;
}

// An embedder aimed at a private address is refused when the KB is made or changed (403
// blocked_address naming the address and the setting), not accepted with 201 and then never
// embedded.
TEST_F(Hardening, ABlockedEmbedderEndpointIsRefusedWhenTheKbIsConfigured) {
  json cfg = {{"embedder",
               {{"provider", "openai:x"},
                {"settings", {{"base_url", "http://10.0.0.1/v1"}, {"dimensions", 8}}}}}};
  auto made = send("POST", "/kbs", {{"name", "k2"}, {"config", cfg}});
  EXPECT_EQ(made.status, 403) << made.body;
  EXPECT_EQ(error_code(made), "blocked_address");
  EXPECT_NE(
      made.json["error"]["message"].get<std::string>().find("embedder.settings.allow_private"),
      std::string::npos)
      << made.body;
  auto set = send("PATCH", "/kbs/k",
                  {{"settings",
                    {{"embedder.provider", "openai:text-embedding-3-small"},
                     {"embedder.settings.base_url", "http://[fd00::1]/v1"}}}});
  EXPECT_EQ(set.status, 403) << set.body;
  EXPECT_EQ(error_code(set), "blocked_address");
  cfg["embedder"]["settings"]["allow_private"] = true;
  EXPECT_EQ(send("POST", "/kbs", {{"name", "k2"}, {"config", cfg}}).status, 201);
}

TEST_F(Hardening, WithoutATokenTheLocalCallerIsTheAnonymousAdmin) {
  auto me = get("/me");
  ASSERT_EQ(me.status, 200) << me.body;
  EXPECT_TRUE(me.json["anonymous"].get<bool>());
  EXPECT_EQ(me.json["actor"], "local");
  EXPECT_TRUE(me.json["token_id"].is_null());
  EXPECT_EQ(me.json["scope"], "admin");
  EXPECT_EQ(me.json["can"]["admin"], true);
}

}  // namespace
}  // namespace quarry::testing

namespace quarry::testing {
namespace {

// The web UI's files (web/, compiled in): each served with its type, an ETag that answers 304,
// and the page's policy; every API answer with the inert one; --no-ui turns the page off.
class WebUi : public ServerTest {};

TEST_F(WebUi, EveryAssetIsServedWithItsTypeTheEtagAndThePagePolicy) {
  start();
  auto c = client();
  const std::map<std::string, std::string> types = {{"/", "text/html"},
                                                    {"/ui/app.js", "text/javascript"},
                                                    {"/ui/api.js", "text/javascript"},
                                                    {"/ui/markdown.js", "text/javascript"},
                                                    {"/ui/app.css", "text/css"},
                                                    {"/ui/favicon.svg", "image/svg+xml"}};
  for (const auto& [path, type] : types) {
    HttpResult r = result(c.Get(path.c_str()));
    ASSERT_EQ(r.status, 200) << path;
    EXPECT_EQ(r.header("Content-Type").rfind(type, 0), 0u) << path;
    EXPECT_NE(r.header("Content-Security-Policy").find("script-src 'self'"), std::string::npos);
    EXPECT_EQ(r.header("Content-Security-Policy").find("unsafe"), std::string::npos);
    EXPECT_EQ(r.header("Referrer-Policy"), "no-referrer");
    EXPECT_EQ(r.header("X-Content-Type-Options"), "nosniff");
    const std::string etag = r.header("ETag");
    ASSERT_FALSE(etag.empty()) << path;
    HttpResult again = result(c.Get(path.c_str(), {{"If-None-Match", etag}}));
    EXPECT_EQ(again.status, 304) << path;
    EXPECT_TRUE(again.body.empty());
  }
  EXPECT_NE(result(c.Get("/")).body.find("/ui/app.js"), std::string::npos);
  EXPECT_EQ(result(c.Head("/ui/app.js")).status, 200);
  EXPECT_EQ(result(c.Get("/ui/missing.js")).status, 404);
  EXPECT_EQ(result(c.Get("/ui/../openapi.json")).status, 404);
  HttpResult post = result(c.Post("/", "{}", "application/json"));
  EXPECT_EQ(post.status, 405);
  EXPECT_EQ(post.header("Allow"), "GET, HEAD");

  HttpResult api = result(c.Get("/api/v1/health"));
  EXPECT_EQ(api.header("Content-Security-Policy"),
            "default-src 'none'; frame-ancestors 'none'; sandbox");
}

TEST_F(WebUi, NoUiTurnsThePageOffAndLeavesTheApi) {
  server::ServeOptions o;
  o.ui = false;
  start(o);
  auto c = client();
  HttpResult r = result(c.Get("/"));
  EXPECT_EQ(r.status, 404);
  EXPECT_NE(r.json["error"]["message"].get<std::string>().find("--no-ui"), std::string::npos);
  EXPECT_EQ(result(c.Get("/ui/app.js")).status, 404);
  EXPECT_EQ(result(c.Get("/api/v1/health")).status, 200);
}

TEST_F(WebUi, WritesMarkedByThePageAreAuditedAsSurfaceUi) {
  start();
  auto c = client();
  ASSERT_EQ(result(c.Post("/api/v1/kbs", {{"X-Quarry-Client", "ui"}}, R"({"name":"from-ui"})",
                          "application/json"))
                .status,
            201);
  ASSERT_EQ(result(c.Post("/api/v1/kbs", R"({"name":"from-rest"})", "application/json")).status,
            201);
  HttpResult log = result(c.Get("/api/v1/activity"));
  ASSERT_EQ(log.status, 200);
  std::map<std::string, std::string> surface_of;
  for (const auto& e : log.json["entries"])
    if (e["action"] == "kb.create") surface_of[e["kb"].get<std::string>()] = e["surface"];
  EXPECT_EQ(surface_of["from-ui"], "ui");
  EXPECT_EQ(surface_of["from-rest"], "rest");
}

}  // namespace
}  // namespace quarry::testing
