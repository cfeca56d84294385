#include "store/embedded/scope_index.h"

#include <algorithm>
#include <cstdio>

#include "quarry/deadline.h"
#include "quarry/error.h"
#include "store/embedded/kernels.h"

namespace quarry::store::embedded {
namespace {

// The delta (rows newer than the index) and the dead set are folded into the index once either
// reaches this size: below it an exact scan of the delta costs tens of microseconds.
constexpr std::size_t kExtendAt = 1024;
constexpr std::size_t kFilterCacheSize = 8;
// From this many rows an exact scan reads f16 rows first (scan_topk_f16); below, f32 directly.
constexpr std::size_t kF16ScanRows = 4096;

void append_key(std::string& out, const core::Filter& f) {
  out += std::to_string(static_cast<int>(f.op));
  out += '(';
  out += std::to_string(f.field.size()) + ':' + f.field;
  for (const auto& v : f.values) {
    out += '|' + std::to_string(v.index()) + ':';
    std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::string>)
            out += std::to_string(x.size()) + ':' + x;
          else if constexpr (std::is_same_v<T, std::nullptr_t>)
            out += 'n';
          else
            out += std::to_string(x);
        },
        v);
  }
  for (const auto& c : f.children) append_key(out, c);
  out += ')';
}

[[noreturn]] void mismatch(std::size_t got, int want) {
  throw Error(Code::dimension_mismatch,
              "query vector has " + std::to_string(got) + " dimensions but the scope holds " +
                  std::to_string(want) + "-dimensional vectors",
              {{"expected", std::to_string(want)}, {"actual", std::to_string(got)}});
}

struct Candidate {
  float distance;
  std::int64_t id;
  std::int64_t mem_row;  // -1: from the index
};

}  // namespace

void ScopeIndex::MemRows::add(std::int64_t id, std::uint32_t d, const RowMeta& m, const float* v,
                              std::size_t n) {
  pos[id] = ids.size();
  ids.push_back(id);
  doc.push_back(d);
  meta.push_back(m);
  std::size_t at = matrix.size();
  matrix.insert(matrix.end(), v, v + n);
  normalize(matrix.data() + at, n);
  half.resize(matrix.size());
  for (std::size_t i = at; i < matrix.size(); ++i) half[i] = f32_to_f16(matrix[i]);
}

bool ScopeIndex::MemRows::remove(std::int64_t id, std::size_t dims) {
  auto it = pos.find(id);
  if (it == pos.end()) return false;
  std::size_t r = it->second, last = ids.size() - 1;
  pos.erase(it);
  if (r != last) {  // move the last row into the hole
    ids[r] = ids[last];
    doc[r] = doc[last];
    meta[r] = std::move(meta[last]);
    std::copy_n(matrix.begin() + static_cast<std::ptrdiff_t>(last * dims), dims,
                matrix.begin() + static_cast<std::ptrdiff_t>(r * dims));
    std::copy_n(half.begin() + static_cast<std::ptrdiff_t>(last * dims), dims,
                half.begin() + static_cast<std::ptrdiff_t>(r * dims));
    pos[ids[r]] = r;
  }
  ids.pop_back();
  doc.pop_back();
  meta.pop_back();
  matrix.resize(last * dims);
  half.resize(last * dims);
  return true;
}

void ScopeIndex::MemRows::clear() {
  *this = MemRows{};
}

ScopeIndex::ScopeIndex(VectorDb& db, std::string index_path, std::string kb, std::string revision,
                       const Settings& settings)
    : db_(db),
      path_(std::move(index_path)),
      kb_(std::move(kb)),
      revision_(std::move(revision)),
      settings_(settings) {}

ScopeIndex::~ScopeIndex() {
  try {
    std::unique_lock lock(mu_);
    if (index_ && !index_->is_view() && unsaved_ > 0) index_->save(path_, stamp_);
  } catch (const std::exception& e) {
    // A destructor cannot report; the next reader rebuilds the index from the db.
    std::fprintf(stderr, "quarry: could not save vector index %s: %s\n", path_.c_str(), e.what());
  }
}

