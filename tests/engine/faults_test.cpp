// The index lifecycle's failure rules (SPEC §7) end to end: an Engine whose KB embeds with the
// real `openai` provider (curl, retries, status mapping) against a loopback embedding server
// that injects faults by content (413, 400 "input is too long") and on demand (429/500
// outages). Checks that permanent failures are tombstoned per document and never resent until
// the content or revision changes, that a batch mixing a poisoned document with good ones is
// bisected per document, and that an outage stops the sweep with nothing tombstoned and nothing
// lost.
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "engine/engine_fixture.h"
#include "net/fault_embed_server.h"

namespace quarry::lifecycle::testing_support {
namespace {

using nlohmann::json;
using quarry::testing::FaultEmbedServer;

constexpr int kDims = 8;

// A Markdown document of `n` sections, each well under the chunk budget: one chunk each.
// `tag` makes its text unique (no two documents share a chunk, so the cache never hides a
// request); `inject` lands in the last section's text.
std::string doc_text(const std::string& tag, int n, const std::string& inject = "") {
  std::string md = "# Document " + tag + "\n\n";
  for (int i = 0; i < n; ++i) {
    md += "## Part " + std::to_string(i) + "\n\nThis is part " + std::to_string(i) + " of " + tag +
          ", about topic " + std::to_string(i * 7919 % 1000) + " and nothing else.";
    if (i == n - 1 && !inject.empty()) md += " " + inject;
    md += "\n\n";
  }
  return md;
}

class LifecycleFaults : public EngineTest {
 protected:
  FaultEmbedServer server{kDims};
  int timeout_ms = 3000;  // the provider's per-request limit

  // Close the engine (and its keep-alive connections) before the server stops: members of
  // this class go before the base's, and the server would wait out an open connection.
  void TearDown() override { engine.reset(); }

  json settings() const {
    return {{"base_url", server.base_url()}, {"dimensions", kDims},
            {"allow_private", true},         {"max_retries", 1},
            {"retry_base_delay_ms", 1},      {"retry_max_delay_ms", 5},
            {"timeout_ms", timeout_ms}};
  }

  void make_kb(const std::string& model = "fault-model") {
    engine->create_kb(
        "k", json{{"embedder", {{"provider", "openai:" + model}, {"settings", settings()}}},
                  {"store", {{"id", "embedded"}}},
                  {"chunking", {{"max_tokens", 128}, {"overlap_tokens", 0}}}}
                 .dump());
  }

  std::string add(const std::string& name, const std::string& text) {
    return engine->ingest_bytes("k", name, text, {}).doc_id;
  }

  std::string status(const std::string& id) {
    return engine->get_document("k", id).index_status.vector;
  }

  std::int64_t chunks_of(const std::vector<std::string>& ids) {
    std::int64_t n = 0;
    for (const auto& id : ids) n += engine->get_document("k", id).chunk_count;
    return n;
  }

  // doc id -> failure code, as KbInfo.vectors.failures lists them.
  std::map<std::string, std::string> failures() {
    std::map<std::string, std::string> out;
    for (const auto& f : engine->describe_kb("k").vectors.failures) out[f.doc_id] = f.code;
    return out;
  }

