// The index lifecycle (SPEC §1, §7) through the Engine: pending vectors after ingest, the
// embedding cache (counted provider calls), blue-green re-embedding with dimension changes,
// permanent failures tombstoned, retryable ones kept pending, cancel and resume.
#include <atomic>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "embed/provider.h"
#include "engine/engine_fixture.h"
#include "numbered.h"
#include "quarry/indexer.h"

namespace quarry::lifecycle::testing_support {
using quarry::testing::numbered;
namespace {
using nlohmann::json;

// A provider around `hash` that counts what it is asked to embed and fails on demand:
// texts containing "POISON" are refused as input_rejected (permanent, per document); while
// `g_outage` is set every call fails with rate_limited (retryable).
std::atomic<int> g_calls{0};
std::atomic<int> g_texts{0};
std::atomic<bool> g_outage{false};

class CountingProvider final : public embed::EmbeddingProvider {
 public:
  explicit CountingProvider(std::unique_ptr<embed::EmbeddingProvider> inner)
      : inner_(std::move(inner)) {}
  std::string id() const override { return "counting"; }
  std::string model() const override { return inner_->model(); }
  int dimensions() const override { return inner_->dimensions(); }
  int max_input_tokens() const override { return inner_->max_input_tokens(); }
  std::size_t count_tokens(std::string_view t) const override { return inner_->count_tokens(t); }
  std::string identity() const override { return "counting/" + inner_->identity(); }
  std::vector<embed::Vector> embed_documents(const std::vector<std::string>& texts) override {
    ++g_calls;
    if (g_outage) throw Error(Code::rate_limited, "fake provider: try again later");
    for (const auto& t : texts)
      if (t.find("POISON") != std::string::npos)
        throw Error(Code::input_rejected, "fake provider: this input is refused");
    g_texts += static_cast<int>(texts.size());
    return inner_->embed_documents(texts);
  }
  embed::Vector embed_query(const std::string& text) override { return inner_->embed_query(text); }

 private:
  std::unique_ptr<embed::EmbeddingProvider> inner_;
};

void register_counting_provider() {
  static std::once_flag once;
  std::call_once(once, [] {
    embed::ProviderRegistry::builtin().add("counting", [](const embed::ProviderSpec& spec,
                                                          const embed::ProviderContext& ctx) {
      embed::ProviderSpec h{"hash", spec.model, spec.settings};
      return std::make_unique<CountingProvider>(embed::ProviderRegistry::builtin().create(h, ctx));
    });
  });
}

// A Markdown document of `n` sections, each well under the chunk budget: one chunk each.
std::string sections(int n, int changed = -1) {
  std::string md;
  for (int i = 0; i < n; ++i) {
    md += numbered("## Section ", i) + numbered("\n\nParagraph ", i) +
          numbered(" talks about topic ", i * 7919 % 1000) + " and nothing else.";
    if (i == changed) md += " This paragraph was edited.";
    md += "\n\n";
  }
  return md;
}

class Lifecycle : public EngineTest {
 protected:
  void SetUp() override {
    register_counting_provider();
    g_calls = 0;
    g_texts = 0;
    g_outage = false;
  }
  void make_kb(const std::string& provider = "counting:64", const std::string& store = "embedded") {
    engine->create_kb("k", json{{"embedder", {{"provider", provider}}},
                                {"store", {{"id", store}}},
                                {"chunking", {{"max_tokens", 128}, {"overlap_tokens", 0}}}}
                               .dump());
  }
  std::string add(const std::string& name, const std::string& text) {
    return engine->ingest_bytes("k", name, text, {}).doc_id;
  }
  SearchResponse vector_search(const std::string& q, int k = 5) {
    SearchRequest r;
    r.kb = "k";
    r.query = q;
    r.mode = Mode::vector;
    r.top_k = k;
    return engine->search(r);
  }
  std::vector<catalog::AuditRow> events() {
    std::vector<catalog::AuditRow> out;
    for (auto& a : catalog()->audit().list(1000, "k"))
      if (a.action.rfind("reembed_", 0) == 0) out.push_back(a);
    return out;
  }
};

TEST_F(Lifecycle, IngestLeavesVectorsPendingAndReindexEmbedsNewestFirst) {
  make_kb();
  std::string a = add("a.md", "# A\n\nalpha alpha");
  std::string b = add("b.md", "# B\n\nbravo bravo");
  EXPECT_EQ(engine->get_document("k", a).index_status.vector, "not_built");
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "not_built");
  EXPECT_EQ(engine->describe_kb("k").vectors.pending, 2);
  EXPECT_EQ(g_calls, 0);  // ingest returned before any provider call
  EXPECT_TRUE(vector_search("alpha").hits.empty());

