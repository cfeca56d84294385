#include "ingest/walk.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>

#include "ingest/glob.h"
#include "ingest/staging.h"
#include "quarry/error.h"

namespace fs = std::filesystem;

namespace quarry::ingest {
namespace {

bool inside(const fs::path& root, const fs::path& p) {
  auto r = root.begin(), q = p.begin();
  for (; r != root.end(); ++r, ++q)
    if (q == p.end() || *r != *q) return false;
  return true;
}

// A symbolic link that does not resolve: a loop of links, or a target that does not exist.
WalkEntry broken_link(const fs::path& p, const std::string& rel, const std::error_code& ec) {
  if (ec == std::errc::too_many_symbolic_link_levels)
    return {p.string(), rel, "io_error",
            "symbolic link loop: following the link leads back to a link already followed; not "
            "followed "
            "(fix or remove the link)"};
  if (ec == std::errc::no_such_file_or_directory)
    return {p.string(), rel, "not_found",
            "symbolic link points to a file that does not exist; not followed (fix or remove the "
            "link)"};
  return {p.string(), rel, "io_error", "symbolic link cannot be resolved: " + ec.message()};
}

// A path as one shell word, for a command a message suggests.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                        "0123456789/._-+") == std::string::npos)
    return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool selected(const std::string& rel, const std::vector<std::string>& include,
              const std::vector<std::string>& exclude) {
  for (const auto& g : exclude)
    if (glob_match(g, rel)) return false;
  if (include.empty()) return true;
  for (const auto& g : include)
    if (glob_match(g, rel)) return true;
  return false;
}

}  // namespace

std::vector<WalkEntry> walk_directory(const std::string& root_arg,
                                      const std::vector<std::string>& include,
                                      const std::vector<std::string>& exclude) {
  std::error_code ec;
  const fs::path root = fs::canonical(root_arg, ec);
  if (ec || !fs::is_directory(root))
    throw Error(Code::not_found, "not a directory: " + root_arg, {{"path", root_arg}});
  std::vector<WalkEntry> out;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec), end;
  for (; it != end; it.increment(ec)) {
    if (ec) break;
    const fs::path& p = it->path();
    const std::string name = p.filename().string();
    if (!name.empty() && name[0] == '.') {
      if (it->is_directory(ec) && !it->is_symlink(ec)) it.disable_recursion_pending();
      continue;
    }
    // Lexical: a symlink keeps its own name, not its target's.
    std::string rel = p.lexically_relative(root).generic_string();
    if (it->is_symlink(ec)) {
      fs::path target = fs::canonical(p, ec);
      if (ec) {
        if (selected(rel, include, exclude)) out.push_back(broken_link(p, rel, ec));
        ec.clear();
        continue;
      }
      if (!inside(root, target)) {
        if (selected(rel, include, exclude))
          out.push_back({p.string(), rel, "forbidden",
                         "symbolic link points outside the ingested directory to " +
                             target.string() +
                             "; not followed: copy the target into the directory, or ingest it "
                             "by its own path: `quarry ingest " +
                             shell_word(target.string()) + " --kb KB`"});
        continue;
      }
      if (fs::is_directory(target, ec)) continue;  // never descend through links (no cycles)
    }
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0 || S_ISDIR(st.st_mode)) continue;  // vanished, or a folder
    if (!selected(rel, include, exclude)) continue;
    if (!S_ISREG(st.st_mode)) {
      // A FIFO, socket or device is reported, never opened (reading a FIFO would block).
      const Error e = not_a_regular_file(rel, special_file_kind(st.st_mode));
      out.push_back({p.string(), rel, code_name(e.code()), e.message()});
      continue;
    }
    out.push_back({p.string(), rel, "", ""});
  }
  std::sort(out.begin(), out.end(),
            [](const WalkEntry& a, const WalkEntry& b) { return a.relative < b.relative; });
  return out;
}

}  // namespace quarry::ingest