  ReindexReport reindex(int batch_chunks = 256, int workers = 0) {
    ReindexOptions o;
    o.batch_chunks = batch_chunks;
    o.workers = workers;
    return engine->reindex("k", o);
  }
};

TEST_F(LifecycleFaults, PermanentFailuresAreTombstonedWithTheirCodesAndNeverResent) {
  make_kb();
  std::string good1 = add("good1.md", doc_text("good1", 3));
  std::string big = add("big.md", doc_text("big", 2, FaultEmbedServer::kTooLarge));
  std::string good2 = add("good2.md", doc_text("good2", 2));
  std::string bad = add("bad.md", doc_text("bad", 2, FaultEmbedServer::kRejected));
  EXPECT_EQ(engine->describe_kb("k").vectors.pending, 4);
  EXPECT_EQ(server.requests(), 0);  // ingest never calls the provider

  auto r = reindex();
  EXPECT_EQ(r.error_code, "") << r.error_message;
  EXPECT_EQ(r.documents, 2);
  EXPECT_EQ(r.failed, 2);
  EXPECT_EQ(r.pending, 0);
  EXPECT_EQ(r.chunks, chunks_of({good1, good2}));
  EXPECT_GE(server.too_large_requests(), 1);
  EXPECT_GE(server.rejected_requests(), 1);

  EXPECT_EQ(status(big), "failed");
  EXPECT_EQ(status(bad), "failed");
  EXPECT_EQ(status(good1), "ready");
  EXPECT_EQ(status(good2), "ready");

  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.index_status.vector, "failed");  // worst case wins
  EXPECT_EQ(info.vectors.documents, 4);
  EXPECT_EQ(info.vectors.ready, 2);
  EXPECT_EQ(info.vectors.failed, 2);
  EXPECT_EQ(info.vectors.pending, 0);
  EXPECT_EQ(info.vectors.stored, chunks_of({good1, good2}));
  ASSERT_EQ(info.vectors.failures.size(), 2u);
  auto f = failures();
  EXPECT_EQ(f[big], "content_too_large");
  EXPECT_EQ(f[bad], "input_rejected");
  for (const auto& fail : info.vectors.failures) {
    EXPECT_NE(fail.message.find("HTTP"), std::string::npos) << fail.message;
    EXPECT_FALSE(fail.at.empty());
  }

  // A tombstone is not retried: the next sweep sends nothing at all...
  const int before = server.requests();
  auto again = reindex();
  EXPECT_EQ(again.error_code, "");
  EXPECT_EQ(again.documents, 0);
  EXPECT_EQ(again.failed, 0);
  EXPECT_EQ(again.provider_calls, 0);
  EXPECT_EQ(server.requests(), before);
  // ...nor after a restart: tombstones live in the catalog, not in the process.
  engine.reset();
  engine = open_engine();
  auto restarted = reindex();
  EXPECT_EQ(restarted.error_code, "");
  EXPECT_EQ(restarted.failed, 0);
  EXPECT_EQ(server.requests(), before);
  EXPECT_EQ(status(big), "failed");
  EXPECT_EQ(failures().size(), 2u);
}

TEST_F(LifecycleFaults, EditingAFailedDocumentMakesItPendingAndTheNextSweepEmbedsIt) {
  make_kb();
  std::string good = add("good.md", doc_text("good", 2));
  std::string big = add("big.md", doc_text("big", 3, FaultEmbedServer::kTooLarge));
  std::string bad = add("bad.md", doc_text("bad", 1, FaultEmbedServer::kRejected));
  auto r = reindex();
  ASSERT_EQ(r.failed, 2);
  ASSERT_EQ(status(big), "failed");

  // The fixed content is pending again; its tombstone no longer applies.
  engine->edit_document("k", big, doc_text("big-fixed", 3));
  EXPECT_EQ(status(big), "not_built");
  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.pending, 1);
  EXPECT_EQ(info.vectors.failed, 1);
  EXPECT_EQ(failures().count(big), 0u);
  EXPECT_EQ(failures().count(bad), 1u);

  const int before = server.requests();
  auto fixed = reindex();
  EXPECT_EQ(fixed.error_code, "") << fixed.error_message;
  EXPECT_EQ(fixed.documents, 1);
  EXPECT_EQ(fixed.failed, 0);
  EXPECT_EQ(server.requests(), before + 1);  // only the edited document's chunks
  auto last = server.inputs().back();
  EXPECT_EQ(static_cast<std::int64_t>(last.size()), engine->get_document("k", big).chunk_count);
  for (const auto& t : last) EXPECT_NE(t.find("big-fixed"), std::string::npos) << t;
  EXPECT_EQ(status(big), "ready");
  EXPECT_EQ(status(bad), "failed");

  // An edit that still carries the poison is retried once (new content), then tombstoned anew.
  engine->edit_document("k", bad, doc_text("bad-v2", 2, FaultEmbedServer::kRejected));
  EXPECT_EQ(status(bad), "not_built");
  auto still = reindex();
  EXPECT_EQ(still.failed, 1);
  EXPECT_EQ(still.error_code, "");
  EXPECT_EQ(failures()[bad], "input_rejected");
  const int after = server.requests();
  EXPECT_EQ(reindex().provider_calls, 0);
  EXPECT_EQ(server.requests(), after);

