// Directory ingest (SPEC §2.5, §2.6), subjects (§1), crash recovery of staged files (§10) and
// configuration changes that re-chunk (§3), through the public Engine API.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "convert/convert_fixtures.h"
#include "core/util.h"
#include "engine_fixture.h"

namespace quarry::lifecycle {
namespace {
using namespace testing_support;
using quarry::testing::read_file;
using quarry::testing::write_file;

const IngestItem* item_for(const IngestReport& r, const std::string& path) {
  for (const auto& i : r.items)
    if (i.path == path) return &i;
  return nullptr;
}

std::vector<std::string> paths_of(const IngestReport& r) {
  std::vector<std::string> out;
  for (const auto& i : r.items) out.push_back(i.path);
  return out;
}

// --- subjects ------------------------------------------------------------------------------

class SubjectTest : public EngineTest {
 protected:
  void SetUp() override {
    engine->create_kb("crm", R"({"subjects": {"keys": ["contact_id", "company_id"]}})");
  }
};

TEST_F(SubjectTest, DocumentWithNoSubjectIsRefused) {
  std::map<std::string, std::string> details;
  EXPECT_EQ(code_of([&] { add("crm", "a.md", "# A\n\nhello", R"({"other": 1})"); }, &details),
            Code::invalid_argument);
  EXPECT_EQ(details["field"], "metadata");
  EXPECT_EQ(code_of([&] { add("crm", "a.md", "# A\n\nhello"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { add("crm", "a.md", "# A\n\nhello", R"({"contact_id": null})"); }),
            Code::invalid_argument);
  EXPECT_TRUE(all_documents("crm").empty());
  EXPECT_TRUE(fs::is_empty(fs::path(engine->data_dir()) / "kb/crm/docs"));
}

TEST_F(SubjectTest, DocumentWithTwoSubjectsIsRefused) {
  EXPECT_EQ(code_of([&] {
              add("crm", "a.md", "# A\n\nhello", R"({"contact_id": "c1", "company_id": "acme"})");
            }),
            Code::invalid_argument);
  EXPECT_TRUE(all_documents("crm").empty());
}

TEST_F(SubjectTest, SubjectValueMustBeAStringOrInteger) {
  EXPECT_EQ(code_of([&] { add("crm", "a.md", "# A\n\nhello", R"({"contact_id": {"x": 1}})"); }),
            Code::invalid_argument);
  EXPECT_EQ(code_of([&] { add("crm", "a.md", "# A\n\nhello", R"({"contact_id": 1.5})"); }),
            Code::invalid_argument);
  auto ok = add("crm", "b.md", "# B\n\nhello", R"({"contact_id": 42})");
  EXPECT_EQ(ok.status, "added");
  auto d = engine->get_document("crm", ok.doc_id);
  ASSERT_TRUE(d.subject.has_value());
  EXPECT_EQ(d.subject->value, "42");
}

TEST_F(SubjectTest, HitsAndDocumentsReportTheirOwnSubject) {
  auto c1 = add("crm", "c1.md", "# Call\n\nThe customer asked about the invoice.",
                R"({"contact_id": "c1"})");
  auto c2 = add("crm", "c2.md", "# Call\n\nAnother customer asked about the invoice.",
                R"({"contact_id": "c2"})");
  auto co =
      add("crm", "acme.md", "# Acme\n\nCompany-wide invoice policy.", R"({"company_id": "acme"})");
  std::map<std::string, std::pair<std::string, std::string>> want = {
      {c1.doc_id, {"contact_id", "c1"}},
      {c2.doc_id, {"contact_id", "c2"}},
      {co.doc_id, {"company_id", "acme"}}};
  auto hits = search("crm", "invoice");
  ASSERT_EQ(hits.size(), 3u);
  for (const auto& h : hits) {
    ASSERT_TRUE(h.subject.has_value());
    EXPECT_EQ(h.subject->key, want[h.doc_id].first);
    EXPECT_EQ(h.subject->value, want[h.doc_id].second);
  }
  for (const auto& d : all_documents("crm")) {
    ASSERT_TRUE(d.subject.has_value());
    EXPECT_EQ(d.subject->key, want[d.id].first);
    EXPECT_EQ(d.subject->value, want[d.id].second);
  }
  GrepRequest g;
  g.kb = "crm";
  g.pattern = "invoice";
  for (const auto& m : engine->grep(g).matches) {
    ASSERT_TRUE(m.subject.has_value());
    EXPECT_EQ(m.subject->value, want[m.doc_id].second);
  }
}

TEST_F(SubjectTest, DeleteWhereForgetsEverythingOfOneSubject) {
  std::vector<std::string> c1_ids;
  for (int i = 0; i < 4; ++i)
    c1_ids.push_back(add("crm", "c1-" + std::to_string(i) + ".md",
                         "# Note\n\nconfidential gerbil note " + std::to_string(i),
                         R"({"contact_id": "c1"})")
                         .doc_id);
  auto c2 = add("crm", "c2.md", "# Note\n\nconfidential gerbil note", R"({"contact_id": "c2"})");
  auto co = add("crm", "co.md", "# Note\n\ngerbil policy", R"({"company_id": "c1"})");

  auto deleted = engine->delete_where("crm", R"({"contact_id": "c1"})");
  std::sort(deleted.begin(), deleted.end());
  std::sort(c1_ids.begin(), c1_ids.end());
  EXPECT_EQ(deleted, c1_ids);
  auto cat = catalog();
  for (const auto& id : c1_ids) {
    EXPECT_FALSE(fs::exists(md_file("crm", id)));
    EXPECT_FALSE(fs::exists(raw_file("crm", id, "md")));
    EXPECT_TRUE(cat->documents().chunks_of(ref(*cat, "crm"), id).empty());
    EXPECT_EQ(code_of([&] { engine->get_document("crm", id); }), Code::not_found);
  }
  auto hits = hit_docs("crm", "gerbil confidential");
  std::sort(hits.begin(), hits.end());
  std::vector<std::string> left = {c2.doc_id, co.doc_id};
  std::sort(left.begin(), left.end());
  EXPECT_EQ(hits, left);
  for (const auto& h : search("crm", "gerbil"))
    EXPECT_FALSE(h.subject->key == "contact_id" && h.subject->value == "c1");
  GrepRequest g;
  g.kb = "crm";
  g.pattern = "confidential";
  for (const auto& m : engine->grep(g).matches) EXPECT_EQ(m.doc_id, c2.doc_id);
  EXPECT_EQ(engine->describe_kb("crm").documents, 2);
  EXPECT_EQ(code_of([&] { engine->delete_where("crm", ""); }), Code::invalid_argument);
}

TEST_F(SubjectTest, SubjectKeysCannotChangeUnderExistingDocuments) {
  add("crm", "a.md", "# A\n\nx", R"({"contact_id": "c1"})");
  EXPECT_EQ(code_of([&] {
              engine->set_kb("crm", {{"subjects.keys", R"(["deal_id"])"}});
            }),
            Code::conflict);
}

// --- directory ingest ------------------------------------------------------------------------

class DirectoryIngestTest : public EngineTest {
 protected:
  fs::path root = dir / "src";
  fs::path outside = dir / "outside.md";

  void SetUp() override {
    engine->create_kb("k", "");
    write_file(root / "a.md", "# A\n\nalpha aardvark\n");
    write_file(root / "notes/b.md", "# B\n\nbravo badger\n");
    write_file(root / "notes/deep/c.txt", "charlie chameleon\n");
    write_file(root / "notes/deep/d.md", "# D\n\ndelta dingo\n");
    write_file(root / ".hidden.md", "# H\n\nhidden hyena\n");
    write_file(root / ".git/config.md", "# G\n\ngit gecko\n");
    write_file(root / "notes/.secret/s.md", "# S\n\nsecret sloth\n");
    write_file(outside, "# O\n\noutside ocelot\n");
  }

  IngestReport ingest(std::vector<std::string> include = {},
                      std::vector<std::string> exclude = {}) {
    IngestOptions o;
    o.include = std::move(include);
    o.exclude = std::move(exclude);
    return engine->ingest_path("k", root.string(), o);
  }
};

TEST_F(DirectoryIngestTest, RecursesAndSkipsHiddenFiles) {
  auto r = ingest();
  EXPECT_EQ(paths_of(r), (std::vector<std::string>{"a.md", "notes/b.md", "notes/deep/c.txt",
                                                   "notes/deep/d.md"}));
  EXPECT_EQ(r.added, 4);
  EXPECT_EQ(r.failed, 0);
  EXPECT_GT(r.bytes, 0);
  EXPECT_TRUE(hit_docs("k", "hyena").empty());
  EXPECT_TRUE(hit_docs("k", "gecko").empty());
  EXPECT_TRUE(hit_docs("k", "sloth").empty());
  EXPECT_EQ(hit_docs("k", "chameleon").size(), 1u);
  EXPECT_EQ(engine->get_document("k", item_for(r, "notes/deep/c.txt")->doc_id).filename,
            "notes/deep/c.txt");
  // a second run changes nothing
  auto again = ingest();
  EXPECT_EQ(again.unchanged, 4);
  EXPECT_EQ(again.added, 0);
}

TEST_F(DirectoryIngestTest, IncludeAndExcludeGlobs) {
  auto r = ingest({"**/*.md"}, {"notes/deep/**"});
  EXPECT_EQ(paths_of(r), (std::vector<std::string>{"a.md", "notes/b.md"}));
  EXPECT_EQ(r.added, 2);
  auto r2 = ingest({"*.txt"});
  EXPECT_EQ(paths_of(r2), (std::vector<std::string>{"notes/deep/c.txt"}));
  auto r3 = ingest({}, {"*.md"});
  EXPECT_EQ(paths_of(r3), (std::vector<std::string>{"notes/deep/c.txt"}));
  EXPECT_EQ(r3.unchanged, 1);
}

TEST_F(DirectoryIngestTest, SymlinkOutOfTheRootIsForbiddenAndInsideIsFollowed) {
  fs::create_symlink(outside, root / "escape.md");
  fs::create_symlink(root / "notes/b.md", root / "inside.md");
  fs::create_symlink(root / "notes", root / "dirlink");  // directory links are never descended
  auto r = ingest();
  const IngestItem* esc = item_for(r, "escape.md");
  ASSERT_NE(esc, nullptr);
  EXPECT_EQ(esc->status, "failed");
  EXPECT_EQ(esc->code, "forbidden");
  EXPECT_TRUE(esc->doc_id.empty());
  EXPECT_TRUE(hit_docs("k", "ocelot").empty());
  const IngestItem* in = item_for(r, "inside.md");
  ASSERT_NE(in, nullptr);
  EXPECT_EQ(in->status, "added");
  EXPECT_NE(engine->read_markdown("k", in->doc_id).find("bravo badger"), std::string::npos);
  EXPECT_EQ(item_for(r, "dirlink/b.md"), nullptr);
  EXPECT_EQ(r.added, 5);
  EXPECT_EQ(r.failed, 1);
}

// A symbolic link that does not resolve says why: a loop of links is a loop (it was reported as
// "points outside the ingested directory"), a dangling link points to nothing.
TEST_F(DirectoryIngestTest, BrokenSymlinksSayWhyTheyAreNotFollowed) {
  fs::create_symlink(root / "self.md", root / "self.md");
  fs::create_symlink(root / "pong.md", root / "ping.md");
  fs::create_symlink(root / "ping.md", root / "pong.md");
  fs::create_symlink(root / "gone.md", root / "dangling.md");
  auto r = ingest();
  for (const char* loop : {"self.md", "ping.md", "pong.md"}) {
    const IngestItem* i = item_for(r, loop);
    ASSERT_NE(i, nullptr) << loop;
    EXPECT_EQ(i->status, "failed");
    EXPECT_EQ(i->code, "io_error") << i->message;
    EXPECT_NE(i->message.find("symbolic link loop"), std::string::npos) << i->message;
    EXPECT_EQ(i->message.find("outside"), std::string::npos) << i->message;
  }
  const IngestItem* d = item_for(r, "dangling.md");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->code, "not_found") << d->message;
  EXPECT_NE(d->message.find("does not exist"), std::string::npos) << d->message;
  EXPECT_EQ(r.added, 4);
  EXPECT_EQ(r.failed, 4);
  // Given directly, a loop says so too.
  std::string message;
  EXPECT_EQ(code_of([&] { engine->ingest_path("k", (root / "self.md").string(), {}); }, nullptr,
                    &message),
            Code::io_error);
  EXPECT_NE(message.find("symbolic link loop"), std::string::npos) << message;
}

// A FIFO, socket or device is never opened for reading (opening a FIFO blocks until a writer
// comes: `quarry ingest f.md` hung for ever): alone it is a failed item, in a folder a failed
// item of the report (it was skipped without a word).
TEST_F(DirectoryIngestTest, SpecialFilesAreFailedItemsAndNeverBlock) {
  quarry::testing::FifoWatchdog fifo(root / "pipe.md", 20);
  ASSERT_TRUE(fifo.made());
  auto single = engine->ingest_path("k", (root / "pipe.md").string(), {});
  auto folder = ingest();
  fifo.done();
  EXPECT_FALSE(fifo.fired()) << "ingest blocked on the FIFO";
  ASSERT_EQ(single.items.size(), 1u);
  EXPECT_EQ(single.failed, 1);
  for (const IngestItem* i : {item_for(single, "pipe.md"), item_for(folder, "pipe.md")}) {
    ASSERT_NE(i, nullptr);
    EXPECT_EQ(i->status, "failed");
    EXPECT_EQ(i->code, "unsupported_format") << i->message;
    EXPECT_NE(i->message.find("a FIFO (named pipe), not a regular file"), std::string::npos)
        << i->message;
  }
  EXPECT_EQ(folder.added, 4);
  EXPECT_EQ(folder.failed, 1);
  EXPECT_EQ(folder.items.size(), 5u);
}

// What conversion leaves out reaches the report: a DOCX whose text nests past the converter's
// limit says it was cut (it was silently dropped, or a bare no_content when nothing was left).
TEST_F(DirectoryIngestTest, WhatConversionCutIsInTheReport) {
  std::string open, close;
  for (int i = 0; i < 5000; ++i) {
    open += "<w:sdt><w:sdtContent>";
    close += "</w:sdtContent></w:sdt>";
  }
  const std::string deep = open + convert::testing::para("lost") + close;
  auto kept = engine->ingest_bytes(
      "k", "kept.docx", convert::testing::make_docx(convert::testing::para("kept") + deep), {});
  EXPECT_EQ(kept.status, "added");
  ASSERT_EQ(kept.warnings.size(), 1u);
  EXPECT_NE(kept.warnings[0].find("nested deeper than 32 levels was cut"), std::string::npos)
      << kept.warnings[0];
  std::string message;
  EXPECT_EQ(
      code_of(
          [&] { engine->ingest_bytes("k", "lost.docx", convert::testing::make_docx(deep), {}); },
          nullptr, &message),
      Code::no_content);
  EXPECT_NE(message.find("nested deeper than 32 levels"), std::string::npos) << message;
  // Other converters' notes too: invalid UTF-8 replaced.
  auto text = engine->ingest_bytes("k", "bytes.txt", "caf\xe9 au lait\n", {});
  ASSERT_EQ(text.warnings.size(), 1u);
  EXPECT_NE(text.warnings[0].find("invalid UTF-8"), std::string::npos);
}

TEST_F(DirectoryIngestTest, PerFileFailuresDoNotStopTheBatch) {
  engine->set_kb("k", {{"limits.max_upload_bytes", "2000"}});
  write_file(root / "empty.md", "");
  write_file(root / "junk.txt",
             std::string("\x01\x02\x00\x03binary\x00\xff\xfe junk", 18) + std::string(200, '\0'));
  write_file(root / "big.md", "# Big\n\n" + std::string(3000, 'x'));
  write_file(root / "image.xyz", "what is this");
  auto r = ingest();
  auto expect_failed = [&](const std::string& path, const std::string& code) {
    const IngestItem* i = item_for(r, path);
    ASSERT_NE(i, nullptr) << path;
    EXPECT_EQ(i->status, "failed") << path;
    EXPECT_EQ(i->code, code) << path << ": " << i->message;
    EXPECT_FALSE(i->message.empty());
  };
  expect_failed("empty.md", "no_content");
  expect_failed("junk.txt", "corrupt_input");
  expect_failed("big.md", "payload_too_large");
  expect_failed("image.xyz", "unsupported_format");
  EXPECT_EQ(r.failed, 4);
  EXPECT_EQ(r.added, 4);
  EXPECT_EQ(r.items.size(), 8u);
  EXPECT_EQ(all_documents("k").size(), 4u);
  EXPECT_EQ(hit_docs("k", "dingo").size(), 1u);
}

TEST_F(DirectoryIngestTest, WhitespaceOnlyFileIsNoContent) {
  write_file(root / "blank.md", "   \n\n\t \n");
  auto r = ingest({"blank.md"});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].code, "no_content");
}

TEST_F(DirectoryIngestTest, ProgressIsReported) {
  std::vector<IngestProgress> seen;
  IngestOptions o;
  o.progress = [&](const IngestProgress& p) { seen.push_back(p); };
  engine->ingest_path("k", root.string(), o);
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.back().done, 4u);
  EXPECT_EQ(seen.back().total, 4u);
}