  ReindexOptions o;
  o.max_documents = 1;
  auto first = engine->reindex("k", o);
  EXPECT_EQ(first.documents, 1);
  EXPECT_EQ(engine->get_document("k", b).index_status.vector, "ready");  // newest first
  EXPECT_EQ(engine->get_document("k", a).index_status.vector, "not_built");
  auto rest = engine->reindex("k", {});
  EXPECT_EQ(rest.documents, 1);
  EXPECT_EQ(rest.pending, 0);
  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.index_status.vector, "ready");
  EXPECT_EQ(info.vectors.ready, 2);
  EXPECT_EQ(info.vectors.stored, 2);
  EXPECT_EQ(vector_search("alpha alpha").hits.at(0).doc_id, a);
  // Nothing pending: a sweep calls no provider.
  g_calls = 0;
  EXPECT_EQ(engine->reindex("k", {}).documents, 0);
  EXPECT_EQ(g_calls, 0);
}

TEST_F(Lifecycle, AnEditReembedsOnlyTheChangedChunk) {
  make_kb();
  std::string id = add("big.md", sections(100));
  ASSERT_EQ(engine->get_document("k", id).chunk_count, 100);
  engine->reindex("k", {});
  EXPECT_EQ(g_texts, 100);
  g_texts = 0;
  engine->edit_document("k", id, sections(100, 42));
  auto r = engine->reindex("k", {});
  EXPECT_EQ(g_texts, 1);  // one paragraph changed: one chunk to the provider
  EXPECT_EQ(r.chunks, 100);
  EXPECT_EQ(r.chunks_embedded, 1);
  EXPECT_EQ(r.chunks_cached, 99);
  EXPECT_EQ(engine->describe_kb("k").vectors.stored, 100);
  auto hits = vector_search("This paragraph was edited", 1).hits;
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_NE(hits[0].snippet.find("edited"), std::string::npos);
}

TEST_F(Lifecycle, AChunkingChangeReembedsOnlyChunksWhoseTextChanged) {
  make_kb();
  add("big.md", sections(30));
  engine->reindex("k", {});
  g_texts = 0;
  // Sections fit both budgets: the chunk texts are the same, only the revision changed.
  auto before = engine->describe_kb("k").revision;
  engine->set_kb("k", {{"chunking.max_tokens", "256"}});
  EXPECT_NE(engine->describe_kb("k").revision, before);
  auto r = engine->reindex("k", {});
  EXPECT_TRUE(r.cut_over);
  EXPECT_EQ(r.documents, 1);
  EXPECT_EQ(g_texts, 0);
  EXPECT_EQ(r.chunks_cached, 30);
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "ready");
}

