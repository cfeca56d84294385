#include "server/engine_pool.h"

#include <filesystem>

namespace quarry::server {

EnginePool::EnginePool(EngineOptions base, std::size_t max_engines)
    : base_(std::move(base)), max_(max_engines ? max_engines : 1) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(base_.data_dir, ec);
  data_dir_ = ec ? base_.data_dir : canonical.string();
}

EnginePool::Lease::~Lease() {
  if (pool_ && engine_) pool_->release(std::move(engine_));
}

EnginePool::Lease EnginePool::acquire(const std::string& actor, const std::string& surface) {
  std::unique_ptr<Engine> e;
  {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return !idle_.empty() || opened_ < max_; });
    if (!idle_.empty()) {
      e = std::move(idle_.back());
      idle_.pop_back();
    } else {
      ++opened_;  // counted before opening, so the bound holds while it opens
    }
  }
  if (!e) {
    try {
      e = Engine::open(base_);
    } catch (...) {
      std::lock_guard lk(mu_);
      --opened_;
      cv_.notify_one();
      throw;
    }
  }
  e->set_identity(actor, surface);
  return Lease(this, std::move(e));
}

void EnginePool::release(std::unique_ptr<Engine> e) {
  std::lock_guard lk(mu_);
  idle_.push_back(std::move(e));
  cv_.notify_one();
}

}  // namespace quarry::server
