// The data directory on disk (SPEC §2.3): the one place that knows its file names. Every room
// that opens a file of the data directory asks a Layout for its path.
//
//   <data>/catalog.db                 SQLite catalog (WAL)
//   <data>/write.lock                 the one-writer lock
//   <data>/activity                   the time of the last search (sweeps make way for it)
//   <data>/secrets.json               the encrypted secret store (secrets.lock: its writers)
//   <data>/secret.key                 its master key (unless QUARRY_SECRET_KEY is set)
//   <data>/cache/embeddings.db        the embedding cache (deletable)
//   <data>/vectors/vectors.db         the embedded vector store (and its HNSW index files)
//   <data>/models/<name>/             local embedding models
//   <data>/kb/<name>/docs/<id>.md     Markdown with front matter: the source of truth
//   <data>/kb/<name>/raw/<id>.<ext>   the original upload
//   <data>/staging/                   files written but not yet renamed into place
#pragma once

#include <string>

namespace quarry::core {

struct Layout {
  std::string data_dir;

  std::string catalog_path() const { return data_dir + "/catalog.db"; }
  std::string write_lock_path() const { return data_dir + "/write.lock"; }
  std::string activity_path() const { return data_dir + "/activity"; }
  std::string secrets_file() const { return "secrets.json"; }  // inside data_dir
  std::string secrets_path() const { return data_dir + "/" + secrets_file(); }
  std::string secrets_lock_path() const { return data_dir + "/secrets.lock"; }
  std::string secret_key_path() const { return data_dir + "/secret.key"; }
  std::string embed_cache_path() const { return data_dir + "/cache/embeddings.db"; }
  std::string vectors_dir() const { return data_dir + "/vectors"; }
  std::string vectors_db_path() const { return vectors_dir() + "/vectors.db"; }
  std::string models_dir() const { return data_dir + "/models"; }

  std::string kb_dir(const std::string& kb) const { return data_dir + "/kb/" + kb; }
  std::string docs_dir(const std::string& kb) const { return kb_dir(kb) + "/docs"; }
  std::string raw_dir(const std::string& kb) const { return kb_dir(kb) + "/raw"; }
  std::string markdown_path(const std::string& kb, const std::string& id) const {
    return docs_dir(kb) + "/" + id + ".md";
  }
  std::string raw_path(const std::string& kb, const std::string& id, const std::string& ext) const {
    return raw_dir(kb) + "/" + id + (ext.empty() ? "" : "." + ext);
  }
  std::string staging_dir() const { return data_dir + "/staging"; }
  // Where the file that will become `final_path` (a path under kb/) is staged:
  // <data>/kb/<kb>/<sub>/<name> -> <data>/staging/<kb>.<sub>.<name>.tmp (KB names have no '.').
  std::string staged_path(const std::string& final_path) const;
};

}  // namespace quarry::core