TEST_F(Lifecycle, BlueGreenServesTheOldRevisionUntilTheNewOneIsComplete) {
  make_kb("counting:64");
  std::vector<std::string> ids;
  for (int i = 0; i < 6; ++i)
    ids.push_back(
        add(numbered("d", i) + ".md", numbered("# Doc ", i) + "\n\nrocket orbit launch number " +
                                          std::to_string(i) + (i == 3 ? " sourdough bread" : "")));
  engine->reindex("k", {});
  const auto old_rev = engine->describe_kb("k").vectors.serving_revision;

  // A new embedder with other dimensions: built beside the old one.
  engine->set_kb("k", {{"embedder.provider", "counting:32"}});
  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.serving_revision, old_rev);
  EXPECT_EQ(info.vectors.building_revision, info.revision);
  EXPECT_NE(info.revision, old_rev);
  EXPECT_EQ(info.index_status.vector, "stale");
  EXPECT_EQ(engine->get_document("k", ids[0]).index_status.vector, "stale");
  ASSERT_EQ(events().size(), 1u);
  EXPECT_EQ(events()[0].action, "reembed_started");
  EXPECT_EQ(json::parse(events()[0].details_json)["previous"], old_rev);

  // Half built: queries are still embedded by the 64-d embedder against 64-d vectors only.
  ReindexOptions half;
  half.max_documents = 3;
  auto partial = engine->reindex("k", half);
  EXPECT_FALSE(partial.cut_over);
  auto r = vector_search("sourdough bread", 6);
  ASSERT_EQ(r.hits.size(), 6u);  // every document, from the complete old revision
  EXPECT_EQ(r.hits[0].doc_id, ids[3]);
  EXPECT_EQ(engine->describe_kb("k").vectors.serving_revision, old_rev);

  auto done = engine->reindex("k", {});
  EXPECT_TRUE(done.cut_over);
  info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.serving_revision, info.revision);
  EXPECT_EQ(info.vectors.previous_revision, old_rev);
  EXPECT_EQ(info.index_status.vector, "ready");
  EXPECT_EQ(info.vectors.stored, 6);
  EXPECT_EQ(vector_search("sourdough bread", 1).hits.at(0).doc_id, ids[3]);
  auto ev = events();
  ASSERT_GE(ev.size(), 2u);
  EXPECT_EQ(ev[0].action, "reembed_completed");  // newest first
  EXPECT_EQ(json::parse(ev[0].details_json)["new"], info.revision);

  // Switching back to the previous revision, still complete, is instant: no provider call.
  g_calls = 0;
  engine->set_kb("k", {{"embedder.provider", "counting:64"}});
  info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.serving_revision, old_rev);
  EXPECT_EQ(info.index_status.vector, "ready");
  EXPECT_EQ(vector_search("sourdough bread", 1).hits.at(0).doc_id, ids[3]);
  EXPECT_EQ(g_calls, 0);

  // The next reconciliation collects the revision the cut-over left.
  engine->reindex("k", {});
  info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.previous_revision, "");
  EXPECT_EQ(info.vectors.stored, 6);
}

