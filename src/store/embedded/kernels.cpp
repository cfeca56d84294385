#include "store/embedded/kernels.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace quarry::store::embedded {
namespace {

// 32 independent partial sums: the loop body is a plain element-wise multiply-add that the
// vectoriser turns into 4 ymm FMA chains (enough to hide FMA latency), and the flags of this
// file let it reorder the final reduction.
inline float dot_body(const float* a, const float* b, std::size_t n) {
  constexpr std::size_t W = 32;
  float acc[W] = {};
  std::size_t i = 0;
  for (; i + W <= n; i += W)
    for (std::size_t j = 0; j < W; ++j) acc[j] += a[i + j] * b[i + j];
  float s = 0;
  for (; i < n; ++i) s += a[i] * b[i];
  for (std::size_t j = 0; j < W; ++j) s += acc[j];
  return s;
}

__attribute__((target("avx2,fma"))) float dot_avx2(const float* a, const float* b, std::size_t n) {
  return dot_body(a, b, n);
}
float dot_generic(const float* a, const float* b, std::size_t n) {
  return dot_body(a, b, n);
}

using DotFn = float (*)(const float*, const float*, std::size_t);
DotFn pick_dot() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return dot_avx2;
  return dot_generic;
}
const DotFn g_dot = pick_dot();

bool better(const Scored& a, const Scored& b) {
  return a.distance < b.distance || (a.distance == b.distance && a.row < b.row);
}

// Bounded max-heap of the k best (the worst kept on top).
void scan_range(const float* q, const float* m, std::size_t begin, std::size_t end,
                std::size_t dims, std::size_t k, const std::function<bool(std::size_t)>& allow,
                std::vector<Scored>& heap) {
  heap.reserve(k + 1);
  for (std::size_t r = begin; r < end; ++r) {
    if (allow && !allow(r)) continue;
    Scored s{1.0f - g_dot(q, m + r * dims, dims), static_cast<std::uint32_t>(r)};
    if (heap.size() < k) {
      heap.push_back(s);
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (better(s, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = s;
      std::push_heap(heap.begin(), heap.end(), better);
    }
  }
}

}  // namespace

float dot(const float* a, const float* b, std::size_t n) {
  return g_dot(a, b, n);
}

void normalize(float* v, std::size_t n) {
  double ss = 0;
  for (std::size_t i = 0; i < n; ++i) ss += static_cast<double>(v[i]) * v[i];
  if (ss <= 0) return;
  auto inv = static_cast<float>(1.0 / std::sqrt(ss));
  for (std::size_t i = 0; i < n; ++i) v[i] *= inv;
}

float usearch_cosine_distance(std::size_t a, std::size_t b, std::size_t n) {
  return 1.0f - g_dot(reinterpret_cast<const float*>(a), reinterpret_cast<const float*>(b), n);
}

std::vector<Scored> scan_topk(const float* query, const float* matrix, std::size_t rows,
                              std::size_t dims, std::size_t k,
                              const std::function<bool(std::size_t)>& allow, unsigned threads) {
  std::vector<Scored> out;
  if (k == 0 || rows == 0) return out;
  // Below ~16k rows a thread costs more than it saves.
  unsigned parts = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(rows / 16384)));
  std::vector<std::vector<Scored>> heaps(parts);
  std::size_t step = (rows + parts - 1) / parts;
  std::vector<std::thread> workers;
  for (unsigned p = 1; p < parts; ++p)
    workers.emplace_back([&, p] {
      scan_range(query, matrix, p * step, std::min(rows, (p + 1) * step), dims, k, allow, heaps[p]);
    });
  scan_range(query, matrix, 0, std::min(rows, step), dims, k, allow, heaps[0]);
  for (auto& w : workers) w.join();
  for (auto& h : heaps) out.insert(out.end(), h.begin(), h.end());
  std::sort(out.begin(), out.end(), better);
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace quarry::store::embedded