void ScopeIndex::reset() {
  loaded_ = false;
  epoch_ = seq_ = max_id_ = 0;
  dims_ = 0;
  ++version_;
  doc_ids_.clear();
  doc_meta_.clear();
  doc_ord_.clear();
  mem_.clear();
  index_.reset();
  stamp_ = {};
  dead_.clear();
  keys_loaded_ = false;
  docs_loaded_ = false;
  keys_.clear();
  unsaved_ = 0;
}

void ScopeIndex::drop_file() {
  std::unique_lock lock(mu_);
  reset();
  std::remove(path_.c_str());
}

ScopeStats ScopeIndex::stats() {
  std::shared_lock lock(mu_);
  ScopeStats s;
  s.hnsw = index_ != nullptr;
  s.view = index_ && index_->is_view();
  s.index_size = index_ ? index_->size() : 0;
  s.delta = mem_.ids.size();
  s.dead = dead_.size();
  s.rebuilds = rebuilds_;
  return s;
}

std::uint32_t ScopeIndex::doc_ordinal(const std::string& doc_id) {
  auto [it, fresh] = doc_ord_.emplace(doc_id, static_cast<std::uint32_t>(doc_ids_.size()));
  if (fresh) {
    doc_ids_.push_back(doc_id);
    doc_meta_.emplace_back();  // null until the docs are read (no allocation per document)
  }
  return it->second;
}

void ScopeIndex::set_doc(const std::string& doc_id, const std::string& json) {
  auto meta = nlohmann::json::parse(json, nullptr, false);
  doc_meta_[doc_ordinal(doc_id)] = meta.is_discarded() ? nlohmann::json::object() : meta;
}

bool ScopeIndex::current(const std::optional<ScopeRow>& row, bool need_docs, bool need_keys) const {
  if (!loaded_ || !row) return false;
  return row->epoch == epoch_ && row->seq == seq_ && (!need_docs || docs_loaded_) &&
         (!need_keys || !index_ || keys_loaded_);
}

void ScopeIndex::full_load(const ScopeRow& row, VectorDb::Reader& r) {
  reset();
  loaded_ = true;
  epoch_ = row.epoch;
  seq_ = row.seq;
  dims_ = row.dims;
  auto add_row = [&](std::int64_t id, const RowMeta& m, const float* v, std::size_t n) {
    mem_.add(id, doc_ordinal(m.doc_id), m, v, n);
    max_id_ = std::max(max_id_, id);
  };
  // Try the index file first (a missing one fails at fopen): its stamp, the tombstones and the
  // delta give the live row count without counting the scope's rows in SQLite.
  IndexStamp st;
  std::string why;
  auto idx =
      HnswIndex::open(path_, static_cast<std::size_t>(dims_), settings_.hnsw, true, &st, &why);
  if (idx && st.epoch == row.epoch && st.seq >= row.tomb_floor && st.seq <= row.seq) {
    index_ = std::move(idx);
    stamp_ = st;
    max_id_ = st.max_id;
    r.tombstones(kb_, revision_, st.seq, [&](std::int64_t id) {
      if (id <= st.max_id) dead_.insert(static_cast<std::uint64_t>(id));
    });
    r.rows(kb_, revision_, st.max_id, add_row);
    auto live = static_cast<std::int64_t>(index_->size() - dead_.size() + mem_.ids.size());
    if (live >= settings_.hnsw_threshold) return;
    reset();  // the scope shrank below the threshold: exact mode
    loaded_ = true;
    epoch_ = row.epoch;
    seq_ = row.seq;
    dims_ = row.dims;
  }
  // Exact mode, or no usable index file: everything into memory; maybe_extend() builds.
  r.rows(kb_, revision_, 0, add_row);
}

