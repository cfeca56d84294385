// SIGINT and SIGTERM for the long commands (ingest, reindex, migrate-store, pump run): while an
// Interruption is alive, the first signal only sets a flag the work polls between units it can
// commit or drop whole (a document, a page, a batch); the command then prints what it committed
// and exits 130 (INT) or 143 (TERM), as a shell reports a process the signal ended. A second
// signal ends the process at once (the default action is back after the first).
#pragma once

#include <atomic>
#include <csignal>

namespace quarry::cli {

class Interruption {
 public:
  // Installs the handlers; one made while another is alive (a sweep inside an ingest) shares it.
  Interruption();
  ~Interruption();  // puts the previous ones back
  Interruption(const Interruption&) = delete;
  Interruption& operator=(const Interruption&) = delete;

  // Set by the first SIGINT or SIGTERM; what engine options take as `cancel` / `stop`.
  const std::atomic<bool>* flag() const;
  bool requested() const;
  int signal() const;        // SIGINT, SIGTERM, or 0
  int exit_status() const;   // 128 + the signal (130, 143); 0 when none came
  const char* name() const;  // "interrupted" (INT) or "terminated" (TERM)

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

}  // namespace quarry::cli