// Ctrl-C during `quarry ingest DIR` (the CLI sets `cancel`): each file's outcome is reported as
// it is committed, the walk stops after the document in hand, and ingesting again resumes.
TEST_F(DirectoryIngestTest, CancelStopsAfterTheDocumentInHandAndAgainResumes) {
  std::atomic<bool> cancel{false};
  std::vector<std::string> reported;
  IngestOptions o;
  o.cancel = &cancel;
  o.on_item = [&](const IngestItem& i) {
    reported.push_back(i.path + " " + i.status);
    if (reported.size() == 2) cancel.store(true);  // as the signal handler does
  };
  auto r = engine->ingest_path("k", root.string(), o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(r.not_reached, 2u);
  EXPECT_EQ(reported, (std::vector<std::string>{"a.md added", "notes/b.md added"}));
  EXPECT_EQ(paths_of(r), (std::vector<std::string>{"a.md", "notes/b.md"}));
  EXPECT_EQ(engine->list_documents("k", "", 100).documents.size(), 2u) << "exactly what it said";
  EXPECT_EQ(hit_docs("k", "badger").size(), 1u);
  EXPECT_TRUE(hit_docs("k", "dingo").empty());

  auto again = ingest();
  EXPECT_FALSE(again.cancelled);
  EXPECT_EQ(again.unchanged, 2);
  EXPECT_EQ(again.added, 2);
  EXPECT_EQ(engine->list_documents("k", "", 100).documents.size(), 4u);
}

TEST_F(DirectoryIngestTest, MissingPathIsNotFound) {
  EXPECT_EQ(code_of([&] { engine->ingest_path("k", (dir / "nope").string(), {}); }),
            Code::not_found);
  EXPECT_EQ(code_of([&] { engine->ingest_path("nokb", root.string(), {}); }), Code::not_found);
}

TEST_F(DirectoryIngestTest, SingleFileIngestUsesItsBaseName) {
  auto r = engine->ingest_path("k", (root / "notes/deep/d.md").string(), {});
  ASSERT_EQ(r.items.size(), 1u);
  EXPECT_EQ(r.items[0].path, "d.md");
  EXPECT_EQ(r.added, 1);
  EXPECT_EQ(engine->get_document("k", r.items[0].doc_id).filename, "d.md");
}

TEST_F(DirectoryIngestTest, ChangedFileNeedsReplace) {
  ingest();
  write_file(root / "a.md", "# A\n\nalpha armadillo\n");
  auto r = ingest();
  EXPECT_EQ(item_for(r, "a.md")->code, "conflict");
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.unchanged, 3);
  IngestOptions o;
  o.replace = true;
  auto r2 = engine->ingest_path("k", root.string(), o);
  EXPECT_EQ(r2.updated, 1);
  EXPECT_EQ(r2.unchanged, 3);
  EXPECT_EQ(hit_docs("k", "armadillo").size(), 1u);
  EXPECT_TRUE(hit_docs("k", "aardvark").empty());
}