  // Fixing it clears the last failure: the KB is ready and every chunk is stored.
  engine->edit_document("k", bad, doc_text("bad-fixed", 2));
  auto done = reindex();
  EXPECT_EQ(done.documents, 1);
  info = engine->describe_kb("k");
  EXPECT_EQ(info.index_status.vector, "ready");
  EXPECT_EQ(info.vectors.failed, 0);
  EXPECT_TRUE(info.vectors.failures.empty());
  EXPECT_EQ(info.vectors.pending, 0);
  EXPECT_EQ(info.vectors.stored, chunks_of({good, big, bad}));
  EXPECT_EQ(info.vectors.stored, info.chunks);
}

TEST_F(LifecycleFaults, ARevisionChangeRetriesTombstonedDocuments) {
  make_kb("model-a");
  std::string good = add("good.md", doc_text("good", 2));
  std::string big = add("big.md", doc_text("big", 2, FaultEmbedServer::kTooLarge));
  ASSERT_EQ(reindex().failed, 1);
  const int before = server.requests();
  EXPECT_EQ(reindex().provider_calls, 0);
  EXPECT_EQ(server.requests(), before);

  // A new embedder is a new revision: its build tries the document again (and the
  // server refuses it again, so it is tombstoned under the new revision too).
  engine->set_kb("k", {{"embedder.provider", "openai:model-b"}});
  EXPECT_EQ(status(big), "not_built");
  auto r = reindex();
  EXPECT_EQ(r.error_code, "") << r.error_message;
  EXPECT_TRUE(r.cut_over);
  EXPECT_EQ(r.failed, 1);
  EXPECT_GT(server.requests_with(FaultEmbedServer::kTooLarge), 1);
  EXPECT_EQ(status(big), "failed");
  EXPECT_EQ(status(good), "ready");
  EXPECT_EQ(failures()[big], "content_too_large");
  const int after = server.requests();
  EXPECT_EQ(reindex().provider_calls, 0);
  EXPECT_EQ(server.requests(), after);
}

struct OutageCase {
  FaultEmbedServer::Outage outage;
  const char* code;
  int timeout_ms = 3000;
};

void PrintTo(const OutageCase& c, std::ostream* os) {
  *os << c.code;
}

std::string outage_name(const ::testing::TestParamInfo<OutageCase>& info) {
  static const char* const names[] = {"none", "rate_limited", "server_error", "slow",
                                      "model_refused"};
  return names[static_cast<int>(info.param.outage)];
}

class LifecycleOutage : public LifecycleFaults, public ::testing::WithParamInterface<OutageCase> {};

