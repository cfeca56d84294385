#include "store/embedded/kernels.h"

#include <cpuid.h>
#include <immintrin.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
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

// g++ 12's AVX-512 headers trip -Wuninitialized (their _mm512_undefined_* placeholders); clang's
// do not (and clang has no -Wmaybe-uninitialized).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
// i8 x i8 -> int32: bytes widened to int16 and multiplied pairwise (vpmaddwd, or vpdpwssd with
// VNNI, which fuses the add). Two accumulators hide the latency.
__attribute__((target("avx512f,avx512bw"))) std::int32_t dot_i8_avx512(const std::int8_t* a,
                                                                       const std::int8_t* b,
                                                                       std::size_t n) {
  __m512i s0 = _mm512_setzero_si512(), s1 = s0;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i x0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
    __m512i y0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)));
    __m512i x1 =
        _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i + 32)));
    __m512i y1 =
        _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i + 32)));
    s0 = _mm512_add_epi32(s0, _mm512_madd_epi16(x0, y0));
    s1 = _mm512_add_epi32(s1, _mm512_madd_epi16(x1, y1));
  }
  for (; i + 32 <= n; i += 32) {
    __m512i x = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
    __m512i y = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)));
    s0 = _mm512_add_epi32(s0, _mm512_madd_epi16(x, y));
  }
  std::int32_t s = _mm512_reduce_add_epi32(_mm512_add_epi32(s0, s1));
  for (; i < n; ++i) s += std::int32_t{a[i]} * b[i];
  return s;
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) std::int32_t dot_i8_vnni(
    const std::int8_t* a, const std::int8_t* b, std::size_t n) {
  __m512i s0 = _mm512_setzero_si512(), s1 = s0;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    __m512i x0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
    __m512i y0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)));
    __m512i x1 =
        _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i + 32)));
    __m512i y1 =
        _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i + 32)));
    s0 = _mm512_dpwssd_epi32(s0, x0, y0);
    s1 = _mm512_dpwssd_epi32(s1, x1, y1);
  }
  for (; i + 32 <= n; i += 32) {
    __m512i x = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i)));
    __m512i y = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)));
    s0 = _mm512_dpwssd_epi32(s0, x, y);
  }
  std::int32_t s = _mm512_reduce_add_epi32(_mm512_add_epi32(s0, s1));
  for (; i < n; ++i) s += std::int32_t{a[i]} * b[i];
  return s;
}

// Four f16 rows against one f32 query per pass (as dot4_avx2): 16 halves widened per row per
// step. dims must be a multiple of 16 (the caller checks).
__attribute__((target("avx512f"))) void dot4_f16_avx512(const float* q, const std::uint16_t* m,
                                                        std::size_t dims, float* out) {
  const std::uint16_t* r0 = m;
  const std::uint16_t* r1 = m + dims;
  const std::uint16_t* r2 = m + 2 * dims;
  const std::uint16_t* r3 = m + 3 * dims;
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  for (std::size_t i = 0; i < dims; i += 16) {
    __m512 x = _mm512_loadu_ps(q + i);
    a0 = _mm512_fmadd_ps(
        x, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r0 + i))), a0);
    a1 = _mm512_fmadd_ps(
        x, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r1 + i))), a1);
    a2 = _mm512_fmadd_ps(
        x, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r2 + i))), a2);
    a3 = _mm512_fmadd_ps(
        x, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(r3 + i))), a3);
  }
  out[0] = _mm512_reduce_add_ps(a0);
  out[1] = _mm512_reduce_add_ps(a1);
  out[2] = _mm512_reduce_add_ps(a2);
  out[3] = _mm512_reduce_add_ps(a3);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

__attribute__((target("avx2"))) std::int32_t dot_i8_avx2(const std::int8_t* a, const std::int8_t* b,
                                                         std::size_t n) {
  __m256i s0 = _mm256_setzero_si256();
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256i x = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
    __m256i y = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    s0 = _mm256_add_epi32(s0, _mm256_madd_epi16(x, y));
  }
  __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s0), _mm256_extracti128_si256(s0, 1));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0x4e));
  h = _mm_add_epi32(h, _mm_shuffle_epi32(h, 0xb1));
  std::int32_t s = _mm_cvtsi128_si32(h);
  for (; i < n; ++i) s += std::int32_t{a[i]} * b[i];
  return s;
}

std::int32_t dot_i8_generic(const std::int8_t* a, const std::int8_t* b, std::size_t n) {
  std::int32_t s = 0;
  for (std::size_t i = 0; i < n; ++i) s += std::int32_t{a[i]} * b[i];
  return s;
}

