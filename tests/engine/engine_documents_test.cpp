// Documents through the public Engine API: layout on disk, identity rules (SPEC §2.4), edit,
// reconvert, delete, and hit offsets that point at the exact chunk bytes in the Markdown file.
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/util.h"
#include "engine_fixture.h"

namespace quarry::lifecycle {
namespace {
using namespace testing_support;
using quarry::testing::read_file;
using quarry::testing::write_file;

const char* kGuide =
    "# Field guide\n\nThe capybara is the largest living rodent.\n\n## Habitat\n\n"
    "Capybaras live near rivers and lakes in South America.\n";

TEST_F(EngineTest, CreateKbMakesItsDirectories) {
  auto info = engine->create_kb("notes", R"({"description": "my notes"})");
  EXPECT_EQ(info.name, "notes");
  EXPECT_EQ(info.config.description, "my notes");
  EXPECT_EQ(info.documents, 0);
  EXPECT_EQ(info.index_status.keyword, "not_built");
  EXPECT_TRUE(fs::is_directory(fs::path(engine->data_dir()) / "kb/notes/docs"));
  EXPECT_TRUE(fs::is_directory(fs::path(engine->data_dir()) / "kb/notes/raw"));
  EXPECT_EQ(engine->list_kbs().size(), 1u);
  EXPECT_EQ(code_of([&] { engine->create_kb("notes", ""); }), Code::already_exists);
  EXPECT_EQ(code_of([&] { engine->create_kb("Bad Name", ""); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { engine->create_kb("x", R"({"chunking": {"max_tokens": 9}})"); }),
            Code::invalid_argument);
  EXPECT_EQ(code_of([&] { engine->create_kb("y", "{not json"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { engine->describe_kb("nope"); }), Code::not_found);
}

TEST_F(EngineTest, DeleteKbRemovesEverything) {
  engine->create_kb("k", "");
  auto item = add("k", "a.md", kGuide);
  engine->delete_kb("k");
  EXPECT_FALSE(fs::exists(fs::path(engine->data_dir()) / "kb/k"));
  EXPECT_TRUE(engine->list_kbs().empty());
  EXPECT_EQ(code_of([&] { search("k", "capybara"); }), Code::not_found);
  engine->create_kb("k", "");
  EXPECT_TRUE(search("k", "capybara").empty());
  EXPECT_EQ(code_of([&] { engine->delete_kb("k2"); }), Code::not_found);
}

TEST_F(EngineTest, IngestWritesMarkdownWithFrontMatterAndKeepsTheRaw) {
  engine->create_kb("k", "");
  auto item = add("k", "guide.md", kGuide);
  EXPECT_EQ(item.status, "added");
  ASSERT_EQ(item.doc_id.size(), 26u);
  EXPECT_GE(item.chunks, 1);

  std::string file = read_file(md_file("k", item.doc_id));
  ASSERT_EQ(file.rfind("---\n", 0), 0u) << file;
  auto end = file.find("\n---\n", 4);
  ASSERT_NE(end, std::string::npos);
  std::string front = file.substr(0, end);
  EXPECT_NE(front.find(item.doc_id), std::string::npos);
  EXPECT_NE(front.find("guide.md"), std::string::npos);
  EXPECT_NE(front.find(core::sha256_hex(kGuide)), std::string::npos);
  EXPECT_NE(front.find("converter"), std::string::npos);
  EXPECT_NE(front.find("ingested_at"), std::string::npos);
  EXPECT_NE(file.find("The capybara is the largest living rodent."), std::string::npos);
  EXPECT_EQ(read_file(raw_file("k", item.doc_id, "md")), kGuide);

  Document d = engine->get_document("k", item.doc_id);
  EXPECT_EQ(d.filename, "guide.md");
  EXPECT_EQ(d.title, "Field guide");
  EXPECT_EQ(d.source_sha256, core::sha256_hex(kGuide));
  EXPECT_EQ(d.markdown_path, md_file("k", item.doc_id).string());
  EXPECT_EQ(d.raw_path, raw_file("k", item.doc_id, "md").string());
  EXPECT_EQ(d.markdown_bytes, static_cast<std::int64_t>(file.size()));
  EXPECT_EQ(d.source_bytes, static_cast<std::int64_t>(std::string(kGuide).size()));
  std::string body = engine->read_markdown("k", item.doc_id);
  EXPECT_EQ(body.rfind("# Field guide", 0), 0u) << body;
  EXPECT_EQ(file.substr(file.size() - body.size()), body);
  EXPECT_EQ(d.content_sha256, core::sha256_hex(body));
  auto kb = engine->describe_kb("k");
  EXPECT_EQ(kb.documents, 1);
  EXPECT_EQ(kb.chunks, item.chunks);
  EXPECT_EQ(kb.index_status.keyword, "ready");
}

TEST_F(EngineTest, IdentityRules) {
  engine->create_kb("k", "");
  auto first = add("k", "a.md", "# A\n\nversion one of the walrus text\n");
  ASSERT_EQ(first.status, "added");

  auto same = add("k", "a.md", "# A\n\nversion one of the walrus text\n");
  EXPECT_EQ(same.status, "unchanged");
  EXPECT_EQ(same.doc_id, first.doc_id);

  std::map<std::string, std::string> details;
  std::string message;
  EXPECT_EQ(code_of([&] { add("k", "a.md", "# A\n\nversion two about a narwhal\n"); }, &details,
                    &message),
            Code::conflict);
  EXPECT_EQ(details["doc_id"], first.doc_id);
  EXPECT_NE(message.find(first.doc_id), std::string::npos) << message;
  EXPECT_TRUE(hit_docs("k", "narwhal").empty());  // the conflict changed nothing

  auto updated = add("k", "a.md", "# A\n\nversion two about a narwhal\n", "", /*replace=*/true);
  EXPECT_EQ(updated.status, "updated");
  EXPECT_EQ(updated.doc_id, first.doc_id);
  EXPECT_EQ(hit_docs("k", "narwhal"), std::vector<std::string>{first.doc_id});
  EXPECT_TRUE(hit_docs("k", "walrus").empty());
  EXPECT_EQ(read_file(raw_file("k", first.doc_id, "md")), "# A\n\nversion two about a narwhal\n");

  auto other = add("k", "b.md", "# A\n\nversion one of the walrus text\n");
  EXPECT_EQ(other.status, "added");
  EXPECT_NE(other.doc_id, first.doc_id);
  EXPECT_EQ(all_documents("k").size(), 2u);
}

TEST_F(EngineTest, EditReplacesTheMarkdownAndKeepsTheRaw) {
  engine->create_kb("k", "");
  auto item = add("k", "guide.md", kGuide);
  Document before = engine->get_document("k", item.doc_id);
  Document after = engine->edit_document("k", item.doc_id,
                                         "# Field guide\n\nFlamingos are pink wading birds.\n");
  EXPECT_EQ(after.id, item.doc_id);
  EXPECT_NE(after.content_sha256, before.content_sha256);
  EXPECT_EQ(after.source_sha256, before.source_sha256);
  EXPECT_EQ(hit_docs("k", "flamingos"), std::vector<std::string>{item.doc_id});
  EXPECT_TRUE(hit_docs("k", "capybara").empty());
  EXPECT_NE(engine->read_markdown("k", item.doc_id).find("Flamingos"), std::string::npos);
  EXPECT_EQ(read_file(raw_file("k", item.doc_id, "md")), kGuide);  // raw keeps the upload
  // the file on disk still has its front matter
  EXPECT_EQ(read_file(md_file("k", item.doc_id)).rfind("---\n", 0), 0u);
  EXPECT_EQ(code_of([&] { engine->edit_document("k", "01NOTANID000000000000000000", "x"); }),
            Code::not_found);
}

TEST_F(EngineTest, ReconvertRestoresTheConvertedRaw) {
  engine->create_kb("k", "");
  auto item = add("k", "guide.md", kGuide);
  engine->edit_document("k", item.doc_id, "# Other\n\nFlamingos only.\n");
  Document d = engine->reconvert_document("k", item.doc_id);
  EXPECT_EQ(d.id, item.doc_id);
  EXPECT_EQ(d.converter, "markdown");
  EXPECT_EQ(hit_docs("k", "capybara"), std::vector<std::string>{item.doc_id});
  EXPECT_TRUE(hit_docs("k", "flamingos").empty());
  EXPECT_NE(engine->read_markdown("k", item.doc_id).find("largest living rodent"),
            std::string::npos);
}

TEST_F(EngineTest, DeleteDocumentRemovesFilesAndHits) {
  engine->create_kb("k", "");
  auto a = add("k", "a.md", kGuide);
  auto b = add("k", "b.md", "# B\n\nAnother capybara appears.\n");
  engine->delete_document("k", a.doc_id);
  EXPECT_FALSE(fs::exists(md_file("k", a.doc_id)));
  EXPECT_FALSE(fs::exists(raw_file("k", a.doc_id, "md")));
  EXPECT_EQ(hit_docs("k", "capybara"), std::vector<std::string>{b.doc_id});
  EXPECT_EQ(code_of([&] { engine->get_document("k", a.doc_id); }), Code::not_found);
  EXPECT_EQ(code_of([&] { engine->delete_document("k", a.doc_id); }), Code::not_found);
  EXPECT_TRUE(catalog()->documents().chunks_of(ref(*catalog(), "k"), a.doc_id).empty());
  GrepRequest g;
  g.kb = "k";
  g.pattern = "largest living rodent";
  EXPECT_TRUE(engine->grep(g).matches.empty());
  // the name is free again
  EXPECT_EQ(add("k", "a.md", kGuide).status, "added");
}

TEST_F(EngineTest, KnowledgeBasesNeverLeakIntoEachOther) {
  engine->create_kb("one", "");
  engine->create_kb("two", "");
  auto a = add("one", "same.md", "# Same\n\nthe axolotl regrows limbs\n", R"({"team": "x"})");
  auto b = add("two", "same.md", "# Same\n\nthe axolotl regrows limbs\n", R"({"team": "x"})");
  EXPECT_NE(a.doc_id, b.doc_id);
  EXPECT_EQ(b.status, "added");  // identity is per KB
  for (const auto& h : search("one", "axolotl")) {
    EXPECT_EQ(h.kb, "one");
    EXPECT_EQ(h.doc_id, a.doc_id);
  }
  EXPECT_EQ(hit_docs("two", "axolotl"), std::vector<std::string>{b.doc_id});
  GrepRequest g;
  g.kb = "two";
  g.pattern = "axolotl";
  auto gr = engine->grep(g);
  ASSERT_EQ(gr.matches.size(), 1u);
  EXPECT_EQ(gr.matches[0].doc_id, b.doc_id);
  EXPECT_EQ(code_of([&] { engine->get_document("two", a.doc_id); }), Code::not_found);
  EXPECT_EQ(code_of([&] { engine->read_markdown("two", a.doc_id); }), Code::not_found);
  EXPECT_EQ(code_of([&] { engine->edit_document("two", a.doc_id, "# x\n\ny"); }), Code::not_found);
  EXPECT_EQ(code_of([&] { engine->delete_document("two", a.doc_id); }), Code::not_found);
  EXPECT_EQ(engine->delete_where("two", R"({"team": "x"})"), std::vector<std::string>{b.doc_id});
  EXPECT_EQ(hit_docs("one", "axolotl"), std::vector<std::string>{a.doc_id});
  EXPECT_TRUE(fs::exists(md_file("one", a.doc_id)));
  engine->delete_kb("two");
  EXPECT_EQ(hit_docs("one", "axolotl"), std::vector<std::string>{a.doc_id});
}

// Words of a snippet, with highlight markers and ellipses removed.
std::vector<std::string> snippet_words(const std::string& snippet) {
  std::string s;
  for (std::size_t i = 0; i < snippet.size();) {
    if (snippet.compare(i, 2, "**") == 0) {
      i += 2;
    } else if (snippet.compare(i, 3, "\xE2\x80\xA6") == 0) {  // …
      s += ' ';
      i += 3;
    } else {
      s += snippet[i++];
    }
  }
  std::vector<std::string> words;
  std::istringstream in(s);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

TEST_F(EngineTest, HitOffsetsPointAtTheChunkBytesInTheMarkdownFile) {
  engine->create_kb("k", R"({"chunking": {"max_tokens": 40, "overlap_tokens": 8}})");
  std::string long_doc = "# Rivers\n\n";
  for (int i = 0; i < 30; ++i)
    long_doc +=
        "Sentence " + std::to_string(i) + " mentions the otter and the heron by the water. ";
  long_doc +=
      "\n\n## Mountains\n\nThe ibex climbs; the otter does not.\n\n```\ncode otter block\n```\n";
  add("k", "rivers.md", long_doc);
  add("k", "crlf.md", "# Windows\r\n\r\nAn otter with CRLF line ends.\r\nAnd a heron.\r\n");
  add("k", "unicode.md", "# Ünïcödé\n\nL'otter café — naïve heron façade 😀 otter.\n");
  add("k", "notes.txt", "plain text otter\nsecond line heron\n");
  add("k", "table.csv", "animal,place\notter,river\nheron,lake\nibex,mountain\n");

  auto cat = catalog();
  int checked = 0;
  for (const char* q : {"otter", "heron", "ibex mountains", "water sentence", "cafe", "windows"}) {
    auto hits = search("k", q);
    EXPECT_FALSE(hits.empty()) << q;
    for (const auto& h : hits) {
      std::string file = read_file(md_file("k", h.doc_id));
      auto chunks = cat->documents().chunks_of(ref(*cat, "k"), h.doc_id);
      auto it = std::find_if(chunks.begin(), chunks.end(),
                             [&](const catalog::ChunkRow& c) { return c.chunk_id == h.chunk_id; });
      ASSERT_NE(it, chunks.end()) << "hit chunk " << h.chunk_id << " not in the catalog";
      EXPECT_EQ(h.chunk_index, it->index);
      EXPECT_EQ(h.offset, it->offset);
      EXPECT_EQ(h.length, it->length);
      ASSERT_LE(static_cast<std::size_t>(h.offset + h.length), file.size());
      EXPECT_EQ(file.substr(static_cast<std::size_t>(h.offset), static_cast<std::size_t>(h.length)),
                it->text)
          << q << " in " << h.filename;
      for (const auto& w : snippet_words(h.snippet))
        EXPECT_NE(it->text.find(w), std::string::npos)
            << "snippet word '" << w << "' not in chunk of " << h.filename << ": " << h.snippet;
      EXPECT_GE(h.score, 0.0);
      EXPECT_LE(h.score, 1.0);
      EXPECT_EQ(h.kb, "k");
      ++checked;
    }
  }
  EXPECT_GT(checked, 10);
  // Every chunk of every document, hit or not, satisfies the same invariant.
  for (const auto& d : all_documents("k")) {
    std::string file = read_file(md_file("k", d.id));
    auto chunks = cat->documents().chunks_of(ref(*cat, "k"), d.id);
    EXPECT_EQ(static_cast<std::int64_t>(chunks.size()), d.chunk_count);
    for (const auto& c : chunks)
      EXPECT_EQ(file.substr(static_cast<std::size_t>(c.offset), static_cast<std::size_t>(c.length)),
                c.text)
          << d.filename << " chunk " << c.index;
  }
}

TEST_F(EngineTest, OffsetsStayExactAfterEditAndRechunk) {
  engine->create_kb("k", "");
  std::string text = "# T\n\n";
  for (int i = 0; i < 200; ++i) text += "word" + std::to_string(i) + " lemur ";
  auto item = add("k", "t.md", text);
  engine->edit_document("k", item.doc_id, "# Edited title\n\n" + text + "\n\nextra lemur line\n");
  engine->set_kb("k", {{"chunking.max_tokens", "32"}});
  auto cat = catalog();
  std::string file = read_file(md_file("k", item.doc_id));
  auto chunks = cat->documents().chunks_of(ref(*cat, "k"), item.doc_id);
  ASSERT_GT(chunks.size(), 3u);
  for (const auto& c : chunks)
    EXPECT_EQ(file.substr(static_cast<std::size_t>(c.offset), static_cast<std::size_t>(c.length)),
              c.text);
  for (const auto& h : search("k", "lemur")) {
    EXPECT_EQ(h.doc_id, item.doc_id);
    EXPECT_NE(file.substr(static_cast<std::size_t>(h.offset), static_cast<std::size_t>(h.length))
                  .find("lemur"),
              std::string::npos);
  }
}

TEST_F(EngineTest, ListDocumentsPaginatesWithACursor) {
  engine->create_kb("k", "");
  std::set<std::string> ids;
  for (int i = 0; i < 7; ++i)
    ids.insert(
        add("k", "d" + std::to_string(i) + ".md", "# D\n\ndocument number " + std::to_string(i))
            .doc_id);
  std::vector<std::string> seen;
  std::string cursor;
  int pages = 0;
  do {
    auto page = engine->list_documents("k", cursor, 3);
    ++pages;
    for (const auto& d : page.documents) seen.push_back(d.id);
    cursor = page.next_cursor;
    if (!cursor.empty()) {
      EXPECT_EQ(page.documents.size(), 3u);
      EXPECT_EQ(cursor, page.documents.back().id);
    }
  } while (!cursor.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), ids);
  EXPECT_EQ(seen.size(), ids.size());
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  // exactly one full page: no dangling cursor
  auto one = engine->list_documents("k", "", 7);
  EXPECT_EQ(one.documents.size(), 7u);
  EXPECT_TRUE(one.next_cursor.empty());
  EXPECT_EQ(code_of([&] { engine->list_documents("k", "", 0); }), Code::invalid_argument);
  // A cursor is a next_cursor the API returned: garbage is refused, naming the field (it listed
  // from wherever the text happened to sort).
  std::map<std::string, std::string> details;
  for (const std::string& bad :
       std::vector<std::string>{"garbage", "zzzzzzzzzzzzzzzzzzzzzzzzzz", seen[2] + "x"}) {
    EXPECT_EQ(code_of([&] { engine->list_documents("k", bad, 3); }, &details),
              Code::invalid_argument)
        << bad;
    EXPECT_EQ(details["field"], "cursor");
  }
}

TEST_F(EngineTest, MetadataFiltersApplyToSearchListAndGrep) {
  engine->create_kb("k", "");
  auto en = add("k", "en.md", "# E\n\nthe tapir sleeps\n", R"({"lang": "en", "year": 2020})");
  auto de = add("k", "de.md", "# D\n\nder tapir schlaeft\n", R"({"lang": "de", "year": 2023})");
  EXPECT_EQ(code_of([&] { add("k", "bad.md", "# x\n\ny", "[1]"); }), Code::invalid_argument);
  auto hits = search("k", "tapir", 10, R"({"lang": "de"})");
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0].doc_id, de.doc_id);
  EXPECT_EQ(nlohmann::json::parse(hits[0].metadata_json)["year"], 2023);
  auto docs = all_documents("k", R"({"year": {"$lt": 2021}})");
  ASSERT_EQ(docs.size(), 1u);
  EXPECT_EQ(docs[0].id, en.doc_id);
  GrepRequest g;
  g.kb = "k";
  g.pattern = "tapir";
  g.filter_json = R"({"lang": {"$ne": "de"}})";
  auto gr = engine->grep(g);
  ASSERT_EQ(gr.matches.size(), 1u);
  EXPECT_EQ(gr.matches[0].doc_id, en.doc_id);
  EXPECT_EQ(code_of([&] { search("k", "tapir", 10, R"({"lang": {"$regex": "d"}})"); }),
            Code::invalid_argument);
}

TEST_F(EngineTest, SearchModes) {
  engine->create_kb("k", "");
  add("k", "a.md", kGuide);
  SearchRequest r;
  r.kb = "k";
  r.query = "capybara";
  r.mode = Mode::vector;
  EXPECT_EQ(code_of([&] { engine->search(r); }), Code::mode_unavailable);
  r.mode = Mode::hybrid;
  auto resp = engine->search(r);
  EXPECT_EQ(resp.mode, Mode::keyword);
  EXPECT_FALSE(resp.degraded.empty());
  EXPECT_FALSE(resp.hits.empty());
  // A default KB has no embedder: auto (the default mode) says that is why it used keyword.
  r.mode.reset();
  resp = engine->search(r);
  EXPECT_EQ(resp.mode, Mode::keyword);
  ASSERT_EQ(resp.degraded.size(), 1u);
  EXPECT_EQ(resp.degraded[0].rfind("no_embedder: ", 0), 0u) << resp.degraded[0];
  // Mode names are parsed in one place, which names the field and the known modes.
  std::map<std::string, std::string> details;
  std::string message;
  EXPECT_EQ(code_of([] { mode_from_name("telepathy"); }, &details, &message),
            Code::invalid_argument);
  EXPECT_EQ(details["field"], "mode");
  EXPECT_NE(message.find("keyword, grep, vector, hybrid, auto"), std::string::npos) << message;
  r.mode = Mode::keyword;
  r.top_k = 0;
  EXPECT_EQ(code_of([&] { engine->search(r); }), Code::invalid_argument);
  engine->set_kb("k", {{"modes", R"(["grep"])"}});
  r.top_k = 10;
  EXPECT_EQ(code_of([&] { engine->search(r); }), Code::mode_unavailable);
}

}  // namespace
}  // namespace quarry::lifecycle
