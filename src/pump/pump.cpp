#include "pump/pump.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <future>
#include <map>
#include <set>

#include "chunk/chunker.h"
#include "core/util.h"
#include "embed/provider.h"
#include "pump/lease.h"
#include "quarry/error.h"

namespace quarry::pump {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::size_t code_points(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++n;
  return n;
}

bool blank(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); });
}

// Failures a retry may cure re-poke with backoff; the rest (the app's or the config's to fix)
// park the use case at once.
bool retryable(Code c) {
  switch (c) {
    case Code::rate_limited:
    case Code::upstream_error:
    case Code::timeout:
    case Code::busy:
    case Code::engine_unavailable:
    case Code::io_error:
    case Code::internal:
      return true;
    default:
      return false;
  }
}

UseCase config_of(const catalog::PumpUseCaseRow& row) {
  return parse_use_case(row.name, json::parse(row.config_json), row.name, "");
}

// The use case's embedder, as a KB's would be chosen (§5): the operator pin, else the deploy's.
std::unique_ptr<embed::EmbeddingProvider> provider_for(const std::string& spec,
                                                       const std::string& data_dir,
                                                       const SecretLookup& secret,
                                                       std::string* why) {
  embed::ProviderContext ctx;
  ctx.data_dir = data_dir;
  if (const char* m = std::getenv("QUARRY_MODELS_DIR")) ctx.models_dir = m;
  ctx.secret = secret;
  auto sel =
      embed::select_provider(embed::ProviderRegistry::builtin(), spec, json::object(), "", ctx);
  if (!sel.provider || !sel.reason.empty()) {
    *why = sel.reason.empty() ? "no embedding provider is configured" : sel.reason;
    if (spec.empty())
      *why =
          "no embedding provider: deploy with --embedder (e.g. hash:256 or static:glove-100d) "
          "or set QUARRY_EMBEDDING_PROVIDER";
    return nullptr;
  }
  return std::move(sel.provider);
}

}  // namespace

ProviderCache::ProviderCache(std::string data_dir, SecretLookup secret)
    : data_dir_(std::move(data_dir)), secret_(std::move(secret)) {}

std::shared_ptr<embed::EmbeddingProvider> ProviderCache::get(const std::string& spec,
                                                             std::string* why) {
  std::lock_guard lock(mu_);
  if (auto it = cache_.find(spec); it != cache_.end()) return it->second;
  std::shared_ptr<embed::EmbeddingProvider> p = provider_for(spec, data_dir_, secret_, why);
  if (p) cache_[spec] = p;
  return p;
}

void ProviderCache::put(const std::string& spec,
                        std::unique_ptr<embed::EmbeddingProvider> provider) {
  std::lock_guard lock(mu_);
  cache_[spec] = std::move(provider);
}

bool Pump::take_over_dead_lease(const std::string& name, const std::string& owner,
                                std::int64_t now) {
  auto row = cat_.pump().find(name);
  if (!row || row->lease_owner.empty() || !lease_owner_is_dead(row->lease_owner)) return false;
  return cat_.pump().take_over_lease(name, row->lease_owner, owner, now);
}

Pump::Pump(std::string data_dir, catalog::Catalog& cat, SecretLookup secret,
           std::shared_ptr<ProviderCache> providers)
    : data_dir_(std::move(data_dir)),
      cat_(cat),
      secret_(std::move(secret)),
      providers_(providers ? std::move(providers)
                           : std::make_shared<ProviderCache>(data_dir_, secret_)) {}

std::shared_ptr<embed::EmbeddingProvider> Pump::require_provider(const std::string& spec) {
  std::string why;
  auto p = providers_->get(spec, &why);
  if (!p) throw Error(Code::engine_unavailable, why, {{"embedder", spec}});
  return p;
}

