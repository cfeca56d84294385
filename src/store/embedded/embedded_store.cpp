// The embedded default store: vectors durable in <data_dir>/vectors/vectors.db (db.h), one
// ScopeIndex per (kb, revision) answering queries (scope_index.h), index files beside the db.
#include "store/embedded/embedded_store.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <thread>

#include "core/layout.h"
#include "core/plugin_version.h"
#include "quarry/error.h"
#include "store/embedded/db.h"

namespace quarry::store::embedded {
namespace {

namespace fs = std::filesystem;

std::string safe_name(const std::string& s) {
  bool ok = !s.empty() && s.size() <= 64 && std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  if (ok) return s;
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  char buf[24];
  std::snprintf(buf, sizeof buf, "h%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::int64_t int_setting(const nlohmann::json& v, const std::string& key, std::int64_t lo,
                         std::int64_t hi) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
    throw Error(Code::invalid_argument,
                "store setting " + key + " must be an integer in [" + std::to_string(lo) + ", " +
                    std::to_string(hi) + "]",
                {{"key", key}});
  return v.get<std::int64_t>();
}

class EmbeddedStore final : public VectorStore {
 public:
  EmbeddedStore(const Settings& settings, std::string dir)
      : settings_(settings), dir_(std::move(dir)) {
    std::error_code ec;
    const core::Layout layout{dir_};
    fs::create_directories(layout.vectors_dir(), ec);
    if (ec)
      throw Error(Code::io_error, "cannot create " + layout.vectors_dir() + ": " + ec.message(),
                  {{"path", dir_}});
    db_ = std::make_unique<VectorDb>(layout.vectors_db_path());
  }
  ~EmbeddedStore() override {
    scopes_.clear();  // save in-memory indexes while the db is still open
  }

  std::string id() const override { return "embedded"; }
  Capabilities capabilities() const override {
    Capabilities c;
    c.tenancy = "row_filter";
    return c;
  }

  UpsertResult upsert(const Scope& scope, const DocumentVectors& doc, Transaction*) override {
    check(scope);
    return db_->upsert(scope, doc);
  }

  std::vector<UpsertResult> upsert_many(const Scope& scope,
                                        const std::vector<DocumentVectors>& docs,
                                        Transaction*) override {
    check(scope);
    check_upsert_batch("embedded", scope, docs, false);
    return db_->upsert_many(scope, docs.data(), docs.size());
  }

  std::vector<StoreHit> query(const Scope& scope, const Query& q) const override {
    if (q.top_k <= 0) return {};
    check(scope);
    return state(scope.kb, scope.revision)->query(q, scope.dimensions);
  }

  int delete_document(const std::string& kb, const std::string& doc_id, Transaction*) override {
    return db_->delete_document(kb, doc_id);
  }
  int delete_kb(const std::string& kb, Transaction*) override {
    int n = db_->delete_revisions(kb, nullptr);
    drop(kb, nullptr);
    return n;
  }
  int delete_where(const std::string& kb, const core::Filter& filter, Transaction*) override {
    return db_->delete_where(kb, filter);
  }
  int delete_other_revisions(const std::string& kb, const std::string& keep) override {
    int n = db_->delete_revisions(kb, &keep);
    drop(kb, &keep);
    return n;
  }
  bool has(const Scope& scope, const std::string& doc_id) const override {
    return db_->has(scope, doc_id);
  }
  std::int64_t count(const Scope& scope) const override {
    return db_->count(scope.kb, scope.revision);
  }

  std::shared_ptr<ScopeIndex> state(const std::string& kb, const std::string& revision) const {
    std::lock_guard lock(mu_);
    auto& s = scopes_[{kb, revision}];
    if (!s)
      s = std::make_shared<ScopeIndex>(*db_, index_path(dir_, kb, revision), kb, revision,
                                       settings_);
    return s;
  }

 private:
  static void check(const Scope& scope) {
    if (scope.kb.empty() || scope.revision.empty())
      throw Error(Code::invalid_argument, "a vector scope needs a kb and a revision");
  }

  // After a kb-wide delete: forget the in-memory states and the index files of the revisions
  // that went (another process's files are found by name: <kb>.<revision>.usearch).
  void drop(const std::string& kb, const std::string* keep) {
    std::vector<std::shared_ptr<ScopeIndex>> gone;
    {
      std::lock_guard lock(mu_);
      for (auto it = scopes_.begin(); it != scopes_.end();) {
        if (it->first.first == kb && !(keep && it->first.second == *keep)) {
          gone.push_back(it->second);
          it = scopes_.erase(it);
        } else {
          ++it;
        }
      }
    }
    for (auto& s : gone) s->drop_file();
    std::string prefix = safe_name(kb) + ".";
    std::string kept = keep ? fs::path(index_path(dir_, kb, *keep)).filename().string() : "";
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(fs::path(dir_) / "vectors", ec)) {
      std::string name = e.path().filename().string();
      if (name.rfind(prefix, 0) == 0 && name != kept && name.find(".usearch") != std::string::npos)
        fs::remove(e.path(), ec);
    }
  }

