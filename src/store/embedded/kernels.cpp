#include "store/embedded/kernels.h"

#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <mutex>
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

// Four rows against one query per pass: the query is loaded once per 8 lanes for four rows, and
// eight FMA chains (two per row) hide the FMA latency.
__attribute__((target("avx2,fma"))) inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma"))) void dot4_avx2(const float* q, const float* m, std::size_t dims,
                                                   float* out) {
  const float* r0 = m;
  const float* r1 = m + dims;
  const float* r2 = m + 2 * dims;
  const float* r3 = m + 3 * dims;
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
  std::size_t i = 0;
  for (; i + 16 <= dims; i += 16) {
    __m256 x = _mm256_loadu_ps(q + i), y = _mm256_loadu_ps(q + i + 8);
    a0 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r0 + i), a0);
    a1 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r1 + i), a1);
    a2 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r2 + i), a2);
    a3 = _mm256_fmadd_ps(x, _mm256_loadu_ps(r3 + i), a3);
    b0 = _mm256_fmadd_ps(y, _mm256_loadu_ps(r0 + i + 8), b0);
    b1 = _mm256_fmadd_ps(y, _mm256_loadu_ps(r1 + i + 8), b1);
    b2 = _mm256_fmadd_ps(y, _mm256_loadu_ps(r2 + i + 8), b2);
    b3 = _mm256_fmadd_ps(y, _mm256_loadu_ps(r3 + i + 8), b3);
  }
  float s[4] = {hsum(_mm256_add_ps(a0, b0)), hsum(_mm256_add_ps(a1, b1)),
                hsum(_mm256_add_ps(a2, b2)), hsum(_mm256_add_ps(a3, b3))};
  for (; i < dims; ++i) {
    s[0] += q[i] * r0[i];
    s[1] += q[i] * r1[i];
    s[2] += q[i] * r2[i];
    s[3] += q[i] * r3[i];
  }
  std::copy_n(s, 4, out);
}

void dot4_generic(const float* q, const float* m, std::size_t dims, float* out) {
  for (std::size_t j = 0; j < 4; ++j) out[j] = dot_body(q, m + j * dims, dims);
}

using DotFn = float (*)(const float*, const float*, std::size_t);
using Dot4Fn = void (*)(const float*, const float*, std::size_t, float*);
bool has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
const bool g_avx2 = has_avx2();
const DotFn g_dot = g_avx2 ? dot_avx2 : dot_generic;
const Dot4Fn g_dot4 = g_avx2 ? dot4_avx2 : dot4_generic;

bool better(const Scored& a, const Scored& b) {
  return a.distance < b.distance || (a.distance == b.distance && a.row < b.row);
}

// Bounded max-heap of the k best (the worst kept on top); `worst` caches the top's distance so
// the common case (a row no better than the k-th) costs one compare.
struct TopK {
  std::size_t k;
  std::vector<Scored> heap;
  float worst = 0;
  void offer(float distance, std::uint32_t row) {
    if (heap.size() == k && distance > worst) return;
    Scored s{distance, row};
    if (heap.size() < k) {
      heap.push_back(s);
      std::push_heap(heap.begin(), heap.end(), better);
    } else if (better(s, heap.front())) {
      std::pop_heap(heap.begin(), heap.end(), better);
      heap.back() = s;
      std::push_heap(heap.begin(), heap.end(), better);
    }
    worst = heap.front().distance;
  }
};

void scan_range(const float* q, const float* m, std::size_t begin, std::size_t end,
                std::size_t dims, std::size_t k, const std::function<bool(std::size_t)>& allow,
                std::vector<Scored>& out) {
  TopK top{k, {}};
  top.heap.reserve(k + 1);
  std::size_t r = begin;
  if (!allow) {
    float d[4];
    for (; r + 4 <= end; r += 4) {
      g_dot4(q, m + r * dims, dims, d);
      for (std::size_t j = 0; j < 4; ++j) top.offer(1.0f - d[j], static_cast<std::uint32_t>(r + j));
    }
  }
  for (; r < end; ++r)
    if (!allow || allow(r))
      top.offer(1.0f - g_dot(q, m + r * dims, dims), static_cast<std::uint32_t>(r));
  out = std::move(top.heap);
}

// Worker threads kept for the life of the process (a scan used to start threads per query).
// One scan at a time uses them; a concurrent scan, or a forked child, runs its parts inline.
class Pool {
 public:
  // Runs fn(0) .. fn(parts - 1), part 0 and any part no worker took on the calling thread.
  void run(unsigned parts, const std::function<void(unsigned)>& fn) {
    std::unique_lock busy(run_mu_, std::try_to_lock);
    if (!busy || ::getpid() != pid_) {
      for (unsigned p = 0; p < parts; ++p) fn(p);
      return;
    }
    {
      std::lock_guard lock(mu_);
      while (workers_ + 1 < parts) {
        std::thread(&Pool::work, this).detach();
        ++workers_;
      }
      job_ = &fn;
      parts_ = parts;
      next_ = 1;
      done_ = 0;
    }
    work_cv_.notify_all();
    fn(0);
    std::unique_lock lock(mu_);
    ++done_;
    while (next_ < parts_) {  // parts no worker has started yet
      unsigned p = next_++;
      lock.unlock();
      fn(p);
      lock.lock();
      ++done_;
    }
    done_cv_.wait(lock, [&] { return done_ == parts_; });
    job_ = nullptr;
  }

 private:
  void work() {
    std::unique_lock lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [&] { return job_ && next_ < parts_; });
      unsigned p = next_++;
      const auto* fn = job_;
      lock.unlock();
      (*fn)(p);
      lock.lock();
      if (++done_ == parts_) done_cv_.notify_all();
    }
  }

  const pid_t pid_ = ::getpid();
  std::mutex run_mu_, mu_;
  std::condition_variable work_cv_, done_cv_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned parts_ = 0, next_ = 0, done_ = 0, workers_ = 0;
};

Pool& pool() {
  static auto* p = new Pool;  // never destroyed: detached workers may still wait on it
  return *p;
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
  // Below ~8k rows per part handing work to another thread costs more than it saves.
  unsigned parts = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(rows / 8192)));
  std::vector<std::vector<Scored>> heaps(parts);
  // Parts are multiples of 4 rows so the 4-row kernel covers all but the last part's tail.
  std::size_t step = ((rows + parts - 1) / parts + 3) / 4 * 4;
  auto part = [&](unsigned p) {
    std::size_t b = std::min(rows, p * step), e = std::min(rows, (p + 1) * step);
    scan_range(query, matrix, b, e, dims, k, allow, heaps[p]);
  };
  if (parts == 1)
    part(0);
  else
    pool().run(parts, part);
  for (auto& h : heaps) out.insert(out.end(), h.begin(), h.end());
  std::sort(out.begin(), out.end(), better);
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace quarry::store::embedded