DeployReport Pump::deploy(const std::string& dir, const std::string& embedder,
                          const catalog::AuditEntry& audit) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(Code::not_found, "use case folder " + dir + " does not exist or is not a folder",
                {{"path", dir}});
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    const auto ext = e.path().extension().string();
    if (ext == ".json" || ext == ".yaml" || ext == ".yml") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::vector<UseCase> cases;
  std::set<std::string> seen;
  for (const auto& f : files) {  // all or nothing
    cases.push_back(load_use_case_file(f.string()));
    if (!seen.insert(cases.back().name).second)
      throw Error(
          Code::invalid_argument,
          "two files define use case '" + cases.back().name + "' (e.g. .json and .yaml); keep one",
          {{"file", f.filename().string()}});
  }
  if (!embedder.empty()) embed::ProviderSpec::parse(embedder);  // refuse a malformed spec early

  DeployReport rep;
  std::vector<catalog::PumpUseCaseRow> rows;
  const auto now = core::now_ms();
  for (const auto& uc : cases) {
    catalog::PumpUseCaseRow row;
    if (auto old = cat_.pump().find(uc.name)) row = *old;  // run state survives
    row.name = uc.name;
    row.config_json = use_case_to_json(uc).dump();
    row.config_revision = config_revision(uc);
    row.embedder = embedder;
    row.deployed_at = now;
    std::string problem;
    try {
      problem = make_source(uc, secret_)->deploy_problem();
    } catch (const Error& e) {
      if (e.code() == Code::invalid_argument) throw;  // e.g. the DSN secret is missing
      // An unreachable database does not fail the deploy: the first run will say so.
    }
    if (!problem.empty()) {
      row.parked = true;
      row.pending = false;
      row.last_error = std::string(code_name(Code::engine_unavailable)) + ": " + problem;
      rep.parked[uc.name] = problem;
    } else {
      row.pending = true;  // deploy is a trigger: the backfill, or one more attempt if parked
      row.next_run_at = now;
    }
    rows.push_back(std::move(row));
    rep.deployed.push_back(uc.name);
  }
  std::set<std::string> names(rep.deployed.begin(), rep.deployed.end());
  for (const auto& old : cat_.pump().list())
    if (!names.count(old.name)) rep.removed.push_back(old.name);
  auto a = audit;
  a.action = "pump.deploy";
  a.target = dir;
  a.details_json = json{{"deployed", rep.deployed}, {"removed", rep.removed}}.dump();
  cat_.pump().deploy(rows, a);
  return rep;
}

std::vector<UseCaseStatus> Pump::list() {
  std::vector<UseCaseStatus> out;
  const auto now = core::now_ms();
  const auto usage = cat_.pump().usage_since(month_start_utc(now));
  for (auto& row : cat_.pump().list()) {
    UseCaseStatus st;
    st.config = json::parse(row.config_json);
    st.running = !row.lease_owner.empty() && row.lease_at >= now - kLeaseStaleMs &&
                 !lease_owner_is_dead(row.lease_owner);
    st.tombstoned = cat_.pump().tombstone_count(row.name);
    if (auto u = usage.find(row.name); u != usage.end()) {
      st.usage_entries = u->second.first;
      st.usage_chunks = u->second.second;
    }
    std::string why;
    if (auto p = providers_->get(row.embedder, &why))
      st.revision =
          revision(config_of(row), p->identity(), embed::chunking_key(p->model_tokenizer()));
    else
      st.model_error = why;
    st.row = std::move(row);
    out.push_back(std::move(st));
  }
  return out;
}