// A chunking change is blue-green too: until the new revision is complete, keyword and vector
// hits both come from the old chunks; the cut-over swaps every document's chunks at once.
TEST_F(Lifecycle, BlueGreenChunkingSwapsChunksAtTheCutOver) {
  make_kb("counting:64");
  // Three sections of ~60 words: three chunks at 128 tokens, fewer at 512.
  std::string md;
  for (int s = 0; s < 3; ++s) {
    md += numbered("## Part ", s) + "\n\n";
    for (int w = 0; w < 60; ++w) md += numbered("word", s * 100 + w) + " ";
    md += "\n\n";
  }
  std::string id = add("doc.md", md);
  engine->reindex("k", {});
  ASSERT_EQ(engine->get_document("k", id).chunk_count, 3);
  const auto old_chunks = catalog()->documents().chunks_of(ref(*catalog(), "k"), id);

  engine->set_kb("k", {{"chunking.max_tokens", "512"}, {"chunking.profile", "none"}});
  auto info = engine->describe_kb("k");
  ASSERT_NE(info.vectors.building_revision, "");
  EXPECT_EQ(info.index_status.vector, "stale");
  // Still the old chunks, for keyword and vector alike.
  EXPECT_EQ(engine->get_document("k", id).chunk_count, 3);
  SearchRequest kw;
  kw.kb = "k";
  kw.query = "word105";
  kw.mode = Mode::keyword;
  auto kh = engine->search(kw).hits;
  ASSERT_EQ(kh.size(), 1u);
  EXPECT_EQ(kh[0].chunk_id, old_chunks[1].chunk_id);
  auto vh = vector_search("word205 word206", 3).hits;
  ASSERT_FALSE(vh.empty());
  for (const auto& h : vh)
    EXPECT_EQ(h.chunk_id, old_chunks[static_cast<std::size_t>(h.chunk_index)].chunk_id);

  // A document added during the build is chunked like the others and built in both.
  std::string late = add("late.md", "# Late\n\nlate arrival");
  EXPECT_EQ(catalog()->documents().find(ref(*catalog(), "k"), late)->chunking,
            catalog()->revisions().in_state(ref(*catalog(), "k"), "serving")->config_revision);

  auto r = engine->reindex("k", {});
  EXPECT_TRUE(r.cut_over);
  EXPECT_EQ(r.pending, 0);
  info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.serving_revision, info.revision);
  EXPECT_EQ(info.vectors.previous_revision, "");  // its chunks are gone: dropped at once
  EXPECT_EQ(info.index_status.vector, "ready");
  auto doc = engine->get_document("k", id);
  EXPECT_EQ(doc.chunk_count, 1);
  EXPECT_EQ(info.vectors.stored, 2);
  auto now = catalog()->documents().chunks_of(ref(*catalog(), "k"), id);
  ASSERT_EQ(now.size(), 1u);
  // Offsets point into the Markdown file, as always.
  std::string file = quarry::testing::read_file(md_file("k", id).string());
  EXPECT_EQ(file.substr(static_cast<std::size_t>(now[0].offset), 10), "## Part 0\n");
  auto after = engine->search(kw).hits;
  ASSERT_EQ(after.size(), 1u);
  EXPECT_EQ(after[0].chunk_id, now[0].chunk_id);
  EXPECT_EQ(vector_search("word205", 1).hits.at(0).chunk_id, now[0].chunk_id);
}

TEST_F(Lifecycle, ImmediateCutoverDropsTheOldVectorsAtOnce) {
  make_kb("counting:64");
  add("a.md", "# A\n\nrocket orbit");
  engine->reindex("k", {});
  engine->set_kb("k", {{"embedder.provider", "counting:32"}}, /*cutover_immediate=*/true);
  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.serving_revision, info.revision);
  EXPECT_EQ(info.vectors.building_revision, "");
  EXPECT_EQ(info.vectors.stored, 0);
  EXPECT_EQ(info.index_status.vector, "not_built");
  EXPECT_TRUE(vector_search("rocket").hits.empty());
  engine->reindex("k", {});
  EXPECT_EQ(vector_search("rocket").hits.size(), 1u);
}

TEST_F(Lifecycle, RevertingTheConfigCancelsABuild) {
  make_kb("counting:64");
  add("a.md", "# A\n\nrocket orbit");
  engine->reindex("k", {});
  auto rev = engine->describe_kb("k").revision;
  engine->set_kb("k", {{"embedder.provider", "counting:32"}});
  EXPECT_NE(engine->describe_kb("k").vectors.building_revision, "");
  engine->set_kb("k", {{"embedder.provider", "counting:64"}});
  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.serving_revision, rev);
  EXPECT_EQ(info.vectors.building_revision, "");
  EXPECT_EQ(info.index_status.vector, "ready");
}

