#include "ingest/staging.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "catalog/catalog.h"
#include "convert/converter.h"
#include "core/util.h"
#include "quarry/error.h"

namespace fs = std::filesystem;

namespace quarry::ingest {

std::string stage_file(const Layout& layout, const std::string& final_path,
                       std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(fs::path(final_path).parent_path(), ec);
  fs::create_directories(layout.staging_dir(), ec);
  const std::string staged = layout.staged_path(final_path);
  int fd = ::open(staged.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(Code::io_error, "cannot write " + staged + ": " + std::strerror(errno));
  std::size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int e = errno;
      ::close(fd);
      throw Error(Code::io_error, "cannot write " + staged + ": " + std::strerror(e));
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return staged;
}

void commit_staged(const std::string& staged, const std::string& final_path) {
  if (::rename(staged.c_str(), final_path.c_str()) != 0)
    throw Error(Code::io_error, "cannot rename " + staged + ": " + std::strerror(errno));
}

std::string read_whole_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO waits for a writer otherwise, forever. Nothing but a regular file
  // is read (fstat on the descriptor opened, so the check and the read see the same file).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int e = errno;
    if (e == ELOOP)
      throw Error(Code::io_error,
                  "cannot read " + path + ": a loop of symbolic links; fix or remove the link",
                  {{"path", path}});
    throw Error(e == ENOENT || e == ENOTDIR ? Code::not_found : Code::io_error,
                "cannot read " + path + ": " + std::strerror(e), {{"path", path}});
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    throw Error(Code::io_error, "cannot read " + path + ": " + std::strerror(e), {{"path", path}});
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw not_a_regular_file(path, special_file_kind(st.st_mode));
  }
  std::string out;
  out.reserve(static_cast<std::size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      throw Error(Code::io_error, "cannot read " + path + ": " + std::strerror(e),
                  {{"path", path}});
    }
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

std::string special_file_kind(unsigned mode) {
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISDIR(mode)) return "a directory";
  return "a special file";
}

Error not_a_regular_file(const std::string& path, const std::string& kind) {
  return Error(Code::unsupported_format,
               path + " is " + kind +
                   ", not a regular file; only regular files are ingested (leave it out, e.g. "
                   "with --exclude)",
               {{"path", path}, {"reason", "not_regular_file"}});
}

void remove_file_quietly(const std::string& path) {
  ::unlink(path.c_str());
}

namespace {

// Calls fn(kb, sub, name, staged path) for each staged file (see Layout::staged_path).
template <typename Fn>
void for_each_staged(const Layout& layout, Fn fn) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(layout.staging_dir(), ec)) {
    std::string n = e.path().filename().string();
    auto dot1 = n.find('.');
    auto dot2 = dot1 == std::string::npos ? dot1 : n.find('.', dot1 + 1);
    if (dot2 == std::string::npos || n.size() < 4 || n.compare(n.size() - 4, 4, ".tmp") != 0) {
      remove_file_quietly(e.path().string());  // not ours: never renamed anywhere
      continue;
    }
    fn(n.substr(0, dot1), n.substr(dot1 + 1, dot2 - dot1 - 1),
       n.substr(dot2 + 1, n.size() - 4 - dot2 - 1), e.path());
  }
}

}  // namespace

bool has_staged_files(const Layout& layout) {
  std::error_code ec;
  return fs::directory_iterator(layout.staging_dir(), ec) != fs::directory_iterator();
}

void recover_staged_files(const Layout& layout, const catalog::Catalog& cat) {
  for_each_staged(layout, [&](const std::string& kb, const std::string& sub,
                              const std::string& name, const fs::path& p) {
    const std::string final_path = layout.kb_dir(kb) + "/" + sub + "/" + name;
    const std::string id = name.substr(0, name.find('.'));
    std::optional<catalog::DocumentRow> doc;
    if (auto k = cat.kbs().find(kb)) doc = cat.documents().find(k->ref(), id);
    bool keep = false;
    if (doc && (sub == "docs" || sub == "raw")) {
      std::string bytes = read_whole_file(p.string());
      if (sub == "docs") {
        auto parsed = convert::parse_front_matter(bytes);
        keep = core::sha256_hex(std::string_view(bytes).substr(parsed.body_offset)) ==
               doc->content_sha256;
      } else {
        keep = core::sha256_hex(bytes) == doc->source_sha256;
      }
    }
    if (keep)
      commit_staged(p.string(), final_path);
    else
      remove_file_quietly(p.string());
  });
}

}  // namespace quarry::ingest