RunResult Pump::run(const std::string& name, const std::atomic<bool>* stop) {
  auto row = cat_.pump().find(name);
  if (!row)
    throw Error(Code::not_found,
                "no pump use case '" + name + "'; `quarry pump list` shows the deployed ones",
                {{"use_case", name}});
  const std::string owner = new_lease_owner();
  const auto start = core::now_ms();
  if (!cat_.pump().claim_lease(name, owner, start, start - kLeaseStaleMs) &&
      !take_over_dead_lease(name, owner, start)) {
    cat_.pump().trigger(name, start);  // coalesced: queued for after the running run
    RunResult r;
    r.status = "already_running";
    r.use_case = name;
    return r;
  }
  catalog::PumpRunEnd end;
  end.last_run_at = start;
  // What the lease was taken on (a deploy may have rewritten the config meanwhile).
  if (auto now = cat_.pump().find(name)) row = std::move(now);
  // Records a failed run (attempts, backoff or park) and releases the lease.
  auto fail = [&](Code code, const std::string& message) {
    end.attempts = row->attempts + 1;
    end.last_error = std::string(code_name(code)) + ": " + message;
    // Parked: a failure no retry cures, the fifth in a row, or the one more attempt a parked
    // use case gets from a trigger.
    end.parked = !retryable(code) || end.attempts >= kParkAfterFailures || row->parked;
    if (!end.parked) {
      end.repoke = true;
      end.next_run_at = core::now_ms() + (kFirstRetryMs << (end.attempts - 1));
    }
    cat_.pump().finish_run(name, owner, end);
  };
  try {
    const UseCase uc = config_of(*row);
    auto source = make_source(uc, secret_);
    RunResult r = run_leased(uc, *row, *source, stop);
    end.last_failed = r.failed;
    end.last_skipped = r.skipped;
    end.repoke = !r.drained;  // the 20-batch cap: the next sweep continues
    end.next_run_at = r.drained ? 0 : core::now_ms();
    cat_.pump().finish_run(name, owner, end);
    return r;
  } catch (const Error& e) {
    fail(e.code(), e.message());
    throw;
  } catch (const std::exception& e) {  // never leave the lease held by a live process
    fail(Code::internal, e.what());
    throw Error(Code::internal, "use case " + name + ": " + e.what(), {{"use_case", name}});
  }
}

