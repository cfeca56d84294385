// numbered("d", 7) == "d7": prefix + std::to_string(n), spelled so that g++ 12 at -O3 (a Release
// build) raises no false -Wrestrict in operator+(const char*, std::string&&) (GCC PR 105651).
#pragma once

#include <string>
#include <string_view>

namespace quarry::testing {

template <typename N>
std::string numbered(std::string_view prefix, N n) {
  std::string out(prefix);
  out += std::to_string(n);
  return out;
}

}  // namespace quarry::testing
