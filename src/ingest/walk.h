// Directory ingest (SPEC §2.6): which files of a tree to ingest.
#pragma once

#include <string>
#include <vector>

namespace quarry::ingest {

struct WalkEntry {
  std::string absolute;    // path to read
  std::string relative;    // '/'-separated path below the root: the document's filename
  std::string error_code;  // set when the entry is refused (e.g. a symlink out of the root)
  std::string error_message;
};

// Recursive, sorted, deterministic. Hidden files and directories (".git", ".env") are skipped.
// Symlinks are followed only when their target resolves inside the root; directory symlinks
// are never descended (no cycles). Include globs (any must match, default all) and exclude
// globs (none may match) apply to the relative path. Entries that cannot be ingested come back
// refused, with the reason: a link out of the root (forbidden), a loop of links (io_error), a
// dangling link (not_found), a FIFO, socket or device (unsupported_format; never opened).
std::vector<WalkEntry> walk_directory(const std::string& root,
                                      const std::vector<std::string>& include,
                                      const std::vector<std::string>& exclude);

}  // namespace quarry::ingest
