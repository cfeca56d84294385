// One request, three surfaces, one answer (issue 22, point 3). The same data directory is searched
// through REST (a real HTTP server on 127.0.0.1), MCP (the protocol core, as both transports call
// it) and the CLI binary (`quarry --json`); every surface decodes the request with the one codec
// (src/wire/requests.h), so the hits, the mode that answered and the degraded reasons must be
// equal, with and without the optional fields (the defaults: mode auto, top_k 10, max_matches
// 1000), and a request out of bounds must be refused by all three with the same code and field.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "e2e/cli_runner.h"
#include "numbered.h"
#include "server/mcp.h"
#include "server_fixture.h"

namespace quarry::testing {
using quarry::testing::numbered;
namespace {

using nlohmann::json;

// A response without the one field that differs between two runs of the same request.
json comparable(json response) {
  if (response.is_object()) response.erase("took_ms");
  return response;
}

// Where two answers differ ("" when they are the same answer). Scores are compared to 1e-9: the
// CLI runs in a fresh process while REST and MCP share a warm one, and the keyword ranking's
// floating-point sums may round in the last bits differently there (that is the engine's, not a
// surface's, business). Everything else (ids, order, text, mode, degraded) must be equal.
std::string difference(const json& a, const json& b, const std::string& path = "") {
  auto differ = [&] {
    return path + ": " + a.dump().substr(0, 300) + " vs " + b.dump().substr(0, 300);
  };
  if (a.is_number() && b.is_number()) {  // 3 parsed (unsigned) and 3 built (signed) are equal
    if (!a.is_number_float() && !b.is_number_float()) return a == b ? "" : differ();
    const double x = a.get<double>(), y = b.get<double>();
    return std::abs(x - y) <= 1e-9 * std::max(1.0, std::abs(x)) ? "" : differ();
  }
  if (a.type() != b.type() || a.size() != b.size()) return differ();
  if (a.is_object()) {
    for (const auto& [k, v] : a.items()) {
      if (!b.contains(k)) return path + "/" + k + ": missing";
      if (auto d = difference(v, b[k], path + "/" + k); !d.empty()) return d;
    }
    return "";
  }
  if (a.is_array()) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (auto d = difference(a[i], b[i], path + numbered("/", i)); !d.empty()) return d;
    return "";
  }
  return a == b ? "" : differ();
}

// The CLI flags of a request object (the same fields the codec reads, by their flag names).
std::vector<std::string> search_args(const std::string& kb, const json& body) {
  std::vector<std::string> a = {"search", body["query"].get<std::string>(), "--kb", kb};
  if (body.contains("mode")) a.insert(a.end(), {"--mode", body["mode"].get<std::string>()});
  if (body.contains("top_k"))
    a.insert(a.end(), {"--top-k", std::to_string(body["top_k"].get<int>())});
  if (body.contains("filter")) a.insert(a.end(), {"--filter", body["filter"].dump()});
  if (body.contains("fusion")) a.insert(a.end(), {"--fusion", body["fusion"].get<std::string>()});
  return a;
}

std::vector<std::string> grep_args(const std::string& kb, const json& body) {
  std::vector<std::string> a = {"grep", body["pattern"].get<std::string>(), "--kb", kb};
  if (body.value("ignore_case", false)) a.push_back("-i");
  if (body.value("literal", false)) a.push_back("-F");
  if (body.contains("context"))
    a.insert(a.end(), {"-C", std::to_string(body["context"].get<int>())});
  if (body.contains("max_matches"))
    a.insert(a.end(), {"-m", std::to_string(body["max_matches"].get<int>())});
  if (body.contains("filter")) a.insert(a.end(), {"--filter", body["filter"].dump()});
  return a;
}

class SurfaceParity : public ServerTest {
 protected:
  std::unique_ptr<server::EnginePool> pool;
  std::unique_ptr<server::McpServer> mcp;
  std::unique_ptr<e2e::Cli> cli;