// --- crash recovery --------------------------------------------------------------------------

TEST_F(EngineTest, CommittedButUnrenamedMarkdownIsRestoredOnOpen) {
  engine->create_kb("k", "");
  auto item = add("k", "a.md", "# A\n\nthe pangolin survives crashes\n");
  const fs::path real = md_file("k", item.doc_id);
  const std::string bytes = read_file(real);
  engine.reset();
  // The crash: the catalog committed, the rename of the staged file never happened.
  fs::copy_file(real, staged(real));
  fs::remove(real);
  engine = open_engine();
  EXPECT_TRUE(fs::exists(real));
  EXPECT_FALSE(fs::exists(staged(real)));
  EXPECT_EQ(read_file(real), bytes);
  EXPECT_NE(engine->read_markdown("k", item.doc_id).find("pangolin"), std::string::npos);
}

TEST_F(EngineTest, CommittedButUnrenamedRawIsRestoredOnOpen) {
  engine->create_kb("k", "");
  auto item = add("k", "a.md", "# A\n\nraw upload\n");
  const fs::path raw = raw_file("k", item.doc_id, "md");
  engine.reset();
  fs::rename(raw, staged(raw));
  engine = open_engine();
  EXPECT_EQ(read_file(raw), "# A\n\nraw upload\n");
  EXPECT_FALSE(fs::exists(staged(raw)));
}