  Settings settings_;
  std::string dir_;
  std::unique_ptr<VectorDb> db_;
  mutable std::mutex mu_;
  mutable std::map<std::pair<std::string, std::string>, std::shared_ptr<ScopeIndex>> scopes_;
};

}  // namespace

std::string index_path(const std::string& data_dir, const std::string& kb,
                       const std::string& revision) {
  return (fs::path(data_dir) / "vectors" / (safe_name(kb) + "." + safe_name(revision) + ".usearch"))
      .string();
}

Settings parse_settings(const nlohmann::json& j) {
  Settings s;
  s.threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  if (j.is_null()) return s;
  if (!j.is_object())
    throw Error(Code::invalid_argument, "embedded store settings must be a JSON object");
  for (const auto& [key, v] : j.items()) {
    if (key == "hnsw_threshold") {
      s.hnsw_threshold = int_setting(v, key, 0, std::int64_t{1} << 40);
    } else if (key == "connectivity") {
      s.hnsw.connectivity = static_cast<std::size_t>(int_setting(v, key, 2, 256));
    } else if (key == "expansion_add") {
      s.hnsw.expansion_add = static_cast<std::size_t>(int_setting(v, key, 1, 4096));
    } else if (key == "expansion_search") {
      s.hnsw.expansion_search = static_cast<std::size_t>(int_setting(v, key, 1, 4096));
    } else if (key == "threads") {
      auto t = static_cast<unsigned>(int_setting(v, key, 0, 256));
      s.threads = t ? t : std::max(1u, std::thread::hardware_concurrency());
    } else if (key == "quantization") {
      std::string q = v.is_string() ? v.get<std::string>() : "";
      if (q == "f32")
        s.hnsw.quantization = Quantization::f32;
      else if (q == "f16")
        s.hnsw.quantization = Quantization::f16;
      else if (q == "i8")
        s.hnsw.quantization = Quantization::i8;
      else
        throw Error(Code::invalid_argument, "store setting quantization must be f32, f16 or i8",
                    {{"key", key}});
    } else {
      throw Error(Code::invalid_argument, "unknown embedded store setting: " + key, {{"key", key}});
    }
  }
  return s;
}

std::optional<ScopeStats> scope_stats(VectorStore& store, const Scope& scope) {
  auto* e = dynamic_cast<EmbeddedStore*>(&store);
  if (!e) return std::nullopt;
  return e->state(scope.kb, scope.revision)->stats();
}

}  // namespace quarry::store::embedded

namespace quarry::store {

std::unique_ptr<VectorStore> make_embedded_store(const nlohmann::json& settings,
                                                 const StoreContext& ctx) {
  if (ctx.data_dir.empty())
    throw Error(Code::invalid_argument, "the embedded vector store needs a data directory");
  return std::make_unique<embedded::EmbeddedStore>(embedded::parse_settings(settings),
                                                   ctx.data_dir);
}

// The keys embedded::parse_settings() reads, with its defaults.
PluginSchema embedded_store_schema() {
  const embedded::Settings d;
  using core::plugin_setting;
  PluginSchema s;
  s.description =
      "The default: vectors in <data-dir>/vectors (SQLite), exact scan for small KBs, a HNSW "
      "index (USearch) from hnsw_threshold rows.";
  s.settings = {
      plugin_setting("hnsw_threshold", "integer", std::to_string(d.hnsw_threshold),
                     "Vectors of a KB revision from which it gets a HNSW index (below: exact "
                     "scan)."),
      plugin_setting("connectivity", "integer", std::to_string(d.hnsw.connectivity),
                     "HNSW links per node, 2-256."),
      plugin_setting("expansion_add", "integer", std::to_string(d.hnsw.expansion_add),
                     "HNSW build breadth, 1-4096."),
      plugin_setting("expansion_search", "integer", std::to_string(d.hnsw.expansion_search),
                     "HNSW search breadth, 1-4096."),
      plugin_setting("threads", "integer", "",
                     "Threads for index builds and exact scans, 0-256; 0 = every CPU (default: "
                     "the CPUs, at most 4)."),
      plugin_setting("quantization", "string", "\"f32\"",
                     "How the index keeps vectors for re-scoring.", false, {"f32", "f16", "i8"})};
  return s;
}

}  // namespace quarry::store
