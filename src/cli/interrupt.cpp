#include "cli/interrupt.h"

namespace quarry::cli {
namespace {

std::atomic<bool> g_requested{false};
std::atomic<int> g_signal{0};
int g_depth = 0;  // Interruptions alive (the main thread's); the outermost one installs

extern "C" void on_long_command_signal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
  g_requested.store(true);
}

void install(int sig, struct sigaction* previous) {
  struct sigaction sa {};
  sa.sa_handler = on_long_command_signal;
  sigemptyset(&sa.sa_mask);
  // SA_RESETHAND: the default action is back once this handler ran, so a second Ctrl-C ends a
  // command that does not stop soon enough. SA_RESTART: a read or write in flight (a provider
  // call, the catalog) carries on; the work looks at the flag when it comes back.
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(sig, &sa, previous);
}

}  // namespace

Interruption::Interruption() {
  if (g_depth++ > 0) return;  // nested (ingest --wait's sweep): the outer one is in charge
  g_requested.store(false);
  g_signal.store(0);
  install(SIGINT, &previous_int_);
  install(SIGTERM, &previous_term_);
}

Interruption::~Interruption() {
  if (--g_depth > 0) return;
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

const std::atomic<bool>* Interruption::flag() const {
  return &g_requested;
}

bool Interruption::requested() const {
  return g_requested.load();
}

int Interruption::signal() const {
  return g_signal.load();
}

int Interruption::exit_status() const {
  const int sig = g_signal.load();
  return sig ? 128 + sig : 0;
}

const char* Interruption::name() const {
  return g_signal.load() == SIGTERM ? "terminated" : "interrupted";
}

}  // namespace quarry::cli
