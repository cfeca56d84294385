#include "lifecycle/scheduler.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>

#include "catalog/writer_lock.h"
#include "core/kb_config.h"
#include "core/util.h"
#include "embed/provider.h"
#include "lifecycle/foreground.h"
#include "quarry/error.h"

using nlohmann::json;

namespace quarry::lifecycle {

namespace {

// Failures that belong to one document's content: tombstoned, not retried (SPEC §7).
bool permanent(Code c) {
  return c == Code::content_too_large || c == Code::no_content || c == Code::too_many_chunks ||
         c == Code::input_rejected;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

constexpr int kPage = 64;  // documents read, embedded and committed together
// While queries run (foreground::Pacer::active), a local provider embeds one chunk per call so
// that each piece of work is a fraction of a query's time. The page still commits whole: each
// commit makes every reader of the catalog drop its page cache and retake its locks, and
// committing each document alone cost queries more (p99 ratio 1.6-1.7 against 1.25-1.4 for
// whole pages, docs/benchmarks.md) than the longer stretch of work does.
constexpr std::size_t kPacedBatch = 1;

}  // namespace

struct Scheduler::Job {
  catalog::DocumentRow doc;
  std::vector<catalog::ChunkRow> chunks;
  std::vector<std::string> texts;
  std::vector<std::vector<float>> vectors;  // filled from the cache or the provider
  std::vector<std::size_t> missing;         // chunk positions the cache did not have
  bool stage = false;     // chunks cut for a building revision's own chunking, to be staged
  Code error = Code::ok;  // a permanent failure of this document
  std::string message;
};

void Scheduler::embed_jobs(KbVectors& v, std::vector<Job>& jobs, const ReindexOptions& o,
                           foreground::Pacer& pacer, ReindexReport& report) {
  // 1. The cache first: unchanged text under the same embedder is never embedded again.
  struct Ref {
    std::size_t job, chunk;
  };
  std::vector<Ref> refs;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    Job& job = jobs[j];
    job.vectors = cache_.get(v.model, job.texts, v.scope.dimensions);
    for (std::size_t c = 0; c < job.texts.size(); ++c) {
      if (job.vectors[c].empty()) {
        job.missing.push_back(c);
        refs.push_back({j, c});
      }
    }
    report.chunks_cached += static_cast<std::int64_t>(job.texts.size() - job.missing.size());
  }
  if (refs.empty()) return;

  // 2. The rest in batches of at most batch_chunks. A remote provider gets few, full requests
  // (requests per minute are what it limits); a local one, whose work is CPU, gets the page
  // split evenly so that every worker has a share.
  // While queries run, a local provider gets one chunk per call, each followed by the pacer's
  // rest.
  const bool remote = v.provider->id() == "openai";
  int workers = o.workers > 0 ? o.workers : (remote ? 4 : 2);
  std::size_t per = static_cast<std::size_t>(std::max(1, o.batch_chunks));
  if (!remote)
    per = std::max<std::size_t>(
        1, std::min(per, (refs.size() + static_cast<std::size_t>(workers) - 1) /
                             static_cast<std::size_t>(workers)));
  if (!remote && pacer.active()) per = std::min(per, kPacedBatch);
  std::vector<std::pair<std::size_t, std::size_t>> batches;  // [begin, end) into refs
  for (std::size_t b = 0; b < refs.size(); b += per)
    batches.emplace_back(b, std::min(refs.size(), b + per));
  workers = std::max(1, std::min<int>(workers, static_cast<int>(batches.size())));
  std::vector<std::exception_ptr> errors(batches.size());
  std::atomic<std::size_t> next{0};
  std::mutex rested_mu;
  auto run = [&](foreground::Pacer& pacer) {
    for (std::size_t b; (b = next.fetch_add(1)) < batches.size(); pacer.step()) {
      try {
        std::vector<std::string> texts;
        for (std::size_t r = batches[b].first; r < batches[b].second; ++r)
          texts.push_back(jobs[refs[r].job].texts[refs[r].chunk]);
        auto vecs = v.provider->embed_documents(texts);
        if (vecs.size() != texts.size())
          throw Error(Code::upstream_error, "embedder '" + v.provider->id() + "' returned " +
                                                std::to_string(vecs.size()) + " vectors for " +
                                                std::to_string(texts.size()) + " texts");
        for (std::size_t r = batches[b].first; r < batches[b].second; ++r)
          jobs[refs[r].job].vectors[refs[r].chunk] = std::move(vecs[r - batches[b].first]);
      } catch (...) {
        errors[b] = std::current_exception();
      }
    }
  };
  std::vector<std::thread> pool;
  for (int w = 1; w < workers; ++w)
    pool.emplace_back([&] {  // each worker thread paces itself
      foreground::Pacer own(o.foreground_duty, o.cancel, pacer.shared());
      run(own);
      std::lock_guard lock(rested_mu);
      report.rested_ms += 1000 * own.rested_s();
    });
  run(pacer);
  for (auto& t : pool) t.join();
  report.provider_calls += static_cast<std::int64_t>(batches.size());

