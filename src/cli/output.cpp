#include "cli/output.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace quarry::cli {
using nlohmann::json;

std::unique_ptr<Engine> open_engine(const Globals& g) {
  EngineOptions o;
  o.data_dir = g.data_dir;
  o.surface = "cli";
  o.lock_timeout_ms = g.lock_timeout_ms;
  return Engine::open(o);
}

void print_json(const json& j) {
  std::cout << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

bool stderr_is_tty() {
  return isatty(STDERR_FILENO) != 0;
}

void ProgressBar::draw(const std::string& prefix, std::size_t done, std::size_t total,
                       const std::string& suffix) {
  auto now = std::chrono::steady_clock::now();
  if (done != total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const std::size_t width = 30;
  const std::size_t filled = total ? std::min(width, width * done / total) : width;
  std::cerr << "\r" << prefix << "[" << std::string(filled, '#') << std::string(width - filled, '.')
            << "] " << done << "/" << total << " " << suffix << "\033[K" << std::flush;
  drawn_ = true;
  if (done == total) clear();
}

void ProgressBar::clear() {
  if (!drawn_) return;
  std::cerr << "\r\033[K" << std::flush;
  drawn_ = false;
}

void print_vectors_human(const KbInfo& k) {
  const auto& v = k.vectors;
  if (!v.unavailable_code.empty())
    std::cout << "  embedder unavailable [" << v.unavailable_code << "]: " << v.unavailable << "\n";
  if (v.serving_revision.empty() && v.building_revision.empty()) return;
  std::cout << "  vectors: " << v.ready << "/" << v.documents << " documents ready";
  if (v.stale) std::cout << ", " << v.stale << " stale";
  if (v.pending - v.stale > 0) std::cout << ", " << v.pending - v.stale << " pending";
  if (v.failed) std::cout << ", " << v.failed << " failed";
  std::cout << "; serving revision " << v.serving_revision;
  if (!v.building_revision.empty()) std::cout << ", building " << v.building_revision;
  std::cout << "\n";
  for (const auto& f : v.failures)
    std::cout << "    failed " << f.doc_id << "  [" << f.code << "] " << f.message << "\n";
  if (v.pending > 0 && v.unavailable_code.empty())
    std::cout << "    run `quarry reindex --kb " << k.name << "` to embed what is pending\n";
}

}  // namespace quarry::cli
