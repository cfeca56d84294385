// Grep mode: file reading, the worker pool and the in-order merge. The per-file scan is in
// grep_scan.cpp.
//
// Workers take files from a shared counter in input order and keep each file's matching lines in
// that file's own slot; the merge walks the slots in input order, so the result is the same for
// any number of threads. A file needs at most (max_matches + 1 - lines before it) matching lines
// (the +1 tells whether the result is truncated), and once the files already finished from the
// front hold max_matches + 1 lines, no later file can change the result and the workers stop.
#include "search/grep.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

#include "quarry/deadline.h"
#include "search/grep_scan.h"

namespace quarry::search {
namespace {

// Reads whole files into one buffer reused across files, so the scan allocates nothing per file.
// A KB keeps its documents in one folder, so the reader opens that folder once and each file
// relative to it: the kernel then resolves one name per file instead of the whole path, which is
// a visible share of the cost of a search (it is mostly open/read/close).
class FileReader {
 public:
  FileReader() = default;
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;
  ~FileReader() {
    if (dir_fd_ >= 0) ::close(dir_fd_);
  }

  // False when the file cannot be read: vanished since listing, unreadable, or not a file.
  bool read(const std::string& path, std::string_view* out) {
    const int fd = open_file(path);
    if (fd < 0) return false;
    std::size_t len = 0;
    bool ok = true;
    for (;;) {
      if (len == cap_) grow(cap_ == 0 ? kInitial : cap_ * 2, len);
      // Linux transfers at most ~2 GiB per read(2); asking for no more keeps "short read means
      // end of file" true for regular files, which saves a second read(2) per file.
      const std::size_t want = std::min(cap_ - len, kMaxRead);
      const ssize_t got = ::read(fd, buf_.get() + len, want);
      if (got < 0) {
        if (errno == EINTR) continue;
        ok = false;  // EISDIR, EIO, EAGAIN (a FIFO): not a document we can search
        break;
      }
      len += static_cast<std::size_t>(got);
      if (static_cast<std::size_t>(got) < want) break;
    }
    ::close(fd);
    *out = std::string_view(buf_.get(), len);
    return ok;
  }

 private:
  static constexpr std::size_t kInitial = 256 * 1024;
  static constexpr std::size_t kMaxRead = std::size_t{1} << 30;
  // O_NONBLOCK: a FIFO planted among the documents must not hang the search.
  static constexpr int kFlags = O_RDONLY | O_CLOEXEC | O_NONBLOCK;

  int open_file(const std::string& path) {
    const std::size_t slash = path.rfind('/');
    if (slash == std::string::npos || slash == 0) return ::open(path.c_str(), kFlags);
    const std::string_view dir(path.data(), slash);
    if (dir_fd_ < 0 || dir != dir_) {
      if (dir_fd_ >= 0) ::close(dir_fd_);
      dir_.assign(dir);
      dir_fd_ = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (dir_fd_ < 0) return ::open(path.c_str(), kFlags);
    }
    return ::openat(dir_fd_, path.c_str() + slash + 1, kFlags);
  }

  void grow(std::size_t cap, std::size_t keep) {
    auto bigger = std::make_unique_for_overwrite<char[]>(cap);
    if (keep > 0) std::copy_n(buf_.get(), keep, bigger.get());
    buf_ = std::move(bigger);
    cap_ = cap;
  }

  std::unique_ptr<char[]> buf_;
  std::size_t cap_ = 0;
  std::string dir_;  // the folder dir_fd_ refers to
  int dir_fd_ = -1;
};

struct FileSlot {
  std::vector<GrepMatch> matches;
  bool searched = false;  // false: skipped (vanished or unreadable)
};

class GrepRun {
 public:
  GrepRun(const std::vector<GrepFile>& files, const GrepOptions& opts,
          const detail::LineMatcher& matcher)
      : files_(files),
        opts_(opts),
        matcher_(matcher),
        slots_(files.size()),
        done_(files.size(), 0),
        stop_at_(files.size()),
        // Saturating: max_matches may be SIZE_MAX to mean "no bound".
        need_(opts.max_matches == static_cast<std::size_t>(-1) ? opts.max_matches
                                                               : opts.max_matches + 1) {}