TEST_F(EngineTest, StaleStagedFilesAreDeletedOnOpen) {
  engine->create_kb("k", "");
  auto item = add("k", "a.md", "# A\n\nthe committed version\n");
  const fs::path real = md_file("k", item.doc_id);
  const std::string bytes = read_file(real);
  engine.reset();
  // A write that never committed: its staged body does not hash to the catalog's content.
  write_file(staged(real), "---\nid: x\n---\n\n# A\n\nan uncommitted version\n");
  write_file(staged(raw_file("k", item.doc_id, "md")), "uncommitted raw");
  // Staged files of a document the catalog never saw.
  write_file(staged(md_file("k", "01ZZZZZZZZZZZZZZZZZZZZZZZZ")), "orphan");
  write_file(staged(raw_file("k", "01ZZZZZZZZZZZZZZZZZZZZZZZZ", "pdf")), "orphan");
  // ... and of a KB the catalog never saw.
  write_file(staged(fs::path(data) / "kb/ghost/docs/01YYYYYYYYYYYYYYYYYYYYYYYY.md"), "ghost");
  engine = open_engine();
  EXPECT_EQ(read_file(real), bytes);
  EXPECT_FALSE(fs::exists(staged(real)));
  EXPECT_FALSE(fs::exists(staged(raw_file("k", item.doc_id, "md"))));
  EXPECT_EQ(read_file(raw_file("k", item.doc_id, "md")), "# A\n\nthe committed version\n");
  EXPECT_FALSE(fs::exists(staged(md_file("k", "01ZZZZZZZZZZZZZZZZZZZZZZZZ"))));
  EXPECT_FALSE(fs::exists(staged(raw_file("k", "01ZZZZZZZZZZZZZZZZZZZZZZZZ", "pdf"))));
  EXPECT_FALSE(fs::exists(staged(fs::path(data) / "kb/ghost/docs/01YYYYYYYYYYYYYYYYYYYYYYYY.md")));
  EXPECT_NE(engine->read_markdown("k", item.doc_id).find("committed version"), std::string::npos);
}

