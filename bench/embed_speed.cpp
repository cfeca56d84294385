// Placeholder: the embedding throughput benchmark is being written (owner: the embed package).
#include <cstdio>

#include "bench.h"

namespace quarry::bench {
int run_embed_speed(const Args&) {
  std::fprintf(stderr, "embed-speed: not written yet\n");
  return 2;
}
}  // namespace quarry::bench
