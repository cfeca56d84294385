// Stable, fast, non-cryptographic 64-bit hashing (FNV-1a + a splitmix64 finaliser). The exact
// values are part of the vectors the hash provider makes and of model identities, so they must
// never change across platforms or releases: byte-wise, no std::hash, no endianness dependence.
#pragma once

#include <cstdint>
#include <string_view>

namespace quarry::embed {

constexpr std::uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;

inline std::uint64_t fnv1a64(std::string_view s, std::uint64_t h = kFnvOffset) {
  for (unsigned char c : s) h = (h ^ c) * kFnvPrime;
  return h;
}

// FNV-1a alone mixes its last bytes poorly into the high bits; the finaliser spreads them so
// that `h % dims` and the sign bit are both well distributed.
inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

}  // namespace quarry::embed
