// The REST API over real HTTP (SPEC §9): every route group, the one error envelope and its
// status codes, pagination, multipart and JSON uploads, and the background indexer.
#include <chrono>
#include <mutex>
#include <set>

#include "core/util.h"
#include "quarry/plugin.h"

#include "server_fixture.h"

namespace quarry::testing {
namespace {
using nlohmann::json;

class Rest : public ServerTest {
 protected:
  void SetUp() override {
    server::ServeOptions o;
    o.indexer = true;
    start(o);
  }

  void make_kb(const std::string& name, const json& config = json::object()) {
    auto r = send("POST", "/kbs", {{"name", name}, {"config", config}});
    ASSERT_EQ(r.status, 201) << r.body;
  }

  std::string add(const std::string& kb, const std::string& filename, const std::string& text,
                  const json& metadata = json::object()) {
    auto r = send("POST", "/kbs/" + kb + "/documents",
                  {{"filename", filename}, {"content", text}, {"metadata", metadata}});
    EXPECT_EQ(r.status, 201) << r.body;
    return r.json["items"][0].value("doc_id", "");
  }

  // Polls the KB's status until no vector work is pending (the server's indexer runs it).
  json wait_vectors(const std::string& kb) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    json st;
    while (std::chrono::steady_clock::now() < deadline) {
      st = get("/kbs/" + kb + "/status").json;
      if (st["vectors"]["pending"] == 0 && st["index_status"]["vector"] == "ready") return st;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "vectors never became ready: " << st.dump();
    return st;
  }
};

TEST_F(Rest, HealthAndOpenApiAreServedWithoutAToken) {
  auto h = get("/health");
  EXPECT_EQ(h.status, 200);
  EXPECT_EQ(h.json["status"], "ok");
  auto doc = get("/openapi.json");
  ASSERT_EQ(doc.status, 200);
  auto on_disk = json::parse(read_file(std::string(QUARRY_SOURCE_DIR) + "/docs/openapi.json"));
  EXPECT_EQ(doc.json, on_disk) << "the binary serves a stale docs/openapi.json";
}

TEST_F(Rest, KnowledgeBasesCreateListGetUpdateDelete) {
  make_kb("notes", {{"description", "team notes"}});
  auto dup = send("POST", "/kbs", {{"name", "notes"}});
  EXPECT_EQ(dup.status, 409);
  EXPECT_EQ(error_code(dup), "already_exists");

  auto bad = send("POST", "/kbs", {{"name", "Bad Name!"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(error_code(bad), "invalid_argument");
  auto bad_cfg =
      send("POST", "/kbs", {{"name", "x"}, {"config", {{"chunking", {{"max_tokens", 3}}}}}});
  EXPECT_EQ(bad_cfg.status, 400);
  EXPECT_EQ(bad_cfg.json["error"]["details"]["field"], "chunking.max_tokens") << bad_cfg.body;

  auto list = get("/kbs");
  ASSERT_EQ(list.status, 200);
  ASSERT_EQ(list.json["kbs"].size(), 1u);
  EXPECT_EQ(list.json["kbs"][0]["name"], "notes");
  EXPECT_EQ(list.json["kbs"][0]["description"], "team notes");

  auto missing = get("/kbs/nope");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(error_code(missing), "not_found");

  auto upd = send("PATCH", "/kbs/notes", {{"settings", {{"chunking.max_tokens", 128}}}});
  ASSERT_EQ(upd.status, 200) << upd.body;
  EXPECT_EQ(upd.json["config"]["chunking"]["max_tokens"], 128);
  auto unknown = send("PATCH", "/kbs/notes", {{"settings", {{"chunking.colour", "red"}}}});
  EXPECT_EQ(unknown.status, 400);

  auto del = send("DELETE", "/kbs/notes", json::object());
  EXPECT_EQ(del.status, 200);
  EXPECT_EQ(get("/kbs/notes").status, 404);
}

TEST_F(Rest, DocumentsUploadListGetEditReconvertDelete) {
  make_kb("k");
  std::string a =
      add("k", "alpha.md", "# Alpha\n\nThe heron stands in the reeds.\n", {{"team", "birds"}});
  ASSERT_FALSE(a.empty());
  // The same bytes again: unchanged (200); other bytes under the same name: conflict (409)
  // unless replace.
  auto again =
      send("POST", "/kbs/k/documents",
           {{"filename", "alpha.md"}, {"content", "# Alpha\n\nThe heron stands in the reeds.\n"}});
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.json["items"][0]["status"], "unchanged");
  auto clash = send("POST", "/kbs/k/documents", {{"filename", "alpha.md"}, {"content", "other"}});
  EXPECT_EQ(clash.status, 409) << clash.body;
  EXPECT_EQ(error_code(clash), "conflict");

  // Multipart: two files, metadata as JSON text.
  httplib::MultipartFormDataItems form = {
      {"file", "The otter swims upstream.\n", "otter.txt", "text/plain"},
      {"file", "name,legs\nspider,8\n", "legs.csv", "text/csv"},
      {"metadata", R"({"team": "animals"})", "", ""},
  };
  auto c = client();
  auto mp = result(c.Post("/api/v1/kbs/k/documents", headers(token), form));
  ASSERT_EQ(mp.status, 201) << mp.body;
  EXPECT_EQ(mp.json["added"], 2);

  // Base64 body and a binary that is not a document: one upload, one error envelope.
  auto junk = send("POST", "/kbs/k/documents",
                   {{"filename", "x.pdf"}, {"content_base64", "JVBERi0xLjQKZ2FyYmFnZQ=="}});
  EXPECT_EQ(junk.status, 422) << junk.body;
  auto both = send("POST", "/kbs/k/documents",
                   {{"filename", "y.md"}, {"content", "a"}, {"content_base64", "YQ=="}});
  EXPECT_EQ(both.status, 400);

  // Cursor pagination: three documents, pages of two.
  auto p1 = get("/kbs/k/documents?limit=2");
  ASSERT_EQ(p1.status, 200);
  ASSERT_EQ(p1.json["documents"].size(), 2u);
  ASSERT_TRUE(p1.json["next_cursor"].is_string());
  auto p2 = get("/kbs/k/documents?limit=2&cursor=" + p1.json["next_cursor"].get<std::string>());
  ASSERT_EQ(p2.json["documents"].size(), 1u);
  EXPECT_TRUE(p2.json["next_cursor"].is_null());
  std::set<std::string> ids;
  for (const auto& d : p1.json["documents"]) ids.insert(d["id"]);
  for (const auto& d : p2.json["documents"]) ids.insert(d["id"]);
  EXPECT_EQ(ids.size(), 3u);
  EXPECT_FALSE(p1.json["documents"][0].contains("markdown_path")) << "server paths leak";
  auto filtered =
      get("/kbs/k/documents?filter=" + httplib::detail::encode_query_param(R"({"team":"birds"})"));
  ASSERT_EQ(filtered.json["documents"].size(), 1u) << filtered.body;
  EXPECT_EQ(filtered.json["documents"][0]["id"], a);
  EXPECT_EQ(get("/kbs/k/documents?limit=0").status, 400);

  auto doc = get("/kbs/k/documents/" + a);
  ASSERT_EQ(doc.status, 200);
  EXPECT_NE(doc.json["markdown"].get<std::string>().find("heron"), std::string::npos);
  EXPECT_EQ(doc.json["document"]["index_status"]["keyword"], "ready");
  auto md = client().Get(("/api/v1/kbs/k/documents/" + a + "/markdown").c_str());
  ASSERT_TRUE(md);
  EXPECT_EQ(md->status, 200);
  EXPECT_NE(md->get_header_value("Content-Type").find("text/markdown"), std::string::npos);
  EXPECT_EQ(get("/kbs/k/documents/" + a + "?markdown=false").json.contains("markdown"), false);
  EXPECT_EQ(get("/kbs/k/documents/01ZZZZZZZZZZZZZZZZZZZZZZZZ").status, 404);

  auto edit =
      send("PUT", "/kbs/k/documents/" + a, {{"markdown", "# Alpha\n\nA kingfisher dives.\n"}});
  ASSERT_EQ(edit.status, 200) << edit.body;
  auto hits = send("POST", "/kbs/k/search", {{"query", "kingfisher"}});
  ASSERT_EQ(hits.json["hits"].size(), 1u);
  EXPECT_EQ(hits.json["hits"][0]["doc_id"], a);
  EXPECT_EQ(send("POST", "/kbs/k/search", {{"query", "heron"}}).json["hits"].size(), 0u);

  auto rc = send_raw("POST", "/kbs/k/documents/" + a + "/reconvert", "", "application/json");
  EXPECT_EQ(rc.status, 200) << rc.body;

  auto gone = send("POST", "/kbs/k/documents/delete", {{"filter", {{"team", "animals"}}}});
  ASSERT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(gone.json["deleted"].size(), 2u);
  EXPECT_EQ(send("POST", "/kbs/k/documents/delete", {{"filter", json::object()}}).status, 400);
  EXPECT_EQ(send("DELETE", "/kbs/k/documents/" + a, json::object()).status, 200);
  EXPECT_EQ(get("/kbs/k/documents/" + a).status, 404);
}

// Query parameters are strict: a cursor that is not a next_cursor this API returned and a
// boolean that is not true, false, 1 or 0 are 400 invalid_argument naming the parameter (they
// were accepted with 200: a garbage cursor listed from an arbitrary place).
TEST_F(Rest, ADocumentsChunksCarryOffsetsIntoItsMarkdown) {
  make_kb("k", {{"chunking", {{"max_tokens", 32}, {"overlap_tokens", 0}}}});
  std::string text = "# Guide\n\nIntro paragraph about tides.\n\n## Setup\n\n";
  for (int i = 0; i < 40; ++i) text += "Step " + std::to_string(i) + " installs the ferry. ";
  text += "\n\n## Usage\n\nRun the lighthouse every night.\n";
  const std::string id = add("k", "guide.md", text, {{"team", "ops"}});
  auto r = get("/kbs/k/documents/" + id + "/chunks");
  ASSERT_EQ(r.status, 200) << r.body;
  const json& chunks = r.json["chunks"];
  ASSERT_GE(chunks.size(), 3u) << r.body;
  auto md = client().Get(("/api/v1/kbs/k/documents/" + id + "/markdown").c_str());
  ASSERT_TRUE(md);
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const json& c = chunks[i];
    EXPECT_EQ(c["index"], i);
    const auto at = c["body_offset"].get<std::size_t>();
    const auto len = c["length"].get<std::size_t>();
    ASSERT_LE(at + len, md->body.size()) << c.dump();
    EXPECT_EQ(md->body.substr(at, len), c["text"].get<std::string>()) << c.dump();
    EXPECT_GT(c["offset"].get<std::int64_t>(),
              c["body_offset"].get<std::int64_t>());  // front matter
  }
  // A hit names one of these chunks at the same file offset.
  auto hit = send("POST", "/kbs/k/search", {{"query", "lighthouse"}, {"mode", "keyword"}});
  ASSERT_FALSE(hit.json["hits"].empty()) << hit.body;
  const json& h = hit.json["hits"][0];
  bool found = false;
  for (const auto& c : chunks)
    if (c["chunk_id"] == h["chunk_id"]) {
      found = true;
      EXPECT_EQ(c["offset"], h["offset"]);
      EXPECT_EQ(c["heading_path"], h["heading_path"]);
    }
  EXPECT_TRUE(found) << h.dump();
  EXPECT_EQ(get("/kbs/k/documents/NOPE/chunks").status, 404);
}

TEST_F(Rest, QueryParametersAreStrict) {
  make_kb("k");
  const std::string a = add("k", "a.md", "# A\n\nalpha\n");
  add("k", "b.md", "# B\n\nbravo\n");
  for (const std::string cursor : {"garbage", "01ZZZ", "01m8xz7w5ep9kzcjhhvn74xz6y", "%20"}) {
    auto r = get("/kbs/k/documents?cursor=" + cursor);
    EXPECT_EQ(r.status, 400) << cursor << ": " << r.body;
    EXPECT_EQ(error_code(r), "invalid_argument");
    EXPECT_EQ(r.json["error"]["details"].value("field", ""), "cursor") << r.body;
    EXPECT_NE(r.json["error"].value("message", "").find("next_cursor"), std::string::npos);
  }
  auto first = get("/kbs/k/documents?limit=1");
  ASSERT_TRUE(first.json["next_cursor"].is_string()) << first.body;
  auto next =
      get("/kbs/k/documents?limit=1&cursor=" + first.json["next_cursor"].get<std::string>());
  EXPECT_EQ(next.status, 200) << next.body;
  EXPECT_EQ(next.json["documents"].size(), 1u);
  for (const std::string v : {"maybe", "TRUE", "yes", "", "2"}) {
    auto r = get("/kbs/k/documents/" + a + "?markdown=" + v);
    EXPECT_EQ(r.status, 400) << "markdown=" << v << ": " << r.body;
    EXPECT_EQ(r.json["error"]["details"].value("field", ""), "markdown") << r.body;
  }
  for (const std::string v : {"true", "1"})
    EXPECT_TRUE(get("/kbs/k/documents/" + a + "?markdown=" + v).json.contains("markdown")) << v;
  for (const std::string v : {"false", "0"})
    EXPECT_FALSE(get("/kbs/k/documents/" + a + "?markdown=" + v).json.contains("markdown")) << v;
  EXPECT_EQ(get("/kbs/k/documents?limit=").status, 400);
}

TEST_F(Rest, SearchAndGrepWithFiltersAndValidation) {
  make_kb("k");
  std::string a = add("k", "a.md", "Granite is an igneous rock.\nBasalt too.\n", {{"year", 2020}});
  std::string b = add("k", "b.md", "Granite counters are polished.\n", {{"year", 2024}});

  auto all = send("POST", "/kbs/k/search", {{"query", "granite"}});
  ASSERT_EQ(all.status, 200) << all.body;
  EXPECT_EQ(all.json["hits"].size(), 2u);
  EXPECT_EQ(all.json["index_status"]["keyword"], "ready");
  auto one = send("POST", "/kbs/k/search",
                  {{"query", "granite"}, {"filter", {{"year", {{"$gte", 2022}}}}}, {"top_k", 5}});
  ASSERT_EQ(one.json["hits"].size(), 1u);
  EXPECT_EQ(one.json["hits"][0]["doc_id"], b);
  EXPECT_EQ(send("POST", "/kbs/k/search", {{"query", "granite"}, {"min_score", 1.01}}).status, 400);

  // No embedder: vector is refused with a reason, hybrid degrades to keyword and says so.
  auto vec = send("POST", "/kbs/k/search", {{"query", "granite"}, {"mode", "vector"}});
  EXPECT_EQ(vec.status, 422);
  EXPECT_EQ(error_code(vec), "mode_unavailable");
  auto hyb = send("POST", "/kbs/k/search", {{"query", "granite"}, {"mode", "hybrid"}});
  ASSERT_EQ(hyb.status, 200);
  EXPECT_FALSE(hyb.json["degraded"].empty());

  auto typo = send("POST", "/kbs/k/search", {{"query", "granite"}, {"topk", 3}});
  EXPECT_EQ(typo.status, 400);
  EXPECT_EQ(typo.json["error"]["details"]["field"], "topk");
  EXPECT_EQ(send("POST", "/kbs/k/search", {{"query", "x"}, {"top_k", 0}}).status, 400);
  auto broken = send_raw("POST", "/kbs/k/search", "{\"query\": ", "application/json");
  EXPECT_EQ(broken.status, 400);
  EXPECT_EQ(error_code(broken), "invalid_argument");

  auto g =
      send("POST", "/kbs/k/grep", {{"pattern", "basalt"}, {"ignore_case", true}, {"context", 1}});
  ASSERT_EQ(g.status, 200) << g.body;
  ASSERT_EQ(g.json["matches"].size(), 1u);
  EXPECT_EQ(g.json["matches"][0]["doc_id"], a);
  // Lines count in the stored Markdown file (front matter first).
  const auto& m = g.json["matches"][0];
  EXPECT_EQ(m["text"], "Basalt too.");
  ASSERT_EQ(m["before"].size(), 1u);
  EXPECT_EQ(m["before"][0]["text"], "Granite is an igneous rock.");
  EXPECT_EQ(m["before"][0]["line"], m["line"].get<int>() - 1);
  EXPECT_EQ(send("POST", "/kbs/k/grep", {{"pattern", "("}}).status, 400);
}

TEST_F(Rest, TheIndexerEmbedsUploadsAndReindexReportsProgress) {
  make_kb("v", {{"embedder", {{"provider", "hash:64"}}}});
  std::string a = add("v", "a.md", "Tides follow the moon.\n");
  add("v", "b.md", "Volcanoes erupt lava.\n");
  auto st = wait_vectors("v");
  EXPECT_EQ(st["vectors"]["ready"], 2);
  const auto listing = get("/kbs/v/documents");
  for (const auto& d : listing.json["documents"])
    EXPECT_EQ(d["index_status"]["vector"], "ready") << "a listing shows each document's status";
  auto hits =
      send("POST", "/kbs/v/search", {{"query", "Tides follow the moon"}, {"mode", "vector"}});
  ASSERT_EQ(hits.status, 200) << hits.body;
  ASSERT_FALSE(hits.json["hits"].empty());
  EXPECT_EQ(hits.json["hits"][0]["doc_id"], a);
  EXPECT_EQ(hits.json["index_status"]["vector"], "ready");

  auto started = send_raw("POST", "/kbs/v/reindex", "", "application/json");
  EXPECT_EQ(started.status, 202) << started.body;
  EXPECT_EQ(started.json["kb"], "v");
  // A re-embed with another model: blue-green, then it serves.
  auto upd = send("PATCH", "/kbs/v", {{"settings", {{"embedder.provider", "hash:96"}}}});
  ASSERT_EQ(upd.status, 200) << upd.body;
  wait_vectors("v");
  auto state = get("/kbs/v/reindex");
  ASSERT_EQ(state.status, 200);
  ASSERT_TRUE(state.json["last"].is_object()) << state.body;
  EXPECT_EQ(state.json["last"]["pending"], 0);
  EXPECT_EQ(get("/kbs/nope/reindex").status, 404);

  auto status = get("/status");
  ASSERT_EQ(status.status, 200);
  ASSERT_EQ(status.json["kbs"].size(), 1u);
  EXPECT_EQ(status.json["kbs"][0]["vectors"]["ready"], 2);

  auto metrics = client().Get("/api/v1/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("quarry_documents{kb=\"v\"} 2"), std::string::npos) << metrics->body;
  EXPECT_NE(metrics->body.find("quarry_http_requests_total{route=\"search\",status=\"200\"}"),
            std::string::npos);
}

TEST_F(Rest, PluginsListProvidersAndStoresWithTheirSettings) {
  // An application's plugin registered without a schema is listed, undescribed.
  static std::once_flag once;
  std::call_once(once, [] {
    register_store("rest-undescribed", [](const Settings&, const StoreContext&) {
      return std::unique_ptr<VectorStore>();
    });
  });
  auto r = get("/plugins");
  ASSERT_EQ(r.status, 200) << r.body;
  auto find = [&](const char* kind, const std::string& id) {
    for (const auto& p : r.json[kind])
      if (p["id"] == id) return p;
    ADD_FAILURE() << kind << " " << id << " missing: " << r.body;
    return json();
  };
  auto setting = [](const json& plugin, const std::string& name) {
    for (const auto& s : plugin["settings"])
      if (s["name"] == name) return s;
    ADD_FAILURE() << name << " missing from " << plugin.dump();
    return json();
  };
  for (const char* id : {"static", "bert", "hash", "openai"}) {
    json p = find("providers", id);
    EXPECT_TRUE(p["description"].is_string()) << id;
    EXPECT_TRUE(p["settings"].is_array()) << id;
    EXPECT_TRUE(p["models"].is_array()) << id;
  }
  json hash = find("providers", "hash");
  EXPECT_EQ(setting(hash, "dimensions"),
            (json{{"name", "dimensions"},
                  {"type", "integer"},
                  {"required", false},
                  {"default", 256},
                  {"description", setting(hash, "dimensions")["description"]},
                  {"enum", nullptr}}));
  json glove = find("providers", "static")["models"][0];
  EXPECT_EQ(glove["name"], "glove-100d");
  EXPECT_EQ(glove["dimensions"], 100);
  EXPECT_EQ(glove["default"], true);
  EXPECT_EQ(setting(find("providers", "openai"), "api_key_secret")["type"], "secret-name");
  EXPECT_EQ(setting(find("providers", "openai"), "api")["enum"], (json{"openai", "ollama"}));
  for (const char* id : {"embedded", "memory", "chroma", "qdrant", "pgvector"})
    EXPECT_TRUE(find("stores", id)["settings"].is_array()) << id;
  EXPECT_FALSE(find("stores", "embedded").contains("models"));
  EXPECT_TRUE(setting(find("stores", "pgvector"), "dsn_secret")["required"].get<bool>());
  json undescribed = find("stores", "rest-undescribed");
  EXPECT_TRUE(undescribed["settings"].is_null());
  EXPECT_TRUE(undescribed["description"].is_null());

  // What is listed is what a KB accepts: the embedded store with every listed setting, and the
  // hash provider with its own; a key not listed is refused.
  json store_settings = json::object();
  const json embedded = find("stores", "embedded");  // a local: the loop must not walk a temporary
  for (const auto& s : embedded["settings"])
    store_settings[s["name"].get<std::string>()] = s["default"].is_null() ? json(2) : s["default"];
  json embedder_settings = json::object();
  for (const auto& s : hash["settings"])
    embedder_settings[s["name"].get<std::string>()] = s["default"];
  auto made = send("POST", "/kbs",
                   {{"name", "described"},
                    {"config",
                     {{"embedder", {{"provider", "hash"}, {"settings", embedder_settings}}},
                      {"store", {{"id", "embedded"}, {"settings", store_settings}}}}}});
  EXPECT_EQ(made.status, 201) << made.body;
  // (A store is built, and its settings read, for a KB with an embedder.)
  auto refused = send("POST", "/kbs",
                      {{"name", "refused"},
                       {"config",
                        {{"embedder", {{"provider", "hash"}}},
                         {"store", {{"id", "embedded"}, {"settings", {{"colour", 1}}}}}}}});
  EXPECT_EQ(refused.status, 400) << refused.body;
}

TEST_F(Rest, APatchDryRunSaysWhatItWouldDoAndChangesNothing) {
  make_kb("k", {{"description", "before"}});
  add("k", "a.md", "# A\n\nGranite is an igneous rock.\n");
  add("k", "b.md", "# B\n\nBasalt is volcanic.\n");
  const json before = get("/kbs/k").json;
  const auto activity = [&] { return get("/activity?kb=k").json["entries"].size(); };
  const auto entries = activity();

  auto recut = send("PATCH", "/kbs/k?dry_run=true", {{"settings", {{"chunking.max_tokens", 64}}}});
  ASSERT_EQ(recut.status, 200) << recut.body;
  EXPECT_EQ(recut.json["dry_run"], true);
  EXPECT_EQ(recut.json["config"]["chunking"]["max_tokens"], 64);
  EXPECT_EQ(recut.json["re_cut"], true);
  EXPECT_EQ(recut.json["re_cut_at"], "now");
  EXPECT_EQ(recut.json["re_embed"], false);
  EXPECT_EQ(recut.json["vectors"], "none");
  EXPECT_EQ(recut.json["documents"], 2);
  EXPECT_EQ(recut.json["chunks"], before["chunks"]);
  EXPECT_NE(recut.json["config_revision"]["before"], recut.json["config_revision"]["after"]);
  EXPECT_EQ(recut.json["config_revision"]["before"], before["config_revision"]);

  auto described = send("PATCH", "/kbs/k?dry_run=1", {{"settings", {{"description", "after"}}}});
  ASSERT_EQ(described.status, 200) << described.body;
  EXPECT_EQ(described.json["description"], "after");
  EXPECT_EQ(described.json["re_cut"], false);
  EXPECT_TRUE(described.json["re_cut_at"].is_null());
  EXPECT_EQ(described.json["re_embed"], false);
  EXPECT_EQ(described.json["revision"]["before"], described.json["revision"]["after"]);

  auto embed =
      send("PATCH", "/kbs/k?dry_run=true", {{"settings", {{"embedder.provider", "hash:64"}}}});
  ASSERT_EQ(embed.status, 200) << embed.body;
  EXPECT_EQ(embed.json["re_embed"], true);
  EXPECT_EQ(embed.json["vectors"], "first");
  EXPECT_NE(embed.json["revision"]["before"], embed.json["revision"]["after"]);

  // The same errors as the real call, with the same field.
  const json bad = {{"settings", {{"chunking.max_tokens", 3}}}};
  auto dry_bad = send("PATCH", "/kbs/k?dry_run=true", bad);
  auto real_bad = send("PATCH", "/kbs/k", bad);
  EXPECT_EQ(dry_bad.status, 400);
  EXPECT_EQ(dry_bad.status, real_bad.status);
  EXPECT_EQ(dry_bad.json["error"], real_bad.json["error"]);
  EXPECT_EQ(dry_bad.json["error"]["details"]["field"], "chunking.max_tokens");
  EXPECT_EQ(send("PATCH", "/kbs/nope?dry_run=true", bad).status, 404);
  auto not_bool = send("PATCH", "/kbs/k?dry_run=maybe", {{"settings", {{"description", "x"}}}});
  EXPECT_EQ(not_bool.status, 400);
  EXPECT_EQ(not_bool.json["error"]["details"]["field"], "dry_run");

  // Nothing was written: the KB and its activity log are as they were.
  const json after = get("/kbs/k").json;
  EXPECT_EQ(after["config"], before["config"]);
  EXPECT_EQ(after["updated_at"], before["updated_at"]);
  EXPECT_EQ(after["chunks"], before["chunks"]);
  EXPECT_EQ(activity(), entries);

  // The real call does what the dry run said.
  auto real = send("PATCH", "/kbs/k", {{"settings", {{"chunking.max_tokens", 64}}}});
  ASSERT_EQ(real.status, 200) << real.body;
  EXPECT_EQ(real.json["config_revision"], recut.json["config_revision"]["after"]);
  EXPECT_EQ(real.json["chunks"], recut.json["chunks_after"]);
}

TEST_F(Rest, ADryRunOfAnEmbeddedKbSaysBlueGreenAndWhenItReCuts) {
  make_kb("v", {{"embedder", {{"provider", "hash:64"}}}});
  add("v", "a.md", "Tides follow the moon.\n");
  wait_vectors("v");
  auto model =
      send("PATCH", "/kbs/v?dry_run=true", {{"settings", {{"embedder.provider", "hash:32"}}}});
  ASSERT_EQ(model.status, 200) << model.body;
  EXPECT_EQ(model.json["vectors"], "blue_green");
  EXPECT_EQ(model.json["re_embed"], true);
  EXPECT_EQ(model.json["re_cut"], false);
  auto now = send("PATCH", "/kbs/v?dry_run=true",
                  {{"settings", {{"embedder.provider", "hash:32"}}}, {"cutover", "immediate"}});
  EXPECT_EQ(now.json["vectors"], "replace") << now.body;
  auto cut = send("PATCH", "/kbs/v?dry_run=true", {{"settings", {{"chunking.max_tokens", 64}}}});
  ASSERT_EQ(cut.status, 200) << cut.body;
  EXPECT_EQ(cut.json["vectors"], "blue_green");
  EXPECT_EQ(cut.json["re_cut"], true);
  EXPECT_EQ(cut.json["re_cut_at"], "cutover");
  auto timeout = send("PATCH", "/kbs/v?dry_run=true", {{"settings", {{"description", "tides"}}}});
  EXPECT_EQ(timeout.json["vectors"], "unchanged") << timeout.body;
  EXPECT_EQ(timeout.json["re_embed"], false);
  EXPECT_EQ(get("/kbs/v").json["vectors"]["building_revision"], nullptr);
}

// Code points of UTF-8 text (what JavaScript's [...s] and Python's str index by).
std::u32string code_points(const std::string& s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    char32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out.push_back(cp);
    i += static_cast<std::size_t>(n);
  }
  return out;
}

std::string utf8(const std::u32string& s) {
  std::string out;
  for (char32_t c : s) core::append_utf8(out, static_cast<std::uint32_t>(c));
  return out;
}

// The highlighted pieces of a hit (or grep match): snippet_text cut at its code-point ranges.
std::vector<std::string> highlighted(const json& hit, const char* text_key = "snippet_text") {
  const std::u32string text = code_points(hit[text_key].get<std::string>());
  std::vector<std::string> out;
  for (const auto& r : hit["highlights"]) {
    const auto b = r[0].get<std::size_t>(), e = r[1].get<std::size_t>();
    EXPECT_LE(b, e);
    EXPECT_LE(e, text.size()) << hit.dump();
    if (e <= text.size()) out.push_back(utf8(text.substr(b, e - b)));
  }
  return out;
}

TEST_F(Rest, HitsCarryHighlightOffsetsInCodePointsInEveryMode) {
  make_kb("h", {{"embedder", {{"provider", "hash:64"}}}});
  add("h", "uni.md",
      "# Notes\n\nCrème brûlée, 日本語 and 🎉 party: the **granite** slab (bold in the file) "
      "beside plain granite.\n");
  wait_vectors("h");
  for (const char* mode : {"keyword", "vector", "hybrid", "auto"}) {
    SCOPED_TRACE(mode);
    auto r = send("POST", "/kbs/h/search", {{"query", "granite"}, {"mode", mode}});
    ASSERT_EQ(r.status, 200) << r.body;
    ASSERT_EQ(r.json["hits"].size(), 1u) << r.body;
    const json& hit = r.json["hits"][0];
    const std::string text = hit["snippet_text"];
    // The document's own ** stay in the text; the engine's markers are gone from it.
    EXPECT_NE(text.find("the **granite** slab"), std::string::npos) << text;
    EXPECT_NE(hit["snippet"].get<std::string>().find("the ****granite**** slab"), std::string::npos)
        << hit["snippet"];
    EXPECT_EQ(highlighted(hit), (std::vector<std::string>{"granite", "granite"})) << hit.dump();
    // In code points: 🎉 is one (two UTF-16 units, four bytes), 日本語 three, è and û one each.
    const std::size_t at = code_points(text).find(code_points("granite"));
    EXPECT_EQ(hit["highlights"][0][0], at);
    EXPECT_EQ(at, code_points(text.substr(0, text.find("granite"))).size());
  }
  // A word with diacritics lights up whole, at the right characters.
  auto accent = send("POST", "/kbs/h/search", {{"query", "brûlée"}, {"mode", "keyword"}});
  ASSERT_EQ(accent.json["hits"].size(), 1u) << accent.body;
  EXPECT_EQ(highlighted(accent.json["hits"][0]), (std::vector<std::string>{"brûlée"}));

  // Grep: `ranges` are bytes of the line, `highlights` the same matches in code points.
  auto g = send("POST", "/kbs/h/grep", {{"pattern", "gran[a-z]+"}});
  ASSERT_EQ(g.status, 200) << g.body;
  ASSERT_EQ(g.json["matches"].size(), 1u);
  const json& m = g.json["matches"][0];
  EXPECT_EQ(highlighted(m, "text"), (std::vector<std::string>{"granite", "granite"}));
  EXPECT_NE(m["ranges"][0][0], m["highlights"][0][0]);  // bytes and code points differ here
}

TEST_F(Rest, ActivityLogNamesTheSurface) {
  make_kb("k");
  add("k", "a.md", "text\n");
  auto log = get("/activity?limit=10");
  ASSERT_EQ(log.status, 200) << log.body;
  ASSERT_GE(log.json["entries"].size(), 2u);
  EXPECT_EQ(log.json["entries"][0]["surface"], "rest");
  EXPECT_EQ(log.json["entries"][0]["actor"], "local");
  auto page = get("/activity?limit=1");
  ASSERT_EQ(page.json["entries"].size(), 1u);
  auto next =
      get("/activity?limit=1&before=" + std::to_string(page.json["next_before"].get<long long>()));
  ASSERT_EQ(next.json["entries"].size(), 1u);
  EXPECT_LT(next.json["entries"][0]["id"], page.json["entries"][0]["id"]);
  EXPECT_EQ(get("/activity?limit=5000").status, 400);
}

TEST_F(Rest, UnknownRoutesAndOversizedBodiesGetTheEnvelope) {
  auto r = get("/no/such/route");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(error_code(r), "not_found");
  TearDown();
  server::ServeOptions o;
  o.max_body_bytes = 1024;
  o.indexer = false;
  start(o);
  make_kb("k");
  auto big = send("POST", "/kbs/k/documents",
                  {{"filename", "big.txt"}, {"content", std::string(4096, 'a')}});
  EXPECT_EQ(big.status, 413);
  EXPECT_EQ(error_code(big), "payload_too_large");
}

}  // namespace
}  // namespace quarry::testing