  void run(int threads) {
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(threads - 1));
    // The caller's deadline holds on every worker (quarry/deadline.h).
    const Deadline deadline = current_deadline();
    for (int t = 1; t < threads; ++t) {
      try {
        pool.emplace_back([this, &deadline] {
          ScopedDeadline inherited(deadline);
          work();
        });
      } catch (const std::system_error&) {
        break;  // out of threads: the ones we have (at least this one) do all the files
      }
    }
    work();  // the calling thread is a worker too
    for (auto& t : pool) t.join();
    if (failure_) std::rethrow_exception(failure_);
  }

  GrepResult merge() {
    GrepResult r;
    const std::size_t limit = opts_.max_matches;
    const std::size_t end = stop_at_.load();  // every file before it is finished
    for (std::size_t i = 0; i < end; ++i) {
      FileSlot& slot = slots_[i];
      if (!slot.searched) {
        ++r.files_skipped;
        continue;
      }
      ++r.files_searched;
      if (slot.matches.empty()) continue;
      const std::size_t take = std::min(limit - r.matches.size(), slot.matches.size());
      if (take > 0) ++r.files_matched;
      std::move(slot.matches.begin(), slot.matches.begin() + static_cast<std::ptrdiff_t>(take),
                std::back_inserter(r.matches));
      if (take < slot.matches.size()) {
        r.truncated = true;
        break;
      }
    }
    return r;
  }

 private:
  static constexpr std::size_t kBatch = 4;  // files per trip to the shared counter

  void work() {
    try {
      FileReader reader;
      for (;;) {
        const std::size_t first = next_.fetch_add(kBatch, std::memory_order_relaxed);
        if (first >= files_.size()) return;
        const std::size_t last = std::min(first + kBatch, files_.size());
        for (std::size_t i = first; i < last; ++i) {
          if (i >= stop_at_.load(std::memory_order_relaxed)) return;
          check_deadline();
          search(i, reader);
          finish(i);
        }
      }
    } catch (...) {
      std::lock_guard lock(mu_);
      if (!failure_) failure_ = std::current_exception();
      stop_at_.store(0);
    }
  }

  void search(std::size_t i, FileReader& reader) {
    std::string_view text;
    FileSlot& slot = slots_[i];
    if (!reader.read(files_[i].path, &text)) return;
    slot.searched = true;
    // Lines already found in the finished front only shrink what this file must supply.
    const std::size_t before = front_lines_.load(std::memory_order_relaxed);
    const std::size_t cap = need_ - std::min(before, need_ - 1);
    detail::scan_text(text, matcher_, opts_, cap, &slot.matches);
    for (GrepMatch& m : slot.matches) {
      m.doc_id = files_[i].doc_id;
      m.filename = files_[i].filename;
    }
  }

  // Marks file i finished and advances the finished front; stops everyone once the front alone
  // decides the result.
  void finish(std::size_t i) {
    std::lock_guard lock(mu_);
    done_[i] = 1;
    std::size_t lines = front_lines_.load(std::memory_order_relaxed);
    while (front_ < files_.size() && done_[front_]) {
      lines += slots_[front_].matches.size();
      ++front_;
      if (lines >= need_) {
        stop_at_.store(std::min(stop_at_.load(), front_));
        break;
      }
    }
    front_lines_.store(lines, std::memory_order_relaxed);
  }

  const std::vector<GrepFile>& files_;
  const GrepOptions& opts_;
  const detail::LineMatcher& matcher_;
  std::vector<FileSlot> slots_;

  std::mutex mu_;
  std::vector<char> done_;                   // guarded by mu_
  std::size_t front_ = 0;                    // guarded by mu_: files [0, front_) are finished
  std::exception_ptr failure_;               // guarded by mu_
  std::atomic<std::size_t> front_lines_{0};  // matching lines in files [0, front_)
  std::atomic<std::size_t> next_{0};
  std::atomic<std::size_t> stop_at_;  // files from here on are not needed
  const std::size_t need_;
};

}  // namespace

GrepResult grep_files(const std::vector<GrepFile>& files, const GrepOptions& opts, int threads) {
  const detail::LineMatcher matcher(opts);  // throws for a bad pattern, even with no files
  if (files.empty()) return {};
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads =
      static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(threads), files.size()));
  GrepRun run(files, opts, matcher);
  run.run(threads);
  return run.merge();
}

}  // namespace quarry::search
