// Distance kernels of the embedded store: the dot product every exact scan and (through a
// custom USearch metric) every HNSW hop spends its time in. kernels.cpp is compiled with
// -O3 -ffp-contract=fast -fassociative-math -fno-signed-zeros -fno-trapping-math (CMakeLists.txt)
// so the reductions vectorise, and picks an AVX2+FMA build at run time when the CPU has one.
// All vectors here are L2-normalised, so cosine distance = 1 - dot.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace quarry::store::embedded {

float dot(const float* a, const float* b, std::size_t n);
// Scales v to unit length; a zero vector stays zero (its distance to anything is 1).
void normalize(float* v, std::size_t n);

// The signature USearch's metric_punned_t calls for a stateless metric with a size argument.
float usearch_cosine_distance(std::size_t a, std::size_t b, std::size_t n);

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

}  // namespace quarry::store::embedded