  void SetUp() override {
    auto e = engine();
    e->create_kb("plain", "{}");  // no embedder: auto answers by keyword and says so
    e->create_kb("emb", R"({"embedder": {"provider": "hash:64"}})");  // auto is hybrid
    for (const char* kb : {"plain", "emb"}) {
      for (int i = 0; i < 14; ++i) {
        std::string body = numbered("# Note ", i) + "\n\n";
        for (int j = 0; j <= i % 5; ++j) body += "the grey heron waits by the lake. ";
        body += numbered("\n\nHerons nest in colonies; note ", i) + " of many.\n";
        e->ingest_bytes(kb, numbered("n", i) + ".md", body, {});
        IngestOptions tagged;
        tagged.metadata_json = json{{"shore", i % 2 ? "north" : "south"}}.dump();
        e->ingest_bytes(kb, numbered("t", i) + ".md",
                        numbered("# Tagged ", i) + "\n\nA heron on the " +
                            (i % 2 ? "north" : "south") + " shore.\n",
                        tagged);
      }
    }
    ASSERT_EQ(e->reindex("emb", {}).pending, 0);  // every vector built: hybrid is not degraded
    server::ServeOptions o;
    o.indexer = false;  // nothing changes the data directory while the surfaces are compared
    o.pump = false;
    start(o);
    EngineOptions eo;
    eo.data_dir = data;
    pool = std::make_unique<server::EnginePool>(eo, 2);
    mcp = std::make_unique<server::McpServer>(*pool, server::McpOptions{});
    cli = std::make_unique<e2e::Cli>(dir);
  }

  // The MCP tool's structured result (its error envelope when the call failed).
  json mcp_call(const std::string& tool, const std::string& kb, json args) {
    args["kb"] = kb;
    json msg = {{"jsonrpc", "2.0"},
                {"id", 1},
                {"method", "tools/call"},
                {"params", {{"name", tool}, {"arguments", args}}}};
    auto r = mcp->handle(msg, server::Principal{"local", server::Scope::admin, {}});
    EXPECT_TRUE(r && r->contains("result")) << (r ? r->dump() : "no reply");
    return r ? (*r)["result"]["structuredContent"] : json();
  }

  struct Answers {
    HttpResult rest;
    json mcp;
    e2e::RunResult cli;
  };

  Answers ask(const std::string& kind, const std::string& kb, const json& body) {
    Answers a;
    a.rest = send("POST", "/kbs/" + kb + "/" + kind, body);
    a.mcp = mcp_call(kind, kb, body);
    a.cli = cli->json(kind == "search" ? search_args(kb, body) : grep_args(kb, body));
    return a;
  }

  // All three answered, and answered the same.
  json expect_same(const std::string& kind, const std::string& kb, const json& body) {
    SCOPED_TRACE(kind + " on " + kb + ": " + body.dump());
    Answers a = ask(kind, kb, body);
    EXPECT_EQ(a.rest.status, 200) << a.rest.body;
    EXPECT_EQ(a.cli.status, 0) << a.cli.out << a.cli.err;
    EXPECT_FALSE(a.mcp.contains("error")) << a.mcp.dump();
    EXPECT_EQ(difference(comparable(a.rest.json), comparable(a.mcp)), "") << "REST vs MCP";
    EXPECT_EQ(difference(comparable(a.rest.json), comparable(a.cli.json)), "") << "REST vs CLI";
    return a.rest.json;
  }

