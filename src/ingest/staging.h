// Crash-safe file replacement in the data directory (core/layout.h names its files).
//
// A document write stages its files in staging/ (`<kb>.<docs|raw>.<final name>.tmp`), commits
// the catalog transaction (the commit point), then renames the staged files into place.
// recover_staged_files() finishes or discards staged files left by a crash, using the hashes the
// catalog committed. One staging folder, not files beside their targets, so that checking for
// leftovers on every open reads one (normally empty) directory, not every KB's folders.
#pragma once

#include <string>
#include <string_view>

#include "core/layout.h"
#include "quarry/error.h"

namespace quarry::catalog {
class Catalog;
}

namespace quarry::ingest {

using core::Layout;

// Writes `bytes` to layout.staged_path(final_path); returns the staged path.
std::string stage_file(const Layout& layout, const std::string& final_path, std::string_view bytes);
// Renames a staged file onto its final path.
void commit_staged(const std::string& staged, const std::string& final_path);
// The bytes of a regular file. Throws not_found, io_error (a symlink loop, a refused read) or
// unsupported_format (details.reason not_regular_file) for a FIFO, socket or device, which is
// never opened in a way that could block.
std::string read_whole_file(const std::string& path);
// "a FIFO (named pipe)", "a socket", ... for a st_mode that is not a regular file.
std::string special_file_kind(unsigned mode);
// The error of a path that is not a regular file (unsupported_format, reason not_regular_file).
Error not_a_regular_file(const std::string& path, const std::string& kind);
void remove_file_quietly(const std::string& path);

// Finishes renames whose catalog transaction committed and deletes the rest. Needs the
// writer lock held by the caller.
void recover_staged_files(const Layout& layout, const catalog::Catalog& cat);
bool has_staged_files(const Layout& layout);

}  // namespace quarry::ingest