TEST_P(LifecycleOutage, StopsTheSweepTombstonesNothingAndResumesAfterwards) {
  timeout_ms = GetParam().timeout_ms;
  make_kb();
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i)
    ids.push_back(add("d" + std::to_string(i) + ".md", doc_text("d" + std::to_string(i), 1 + i)));

  server.set_outage(GetParam().outage);
  // Small batches and several workers: every concurrent call fails.
  auto down = reindex(/*batch_chunks=*/2, /*workers=*/3);
  EXPECT_EQ(down.error_code, GetParam().code) << down.error_message;
  EXPECT_FALSE(down.error_message.empty());
  EXPECT_EQ(down.documents, 0);
  EXPECT_EQ(down.failed, 0);
  EXPECT_EQ(down.pending, 4);
  // max_retries 1: a retryable failure is tried twice; a 400 only once.
  const bool retried = GetParam().outage != FaultEmbedServer::Outage::model_refused;
  EXPECT_GE(server.outage_requests(), retried ? 2 : 1);

  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.pending, 4);
  EXPECT_EQ(info.vectors.failed, 0);
  EXPECT_TRUE(info.vectors.failures.empty());
  EXPECT_EQ(info.vectors.stored, 0);
  EXPECT_EQ(info.index_status.vector, "not_built");
  for (const auto& id : ids) EXPECT_EQ(status(id), "not_built");

  // Still down: the same again, and still nothing tombstoned.
  auto still = reindex();
  EXPECT_EQ(still.error_code, GetParam().code);
  EXPECT_EQ(still.failed, 0);
  EXPECT_EQ(engine->describe_kb("k").vectors.pending, 4);

  server.set_outage(FaultEmbedServer::Outage::none);
  auto up = reindex(/*batch_chunks=*/2, /*workers=*/3);
  EXPECT_EQ(up.error_code, "") << up.error_message;
  EXPECT_EQ(up.documents, 4);
  EXPECT_EQ(up.failed, 0);
  EXPECT_EQ(up.pending, 0);
  info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.pending, 0);
  EXPECT_EQ(info.vectors.ready, 4);
  EXPECT_EQ(info.index_status.vector, "ready");
  EXPECT_EQ(info.vectors.stored, chunks_of(ids));
  EXPECT_EQ(info.vectors.stored, info.chunks);
  for (const auto& id : ids) EXPECT_EQ(status(id), "ready");

  // And the vectors answer queries (the query itself is embedded by the server).
  SearchRequest q;
  q.kb = "k";
  q.query = "This is part 0 of d2";
  q.mode = Mode::vector;
  q.top_k = 3;
  EXPECT_FALSE(engine->search(q).hits.empty());
}

INSTANTIATE_TEST_SUITE_P(
    Outages, LifecycleOutage,
    ::testing::Values(OutageCase{FaultEmbedServer::Outage::rate_limited, "rate_limited"},
                      OutageCase{FaultEmbedServer::Outage::server_error, "upstream_error"},
                      OutageCase{FaultEmbedServer::Outage::slow, "timeout",
                                 FaultEmbedServer::kSlowMs / 4},
                      // A 400 about the model is not the input's fault.
                      OutageCase{FaultEmbedServer::Outage::model_refused, "upstream_error"}),
    outage_name);

// The embedder goes down after the vectors were built: a hybrid query cannot embed its text,
// so it is answered by keyword, says why, and its hits are whole rows with highlighted snippets.
TEST_F(LifecycleFaults, AHybridQueryWhoseTextCannotBeEmbeddedIsAnsweredByKeyword) {
  make_kb();
  const std::string d1 = add("d1.md", doc_text("d1", 3));
  add("d2.md", doc_text("d2", 2));
  ASSERT_EQ(reindex().pending, 0);
  server.set_outage(FaultEmbedServer::Outage::server_error);
  SearchRequest q;
  q.kb = "k";
  q.query = "part 2 of d1";
  q.mode = Mode::hybrid;
  q.top_k = 2;
  auto r = engine->search(q);
  EXPECT_EQ(r.mode, Mode::keyword);
  ASSERT_EQ(r.degraded.size(), 1u);
  EXPECT_NE(r.degraded[0].find("answered by keyword"), std::string::npos) << r.degraded[0];
  ASSERT_EQ(r.hits.size(), 2u);
  EXPECT_EQ(r.hits[0].doc_id, d1);
  EXPECT_EQ(r.hits[0].heading_path, (std::vector<std::string>{"Document d1", "Part 2"}));
  for (const auto& h : r.hits) {
    EXPECT_EQ(h.metric, "bm25");
    EXPECT_FALSE(h.filename.empty());
    EXPECT_NE(h.snippet.find("**d1**"), std::string::npos) << h.snippet;
  }
}

