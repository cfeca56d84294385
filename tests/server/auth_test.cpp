// Tokens and permissions (SPEC §10): scopes, KB-limited tokens that cannot tell whether a KB
// exists, revocation, the non-loopback rule, and secrets that never reach a response.
#include "net/fake_embed_server.h"
#include "secrets/secret_store.h"
#include "server_fixture.h"

namespace quarry::testing {
namespace {
using nlohmann::json;

class Auth : public ServerTest {
 protected:
  std::string admin, reader, writer, limited;

  // A KB whose openai embedder at `upstream` authenticates with the secret EMBED_KEY.
  static json paid_kb_config(const FakeEmbedServer& upstream) {
    return {{"embedder",
             {{"provider", "openai:m"},
              {"settings",
               {{"base_url", upstream.base_url()},
                {"dimensions", 8},
                {"allow_private", true},
                {"api_key_secret", "EMBED_KEY"},
                {"max_retries", 0}}}}}};
  }

  void SetUp() override {
    auto e = engine();
    admin = e->create_token("ops", "admin", {}).secret;
    reader = e->create_token("dashboard", "read", {}).secret;
    writer = e->create_token("app", "write", {}).secret;
    limited = e->create_token("team-a", "read", {"alpha"}).secret;
    e->create_kb("alpha", "{}");
    e->create_kb("beta", "{}");
    e->ingest_bytes("beta", "b.md", "Beta secrets live here.\n", {});
    server::ServeOptions o;
    o.require_token = true;
    o.indexer = false;
    start(o);
  }
};

TEST_F(Auth, NoTokenOrABadTokenIsUnauthorized) {
  auto none = get("/kbs", "");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(error_code(none), "unauthorized");
  EXPECT_EQ(none.header("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(get("/kbs", "qry_0000").status, 401);
  EXPECT_EQ(get("/health", "").status, 200);  // health and the OpenAPI document are public
  EXPECT_EQ(get("/openapi.json", "").status, 200);
}

TEST_F(Auth, ScopesAreOrderedReadWriteAdmin) {
  EXPECT_EQ(get("/kbs", reader).status, 200);
  EXPECT_EQ(send("POST", "/kbs/alpha/search", {{"query", "x"}}, reader).status, 200);
  auto spend =
      send("POST", "/kbs/alpha/documents", {{"filename", "a.md"}, {"content", "x"}}, reader);
  EXPECT_EQ(spend.status, 403);
  EXPECT_EQ(error_code(spend), "forbidden");
  EXPECT_EQ(spend.json["error"]["details"]["required_scope"], "write");
  EXPECT_EQ(send_raw("POST", "/kbs/alpha/reindex", "", "application/json", reader).status, 403);

  EXPECT_EQ(
      send("POST", "/kbs/alpha/documents", {{"filename", "a.md"}, {"content", "x"}}, writer).status,
      201);
  EXPECT_EQ(
      send("PATCH", "/kbs/alpha", {{"settings", {{"chunking.max_tokens", 100}}}}, writer).status,
      403);
  EXPECT_EQ(send("POST", "/kbs", {{"name", "gamma"}}, writer).status, 403);
  EXPECT_EQ(get("/tokens", writer).status, 403);
  EXPECT_EQ(get("/activity", reader).status, 403);
  EXPECT_EQ(send("POST", "/kbs", {{"name", "gamma"}}, admin).status, 201);
}

TEST_F(Auth, AKbLimitedTokenCannotTellWhetherAnotherKbExists) {
  auto exists = get("/kbs/beta", limited);
  auto absent = get("/kbs/no-such-kb", limited);
  EXPECT_EQ(exists.status, 403);
  EXPECT_EQ(absent.status, 403);
  // Same body but for the name the caller sent itself.
  EXPECT_EQ(exists.json["error"]["code"], absent.json["error"]["code"]);
  EXPECT_EQ(exists.json["error"]["details"].size(), absent.json["error"]["details"].size());
  EXPECT_EQ(send("POST", "/kbs/beta/search", {{"query", "secrets"}}, limited).status, 403);
  EXPECT_EQ(send("POST", "/kbs/beta/grep", {{"pattern", "secrets"}}, limited).status, 403);
  auto list = get("/kbs", limited);
  ASSERT_EQ(list.json["kbs"].size(), 1u);
  EXPECT_EQ(list.json["kbs"][0]["name"], "alpha");
  auto status = get("/status", limited);
  ASSERT_EQ(status.json["kbs"].size(), 1u);
  EXPECT_EQ(get("/kbs/alpha", limited).status, 200);
}

TEST_F(Auth, TokensAreManagedAndRevokedOverRest) {
  auto made = send("POST", "/tokens", {{"name", "ci"}, {"scope", "read"}}, admin);
  ASSERT_EQ(made.status, 201) << made.body;
  std::string secret = made.json["secret"];
  std::string id = made.json["token"]["id"];
  EXPECT_EQ(secret.rfind("qry_", 0), 0u);
  EXPECT_EQ(get("/kbs", secret).status, 200);

  auto list = get("/tokens", admin);
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.body.find(secret), std::string::npos) << "a listed token shows its secret";
  EXPECT_EQ(list.body.find(admin), std::string::npos);

  EXPECT_EQ(send("DELETE", "/tokens/" + id, json::object(), admin).status, 200);
  EXPECT_EQ(get("/kbs", secret).status, 401);
  EXPECT_EQ(send("DELETE", "/tokens/" + id, json::object(), admin).status, 404);
  EXPECT_EQ(send("POST", "/tokens", {{"name", "x"}, {"scope", "root"}}, admin).status, 400);

  // Writes are audited with the token that made them, never its secret.
  send("POST", "/kbs/alpha/documents", {{"filename", "w.md"}, {"content", "audited"}}, writer);
  auto log = get("/activity?limit=50", admin);
  ASSERT_EQ(log.status, 200);
  bool found = false;
  for (const auto& e : log.json["entries"])
    if (e["action"] == "document.add" && e["surface"] == "rest")
      found = found || e["actor"].get<std::string>().rfind("token:", 0) == 0;
  EXPECT_TRUE(found) << log.body;
  for (const auto& s : {admin, reader, writer, limited, secret})
    EXPECT_EQ(log.body.find(s), std::string::npos);
}

TEST(ServeBind, ANonLoopbackAddressNeedsTokens) {
  TempDir dir;
  EngineOptions eo;
  eo.data_dir = (dir / "data").string();
  server::ServeOptions o;
  o.host = "0.0.0.0";
  o.port = 0;
  o.indexer = false;
  try {
    server::HttpServer::bind(eo, o);
    ADD_FAILURE() << "bound 0.0.0.0 without any token";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_NE(e.message().find("token create"), std::string::npos);
  }
  EXPECT_TRUE(server::is_loopback_host("127.0.0.1"));
  EXPECT_TRUE(server::is_loopback_host("127.1.2.3"));
  EXPECT_TRUE(server::is_loopback_host("::1"));
  EXPECT_FALSE(server::is_loopback_host("0.0.0.0"));
  EXPECT_FALSE(server::is_loopback_host("10.0.0.1"));
}

// An API key in the secret store is used (the upstream sees it) but never shows in any answer,
// even when the upstream echoes it back in an error.
TEST_F(Auth, SecretsNeverAppearInResponses) {
  const std::string key = "sk-live-TOPSECRET-1234567890";
  secrets::SecretStore(data).set("EMBED_KEY", key);
  FakeEmbedServer upstream(8);
  for (int i = 0; i < 20; ++i)
    upstream.push(Reply::status_body(
        401, R"({"error": {"message": "Incorrect API key provided: )" + key + R"("}})"));
  const json cfg = paid_kb_config(upstream);
  auto made = send("POST", "/kbs", {{"name", "paid"}, {"config", cfg}}, admin);
  ASSERT_EQ(made.status, 201) << made.body;
  send("POST", "/kbs/paid/documents", {{"filename", "a.md"}, {"content", "hello world"}}, writer);
  std::vector<HttpResult> answers = {
      made,
      get("/kbs/paid", admin),
      send("POST", "/kbs/paid/search", {{"query", "hello"}, {"mode", "vector"}}, reader),
      send("POST", "/kbs/paid/search", {{"query", "hello"}, {"mode", "hybrid"}}, reader),
      get("/status", admin),
      get("/activity?limit=100", admin),
      get("/tokens", admin),
  };
  ASSERT_GE(upstream.requests(), 1) << "the provider was never called";
  EXPECT_EQ(upstream.auth_headers().front(), "Bearer " + key);
  for (const auto& a : answers) EXPECT_EQ(a.body.find("TOPSECRET"), std::string::npos) << a.body;
  auto metrics = client().Get("/api/v1/metrics", headers(admin));
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body.find("TOPSECRET"), std::string::npos);
}

TEST_F(Auth, MeSaysWhoTheCallerIsAndWhatItMayDo) {
  auto r = get("/me", reader);
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.json["scope"], "read");
  EXPECT_FALSE(r.json["anonymous"].get<bool>());
  EXPECT_EQ(r.json["actor"], "token:" + r.json["token_id"].get<std::string>());
  EXPECT_EQ(r.json["can"], json({{"read", true}, {"write", false}, {"admin", false}}));
  EXPECT_TRUE(r.json["kbs"].empty());
  auto w = get("/me", writer);
  EXPECT_EQ(w.json["can"], json({{"read", true}, {"write", true}, {"admin", false}}));
  auto l = get("/me", limited);
  EXPECT_EQ(l.json["kbs"], json::array({"alpha"}));
  EXPECT_EQ(get("/me", admin).json["can"]["admin"], true);
  EXPECT_NE(r.json["token_id"], w.json["token_id"]);
  EXPECT_EQ(get("/me", "").status, 401);  // --require-token: no anonymous caller
}

TEST_F(Auth, AnAdminWritesSecretsOverRestThatProvidersUseAndNoRouteReturns) {
  const std::string key = "sk-live-RESTSECRET-42";
  auto put = send("PUT", "/secrets/EMBED_KEY", {{"value", key}}, admin);
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(put.json, json({{"name", "EMBED_KEY"}, {"stored", true}}));
  // Only an admin for every KB; bad names and bodies are named errors.
  EXPECT_EQ(send("PUT", "/secrets/X", {{"value", "v"}}, writer).status, 403);
  auto limited_admin = engine()->create_token("alpha-admin", "admin", {"alpha"}).secret;
  EXPECT_EQ(send("PUT", "/secrets/X", {{"value", "v"}}, limited_admin).status, 403);
  auto bad_name = send("PUT", "/secrets/pg-dsn", {{"value", "v"}}, admin);
  EXPECT_EQ(bad_name.status, 400);
  EXPECT_EQ(bad_name.json["error"]["details"]["field"], "name");
  EXPECT_EQ(send("PUT", "/secrets/X", {{"value", ""}}, admin).status, 400);
  EXPECT_EQ(send("PUT", "/secrets/X", {{"val", "v"}}, admin).status, 400);
  auto names = get("/secrets", admin);
  ASSERT_EQ(names.status, 200);
  EXPECT_EQ(names.json["secrets"], json::array({"EMBED_KEY"}));
  EXPECT_EQ(names.body.find("RESTSECRET"), std::string::npos);

  // The provider gets it.
  FakeEmbedServer upstream(8);
  const json cfg = paid_kb_config(upstream);
  ASSERT_EQ(send("POST", "/kbs", {{"name", "paid"}, {"config", cfg}}, admin).status, 201);
  send("POST", "/kbs/paid/search", {{"query", "hello"}, {"mode", "vector"}}, reader);
  ASSERT_GE(upstream.requests(), 1);
  EXPECT_EQ(upstream.auth_headers().front(), "Bearer " + key);

  auto gone = send("DELETE", "/secrets/EMBED_KEY", json::object(), admin);
  EXPECT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(send("DELETE", "/secrets/EMBED_KEY", json::object(), admin).status, 404);
  EXPECT_TRUE(get("/secrets", admin).json["secrets"].empty());
}

}  // namespace
}  // namespace quarry::testing
