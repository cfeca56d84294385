// Placeholder: the ANN benchmark is being written (owner: the store work package).
#include <cstdio>

#include "bench.h"

namespace quarry::bench {
int run_ann(const Args&) {
  std::fprintf(stderr, "ann: not written yet\n");
  return 2;
}
}  // namespace quarry::bench