TEST_F(LifecycleFaults, AMixedBatchTombstonesOnlyThePoisonedDocument) {
  make_kb();
  std::vector<std::string> good;
  for (int i = 0; i < 3; ++i)
    good.push_back(add("g" + std::to_string(i) + ".md", doc_text("g" + std::to_string(i), 2)));
  std::string poisoned = add("poisoned.md", doc_text("poisoned", 3, FaultEmbedServer::kTooLarge));
  for (int i = 3; i < 6; ++i)
    good.push_back(add("g" + std::to_string(i) + ".md", doc_text("g" + std::to_string(i), 2)));

  // One batch, one worker: the first request carries every chunk and is refused whole.
  auto r = reindex(/*batch_chunks=*/256, /*workers=*/1);
  EXPECT_EQ(r.error_code, "") << r.error_message;
  EXPECT_EQ(r.documents, 6);
  EXPECT_EQ(r.failed, 1);
  auto in = server.inputs();
  ASSERT_FALSE(in.empty());
  EXPECT_EQ(static_cast<std::int64_t>(in.front().size()), chunks_of(good) + chunks_of({poisoned}));
  // Then each document alone: 1 + 7 requests, the poison in two of them.
  EXPECT_EQ(server.requests(), 1 + 7);
  EXPECT_EQ(server.requests_with(FaultEmbedServer::kTooLarge), 2);
  EXPECT_EQ(r.provider_calls, 1 + 7);

  EXPECT_EQ(status(poisoned), "failed");
  for (const auto& id : good) EXPECT_EQ(status(id), "ready");
  auto f = failures();
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[poisoned], "content_too_large");
  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.ready, 6);
  EXPECT_EQ(info.vectors.stored, chunks_of(good));  // none of the poisoned document's chunks

  const int before = server.requests();
  EXPECT_EQ(reindex().provider_calls, 0);
  EXPECT_EQ(server.requests(), before);
}

// A document whose chunks fall into several refused batches is sent alone once, with only the
// chunks no batch embedded (it used to be sent whole once per refused batch).
TEST_F(LifecycleFaults, ADocumentSpanningSeveralRefusedBatchesIsRetriedOnceWithWhatIsLeft) {
  make_kb();
  std::string md;
  for (int i = 0; i < 6; ++i) {
    md += "## Part " + std::to_string(i) + "\n\nPart " + std::to_string(i) + " about topic " +
          std::to_string(i * 7919 % 1000) + ".";
    if (i == 0 || i == 5) md += std::string(" ") + FaultEmbedServer::kTooLarge;
    md += "\n\n";
  }
  std::string id = add("two-poisons.md", md);
  const auto n = chunks_of({id});
  ASSERT_GE(n, 6);
  auto r = reindex(/*batch_chunks=*/2, /*workers=*/1);
  EXPECT_EQ(r.failed, 1);
  const auto batches = (n + 1) / 2;
  EXPECT_EQ(server.requests(), batches + 1);
  EXPECT_EQ(r.provider_calls, batches + 1);
  // The solo retry carries the two refused batches' chunks, not the whole document again.
  EXPECT_EQ(static_cast<std::int64_t>(server.inputs().back().size()), 4);
  EXPECT_EQ(status(id), "failed");
}

TEST_F(LifecycleFaults, PoisonInOneOfSeveralConcurrentBatchesSparesTheOthers) {
  make_kb();
  std::vector<std::string> good;
  for (int i = 0; i < 6; ++i)
    good.push_back(add("g" + std::to_string(i) + ".md", doc_text("g" + std::to_string(i), 3)));
  std::string big = add("big.md", doc_text("big", 2, FaultEmbedServer::kTooLarge));
  std::string bad = add("bad.md", doc_text("bad", 2, FaultEmbedServer::kRejected));

  // Batches of 4 chunks on 3 workers: documents straddle batches, poisoned batches and good
  // ones run at the same time.
  auto r = reindex(/*batch_chunks=*/4, /*workers=*/3);
  EXPECT_EQ(r.error_code, "") << r.error_message;
  EXPECT_EQ(r.documents, 6);
  EXPECT_EQ(r.failed, 2);
  EXPECT_EQ(status(big), "failed");
  EXPECT_EQ(status(bad), "failed");
  for (const auto& id : good) EXPECT_EQ(status(id), "ready");
  auto f = failures();
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[big], "content_too_large");
  EXPECT_EQ(f[bad], "input_rejected");
  auto info = engine->describe_kb("k");
  EXPECT_EQ(info.vectors.stored, chunks_of(good));
  EXPECT_EQ(info.vectors.pending, 0);

  const int before = server.requests();
  EXPECT_EQ(reindex(4, 3).provider_calls, 0);
  EXPECT_EQ(server.requests(), before);
}

}  // namespace
}  // namespace quarry::lifecycle::testing_support
