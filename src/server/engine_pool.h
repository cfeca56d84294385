// Engines for a multi-threaded server. An Engine serves one thread at a time (engine.h), so
// each request leases one from a bounded pool, tags it with its caller for the audit log, and
// returns it when done. Engines are opened on demand up to the bound.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "quarry/engine.h"

namespace quarry::server {

class EnginePool {
 public:
  EnginePool(EngineOptions base, std::size_t max_engines);

  class Lease {
   public:
    Lease(EnginePool* pool, std::unique_ptr<Engine> e) : pool_(pool), engine_(std::move(e)) {}
    Lease(Lease&& o) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Engine& operator*() { return *engine_; }
    Engine* operator->() { return engine_.get(); }

   private:
    EnginePool* pool_;
    std::unique_ptr<Engine> engine_;
  };

  // Waits for a free engine; the audit log will name `actor` and `surface`.
  Lease acquire(const std::string& actor, const std::string& surface);
  const EngineOptions& options() const { return base_; }
  // The data directory as the Engines name it in messages (absolute, canonical).
  const std::string& data_dir() const { return data_dir_; }

 private:
  void release(std::unique_ptr<Engine> e);

  EngineOptions base_;
  std::string data_dir_;
  std::size_t max_;
  std::size_t opened_ = 0;
  std::vector<std::unique_ptr<Engine>> idle_;
  std::mutex mu_;
  std::condition_variable cv_;
};

}  // namespace quarry::server