TEST_F(Lifecycle, PermanentFailuresAreTombstonedAndRetryableOnesStayPending) {
  make_kb();
  std::string good = add("good.md", "# Good\n\nplain text");
  std::string bad = add("bad.md", "# Bad\n\nthis one carries POISON inside");
  auto r = engine->reindex("k", {});
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.documents, 1);
  EXPECT_EQ(r.error_code, "");
  auto failed_doc = engine->get_document("k", bad);
  EXPECT_EQ(failed_doc.index_status.vector, "failed");
  ASSERT_TRUE(failed_doc.vector_failure.has_value());  // failed, with its code
  EXPECT_EQ(failed_doc.vector_failure->code, "input_rejected");
  EXPECT_FALSE(engine->get_document("k", good).vector_failure.has_value());
  auto again = engine->ingest_bytes("k", "bad.md", "# Bad\n\nthis one carries POISON inside", {});
  EXPECT_EQ(again.status, "unchanged");
  EXPECT_EQ(again.vector_status, "failed");
  EXPECT_EQ(again.vector_code, "input_rejected");
  EXPECT_EQ(engine->get_document("k", good).index_status.vector, "ready");
  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.index_status.vector, "failed");  // worst case wins
  ASSERT_EQ(info.vectors.failures.size(), 1u);
  EXPECT_EQ(info.vectors.failures[0].doc_id, bad);
  EXPECT_EQ(info.vectors.failures[0].code, "input_rejected");
  // A tombstone is not retried...
  g_calls = 0;
  EXPECT_EQ(engine->reindex("k", {}).failed, 0);
  EXPECT_EQ(g_calls, 0);
  // ...until the content changes.
  engine->edit_document("k", bad, "# Bad\n\nnow harmless");
  EXPECT_EQ(engine->reindex("k", {}).documents, 1);
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "ready");

  // An outage stops the sweep and loses nothing.
  add("c.md", "# C\n\ncharlie");
  add("d.md", "# D\n\ndelta");
  g_outage = true;
  auto down = engine->reindex("k", {});
  EXPECT_EQ(down.error_code, "rate_limited");
  EXPECT_EQ(down.pending, 2);
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "not_built");
  g_outage = false;
  auto up = engine->reindex("k", {});
  EXPECT_EQ(up.documents, 2);
  EXPECT_EQ(up.pending, 0);
}

TEST_F(Lifecycle, ASweepCanBeCancelledAndResumes) {
  make_kb();
  for (int i = 0; i < 150; ++i) add(numbered("d", i) + ".md", numbered("# D\n\nnumber ", i));
  std::atomic<bool> cancel{false};
  ReindexOptions o;
  o.cancel = &cancel;
  std::vector<ReindexProgress> seen;
  o.progress = [&](const ReindexProgress& p) {
    seen.push_back(p);
    if (p.done > 0) cancel = true;  // after the first page
  };
  auto r = engine->reindex("k", o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_GT(r.pending, 0);
  EXPECT_LT(r.documents, 150);
  ASSERT_GE(seen.size(), 2u);
  EXPECT_EQ(seen.front().total, 150);
  EXPECT_GT(seen.back().rate, 0);
  auto rest = engine->reindex("k", {});
  EXPECT_EQ(r.documents + rest.documents, 150);
  EXPECT_EQ(engine->describe_kb("k").vectors.stored, 150);
}

TEST_F(Lifecycle, PendingDocumentsPageOnFromACursorNewestFirst) {
  make_kb();
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i)
    ids.push_back(add(numbered("d", i) + ".md", numbered("# D\n\nnumber ", i)));
  const std::string rev = engine->describe_kb("k").revision;
  auto cat = catalog();
  auto all = cat->revisions().pending(ref(*cat, "k"), rev, 10);
  ASSERT_EQ(all.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(all[i].doc_id, ids[4 - i]);  // newest first
  auto next =
      cat->revisions().pending(ref(*cat, "k"), rev, 2, &all[1]);  // the page after the first two
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].doc_id, ids[2]);
  EXPECT_EQ(next[1].doc_id, ids[1]);
  EXPECT_TRUE(cat->revisions().pending(ref(*cat, "k"), rev, 10, &all[4]).empty());
  // Only what was written since a moment: here the newest document's own.
  auto since = cat->revisions().pending(ref(*cat, "k"), rev, 10, nullptr, all[0].updated_at);
  ASSERT_FALSE(since.empty());
  EXPECT_EQ(since[0].doc_id, ids[4]);
  for (const auto& d : since) EXPECT_GE(d.updated_at, all[0].updated_at);
}

