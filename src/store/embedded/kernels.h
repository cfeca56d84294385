// Distance kernels of the embedded store: the dot products every exact scan, every HNSW hop
// (i8 codes, hnsw.cpp) and every re-score spends its time in. kernels.cpp is compiled with
// -O3 -ffp-contract=fast -fassociative-math -fno-signed-zeros -fno-trapping-math (CMakeLists.txt)
// so the reductions vectorise, and picks AVX-512 / AVX2+FMA builds at run time when the CPU has
// them. All vectors here are L2-normalised, so cosine distance = 1 - dot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace quarry::store::embedded {

float dot(const float* a, const float* b, std::size_t n);
// Scales v to unit length; a zero vector stays zero (its distance to anything is 1).
void normalize(float* v, std::size_t n);

// Integer dot product of two i8 vectors (the HNSW graph's traversal codes, hnsw.cpp): AVX-512
// (VNNI where present) or AVX2 chosen at run time. Exact in int32 for n < 2^17.
std::int32_t dot_i8(const std::int8_t* a, const std::int8_t* b, std::size_t n);
// Dot product of an f32 query with an IEEE half-precision row (bits as uint16), F16C when present.
float dot_f16(const float* q, const std::uint16_t* row, std::size_t n);
std::uint16_t f32_to_f16(float x);
// Hints the cache to fetch `bytes` from `p` (every 64-byte line).
inline void prefetch_lines(const void* p, std::size_t bytes) {
  const auto* c = static_cast<const char*>(p);
  for (std::size_t i = 0; i < bytes; i += 64) __builtin_prefetch(c + i, 0, 3);
}

// Every build of each kernel this CPU can run, by name, so that tests check them all against
// the generic one: the machine that runs CI may pick another build than the one at hand.
struct KernelVariants {
  template <typename Fn>
  using List = std::vector<std::pair<const char*, Fn>>;
  List<float (*)(const float*, const float*, std::size_t)> dot;
  List<void (*)(const float*, const float*, std::size_t, float*)> dot4;
  List<std::int32_t (*)(const std::int8_t*, const std::int8_t*, std::size_t)> dot_i8;
  List<float (*)(const float*, const std::uint16_t*, std::size_t)> dot_f16;
  List<void (*)(const float*, const std::uint16_t*, std::size_t, float*)>
      dot4_f16;  // dims % 16 == 0
};
KernelVariants kernel_variants();

struct Scored {
  float distance;
  std::uint32_t row;
};

// Exact k nearest rows of a contiguous row-major matrix (rows x dims, normalised), best first,
// ties to the lower row. `allow` (may be empty) restricts the rows considered. An unfiltered scan
// scores four rows per pass over the query. Large matrices are split over `threads` threads of a
// pool kept for the process (a scan is bound by memory bandwidth, which one core cannot use up).
std::vector<Scored> scan_topk(const float* query, const float* matrix, std::size_t rows,
                              std::size_t dims, std::size_t k,
                              const std::function<bool(std::size_t)>& allow = {},
                              unsigned threads = 1);

// The same answer as scan_topk (exact: distances from the f32 rows), reading half the bytes: every
// row is scored from `half` (the rows in f16), and only rows whose f16 distance is within twice the
// f16 error bound of the k-th best are re-scored from the f32 `matrix`. For unit vectors the
// bound is rigorous: |q.b - q.f16(b)| <= 2^-11 sum|q_i b_i| + tiny <= 2^-11 (+ slack).
std::vector<Scored> scan_topk_f16(const float* query, const std::uint16_t* half,
                                  const float* matrix, std::size_t rows, std::size_t dims,
                                  std::size_t k, const std::function<bool(std::size_t)>& allow = {},
                                  unsigned threads = 1);

}  // namespace quarry::store::embedded