void ScopeIndex::incremental(const ScopeRow& row, VectorDb::Reader& r) {
  if (docs_loaded_)
    r.docs(kb_, revision_, seq_,
           [&](const std::string& d, const std::string& j) { set_doc(d, j); });
  r.tombstones(kb_, revision_, seq_, [&](std::int64_t id) {
    if (mem_.remove(id, static_cast<std::size_t>(dims_))) return;
    if (index_ && id <= stamp_.max_id) dead_.insert(static_cast<std::uint64_t>(id));
  });
  r.rows(kb_, revision_, max_id_,
         [&](std::int64_t id, const RowMeta& m, const float* v, std::size_t n) {
           mem_.add(id, doc_ordinal(m.doc_id), m, v, n);
           max_id_ = id;
         });
  seq_ = row.seq;
}

void ScopeIndex::load_keys(VectorDb::Reader& r) {
  keys_.clear();
  keys_.reserve(index_->size());
  r.keys(kb_, revision_, stamp_.max_id, [&](std::int64_t id, const RowMeta& m) {
    auto key = static_cast<std::uint64_t>(id);
    if (!dead_.count(key)) keys_[key] = {doc_ordinal(m.doc_id), m.chunk_index, m.chunk_id};
  });
  keys_loaded_ = true;
}

void ScopeIndex::refresh(bool need_docs, bool need_keys) {
  db_.read([&](VectorDb::Reader& r) {
    auto row = r.scope(kb_, revision_);
    if (!row) {
      reset();
      loaded_ = true;
      return;
    }
    if (!loaded_ || row->epoch != epoch_ || seq_ < row->tomb_floor)
      full_load(*row, r);
    else if (row->seq != seq_)
      incremental(*row, r);
    ++version_;
    // Metadata and the key -> document map serve filters only: a cold unfiltered query
    // never parses the documents' json.
    if (need_docs && !docs_loaded_) {
      r.docs(kb_, revision_, -1,
             [&](const std::string& d, const std::string& j) { set_doc(d, j); });
      docs_loaded_ = true;
    }
    if (need_keys && index_ && !keys_loaded_) load_keys(r);
  });
  maybe_extend();
}

void ScopeIndex::save_index() {
  index_->save(path_, stamp_);
  unsaved_ = 0;
  // Tombstones up to the saved stamp are no longer needed by anyone who reads that file; a
  // reader whose state is older than the new floor reloads (see full_load / refresh).
  db_.purge_tombstones(kb_, revision_, stamp_.seq);
}

void ScopeIndex::maybe_extend() {
  if (!loaded_ || epoch_ == 0) return;
  auto dims = static_cast<std::size_t>(dims_);
  bool build = !index_ && static_cast<std::int64_t>(mem_.ids.size()) >= settings_.hnsw_threshold;
  if (index_ && (dead_.size() + index_->removed()) * 3 > index_->size()) {
    // Too many holes (pending, or removed nodes the walk still passes through) for an
    // incremental fix: rebuild from the db.
    db_.read([&](VectorDb::Reader& r) {
      auto row = r.scope(kb_, revision_);
      if (!row) return reset();
      reset();
      loaded_ = true;
      epoch_ = row->epoch;
      seq_ = row->seq;
      dims_ = row->dims;
      r.rows(kb_, revision_, 0,
             [&](std::int64_t id, const RowMeta& m, const float* v, std::size_t n) {
               mem_.add(id, doc_ordinal(m.doc_id), m, v, n);
               max_id_ = std::max(max_id_, id);
             });
    });
    build = loaded_ && epoch_ != 0;
  }
  if (build) {
    index_ = HnswIndex::create(dims, settings_.hnsw);
    ++rebuilds_;
  } else if (!index_ || (mem_.ids.size() < kExtendAt && dead_.size() < kExtendAt)) {
    return;
  } else if (index_->is_view()) {
    // A mapped file is read-only: load a private copy of the same stamp to extend.
    IndexStamp st;
    auto copy = HnswIndex::open(path_, dims, settings_.hnsw, false, &st, nullptr);
    if (!copy || st.epoch != stamp_.epoch || st.seq != stamp_.seq || st.max_id != stamp_.max_id) {
      loaded_ = false;  // the file changed under us: start over from the db
      return refresh(docs_loaded_, keys_loaded_);
    }
    index_ = std::move(copy);
  }
  for (auto key : dead_) {
    index_->remove(key);
    keys_.erase(key);
  }
  dead_.clear();
  std::vector<std::uint64_t> keys(mem_.ids.begin(), mem_.ids.end());
  index_->add(keys.data(), mem_.matrix.data(), keys.size(), settings_.threads);
  if (build) {
    keys_.clear();
    keys_.reserve(keys.size());
    keys_loaded_ = true;
  }
  if (keys_loaded_)
    for (std::size_t i = 0; i < keys.size(); ++i)
      keys_[keys[i]] = {mem_.doc[i], mem_.meta[i].chunk_index, std::move(mem_.meta[i].chunk_id)};
  unsaved_ += keys.size();
  stamp_ = {epoch_, seq_, max_id_};
  mem_.clear();
  ++version_;
  if (build || unsaved_ >= std::max(kExtendAt, index_->size() / 10)) save_index();
}