// A sweep's pages go on from where the last one ended; what is written while it runs still
// comes first, as it would have at its start, and an edit behind it is not left behind.
TEST_F(Lifecycle, DocumentsWrittenDuringASweepGoFirst) {
  make_kb();
  std::vector<std::string> ids;
  for (int i = 0; i < 200; ++i)
    ids.push_back(add(numbered("d", i) + ".md", numbered("# D\n\nnumber ", i)));
  std::atomic<bool> cancel{false};
  std::string fresh;
  int pages = 0;
  ReindexOptions o;
  o.cancel = &cancel;
  o.progress = [&](const ReindexProgress& p) {
    if (p.done == 0) return;
    if (++pages == 1) {  // the first page embedded the 64 newest, ids.back() among them
      fresh = add("fresh.md", "# F\n\nwritten while the sweep runs");
      engine->edit_document("k", ids.back(), "# D\n\nthe newest, edited after its page");
    } else {
      cancel = true;  // after the second page
    }
  };
  auto r = engine->reindex("k", o);
  EXPECT_TRUE(r.cancelled);
  EXPECT_EQ(pages, 2);
  EXPECT_EQ(engine->get_document("k", fresh).index_status.vector, "ready");
  EXPECT_EQ(engine->get_document("k", ids.back()).index_status.vector, "ready");
  EXPECT_EQ(engine->get_document("k", ids.front()).index_status.vector, "not_built");
  auto rest = engine->reindex("k", {});
  EXPECT_EQ(rest.pending, 0);
  EXPECT_EQ(r.documents + rest.documents, 202);  // the edited one twice
  EXPECT_EQ(engine->describe_kb("k").vectors.ready, 201);
}

TEST_F(Lifecycle, DeletingADocumentForgetsItsVectorsAndCoordinates) {
  make_kb("counting:64", "memory");
  std::string a = add("a.md", "# A\n\nrocket orbit");
  add("b.md", "# B\n\nbread");
  engine->reindex("k", {});
  engine->delete_document("k", a);
  EXPECT_TRUE(catalog()->revisions().coordinates_of(ref(*catalog(), "k"), a).empty());
  EXPECT_EQ(engine->describe_kb("k").vectors.stored, 1);
  for (const auto& h : vector_search("rocket orbit").hits) EXPECT_NE(h.doc_id, a);
}

// The server's in-process scheduler: reconciles on start, sweeps when poked, backs off after
// a provider failure and recovers, stops promptly.
TEST_F(Lifecycle, TheBackgroundIndexerEmbedsWhatIsPendingAndRecovers) {
  make_kb();
  add("a.md", "# A\n\nalpha");
  add("b.md", "# B\n\nbravo");
  IndexerOptions o;
  o.engine.data_dir = data;
  o.engine.lock_timeout_ms = 5000;
  o.min_backoff = std::chrono::milliseconds(20);
  auto indexer = Indexer::start(o);
  ASSERT_TRUE(indexer->wait_idle(std::chrono::seconds(20)));
  EXPECT_EQ(engine->describe_kb("k").index_status.vector, "ready");  // reconciled on start
  EXPECT_EQ(indexer->state().at("k").last->documents, 2);

  add("c.md", "# C\n\ncharlie");
  indexer->poke("k");
  ASSERT_TRUE(indexer->wait_idle(std::chrono::seconds(20)));
  EXPECT_EQ(indexer->state().at("k").last->documents, 1);
  EXPECT_EQ(engine->describe_kb("k").vectors.ready, 3);

  g_outage = true;
  add("d.md", "# D\n\ndelta");
  indexer->poke("k");
  for (int i = 0; i < 400 && indexer->state().at("k").consecutive_failures == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GT(indexer->state().at("k").consecutive_failures, 0);
  EXPECT_EQ(indexer->state().at("k").last->error_code, "rate_limited");
  EXPECT_EQ(engine->describe_kb("k").vectors.pending, 1);
  g_outage = false;  // the backoff retries on its own
  for (int i = 0; i < 400 && engine->describe_kb("k").vectors.pending > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(engine->describe_kb("k").vectors.pending, 0);
  indexer->stop();
}

}  // namespace
}  // namespace quarry::lifecycle::testing_support
