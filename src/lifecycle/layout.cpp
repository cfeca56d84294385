#include "lifecycle/layout.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "catalog/catalog.h"
#include "convert/converter.h"
#include "core/util.h"
#include "quarry/error.h"

namespace fs = std::filesystem;

namespace quarry::lifecycle {

std::string stage_file(const std::string& path, std::string_view bytes) {
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  const std::string staged = path + ".tmp";
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
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error(Code::not_found, "cannot read " + path, {{"path", path}});
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void remove_file_quietly(const std::string& path) {
  ::unlink(path.c_str());
}

namespace {

template <typename Fn>
void for_each_staged(const Layout& layout, Fn fn) {
  std::error_code ec;
  fs::path kb_root = fs::path(layout.data_dir) / "kb";
  if (!fs::is_directory(kb_root, ec)) return;
  for (const auto& kb : fs::directory_iterator(kb_root, ec)) {
    for (const char* sub : {"docs", "raw"}) {
      fs::path dir = kb.path() / sub;
      if (!fs::is_directory(dir, ec)) continue;
      for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.path().extension() == ".tmp")
          fn(kb.path().filename().string(), std::string(sub), e.path());
    }
  }
}

}  // namespace

bool has_staged_files(const Layout& layout) {
  bool any = false;
  for_each_staged(layout,
                  [&](const std::string&, const std::string&, const fs::path&) { any = true; });
  return any;
}

void recover_staged_files(const Layout& layout, const catalog::Catalog& cat) {
  for_each_staged(layout, [&](const std::string& kb, const std::string& sub, const fs::path& p) {
    const std::string final_path = p.string().substr(0, p.string().size() - 4);
    const std::string name = fs::path(final_path).filename().string();
    const std::string id = name.substr(0, name.find('.'));
    std::optional<catalog::DocumentRow> doc;
    if (cat.find_kb(kb)) doc = cat.find_document(kb, id);
    bool keep = false;
    if (doc) {
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

}  // namespace quarry::lifecycle