TEST_F(EngineTest, RecoveredEditIsTheCommittedOne) {
  engine->create_kb("k", "");
  auto item = add("k", "a.md", "# A\n\nfirst body\n");
  engine->edit_document("k", item.doc_id, "# A\n\nsecond body with a quetzal\n");
  const fs::path real = md_file("k", item.doc_id);
  const std::string committed = read_file(real);
  engine.reset();
  // Crash after commit of the edit, before the rename: the old file is still in place.
  fs::rename(real, staged(real));
  write_file(real, "---\nid: old\n---\n\n# A\n\nfirst body\n");
  engine = open_engine();
  EXPECT_EQ(read_file(real), committed);
  EXPECT_EQ(hit_docs("k", "quetzal"), std::vector<std::string>{item.doc_id});
}

// --- configuration changes ----------------------------------------------------------------------

TEST_F(EngineTest, ChangingChunkingRechunksEveryDocument) {
  engine->create_kb("k", "");
  std::string text = "# Long\n\n";
  for (int i = 0; i < 400; ++i) text += "token" + std::to_string(i) + " ";
  auto a = add("k", "a.md", text);
  auto b = add("k", "b.md", "# Short\n\nA short note about an okapi.\n");
  const auto before = engine->get_document("k", a.doc_id).chunk_count;
  auto info = engine->set_kb("k", {{"chunking.max_tokens", "64"}});
  const auto after = engine->get_document("k", a.doc_id).chunk_count;
  EXPECT_GT(after, before);
  EXPECT_EQ(info.config.chunking.effective_max_tokens(), 64);
  EXPECT_EQ(info.chunks, after + engine->get_document("k", b.doc_id).chunk_count);
  EXPECT_EQ(static_cast<std::int64_t>(
                catalog()->documents().chunks_of(ref(*catalog(), "k"), a.doc_id).size()),
            after);
  // profile none: one chunk per document
  info = engine->set_kb("k", {{"chunking.profile", "none"}});
  EXPECT_EQ(engine->get_document("k", a.doc_id).chunk_count, 1);
  EXPECT_EQ(info.chunks, 2);
  EXPECT_EQ(hit_docs("k", "okapi"), std::vector<std::string>{b.doc_id});
  EXPECT_EQ(hit_docs("k", "token399"), std::vector<std::string>{a.doc_id});
}

