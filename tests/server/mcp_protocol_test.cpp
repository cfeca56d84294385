// The MCP protocol core: JSON-RPC framing, version negotiation, tool errors versus protocol
// errors, permissions before lookups, resources.
#include <set>

#include "mcp_fixture.h"
#include "numbered.h"

namespace quarry::testing {
using nlohmann::json;
using quarry::testing::numbered;
using server::Principal;
using server::Scope;

TEST_F(McpTest, NegotiatesTheClientsVersionWhenSupportedElseTheNewest) {
  for (const char* v : {"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"})
    EXPECT_EQ(request("initialize", {{"protocolVersion", v}})["result"]["protocolVersion"], v);
  auto r = request("initialize", {{"protocolVersion", "2099-01-01"}})["result"];
  EXPECT_EQ(r["protocolVersion"], "2025-11-25");
  EXPECT_EQ(r["serverInfo"]["name"], "quarry");
  EXPECT_EQ(r["serverInfo"]["version"], "0.1.0");
  EXPECT_TRUE(r["capabilities"].contains("tools"));
  EXPECT_TRUE(r["capabilities"].contains("resources"));
  EXPECT_NE(r["instructions"].get<std::string>().find("list_knowledge_bases"), std::string::npos);
}

TEST_F(McpTest, NotificationsAndResponsesGetNoAnswer) {
  EXPECT_FALSE(mcp->handle({{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}}, admin));
  EXPECT_FALSE(mcp->handle({{"jsonrpc", "2.0"}, {"id", 7}, {"result", json::object()}}, admin));
}

TEST_F(McpTest, MalformedMessagesAreJsonRpcErrors) {
  EXPECT_EQ((*mcp->handle(json::array({1}), admin))["error"]["code"], -32600);
  EXPECT_EQ(
      (*mcp->handle({{"jsonrpc", "1.0"}, {"id", 1}, {"method", "ping"}}, admin))["error"]["code"],
      -32600);
  EXPECT_EQ(
      (*mcp->handle({{"jsonrpc", "2.0"}, {"id", 1.5}, {"method", "ping"}}, admin))["error"]["code"],
      -32600);
  EXPECT_EQ((*mcp->handle({{"jsonrpc", 2}, {"id", 1}, {"method", "ping"}}, admin))["error"]["code"],
            -32600);
  EXPECT_EQ(request("initialize", {{"protocolVersion", 5}})["result"]["protocolVersion"],
            "2025-11-25");
  EXPECT_EQ(request("no/such/method")["error"]["code"], -32601);
  EXPECT_EQ(request("tools/call", {{"name", "no_such_tool"}})["error"]["code"], -32602);
  EXPECT_EQ(request("tools/call", {{"arguments", json::object()}})["error"]["code"], -32602);
  EXPECT_EQ(
      request("tools/call", {{"name", "search"}, {"arguments", json::array()}})["error"]["code"],
      -32602);
}

TEST_F(McpTest, BatchesAnswerEachRequestInOrder) {
  json batch = json::array({{{"jsonrpc", "2.0"}, {"id", "x"}, {"method", "ping"}},
                            {{"jsonrpc", "2.0"}, {"method", "notifications/initialized"}},
                            {{"jsonrpc", "2.0"}, {"id", "y"}, {"method", "tools/list"}}});
  auto r = mcp->handle_payload(batch, admin);
  ASSERT_TRUE(r && r->is_array());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ((*r)[0]["id"], "x");
  EXPECT_EQ((*r)[1]["id"], "y");
  EXPECT_EQ((*mcp->handle_payload(json::array(), admin))["error"]["code"], -32600);
}

TEST_F(McpTest, ToolsListHasSchemasAndHidesWritesWhenReadOnly) {
  auto tools = request("tools/list")["result"]["tools"];
  EXPECT_EQ(tools.size(), 9u);
  for (const auto& t : tools) {
    EXPECT_EQ(t["inputSchema"]["type"], "object") << t["name"];
    EXPECT_EQ(t["outputSchema"]["type"], "object") << t["name"];
  }
  server::McpOptions ro;
  ro.read_only = true;
  start(ro);
  tools = request("tools/list")["result"]["tools"];
  EXPECT_EQ(tools.size(), 6u);
  EXPECT_EQ(request("tools/call", {{"name", "add_document"}})["error"]["code"], -32602);
}

TEST_F(McpTest, EngineErrorsAreToolErrorsWithStableCodes) {
  auto r = tool("search", {{"kb", "nope"}, {"query", "x"}});
  EXPECT_EQ(error_code(r), "not_found");
  EXPECT_EQ(r["content"][0]["text"].get<std::string>().rfind("error[not_found]: ", 0), 0u);
  EXPECT_EQ(error_code(tool("search", {{"kb", "notes"}, {"query", "x"}, {"topk", 3}})),
            "invalid_argument");
  EXPECT_EQ(error_code(tool("search", {{"kb", "notes"}, {"query", "x"}, {"top_k", 1.5}})),
            "invalid_argument");
  EXPECT_EQ(error_code(tool("search", {{"query", "x"}})), "invalid_argument");
  EXPECT_EQ(error_code(tool("list_documents", {{"kb", "notes"}, {"filter", "x"}})),
            "invalid_argument");
}

// What FTS5 refuses in an advanced query, and filters at the validator's limits, are tool
// results like any other: invalid_argument for the query, hits for the filter (once a 500-like
// internal error: "catalog error: step: unknown special query", "Expression tree is too large").
TEST_F(McpTest, AdvancedQueriesAndLargeFiltersNeverFailAsInternal) {
  auto bad = tool("search", {{"kb", "notes"}, {"query", "*"}, {"advanced", true}});
  EXPECT_EQ(error_code(bad), "invalid_argument") << bad.dump();
  EXPECT_EQ(bad["content"][0]["text"].get<std::string>().find("catalog error"), std::string::npos);
  nlohmann::json ors = nlohmann::json::array();
  for (int i = 0; i < 600; ++i) ors.push_back({{"n", i}});
  ors.push_back({{"n", {{"$exists", false}}}});
  auto ok = tool("search", {{"kb", "notes"}, {"query", "quokka"}, {"filter", {{"$or", ors}}}});
  EXPECT_EQ(error_code(ok), "") << ok.dump();
  auto g = tool("grep", {{"kb", "notes"}, {"pattern", "quokka"}, {"filter", {{"$or", ors}}}});
  EXPECT_EQ(error_code(g), "") << g.dump();
}

TEST_F(McpTest, PermissionComesBeforeTheLookup) {
  Principal reader{"token:r", Scope::read, {"notes"}};
  EXPECT_EQ(error_code(tool("search", {{"kb", "notes"}, {"query", "quokka"}}, reader)), "");
  // Another KB is forbidden whether it exists or not: names cannot be enumerated.
  EXPECT_EQ(error_code(tool("search", {{"kb", "other"}, {"query", "x"}}, reader)), "forbidden");
  EXPECT_EQ(error_code(tool("search", {{"kb", "ghost"}, {"query", "x"}}, reader)), "forbidden");
  EXPECT_EQ(error_code(tool("delete_document", {{"kb", "notes"}, {"doc_id", "ghost"}}, reader)),
            "forbidden");
  auto kbs = tool("list_knowledge_bases", json::object(), reader)["structuredContent"];
  ASSERT_EQ(kbs["knowledge_bases"].size(), 1u);
  EXPECT_EQ(kbs["knowledge_bases"][0]["name"], "notes");
  auto res = request("resources/read", {{"uri", "quarry://other/x"}}, reader);
  EXPECT_EQ(res["error"]["data"]["code"], "forbidden");
}

TEST_F(McpTest, ServerKbDefaultsTheArgumentAndRefusesOthers) {
  server::McpOptions one;
  one.kb = "notes";
  start(one);
  auto hits = tool("search", {{"query", "quokka"}, {"mode", "keyword"}})["structuredContent"];
  EXPECT_EQ(hits["kb"], "notes");
  EXPECT_EQ(hits["hits"].size(), 1u);
  EXPECT_EQ(error_code(tool("search", {{"kb", "other"}, {"query", "x"}})), "forbidden");
}

TEST_F(McpTest, WritesCallOnWriteAndAreAuditedAsMcp) {
  std::vector<std::string> poked;
  server::McpOptions o;
  o.on_write = [&](const std::string& kb) { poked.push_back(kb); };
  start(o);
  auto added = tool("add_document", {{"kb", "other"}, {"filename", "b.md"}, {"content", "# B\n"}});
  ASSERT_EQ(error_code(added), "");
  EXPECT_EQ(poked, std::vector<std::string>{"other"});
  auto log = pool->acquire("test", "library")->activity("other", 10);
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log[0].action, "document.add");
  EXPECT_EQ(log[0].surface, "mcp");
  EXPECT_EQ(log[0].actor, "local");
}