RunResult Pump::run_leased(const UseCase& uc, const catalog::PumpUseCaseRow& row, Source& source,
                           const std::atomic<bool>* stop) {
  auto provider = require_provider(row.embedder);
  RunResult res;
  res.status = "ok";
  res.use_case = uc.name;
  res.revision =
      revision(uc, provider->identity(), embed::chunking_key(provider->model_tokenizer()));
  // Budgets in the model's own tokens, within its input, when it has a tokenizer (SPEC §3);
  // the provider's identity names that tokenizer, so the revision covers it.
  const auto approx = chunk::make_approx_tokenizer();
  const auto model_tokens = provider->model_tokenizer();
  const chunk::Tokenizer& tokenizer = model_tokens.tokenizer ? *model_tokens.tokenizer : *approx;
  chunk::ChunkOptions opts;
  opts.profile = uc.chunking.profile;
  opts.max_tokens = uc.chunking.effective_max_tokens();
  opts.overlap_tokens = uc.chunking.effective_overlap_tokens();
  opts.max_chunks = kMaxChunksPerSlice;
  opts = chunk::within_model_limit(opts, model_tokens.tokenizer ? model_tokens.max_tokens : 0);

  // Most use cases have no tombstones: then no row needs a lookup (this run's own failures are
  // tracked per batch).
  const bool any_tombstones = cat_.pump().tombstone_count(uc.name) > 0;
  std::map<std::string, std::pair<std::string, std::string>> failed_now;  // hash -> code, msg
  while (true) {
    if (res.batches == kMaxBatches || (stop && stop->load())) {
      res.drained = false;
      break;
    }
    auto rows = source.pending(uc.batch_size, res.revision);
    if (!rows)
      throw Error(Code::contract_violation,
                  "use case " + uc.name +
                      ": the pending query returned no result set (is it a SELECT?); it must "
                      "return the rows to embed, or none when the corpus is drained",
                  {{"use_case", uc.name}});
    if (rows->size() > static_cast<std::size_t>(uc.batch_size))
      throw Error(Code::contract_violation,
                  "use case " + uc.name + ": the pending query returned " +
                      std::to_string(rows->size()) + " rows for a limit of " +
                      std::to_string(uc.batch_size) + "; end it with LIMIT $1",
                  {{"use_case", uc.name}});
    if (rows->empty()) break;
    ++res.batches;

    std::set<std::string> ids;
    std::vector<Failure> failures;
    std::vector<StoredDocument> docs;
    const auto now = core::now_ms();
    for (auto& r : *rows) {
      if (!ids.insert(r.id).second)
        throw Error(Code::contract_violation,
                    "use case " + uc.name + ": the pending query returned id " + r.id +
                        " twice in one batch",
                    {{"use_case", uc.name}});
      const std::string hash = core::sha256_hex(r.content);
      if (auto it = failed_now.find(hash); it != failed_now.end()) {  // same text, this run
        failures.push_back({r.id, r.id_value, it->second.first, it->second.second, false});
        ++res.failed;
        continue;
      }
      if (auto t =
              any_tombstones ? cat_.pump().tombstone(uc.name, hash, res.revision) : std::nullopt) {
        failures.push_back({r.id, r.id_value, t->first, t->second, true});
        ++res.skipped;
        continue;
      }
      auto fail = [&](Code c, const std::string& msg) {
        cat_.pump().put_tombstone(uc.name, hash, res.revision, code_name(c), msg, now);
        failed_now[hash] = {code_name(c), msg};
        failures.push_back({r.id, r.id_value, code_name(c), msg, false});
        ++res.failed;
      };
      if (code_points(r.content) > kMaxContentChars) {
        fail(Code::content_too_large, "the row's content is longer than 200,000 characters");
        continue;
      }
      StoredDocument d;
      d.id = r.id;
      d.id_value = r.id_value;
      d.metadata = std::move(r.metadata);
      try {
        for (auto& c : chunk::chunk_markdown(r.content, opts, tokenizer)) {
          StoredChunk sc;
          sc.index = c.index;
          sc.text = std::move(c.text);
          if (!c.heading_path.empty()) sc.metadata["heading_path"] = c.heading_path;
          d.chunks.push_back(std::move(sc));
        }
      } catch (const Error& e) {
        if (e.code() != Code::no_content && e.code() != Code::too_many_chunks) throw;
        fail(e.code(), e.message());
        continue;
      }
      docs.push_back(std::move(d));
    }

    if (docs.empty()) {  // nothing embeddable: report the failures, and stop (blocked)
      res.blocked = static_cast<int>(rows->size());
      source.store(Slice{res.revision, {}, std::move(failures)});
      break;
    }

    embed_and_store(uc.name, *provider, source, res, docs, std::move(failures));
    if (rows->size() < static_cast<std::size_t>(uc.batch_size)) break;  // a short page: drained
  }
  return res;
}