TEST_F(EngineTest, SetKbUnknownKeyIsNamed) {
  engine->create_kb("k", "");
  std::map<std::string, std::string> details;
  EXPECT_EQ(code_of(
                [&] {
                  engine->set_kb("k", {{"chunking.max_tokns", "64"}});
                },
                &details),
            Code::invalid_argument);
  EXPECT_EQ(details["field"], "chunking.max_tokns");
  EXPECT_EQ(code_of(
                [&] {
                  engine->set_kb("k", {{"chunking.max_tokens", "8192"}});
                },
                &details),
            Code::invalid_argument);
  EXPECT_EQ(details["field"], "chunking.max_tokens");
  EXPECT_EQ(code_of([&] { engine->set_kb("k", {}); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { engine->set_kb("nope", {{"description", "x"}}); }), Code::not_found);
  // a refused change leaves the config as it was
  EXPECT_FALSE(engine->describe_kb("k").config.chunking.max_tokens.has_value());
}

TEST_F(EngineTest, SetKbAppliesSeveralSettingsAndPersists) {
  engine->create_kb("k", "");
  engine->set_kb("k", {{"description", "team notes"},
                       {"chunking.max_tokens", "128"},
                       {"chunking.overlap_tokens", "16"}});
  engine.reset();
  engine = open_engine();
  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.config.description, "team notes");
  EXPECT_EQ(info.config.chunking.max_tokens, 128);
  EXPECT_EQ(info.config.chunking.overlap_tokens, 16);
}