TEST_F(McpTest, ReadDocumentRangesAddressTheStoredFile) {
  auto id = tool("list_documents", {{"kb", "notes"}})["structuredContent"]["documents"][0]["id"];
  auto whole = tool("read_document", {{"kb", "notes"}, {"doc_id", id}})["structuredContent"];
  EXPECT_EQ(whole["content"], "# A\n\nThe quokka smiles.\n");
  const int last = whole["total_lines"].get<int>();
  auto line = tool("read_document",
                   {{"kb", "notes"}, {"doc_id", id}, {"start_line", last}, {"end_line", last}});
  EXPECT_EQ(line["structuredContent"]["content"], "The quokka smiles.");
  auto bytes = tool("read_document", {{"kb", "notes"},
                                      {"doc_id", id},
                                      {"offset", whole["offset"]},
                                      {"length", 3}})["structuredContent"];
  EXPECT_EQ(bytes["content"], "# A");
  EXPECT_EQ(
      error_code(tool("read_document", {{"kb", "notes"}, {"doc_id", id}, {"offset", 1 << 20}})),
      "invalid_argument");
}

TEST_F(McpTest, ResourcesListAndRead) {
  auto list = request("resources/list")["result"];
  ASSERT_EQ(list["resources"].size(), 1u);
  const std::string uri = list["resources"][0]["uri"];
  EXPECT_EQ(uri.rfind("quarry://notes/", 0), 0u);
  EXPECT_FALSE(list.contains("nextCursor"));
  auto read = request("resources/read", {{"uri", uri}})["result"];
  EXPECT_EQ(read["contents"][0]["mimeType"], "text/markdown");
  EXPECT_EQ(read["contents"][0]["text"], "# A\n\nThe quokka smiles.\n");
  EXPECT_EQ(request("resources/read", {{"uri", "quarry://notes/NOPE"}})["error"]["code"], -32002);
  EXPECT_EQ(request("resources/read", {{"uri", "http://x/y"}})["error"]["code"], -32602);
  EXPECT_EQ(request("resources/list", {{"cursor", "bogus"}})["error"]["code"], -32602);
}

TEST_F(McpTest, ResourcesPageAcrossKnowledgeBases) {
  auto e = pool->acquire("test", "library");
  for (int i = 0; i < 150; ++i)
    e->ingest_bytes("other", numbered("o", i) + ".md", numbered("# O ", i) + "\n", {});
  std::set<std::string> seen;
  json params = json::object();
  for (int pages = 0; pages < 10; ++pages) {
    auto r = request("resources/list", params)["result"];
    for (const auto& res : r["resources"]) EXPECT_TRUE(seen.insert(res["uri"]).second);
    if (!r.contains("nextCursor")) break;
    params["cursor"] = r["nextCursor"];
  }
  EXPECT_EQ(seen.size(), 151u);
}

}  // namespace quarry::testing