  // All three refused it with the same code and the same field.
  void expect_same_refusal(const std::string& kind, const std::string& kb, const json& body,
                           const std::string& field) {
    SCOPED_TRACE(kind + " on " + kb + ": " + body.dump());
    Answers a = ask(kind, kb, body);
    EXPECT_EQ(a.rest.status, 400) << a.rest.body;
    EXPECT_EQ(a.cli.status, exit_status(Code::invalid_argument)) << a.cli.out << a.cli.err;
    for (const json& envelope : {a.rest.json, a.mcp, a.cli.json}) {
      ASSERT_TRUE(envelope.contains("error")) << envelope.dump();
      EXPECT_EQ(envelope["error"]["code"], "invalid_argument") << envelope.dump();
      EXPECT_EQ(envelope["error"]["details"]["field"], field) << envelope.dump();
    }
  }
};

TEST_F(SurfaceParity, TheDefaultModeIsAutoOnEverySurface) {
  // No embedder: auto answers by keyword and says why, the same way everywhere.
  json plain = expect_same("search", "plain", {{"query", "heron"}});
  EXPECT_EQ(plain["mode"], "keyword");
  ASSERT_EQ(plain["degraded"].size(), 1u);
  EXPECT_EQ(plain["degraded"][0].get<std::string>().rfind("no_embedder:", 0), 0u);
  EXPECT_EQ(plain["hits"].size(), 10u);  // top_k's default

  // With a working embedder, auto is hybrid (fused hits and both labelled lists), undegraded.
  json emb = expect_same("search", "emb", {{"query", "heron"}});
  EXPECT_EQ(emb["mode"], "hybrid");
  EXPECT_TRUE(emb["degraded"].empty());
  EXPECT_TRUE(emb["per_mode"].contains("keyword"));
  EXPECT_TRUE(emb["per_mode"].contains("vector"));
  EXPECT_EQ(emb["hits"].size(), 10u);

  // Naming auto is the same request as naming nothing.
  EXPECT_EQ(
      difference(comparable(emb),
                 comparable(expect_same("search", "emb", {{"query", "heron"}, {"mode", "auto"}}))),
      "");
}

TEST_F(SurfaceParity, EveryFieldMeansTheSameEverywhere) {
  json kw =
      expect_same("search", "emb", {{"query", "heron lake"}, {"mode", "keyword"}, {"top_k", 3}});
  EXPECT_EQ(kw["mode"], "keyword");
  EXPECT_EQ(kw["hits"].size(), 3u);
  json vec = expect_same("search", "emb", {{"query", "heron"}, {"mode", "vector"}, {"top_k", 4}});
  EXPECT_EQ(vec["mode"], "vector");
  json rrf = expect_same("search", "emb",
                         {{"query", "heron colonies"}, {"mode", "hybrid"}, {"fusion", "rrf"}});
  EXPECT_EQ(rrf["hits"][0]["metric"], "rrf");
  json north =
      expect_same("search", "plain",
                  {{"query", "heron"}, {"mode", "keyword"}, {"filter", {{"shore", "north"}}}});
  ASSERT_FALSE(north["hits"].empty());
  for (const auto& h : north["hits"]) EXPECT_EQ(h["metadata"]["shore"], "north");
  // Hybrid on a KB without an embedder degrades to keyword on every surface alike.
  json degraded = expect_same("search", "plain", {{"query", "heron"}, {"mode", "hybrid"}});
  EXPECT_EQ(degraded["mode"], "keyword");
  EXPECT_EQ(degraded["degraded"].size(), 1u);
}

TEST_F(SurfaceParity, GrepAnswersAlikeWithItsDefaultsAndItsOptions) {
  // One lower-case "heron" line in each of the 28 documents, all returned under the default bound.
  json all = expect_same("grep", "plain", {{"pattern", "heron"}});
  EXPECT_EQ(all["matches"].size(), 28u);
  EXPECT_FALSE(all["truncated"]);
  json some = expect_same(
      "grep", "emb",
      {{"pattern", "HERONS? NEST"}, {"ignore_case", true}, {"context", 1}, {"max_matches", 5}});
  EXPECT_EQ(some["matches"].size(), 5u);
  EXPECT_TRUE(some["truncated"]);
  EXPECT_EQ(some["matches"][0]["before"].size(), 1u);
  expect_same("grep", "plain",
              {{"pattern", "shore."}, {"literal", true}, {"filter", {{"shore", "south"}}}});
}

TEST_F(SurfaceParity, TheSameBoundsAreRefusedEverywhere) {
  expect_same_refusal("search", "plain", {{"query", "heron"}, {"top_k", 0}}, "top_k");
  expect_same_refusal("search", "plain", {{"query", "heron"}, {"top_k", 1001}}, "top_k");
  expect_same_refusal("search", "plain", {{"query", "heron"}, {"filter", {1, 2}}}, "filter");
  expect_same_refusal("grep", "plain", {{"pattern", "heron"}, {"context", 101}}, "context");
  expect_same_refusal("grep", "plain", {{"pattern", "heron"}, {"max_matches", 100001}},
                      "max_matches");
  // The old MCP bounds (context up to 50, max_matches up to 10000) were narrower: now accepted.
  expect_same("grep", "plain", {{"pattern", "heron"}, {"context", 60}, {"max_matches", 20000}});
}

}  // namespace
}  // namespace quarry::testing