float f16_to_f32_soft(std::uint16_t h) {
  std::uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  std::uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (man << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + 112) << 23) | (man << 13);
  } else if (man == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int e = -1;
    do {
      ++e;
      man <<= 1;
    } while (!(man & 0x400u));
    bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((man & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

__attribute__((target("avx2,fma,f16c"))) float dot_f16_avx2(const float* q, const std::uint16_t* r,
                                                            std::size_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0;
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m256 x = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + i)));
    __m256 y = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(r + i + 8)));
    a0 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), x, a0);
    a1 = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), y, a1);
  }
  float s = hsum(_mm256_add_ps(a0, a1));
  for (; i < n; ++i) s += q[i] * f16_to_f32_soft(r[i]);
  return s;
}

float dot_f16_generic(const float* q, const std::uint16_t* r, std::size_t n) {
  float s = 0;
  for (std::size_t i = 0; i < n; ++i) s += q[i] * f16_to_f32_soft(r[i]);
  return s;
}

using DotFn = float (*)(const float*, const float*, std::size_t);
using Dot4Fn = void (*)(const float*, const float*, std::size_t, float*);
// Features clang 14's __builtin_cpu_supports has no name for, read from CPUID directly:
// F16C (leaf 1, ECX bit 29) and AVX512-VNNI (leaf 7, ECX bit 11). Each is only asked once the
// wider feature it extends (AVX2, AVX-512F) is known to be usable.
bool cpuid_ecx_bit(unsigned leaf, unsigned bit) {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return __get_cpuid_count(leaf, 0, &a, &b, &c, &d) && ((c >> bit) & 1u);
}
bool has_f16c() {
  return cpuid_ecx_bit(1, 29);
}
bool has_avx512vnni() {
  return cpuid_ecx_bit(7, 11);
}
bool has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
const bool g_avx2 = has_avx2();
const DotFn g_dot = g_avx2 ? dot_avx2 : dot_generic;
const Dot4Fn g_dot4 = g_avx2 ? dot4_avx2 : dot4_generic;
using DotI8Fn = std::int32_t (*)(const std::int8_t*, const std::int8_t*, std::size_t);
DotI8Fn pick_dot_i8() {
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw"))
    return has_avx512vnni() ? dot_i8_vnni : dot_i8_avx512;
  return g_avx2 ? dot_i8_avx2 : dot_i8_generic;
}
const DotI8Fn g_dot_i8 = pick_dot_i8();
const bool g_f16c = g_avx2 && has_f16c();
const bool g_avx512 = __builtin_cpu_supports("avx512f");

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
    // Rows kPrefetchRows ahead are requested while these four are scored: a single core's
    // hardware prefetcher alone keeps too few misses in flight to use the memory bandwidth.
    constexpr std::size_t kPrefetchRows = 16;
    for (; r + 4 <= end; r += 4) {
      if (r + kPrefetchRows + 4 <= end)
        prefetch_lines(m + (r + kPrefetchRows) * dims, 4 * dims * sizeof(float));
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

KernelVariants kernel_variants() {
  KernelVariants v;
  v.dot.push_back({"generic", dot_generic});
  v.dot4.push_back({"generic", dot4_generic});
  v.dot_i8.push_back({"generic", dot_i8_generic});
  v.dot_f16.push_back({"generic", dot_f16_generic});
  if (g_avx2) {
    v.dot.push_back({"avx2", dot_avx2});
    v.dot4.push_back({"avx2", dot4_avx2});
    v.dot_i8.push_back({"avx2", dot_i8_avx2});
  }
  if (g_f16c) v.dot_f16.push_back({"avx2-f16c", dot_f16_avx2});
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
    v.dot_i8.push_back({"avx512", dot_i8_avx512});
    if (has_avx512vnni()) v.dot_i8.push_back({"avx512-vnni", dot_i8_vnni});
  }
  if (g_avx512) v.dot4_f16.push_back({"avx512", dot4_f16_avx512});
  return v;
}

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

std::int32_t dot_i8(const std::int8_t* a, const std::int8_t* b, std::size_t n) {
  return g_dot_i8(a, b, n);
}

float dot_f16(const float* q, const std::uint16_t* row, std::size_t n) {
  return g_f16c ? dot_f16_avx2(q, row, n) : dot_f16_generic(q, row, n);
}