std::shared_ptr<ScopeIndex::FilterEntry> ScopeIndex::filter_entry(const core::Filter& f) {
  std::string key;
  append_key(key, f);
  std::lock_guard lock(filter_mu_);
  for (auto it = filters_.begin(); it != filters_.end(); ++it)
    if ((*it)->key == key && (*it)->version == version_) {
      filters_.splice(filters_.begin(), filters_, it);
      return filters_.front();
    }
  auto e = std::make_shared<FilterEntry>();
  e->key = std::move(key);
  e->version = version_;
  e->match.resize(doc_meta_.size());
  static const nlohmann::json kNoMetadata = nlohmann::json::object();
  for (std::size_t d = 0; d < doc_meta_.size(); ++d) {
    if (d % 256 == 0) check_deadline();  // nothing is cached until the whole pass is done
    const auto& meta = doc_meta_[d].is_null() ? kNoMetadata : doc_meta_[d];
    e->match[d] = core::filter_matches(f, meta) ? 1 : 0;
  }
  if (index_) {
    std::int64_t n = 0;
    for (const auto& [k, km] : keys_)
      if (e->match[km.doc] && !dead_.count(k)) ++n;
    e->allowed_index = n;
  }
  filters_.push_front(e);
  if (filters_.size() > kFilterCacheSize) filters_.pop_back();
  return e;
}

