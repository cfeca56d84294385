#include "quarry/indexer.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>

namespace quarry {
namespace {

using Clock = std::chrono::system_clock;

class IndexerImpl final : public Indexer {
 public:
  explicit IndexerImpl(const IndexerOptions& o) : opts_(o) {
    engine_ = Engine::open(opts_.engine);  // errors (bad data dir) surface to the caller
    thread_ = std::thread([this] { run(); });
  }
  ~IndexerImpl() override { stop(); }

  void poke(const std::string& kb) override {
    {
      std::lock_guard lk(mu_);
      wanted_.insert(kb);
    }
    cv_.notify_all();
  }

  std::map<std::string, IndexerKbState> state() const override {
    std::lock_guard lk(mu_);
    return state_;
  }

  bool wait_idle(std::chrono::milliseconds timeout) override {
    std::unique_lock lk(mu_);
    // Idle: nothing running and nothing due (a KB backing off after a failure does not count).
    return idle_cv_.wait_for(lk, timeout, [this] { return started_ && !busy_ && !ready_kb(); });
  }

  void stop() override {
    {
      std::lock_guard lk(mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    cancel_.store(true);
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void run() {
    if (opts_.nice > 0)  // lowering one's own priority needs no privilege; failure is harmless
      setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), opts_.nice);
    {
      // Reconciliation on start: every KB, pending work or not (orphans, stragglers, GC).
      std::lock_guard lk(mu_);
      try {
        for (const auto& k : engine_->list_kbs()) wanted_.insert(k.name);
      } catch (const Error&) {
      }
      started_ = true;
    }
    auto next_round = Clock::now() + opts_.interval;
    while (true) {
      std::string kb;
      {
        std::unique_lock lk(mu_);
        idle_cv_.notify_all();
        cv_.wait_until(lk, std::min(next_round, earliest_retry()),
                       [&] { return stopping_ || ready_kb().has_value(); });
        if (stopping_) break;
        if (Clock::now() >= next_round) {
          lk.unlock();
          std::vector<KbInfo> kbs;
          try {
            kbs = engine_->list_kbs();
          } catch (const Error&) {
          }
          lk.lock();
          for (const auto& k : kbs) wanted_.insert(k.name);
          next_round = Clock::now() + opts_.interval;
        }
        auto r = ready_kb();
        if (!r) continue;
        kb = *r;
        wanted_.erase(kb);
        busy_ = true;
        state_[kb].running = true;
      }
      sweep(kb);
      {
        std::lock_guard lk(mu_);
        busy_ = false;
      }
    }
    std::lock_guard lk(mu_);
    busy_ = false;
    idle_cv_.notify_all();
  }

  // A wanted KB that is not backing off (mu_ held).
  std::optional<std::string> ready_kb() const {
    const auto now = Clock::now();
    for (const auto& kb : wanted_) {
      auto it = state_.find(kb);
      if (it == state_.end() || it->second.next_attempt <= now) return kb;
    }
    return std::nullopt;
  }

  Clock::time_point earliest_retry() const {
    auto t = Clock::time_point::max();
    for (const auto& kb : wanted_) {
      auto it = state_.find(kb);
      t = std::min(t, it == state_.end() ? Clock::now() : it->second.next_attempt);
    }
    return t;
  }

  void sweep(const std::string& kb) {
    ReindexOptions o;
    o.cancel = &cancel_;
    o.workers = opts_.workers;
    o.foreground_duty = opts_.foreground_duty;
    o.progress = [this, &kb](const ReindexProgress& p) {
      std::lock_guard lk(mu_);
      state_[kb].progress = p;
    };
    ReindexReport r;
    bool failed = false;
    try {
      r = engine_->reindex(kb, o);
      failed = !r.error_code.empty();
    } catch (const Error& e) {
      if (e.code() == Code::not_found) {  // the KB was deleted meanwhile
        std::lock_guard lk(mu_);
        state_.erase(kb);
        return;
      }
      r.kb = kb;
      r.error_code = code_name(e.code());
      r.error_message = e.message();
      failed = true;
    }
    std::lock_guard lk(mu_);
    auto& s = state_[kb];
    s.running = false;
    s.progress.reset();
    s.last = r;
    if (failed) {
      // Retryable or not, the pending work stays in the catalog; try again later.
      ++s.consecutive_failures;
      auto backoff = opts_.min_backoff * (1LL << std::min(s.consecutive_failures - 1, 20));
      s.next_attempt =
          Clock::now() +
          std::min<std::chrono::milliseconds>(
              std::chrono::duration_cast<std::chrono::milliseconds>(backoff), opts_.max_backoff);
      wanted_.insert(kb);
    } else {
      s.consecutive_failures = 0;
      s.next_attempt = {};
      if (r.cancelled) wanted_.insert(kb);
    }
  }

  IndexerOptions opts_;
  std::unique_ptr<Engine> engine_;
  std::thread thread_;
  mutable std::mutex mu_;
  std::condition_variable cv_, idle_cv_;
  std::set<std::string> wanted_;
  std::map<std::string, IndexerKbState> state_;
  std::atomic<bool> cancel_{false};
  bool stopping_ = false, busy_ = false, started_ = false;
};

}  // namespace

std::unique_ptr<Indexer> Indexer::start(const IndexerOptions& options) {
  return std::make_unique<IndexerImpl>(options);
}

}  // namespace quarry