// Round to nearest even; overflow to infinity, tiny values to (sub)normals or zero.
std::uint16_t f32_to_f16(float x) {
  std::uint32_t b;
  std::memcpy(&b, &x, 4);
  std::uint32_t sign = (b >> 16) & 0x8000u;
  std::uint32_t absb = b & 0x7fffffffu;
  if (absb >= 0x7f800000u)
    return static_cast<std::uint16_t>(sign | 0x7c00u | (absb > 0x7f800000u ? 0x200u : 0));
  if (absb >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // > max half
  if (absb < 0x38800000u) {  // subnormal half or zero
    if (absb < 0x33000000u) return static_cast<std::uint16_t>(sign);
    std::uint32_t e = absb >> 23, man = (absb & 0x7fffffu) | 0x800000u;
    std::uint32_t shift = 126 - e;  // 14 + (113 - e) - 1
    std::uint32_t half = man >> shift, rem = man & ((1u << shift) - 1), mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1))) ++half;
    return static_cast<std::uint16_t>(sign | half);
  }
  std::uint32_t half = ((absb - 0x38000000u) >> 13), rem = absb & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1))) ++half;
  return static_cast<std::uint16_t>(sign | half);
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

namespace {

// One part of an f16 pre-scan: the k best f16 distances, plus every row that was within `slack`
// of the k-th best when it was seen (a superset of the rows within slack of the final k-th).
struct F16Part {
  TopK top;
  std::vector<Scored> near;
};

void scan_range_f16(const float* q, const std::uint16_t* h, std::size_t begin, std::size_t end,
                    std::size_t dims, float slack, const std::function<bool(std::size_t)>& allow,
                    F16Part& out) {
  auto offer = [&](float distance, std::size_t r) {
    auto row = static_cast<std::uint32_t>(r);
    if (out.top.heap.size() < out.top.k || distance <= out.top.worst + slack) {
      out.near.push_back({distance, row});
      out.top.offer(distance, row);
      if (out.near.size() >= 4096 + 4 * out.top.k) {  // drop what the bound now rules out
        float limit = out.top.worst + slack;
        std::erase_if(out.near, [&](const Scored& s) { return s.distance > limit; });
      }
    }
  };
  std::size_t r = begin;
  if (!allow && g_avx512 && dims % 16 == 0) {
    constexpr std::size_t kPrefetchRows = 16;
    float d[4];
    for (; r + 4 <= end; r += 4) {
      if (r + kPrefetchRows + 4 <= end)
        prefetch_lines(h + (r + kPrefetchRows) * dims, 4 * dims * sizeof(std::uint16_t));
      dot4_f16_avx512(q, h + r * dims, dims, d);
      for (std::size_t j = 0; j < 4; ++j) offer(1.0f - d[j], r + j);
    }
  }
  for (; r < end; ++r)
    if (!allow || allow(r)) offer(1.0f - dot_f16(q, h + r * dims, dims), r);
}

}  // namespace

std::vector<Scored> scan_topk_f16(const float* query, const std::uint16_t* half,
                                  const float* matrix, std::size_t rows, std::size_t dims,
                                  std::size_t k, const std::function<bool(std::size_t)>& allow,
                                  unsigned threads) {
  std::vector<Scored> out;
  if (k == 0 || rows == 0) return out;
  // |dot(q, b) - dot(q, f16(b))| <= 2^-11 * sum |q_i b_i| <= 2^-11 for unit q and b (f16 rounds
  // to 11 significant bits; subnormals add < 2^-25 per element). The margin covers the f32
  // rounding of both sums. A row is kept while its f16 distance is within twice that of the
  // k-th best: its true distance can then still beat a true top-k distance.
  const float eps = 1.0f / 2048 + 2 * static_cast<float>(dims) * 6e-8f + 1e-5f;
  const float slack = 2 * eps;
  unsigned parts = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(rows / 8192)));
  std::vector<F16Part> found(parts, F16Part{TopK{k, {}}, {}});
  std::size_t step = ((rows + parts - 1) / parts + 3) / 4 * 4;
  auto part = [&](unsigned p) {
    std::size_t b = std::min(rows, p * step), e = std::min(rows, (p + 1) * step);
    found[p].top.heap.reserve(k + 1);
    scan_range_f16(query, half, b, e, dims, slack, allow, found[p]);
  };
  if (parts == 1)
    part(0);
  else
    pool().run(parts, part);
  // The k-th best f16 distance over all parts bounds what can still be in the true top k.
  std::vector<float> best;
  for (const auto& f : found)
    for (const auto& s : f.top.heap) best.push_back(s.distance);
  if (best.empty()) return out;
  std::size_t kth = std::min(k, best.size()) - 1;
  std::nth_element(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(kth), best.end());
  float limit = best[kth] + slack;
  for (const auto& f : found)
    for (const auto& s : f.near)
      if (s.distance <= limit) out.push_back(s);
  for (auto& s : out) prefetch_lines(matrix + s.row * dims, dims * sizeof(float));
  for (auto& s : out) s.distance = 1.0f - g_dot(query, matrix + s.row * dims, dims);
  std::sort(out.begin(), out.end(), better);
  if (out.size() > k) out.resize(k);
  return out;
}

}  // namespace quarry::store::embedded