std::vector<StoreHit> ScopeIndex::search(const std::vector<float>& q, std::size_t k,
                                         const core::Filter& filter) {
  check_deadline();
  auto fe = filter.empty() ? nullptr : filter_entry(filter);
  const std::vector<char>* match = fe ? &fe->match : nullptr;
  std::vector<Candidate> cands;
  std::function<bool(std::size_t)> mem_ok;
  if (match) mem_ok = [&](std::size_t r) { return (*match)[mem_.doc[r]] != 0; };
  // Large in-memory sets are scanned in f16 first (half the memory traffic), then re-scored.
  auto rows = mem_.ids.size();
  auto dims = static_cast<std::size_t>(dims_);
  auto scanned =
      rows >= kF16ScanRows
          ? scan_topk_f16(q.data(), mem_.half.data(), mem_.matrix.data(), rows, dims, k, mem_ok,
                          settings_.threads)
          : scan_topk(q.data(), mem_.matrix.data(), rows, dims, k, mem_ok, settings_.threads);
  check_deadline();
  for (const auto& s : scanned)
    cands.push_back({s.distance, mem_.ids[s.row], static_cast<std::int64_t>(s.row)});
  if (index_) {
    std::function<bool(std::uint64_t)> key_ok;
    if (match)
      key_ok = [&](std::uint64_t key) {
        if (dead_.count(key)) return false;
        auto it = keys_.find(key);
        return it != keys_.end() && (*match)[it->second.doc] != 0;
      };
    else if (!dead_.empty())
      key_ok = [&](std::uint64_t key) { return dead_.count(key) == 0; };
    std::size_t live = index_->size() - dead_.size();
    std::size_t allowed = match ? static_cast<std::size_t>(fe->allowed_index) : live;
    // Few allowed chunks: HNSW would wander through a graph of mostly rejected nodes.
    bool selective = match && allowed < std::max(k * 64, live / 20);
    std::vector<std::pair<std::uint64_t, float>> got;
    if (!selective) got = index_->search(q.data(), k, key_ok);
    if (got.size() < std::min(k, allowed)) got = index_->search(q.data(), k, key_ok, true);
    for (const auto& [key, d] : got) cands.push_back({d, static_cast<std::int64_t>(key), -1});
  }
  std::sort(cands.begin(), cands.end(), [](const Candidate& a, const Candidate& b) {
    return a.distance < b.distance || (a.distance == b.distance && a.id < b.id);
  });
  if (cands.size() > k) cands.resize(k);
  std::vector<StoreHit> hits;
  hits.reserve(cands.size());
  auto emit = [&](const std::string& doc_id, int chunk_index, const std::string& chunk_id,
                  float distance) {
    StoreHit h;
    h.doc_id = doc_id;
    h.chunk_index = chunk_index;
    h.chunk_id = chunk_id;
    h.raw_score = std::clamp(static_cast<double>(distance), 0.0, 2.0);
    h.score = cosine_score(h.raw_score);
    hits.push_back(std::move(h));
  };
  auto emit_mem = [&](const Candidate& c) {
    const auto& m = mem_.meta[static_cast<std::size_t>(c.mem_row)];
    emit(m.doc_id, m.chunk_index, m.chunk_id, c.distance);
  };
  bool any_index =
      std::any_of(cands.begin(), cands.end(), [](const Candidate& c) { return c.mem_row < 0; });
  if (!any_index || keys_loaded_) {
    for (const auto& c : cands) {
      if (c.mem_row >= 0) {
        emit_mem(c);
      } else if (auto it = keys_.find(static_cast<std::uint64_t>(c.id)); it != keys_.end()) {
        const auto& km = it->second;
        emit(doc_ids_[km.doc], km.chunk_index, km.chunk_id, c.distance);
      }
    }
    return hits;
  }
  // A cold reader's first query: the index keys' metadata is not in memory yet (a one-shot
  // process never loads it), so look the few hits up by rowid. A row deleted since our refresh
  // is simply not returned.
  std::vector<std::int64_t> keys;
  for (const auto& c : cands)
    if (c.mem_row < 0) keys.push_back(c.id);
  auto metas = db_.lookup(keys);
  std::size_t next = 0;
  for (const auto& c : cands) {
    if (c.mem_row >= 0)
      emit_mem(c);
    else if (const auto& m = metas[next++])
      emit(m->doc_id, m->chunk_index, m->chunk_id, c.distance);
  }
  return hits;
}

std::vector<StoreHit> ScopeIndex::query(const Query& q, int scope_dims) {
  if (q.top_k <= 0) return {};
  if (scope_dims > 0 && q.vector.size() != static_cast<std::size_t>(scope_dims))
    mismatch(q.vector.size(), scope_dims);
  auto row = db_.scope_row(kb_, revision_);
  if (!row) return {};
  if (q.vector.size() != static_cast<std::size_t>(row->dims)) mismatch(q.vector.size(), row->dims);
  std::vector<float> v = q.vector;
  normalize(v.data(), v.size());
  auto k = static_cast<std::size_t>(q.top_k);
  // Filters need every document's metadata; any query after a scope's first needs the index
  // keys' metadata (loaded once, so that later queries never look hits up in SQLite).
  bool need_docs = !q.filter.empty();
  bool need_keys = need_docs || queries_.fetch_add(1, std::memory_order_relaxed) > 0;
  {
    std::shared_lock lock(mu_);
    if (current(row, need_docs, need_keys)) return search(v, k, q.filter);
  }
  std::unique_lock lock(mu_);
  refresh(need_docs, need_keys);
  if (epoch_ == 0) return {};  // deleted meanwhile
  if (v.size() != static_cast<std::size_t>(dims_)) mismatch(v.size(), dims_);
  return search(v, k, q.filter);
}

}  // namespace quarry::store::embedded
