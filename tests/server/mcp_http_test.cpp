// The streamable HTTP rules of handle_http, request by request: sessions, 202 for
// notifications, 405 for GET, Origin and MCP-Protocol-Version checks.
#include <map>

#include "mcp_fixture.h"

namespace quarry::testing {
using nlohmann::json;

class McpHttpTest : public McpTest {
 protected:
  std::map<std::string, std::string> headers;

  server::McpHttpReply send(const std::string& method, const json& body = nullptr,
                            const server::Principal* who = nullptr) {
    auto header = [this](const std::string& name) {
      auto it = headers.find(name);
      return it == headers.end() ? std::string() : it->second;
    };
    return server::handle_http(*mcp, method, body.is_null() ? "" : body.dump(), header,
                               who ? *who : admin);
  }
  static std::string header(const server::McpHttpReply& r, const std::string& name) {
    for (const auto& [k, v] : r.headers)
      if (k == name) return v;
    return "";
  }
  json initialize() {
    return {{"jsonrpc", "2.0"},
            {"id", 1},
            {"method", "initialize"},
            {"params", {{"protocolVersion", "2025-06-18"}}}};
  }
};

TEST_F(McpHttpTest, InitializeOpensASessionThatDeleteEnds) {
  auto init = send("POST", initialize());
  EXPECT_EQ(init.status, 200);
  EXPECT_EQ(init.content_type, "application/json");
  const std::string sid = header(init, "Mcp-Session-Id");
  ASSERT_EQ(sid.size(), 32u);
  headers["Mcp-Session-Id"] = sid;
  EXPECT_EQ(send("POST", {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}).status,
            202);
  EXPECT_EQ(send("POST", {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}).status, 200);
  EXPECT_EQ(send("DELETE").status, 204);
  EXPECT_EQ(send("POST", {{"jsonrpc", "2.0"}, {"id", 3}, {"method", "ping"}}).status, 404);
  EXPECT_EQ(send("DELETE").status, 404);
  headers.clear();
  EXPECT_EQ(send("POST", {{"jsonrpc", "2.0"}, {"id", 4}, {"method", "ping"}}).status, 200);
  EXPECT_EQ(send("DELETE").status, 400);
}

TEST_F(McpHttpTest, ASessionBelongsToTheCallerThatOpenedIt) {
  headers["Mcp-Session-Id"] = header(send("POST", initialize()), "Mcp-Session-Id");
  server::Principal other{"token:other", server::Scope::read, {}};
  EXPECT_EQ(send("POST", {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}, &other).status, 404);
  EXPECT_EQ(send("POST", {{"jsonrpc", "2.0"}, {"id", 2}, {"method", "ping"}}).status, 200);
}

TEST_F(McpHttpTest, GetIs405WithAllow) {
  auto r = send("GET");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(header(r, "Allow"), "POST, DELETE");
}

TEST_F(McpHttpTest, OnlyLoopbackOriginsAreAccepted) {
  for (const char* ok : {"http://localhost", "http://localhost:5173", "https://127.0.0.1:7720",
                         "http://[::1]:80", "http://127.1.2.3"}) {
    headers["Origin"] = ok;
    EXPECT_EQ(send("POST", initialize()).status, 200) << ok;
  }
  for (const char* bad : {"http://evil.example", "http://localhost.evil.example",
                          "http://127.0.0.1.evil.example", "null", "file://", "http://[::1]x"}) {
    headers["Origin"] = bad;
    auto r = send("POST", initialize());
    EXPECT_EQ(r.status, 403) << bad;
    EXPECT_EQ(json::parse(r.body)["error"]["data"]["code"], "forbidden");
  }
}

TEST_F(McpHttpTest, ProtocolVersionHeaderMustBeSupported) {
  headers["MCP-Protocol-Version"] = "2025-06-18";
  EXPECT_EQ(send("POST", {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}}).status, 200);
  headers["MCP-Protocol-Version"] = "1999-01-01";
  EXPECT_EQ(send("POST", {{"jsonrpc", "2.0"}, {"id", 1}, {"method", "ping"}}).status, 400);
}

TEST_F(McpHttpTest, BadBodiesAreRefused) {
  auto header = [](const std::string&) { return std::string(); };
  auto r = server::handle_http(*mcp, "POST", "{not json", header, admin);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(json::parse(r.body)["error"]["code"], -32700);
  headers["Content-Type"] = "text/plain";
  EXPECT_EQ(send("POST", initialize()).status, 415);
  headers["Content-Type"] = "application/json; charset=utf-8";
  EXPECT_EQ(send("POST", initialize()).status, 200);
}

}  // namespace quarry::testing
