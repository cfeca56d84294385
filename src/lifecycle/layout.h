// The data directory on disk (SPEC §2.3) and crash-safe file replacement.
//
//   <data>/catalog.db                 SQLite catalog (WAL)
//   <data>/write.lock                 the one-writer lock
//   <data>/kb/<name>/docs/<id>.md     Markdown with front matter: the source of truth
//   <data>/kb/<name>/raw/<id>.<ext>   the original upload
//   <data>/staging/                   files written but not yet renamed into place
//
// A document write stages its files in staging/ (`<kb>.<docs|raw>.<final name>.tmp`), commits
// the catalog transaction (the commit point), then renames the staged files into place.
// recover_staged_files() finishes or discards staged files left by a crash, using the hashes the
// catalog committed. One staging folder, not files beside their targets, so that checking for
// leftovers on every open reads one (normally empty) directory, not every KB's folders.
#pragma once

#include <string>
#include <string_view>

namespace quarry::catalog {
class Catalog;
}

namespace quarry::lifecycle {

struct Layout {
  std::string data_dir;

  std::string catalog_path() const { return data_dir + "/catalog.db"; }
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
  // Where the file that will become `final_path` (a path under kb/) is staged.
  std::string staged_path(const std::string& final_path) const;
};

// Writes `bytes` to layout.staged_path(final_path); returns the staged path.
std::string stage_file(const Layout& layout, const std::string& final_path, std::string_view bytes);
// Renames a staged file onto its final path.
void commit_staged(const std::string& staged, const std::string& final_path);
std::string read_whole_file(const std::string& path);  // throws io_error / not_found
void remove_file_quietly(const std::string& path);

// Finishes renames whose catalog transaction committed and deletes the rest. Needs the
// writer lock held by the caller.
void recover_staged_files(const Layout& layout, const catalog::Catalog& cat);
bool has_staged_files(const Layout& layout);

}  // namespace quarry::lifecycle