  // 3. A batch refused for its content: find the document(s) by embedding each alone.
  std::set<std::size_t> retried;
  for (std::size_t b = 0; b < batches.size(); ++b) {
    if (!errors[b]) continue;
    try {
      std::rethrow_exception(errors[b]);
    } catch (const Error& e) {
      if (!permanent(e.code())) throw;
    }
    std::vector<std::size_t> in_batch;
    for (std::size_t r = batches[b].first; r < batches[b].second; ++r)
      if (in_batch.empty() || in_batch.back() != refs[r].job) in_batch.push_back(refs[r].job);
    for (std::size_t j : in_batch) {
      Job& job = jobs[j];
      // A document spanning several refused batches is sent alone once, and only the chunks
      // no batch embedded.
      if (!retried.insert(j).second || job.error != Code::ok) continue;
      std::vector<std::size_t> left;
      std::vector<std::string> texts;
      for (std::size_t c : job.missing) {
        if (!job.vectors[c].empty()) continue;
        left.push_back(c);
        texts.push_back(job.texts[c]);
      }
      try {
        ++report.provider_calls;
        auto vecs = v.provider->embed_documents(texts);
        if (vecs.size() != texts.size())
          throw Error(Code::upstream_error, "embedder '" + v.provider->id() + "' returned " +
                                                std::to_string(vecs.size()) + " vectors for " +
                                                std::to_string(texts.size()) + " texts");
        for (std::size_t k = 0; k < left.size(); ++k) job.vectors[left[k]] = std::move(vecs[k]);
      } catch (const Error& e) {
        if (!permanent(e.code())) throw;
        job.error = e.code();
        job.message = e.message();
      }
    }
  }
  for (auto& job : jobs)
    if (job.error == Code::ok)
      report.chunks_embedded += static_cast<std::int64_t>(job.missing.size());
}

void Scheduler::commit(const catalog::KbRef& kb, const catalog::RevisionRow& rev, KbVectors& v,
                       std::vector<Job>& jobs, ReindexReport& report) {
  auto& cat = vectors_.catalog();
  {
    catalog::WriterLock lock(vectors_.data_dir(), lock_timeout_ms_);
    // The page's coordinates, tombstones and staged chunks commit together. Vectors go to the
    // store first, in one upsert_many (a remote store may commit part of it before a failure);
    // a crash before this commit leaves them stored but unrecorded, which the next sweep
    // repairs by replacing them.
    catalog::Catalog::Batch batch(cat);
    std::vector<Job*> ready;
    std::vector<store::DocumentVectors> docs;
    for (Job& job : jobs) {
      // Edited or deleted while it was being embedded: its new content is pending anew.
      auto now = cat.documents().find(kb, job.doc.id);
      if (!now || now->content_sha256 != job.doc.content_sha256) continue;
      if (job.error != Code::ok) {
        cat.revisions().put_failure(kb, {job.doc.id, rev.revision, job.doc.content_sha256,
                                         code_name(job.error), job.message, 0});
        ++report.failed;
        continue;
      }
      if (job.stage)
        cat.revisions().put_staged_chunks(kb, rev.revision, job.doc.id, job.doc.content_sha256,
                                          job.chunks);
      store::DocumentVectors dv;
      dv.doc_id = job.doc.id;
      dv.metadata_json = job.doc.metadata_json;  // the catalog keeps an object's text
      for (std::size_t i = 0; i < job.chunks.size(); ++i)
        dv.chunks.push_back(
            {job.chunks[i].index, job.chunks[i].chunk_id, std::move(job.vectors[i]), ""});
      ready.push_back(&job);
      docs.push_back(std::move(dv));
    }
    // The page's vectors in one store call (one transaction or a few batched requests).
    if (!docs.empty()) v.store->upsert_many(v.scope, docs);
    for (Job* job : ready) {
      catalog::CoordinatesRow c;
      c.doc_id = job->doc.id;
      c.revision = rev.revision;
      c.store_id = v.store->id();
      c.chunk_count = static_cast<int>(job->chunks.size());
      c.content_sha256 = job->doc.content_sha256;
      c.model = v.model;
      c.dimensions = v.scope.dimensions;
      cat.revisions().put_coordinates(kb, c);
      ++report.documents;
      report.chunks += c.chunk_count;
    }
    batch.commit();
  }
}

bool Scheduler::build_revision(const catalog::KbRef& kb, const catalog::RevisionRow& rev,
                               const ReindexOptions& o, ReindexReport& report) {
  auto& cat = vectors_.catalog();
  const KbConfig rev_config = core::kb_config_from_json(json::parse(rev.config_json));
  KbVectors& v = vectors_.for_kb(kb.name, rev_config);
  if (!v.usable()) {
    report.error_code =
        code_name(v.unavailable_code == Code::ok ? Code::engine_unavailable : v.unavailable_code);
    report.error_message = "cannot embed revision " + rev.revision + ": " + v.unavailable;
    return false;
  }
  const auto t0 = std::chrono::steady_clock::now();
  ReindexProgress p;
  p.kb = kb.name;
  p.revision = rev.revision;
  p.total = cat.revisions().counts(kb, rev.revision, "").pending();
  if (o.progress) o.progress(p);
  // Pages follow the recency order from where the last one ended; documents written since the
  // sweep began come first, as they would at its start.
  std::optional<catalog::PendingDocument> cursor;
  const std::int64_t began = core::now_ms();
  // Searches of other processes on this data directory (a server beside `quarry reindex`)
  // count too; the shared stamp is only opened when there is pacing to do.
  const bool paced = o.foreground_duty > 0 && o.foreground_duty < 1;
  foreground::Pacer pacer(o.foreground_duty, o.cancel,
                          paced ? foreground::shared(vectors_.data_dir()) : nullptr);
  struct Rested {  // the pacer's rests go into the report however the page ends
    ReindexReport& report;
    const foreground::Pacer& pacer;
    ~Rested() { report.rested_ms += 1000 * pacer.rested_s(); }
  } rested{report, pacer};
  while (true) {
    if (o.cancel && o.cancel->load()) {
      report.cancelled = true;
      return false;
    }
    int limit = kPage;
    if (o.max_documents >= 0) {
      const auto left = o.max_documents - report.documents - report.failed;
      if (left <= 0) return false;
      limit = static_cast<int>(std::min<std::int64_t>(limit, left));
    }
    std::vector<catalog::PendingDocument> pending;
    if (cursor) pending = cat.revisions().pending(kb, rev.revision, limit, nullptr, began);
    if (pending.empty()) {
      pending = cat.revisions().pending(kb, rev.revision, limit, cursor ? &*cursor : nullptr);
      if (pending.empty()) {
        if (!cursor) return true;
        cursor.reset();  // a last look from the newest (a clock stepped back, say)
        continue;
      }
      cursor = pending.back();
    }
    std::vector<Job> jobs;
    for (const auto& d : pending) {
      auto doc = cat.documents().find(kb, d.doc_id);
      if (!doc) continue;
      Job job;
      job.doc = *doc;
      if (doc->chunking.empty() || doc->chunking == rev.config_revision) {
        job.chunks = cat.documents().chunks_of(kb, d.doc_id);
      } else if (auto staged = cat.revisions().staged_chunks(kb, rev.revision, d.doc_id,
                                                             doc->content_sha256)) {
        job.chunks = std::move(*staged);
      } else {
        // A blue-green build of other chunking: its own chunks, staged at commit.
        try {
          job.chunks = rechunk_(*doc, rev_config);
          job.stage = true;
        } catch (const Error& e) {
          if (!permanent(e.code())) {  // e.g. the Markdown file unreadable: stop, keep pending
            vectors_.in_flight().clear();
            report.error_code = code_name(e.code());
            report.error_message = e.message();
            return false;
          }
          job.error = e.code();  // too_many_chunks under the new budget
          job.message = e.message();
        }
      }
      for (const auto& c : job.chunks) job.texts.push_back(c.text);
      if (job.chunks.empty()) {
        job.error = Code::no_content;
        job.message = "the document has no text to embed";
      }
      vectors_.in_flight().insert(d.doc_id);
      jobs.push_back(std::move(job));
      pacer.step();
    }
    try {
      embed_jobs(v, jobs, o, pacer, report);
    } catch (const Error& e) {
      vectors_.in_flight().clear();
      report.error_code = code_name(e.code());
      report.error_message = e.message();
      return false;
    }
    // Keep what the provider made for the cache before commit() moves it into the store.
    for (auto& job : jobs) {
      if (job.error != Code::ok || job.missing.empty()) continue;
      std::vector<std::string> texts;
      std::vector<std::vector<float>> vecs;
      for (std::size_t c : job.missing) {
        texts.push_back(job.texts[c]);
        vecs.push_back(job.vectors[c]);
      }
      cache_.put(v.model, texts, vecs);
    }
    const auto before = report.documents + report.failed;
    commit(kb, rev, v, jobs, report);
    pacer.step();
    vectors_.in_flight().clear();
    const auto progressed = report.documents + report.failed - before;
    p.done += progressed;
    p.failed = report.failed;
    p.total = std::max(p.total, p.done);
    const double secs = seconds_since(t0);
    p.rate = secs > 0 ? static_cast<double>(p.done) / secs : 0;
    p.eta_s = p.rate > 0 ? static_cast<double>(p.total - p.done) / p.rate : 0;
    if (o.progress) o.progress(p);
    if (progressed == 0) return false;  // every document changed under us: next sweep
  }
}

int Scheduler::rechunk_stragglers(const catalog::KbRef& kb) {
  auto& cat = vectors_.catalog();
  auto serving = cat.revisions().in_state(kb, "serving");
  if (!serving) return 0;
  const KbConfig config = core::kb_config_from_json(json::parse(serving->config_json));
  int n = 0;
  for (const auto& doc : cat.documents().chunked_otherwise(kb, serving->config_revision)) {
    cat.documents().replace_chunks(kb, doc.id, serving->config_revision, rechunk_(doc, config));
    ++n;
  }
  return n;
}

ReindexReport Scheduler::sweep(const catalog::KbRef& kb, const KbConfig& config,
                               const ReindexOptions& o, const catalog::AuditEntry& actor) {
  const auto t0 = std::chrono::steady_clock::now();
  auto& cat = vectors_.catalog();
  ReindexReport report;
  report.kb = kb.name;
  RevisionPlan plan;
  {
    // Destructive steps only (SPEC §7): they are all that blocks readiness.
    catalog::WriterLock lock(vectors_.data_dir(), lock_timeout_ms_);
    plan = vectors_.plan(kb, config, false, o.collect_previous);
    report.orphans = vectors_.collect_orphans(kb, config);
    rechunk_stragglers(kb);
  }
  KbVectors& t = vectors_.for_kb(kb.name, config);
  if (!t.provider) return report;
  report.target_revision = t.scope.revision;
  vectors_.set_building(kb.name, true);
  struct Unmark {
    Vectors& v;
    std::string kb;
    ~Unmark() {
      v.set_building(kb, false);
      v.in_flight().clear();
    }
  } unmark{vectors_, kb.name};

  bool ok = true;
  // New documents under the serving revision first (they answer queries now), then the build.
  if (plan.serving) ok = build_revision(kb, *plan.serving, o, report);
  if (ok && plan.building) {
    auto event = [&](const std::string& action, json extra) {
      catalog::AuditEntry a = actor;
      a.action = action;
      a.kb = kb.name;
      a.target = plan.building->revision;
      extra["kb"] = kb.name;
      extra["previous"] = plan.serving ? plan.serving->revision : "";
      extra["new"] = plan.building->revision;
      a.details_json = extra.dump();
      catalog::WriterLock lock(vectors_.data_dir(), lock_timeout_ms_);
      cat.audit().append(a);
    };
    const auto before = report.documents;
    ok = build_revision(kb, *plan.building, o, report);
    if (ok) {
      int stragglers = 0;
      {
        catalog::WriterLock lock(vectors_.data_dir(), lock_timeout_ms_);
        vectors_.cut_over(kb, *plan.building);
        // Documents the build did not stage (tombstoned, or edited at the last moment) are
        // re-cut under the new chunking now, and embedded just below.
        stragglers = rechunk_stragglers(kb);
      }
      report.cut_over = true;
      event("reembed_completed", json::object());
      if (stragglers > 0) {
        if (auto now = cat.revisions().in_state(kb, "serving"))
          ok = build_revision(kb, *now, o, report);
      }
    } else if (!report.error_code.empty()) {
      event("reembed_failed", {{"code", report.error_code}, {"message", report.error_message}});
    } else {
      event("reembed_progress", {{"documents", report.documents - before}});
    }
  }
  auto s = cat.revisions().in_state(kb, "serving");
  report.serving_revision = s ? s->revision : "";
  report.pending = cat.revisions().counts(kb, t.scope.revision, "").pending();
  if (s && s->revision != t.scope.revision)
    report.pending += cat.revisions().counts(kb, s->revision, "").pending();
  report.took_ms = seconds_since(t0) * 1000;
  return report;
}

}  // namespace quarry::lifecycle
