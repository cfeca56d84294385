#include "lifecycle/foreground.h"
#include "core/layout.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

namespace quarry::lifecycle::foreground {
namespace {

using Clock = std::chrono::steady_clock;

std::atomic<int> running{0};
std::atomic<std::int64_t> last_end{0};  // Clock ticks; 0: never

constexpr std::chrono::milliseconds kWindow{100};  // a query this recent still counts
constexpr double kQuantum = 0.0002;                // seconds of work between rests

std::int64_t now_ticks() {
  return Clock::now().time_since_epoch().count();
}

constexpr std::size_t kSharedBytes = 64;

bool recent(std::int64_t ticks, std::chrono::milliseconds window) {
  return ticks != 0 &&
         now_ticks() - ticks < std::chrono::duration_cast<Clock::duration>(window).count();
}

}  // namespace

// The stamp is read and written by several processes through the mapping: it must be a plain
// lock-free 8-byte word. Its unit is steady_clock's (CLOCK_MONOTONIC), one clock for every
// process on the machine.
static_assert(std::atomic_ref<std::int64_t>::is_always_lock_free);

Shared::~Shared() {
  munmap(map_, kSharedBytes);
  close(fd_);
}

void Shared::stamp() {
  std::atomic_ref<std::int64_t>(*static_cast<std::int64_t*>(map_))
      .store(now_ticks(), std::memory_order_relaxed);
}

std::int64_t Shared::last() const {
  return std::atomic_ref<std::int64_t>(*static_cast<std::int64_t*>(map_))
      .load(std::memory_order_relaxed);
}

std::shared_ptr<Shared> shared(const std::string& data_dir) {
  static std::mutex mu;
  static std::map<std::string, std::weak_ptr<Shared>> mapped;
  const std::string path = core::Layout{data_dir}.activity_path();
  std::lock_guard lock(mu);
  if (auto s = mapped[path].lock()) return s;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return nullptr;
  struct stat st {};
  // A fresh file is zeros (never stamped); one that is too short is extended, not cut.
  if (fstat(fd, &st) != 0 ||
      (st.st_size < static_cast<off_t>(kSharedBytes) && ftruncate(fd, kSharedBytes) != 0)) {
    close(fd);
    return nullptr;
  }
  void* map = mmap(nullptr, kSharedBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    close(fd);
    return nullptr;
  }
  std::shared_ptr<Shared> s(new Shared(fd, map));
  mapped[path] = s;
  return s;
}

Query::Query(Shared* s) : shared_(s) {
  running.fetch_add(1, std::memory_order_relaxed);
  if (shared_) shared_->stamp();
}

Query::~Query() {
  last_end.store(now_ticks(), std::memory_order_relaxed);
  running.fetch_sub(1, std::memory_order_relaxed);
  if (shared_) shared_->stamp();
}

bool busy(std::chrono::milliseconds window, const Shared* s) {
  if (running.load(std::memory_order_relaxed) > 0) return true;
  if (recent(last_end.load(std::memory_order_relaxed), window)) return true;
  return s && recent(s->last(), window);
}

double rest(double seconds, const std::atomic<bool>* cancel) {
  const auto start = Clock::now();
  const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(std::min(seconds, 2.0)));
  while (Clock::now() < until && !(cancel && cancel->load())) {
    const auto step =
        std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(10));
    std::this_thread::sleep_for(step);
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

Pacer::Pacer(double duty, const std::atomic<bool>* cancel, std::shared_ptr<const Shared> shared)
    : duty_(duty), cancel_(cancel), shared_(std::move(shared)), since_(Clock::now()) {}

bool Pacer::active() const {
  return duty_ > 0 && duty_ < 1 && busy(kWindow, shared_.get());
}

void Pacer::step() {
  if (!(duty_ > 0 && duty_ < 1)) return;
  const auto now = Clock::now();
  const double work = std::chrono::duration<double>(now - since_).count();
  if (work < kQuantum) return;
  if (busy(kWindow, shared_.get())) {
    // A sleep this short overshoots (the wake-up, on a VM the host's): the excess is credited
    // against the next rests, so that the share of the time stays `duty`.
    owed_ += work * (1 / duty_ - 1);
    if (owed_ > 0) {
      const double r = rest(owed_, cancel_);
      rested_ += r;
      owed_ -= r;
    }
  } else {
    owed_ = 0;
  }
  since_ = Clock::now();
}

}  // namespace quarry::lifecycle::foreground
