// An McpServer over a real data directory (a temporary one with KBs created through the
// library), and helpers that send it JSON-RPC messages as a client would. The transports are
// exercised end to end by tests/js/ with the official SDK; these tests pin the protocol rules
// and the permission checks message by message.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "server/mcp.h"
#include "test_util.h"

namespace quarry::testing {

class McpTest : public ::testing::Test {
 protected:
  TempDir dir;
  std::unique_ptr<server::EnginePool> pool;
  std::unique_ptr<server::McpServer> mcp;
  server::Principal admin{"local", server::Scope::admin, {}};
  int next_id = 1;

  void SetUp() override {
    EngineOptions eo;
    eo.data_dir = (dir / "data").string();
    eo.surface = "mcp";
    pool = std::make_unique<server::EnginePool>(eo, 2);
    auto e = pool->acquire("test", "library");
    e->create_kb("notes", "{}");
    e->create_kb("other", "{}");
    e->ingest_bytes("notes", "a.md", "# A\n\nThe quokka smiles.\n", {});
    start({});
  }

  void start(server::McpOptions o) { mcp = std::make_unique<server::McpServer>(*pool, o); }

  nlohmann::json request(const std::string& method, const nlohmann::json& params,
                         const server::Principal& who) {
    nlohmann::json msg = {{"jsonrpc", "2.0"}, {"id", next_id++}, {"method", method}};
    if (!params.is_null()) msg["params"] = params;
    auto r = mcp->handle(msg, who);
    EXPECT_TRUE(r.has_value()) << msg.dump();
    return r ? *r : nlohmann::json();
  }
  nlohmann::json request(const std::string& method, const nlohmann::json& params = nullptr) {
    return request(method, params, admin);
  }

  // tools/call -> the CallToolResult.
  nlohmann::json tool(const std::string& name, const nlohmann::json& args,
                      const server::Principal& who) {
    auto r = request("tools/call", {{"name", name}, {"arguments", args}}, who);
    EXPECT_TRUE(r.contains("result")) << r.dump();
    return r["result"];
  }
  nlohmann::json tool(const std::string& name, const nlohmann::json& args) {
    return tool(name, args, admin);
  }

  // The stable code of a tool error ("" when the call succeeded).
  static std::string error_code(const nlohmann::json& result) {
    if (!result.value("isError", false)) return "";
    return result["structuredContent"]["error"]["code"].get<std::string>();
  }
};

}  // namespace quarry::testing