TEST_F(EngineTest, WritesAreAuditedWithActorAndSurface) {
  engine->create_kb("k", "");
  auto item = add("k", "a.md", "# A\n\nx y z\n");
  engine->edit_document("k", item.doc_id, "# A\n\nchanged\n");
  engine->delete_document("k", item.doc_id);
  auto rows = catalog()->audit().list(100, "k");
  std::vector<std::string> actions;
  for (auto it = rows.rbegin(); it != rows.rend(); ++it) {
    actions.push_back(it->action);
    EXPECT_EQ(it->actor, "tester");
    EXPECT_EQ(it->surface, "library");
  }
  EXPECT_EQ(actions, (std::vector<std::string>{"kb.create", "document.add", "document.edit",
                                               "document.delete"}));
}

TEST_F(EngineTest, SearchesSeeWhatAnotherEngineCommitsBetweenThem) {
  // Each search reads one snapshot of the catalog; the next search must see the writes of
  // another connection (the server beside a CLI), in every mode that reads the catalog.
  engine->create_kb("k", "");
  EngineOptions o;
  o.data_dir = data;
  auto other = Engine::open(o);
  for (const char* mode : {"keyword", "grep"}) {
    SCOPED_TRACE(mode);
    SearchRequest r;
    r.kb = "k";
    r.mode = mode_from_name(mode);
    r.query = std::string("zeppelin") + mode;
    EXPECT_TRUE(engine->search(r).hits.empty());
    other->ingest_bytes("k", std::string(mode) + ".md", "# Z\n\n" + r.query + " airship\n", {});
    auto resp = engine->search(r);
    ASSERT_EQ(resp.hits.size(), 1u);
    EXPECT_EQ(resp.index_status.keyword, "ready");
  }
  // So are config changes (the parsed config is kept per text of it, not per KB).
  SearchRequest r;
  r.kb = "k";
  r.mode = Mode::keyword;
  r.query = "airship";
  EXPECT_EQ(engine->search(r).hits.size(), 2u);
  other->set_kb("k", {{"modes", R"(["grep"])"}});
  EXPECT_EQ(code_of([&] { engine->search(r); }), Code::mode_unavailable);
  other->set_kb("k", {{"modes", R"(["grep","keyword"])"}});
  EXPECT_EQ(engine->search(r).hits.size(), 2u);
}