// Embeds the batch's chunks, one provider call per 128 (a usage entry each), two at a time on
// helper threads (providers are thread-safe: the KB indexer's workers share them too), while
// this thread hands back the documents already embedded: the app's writes overlap the
// provider's work. Slices hold whole documents, at most 2,000 chunks; one is handed back when
// kMinSliceChunks are ready (fewer transactions) or at the end; the failures ride the first.
void Pump::embed_and_store(const std::string& name, embed::EmbeddingProvider& provider,
                           Source& source, RunResult& res, std::vector<StoredDocument>& docs,
                           std::vector<Failure> failures) {
  std::vector<StoredChunk*> all;
  std::vector<std::size_t> doc_end;  // chunks up to and including document i
  for (auto& d : docs) {
    for (auto& c : d.chunks) all.push_back(&c);
    doc_end.push_back(all.size());
  }
  using Vectors = std::vector<embed::Vector>;
  struct Call {
    std::future<Vectors> result;
    std::size_t from, to;
  };
  std::deque<Call> inflight;
  std::vector<int> usage;  // chunks per provider call, recorded once per batch
  std::size_t next = 0, embedded = 0, next_doc = 0;
  bool first_slice = true;

  auto submit = [&] {
    if (next >= all.size()) return;
    check_budget(name, static_cast<std::int64_t>(usage.size() + inflight.size()));
    const std::size_t to = std::min(all.size(), next + kChunksPerUsageEntry);
    std::vector<std::string> texts;
    for (std::size_t i = next; i < to; ++i) texts.push_back(all[i]->text);
    inflight.push_back(
        {std::async(std::launch::async,
                    [&provider, t = std::move(texts)] { return provider.embed_documents(t); }),
         next, to});
    next = to;
  };
  // Hands back the documents whose chunks all have vectors (a slice when enough are ready, or
  // everything left at the end).
  auto hand_back = [&](bool final) {
    while (next_doc < docs.size()) {
      std::size_t end = next_doc, chunks = 0;
      while (end < docs.size() && doc_end[end] <= embedded &&
             chunks + docs[end].chunks.size() <= static_cast<std::size_t>(kMaxChunksPerSlice)) {
        chunks += docs[end].chunks.size();
        ++end;
      }
      if (end == next_doc) {
        if (doc_end[next_doc] <= embedded)
          end = next_doc + 1;  // one document over the cap
        else
          return;
      }
      const bool full = end < docs.size() && doc_end[end] <= embedded;  // hit the 2,000 cap
      if (!final && !full && chunks < kMinSliceChunks) return;
      Slice slice{res.revision, {}, {}};
      if (first_slice) slice.failures = std::move(failures);
      first_slice = false;
      for (std::size_t i = next_doc; i < end; ++i) {
        res.chunks += static_cast<int>(docs[i].chunks.size());
        slice.docs.push_back(std::move(docs[i]));
      }
      source.store(slice);
      res.processed += static_cast<int>(end - next_doc);
      next_doc = end;
    }
  };
  auto record_usage = [&] {
    if (!usage.empty()) cat_.pump().add_usage(name, core::now_ms(), usage, "run");
    res.usage_entries += static_cast<int>(usage.size());
    usage.clear();
  };

  try {
    submit();
    submit();  // two at once
    while (!inflight.empty()) {
      Call call = std::move(inflight.front());
      inflight.pop_front();
      Vectors vecs = call.result.get();  // a provider error is thrown here
      usage.push_back(static_cast<int>(call.to - call.from));
      if (vecs.size() != call.to - call.from)
        throw Error(Code::upstream_error, "embedder '" + provider.id() + "' returned " +
                                              std::to_string(vecs.size()) + " vectors for " +
                                              std::to_string(call.to - call.from) + " texts");
      for (std::size_t i = call.from; i < call.to; ++i)
        all[i]->vector = std::move(vecs[i - call.from]);
      embedded = call.to;
      submit();
      hand_back(false);
    }
    hand_back(true);
  } catch (...) {
    // Calls still running are billed all the same: wait for them and count the ones that
    // answered.
    for (auto& c : inflight) try {
        c.result.get();
        usage.push_back(static_cast<int>(c.to - c.from));
      } catch (...) {
      }
    inflight.clear();
    record_usage();
    throw;
  }
  record_usage();
}

EmbedResult Pump::embed(const std::string& name, const std::string& text) {
  auto row = cat_.pump().find(name);
  if (!row)
    throw Error(Code::not_found,
                "no pump use case '" + name + "'; `quarry pump list` shows the deployed ones",
                {{"use_case", name}});
  if (blank(text))
    throw Error(Code::invalid_argument, "the text to embed is empty or only white space",
                {{"field", "text"}});
  if (code_points(text) > kMaxEmbedChars)
    throw Error(Code::invalid_argument,
                "the text to embed is longer than 100,000 characters; shorten it",
                {{"field", "text"}});
  auto provider = require_provider(row->embedder);
  check_budget(name, 0);
  EmbedResult r;
  r.embedding = provider->embed_query(text);  // exactly as sent: no trimming
  cat_.pump().add_usage(name, core::now_ms(), {1}, "embed");
  r.revision = revision(config_of(*row), provider->identity(),
                        embed::chunking_key(provider->model_tokenizer()));
  return r;
}

}  // namespace quarry::pump