TEST_F(EngineTest, SecondWriterWaitsThenFailsBusy) {
  engine->create_kb("k", "");
  EngineOptions o;
  o.data_dir = data;
  o.lock_timeout_ms = 100;
  auto second = Engine::open(o);
  {
    // Hold the data directory's writer lock as another process would.
    int fd = ::open((fs::path(data) / "write.lock").c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(flock(fd, LOCK_EX), 0);
    EXPECT_EQ(code_of([&] { second->ingest_bytes("k", "a.md", "# A\n\nx", {}); }), Code::busy);
    // readers never block
    EXPECT_NO_THROW(second->list_kbs());
    SearchRequest r;
    r.kb = "k";
    r.query = "x";
    EXPECT_NO_THROW(second->search(r));
    ::close(fd);
  }
  EXPECT_EQ(second->ingest_bytes("k", "a.md", "# A\n\nx", {}).status, "added");
}

}  // namespace
}  // namespace quarry::lifecycle

namespace quarry::lifecycle {
namespace {
using namespace testing_support;

TEST_F(EngineTest, RefusedRechunkLeavesConfigAndChunksUnchanged) {
  engine->create_kb("k", R"({"limits": {"max_chunks_per_document": 6}})");
  std::string text = "# Long\n\n";
  for (int i = 0; i < 300; ++i) text += "word" + std::to_string(i) + " ";
  auto small = add("k", "small.md", "# S\n\nA tiny note about a kiwi.\n");
  auto big = add("k", "big.md", text);
  auto other = add("k", "z-small.md", "# Z\n\nAnother tiny note, about a kea.\n");
  const auto big_chunks = engine->get_document("k", big.doc_id).chunk_count;
  const auto small_chunk_ids = [&] {
    std::vector<std::string> ids;
    for (const auto& c : catalog()->documents().chunks_of(ref(*catalog(), "k"), other.doc_id))
      ids.push_back(c.chunk_id);
    return ids;
  }();
  // 300 words in windows of 16 tokens need far more than 6 chunks.
  std::string why;
  EXPECT_EQ(code_of(
                [&] {
                  engine->set_kb("k", {{"chunking.max_tokens", "16"}});
                },
                nullptr, &why),
            Code::too_many_chunks)
      << why;
  auto info = engine->describe_kb("k");
  EXPECT_FALSE(info.config.chunking.max_tokens.has_value()) << info.config_json;
  EXPECT_EQ(engine->get_document("k", big.doc_id).chunk_count, big_chunks);
  std::vector<std::string> after_ids;
  for (const auto& c : catalog()->documents().chunks_of(ref(*catalog(), "k"), other.doc_id))
    after_ids.push_back(c.chunk_id);
  // Documents are as they were before the refused change (re-chunked under the old settings at
  // most, never left under the new ones).
  EXPECT_EQ(after_ids.size(), small_chunk_ids.size());
  EXPECT_EQ(hit_docs("k", "kiwi"), std::vector<std::string>{small.doc_id});
  EXPECT_EQ(hit_docs("k", "kea"), std::vector<std::string>{other.doc_id});
}

}  // namespace
}  // namespace quarry::lifecycle
