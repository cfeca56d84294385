#include "store/embedded/hnsw.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <usearch/index.hpp>

#include "quarry/error.h"
#include "store/embedded/kernels.h"

namespace quarry::store::embedded {
namespace us = unum::usearch;

namespace {

// Keys are row ids (u64), slots u32 (4 bytes per neighbour in the graph), distances f32.
using Graph = us::index_gt<float, std::uint64_t, std::uint32_t>;

constexpr char kMagic[8] = {'Q', 'R', 'Y', 'H', 'N', 'S', 'W', 2};
constexpr std::uint32_t kVersion = 2;  // 1: USearch index_dense (f32/f16/i8 vectors inside)
// Search/add thread slots (USearch contexts) reserved per index: one per core is enough, as a
// search never blocks. A search takes the most recently released slot (LIFO), so a sequential
// caller keeps reusing one warm context instead of USearch's round-robin over all of them.
std::size_t thread_slots() {
  static const std::size_t n = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 4, 64);
  return n;
}

struct FileHeader {
  char magic[8];
  std::uint32_t version;
  std::uint32_t dims;
  std::uint32_t quantization;
  std::uint32_t connectivity;
  std::int64_t epoch;
  std::int64_t seq;
  std::int64_t max_id;
  std::uint64_t count;       // graph slots (live + removed)
  std::uint64_t blob_bytes;  // USearch's graph serialisation
  std::uint64_t checksum;    // FNV-1a over the header with this field zero
  float code_scale;          // code = round(x * code_scale), saturated to [-127, 127]
  std::uint32_t reserved0;
  std::uint8_t reserved[48];
};
static_assert(sizeof(FileHeader) == 128);

std::uint64_t header_checksum(FileHeader h) {
  h.checksum = 0;
  std::uint64_t x = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(&h);
  for (std::size_t i = 0; i < sizeof h; ++i) x = (x ^ p[i]) * 1099511628211ull;
  return x;
}

std::size_t align64(std::size_t x) {
  return (x + 63) & ~std::size_t{63};
}

// Bytes per element of the precise copy used to re-score candidates (none for i8).
std::size_t precise_elem(Quantization q) {
  return q == Quantization::f32 ? 4 : q == Quantization::f16 ? 2 : 0;
}

// Section offsets in the file; all derive from (count, dims, quantization).
struct Layout {
  std::size_t codes, precise, removed, graph;
  Layout(std::size_t count, std::size_t dims, Quantization q)
      : codes(sizeof(FileHeader)),
        precise(align64(codes + count * dims)),
        removed(align64(precise + count * dims * precise_elem(q))),
        graph(align64(removed + count)) {}
};

[[noreturn]] void io_fail(const std::string& what, const std::string& path) {
  throw Error(Code::io_error, what + " " + path + ": " + std::strerror(errno), {{"path", path}});
}

// The i8 code of a query or of a vector being added (the graph's "value").
struct CodeRef {
  const std::int8_t* p;
};

}  // namespace

struct HnswIndex::Impl {
  Graph graph;
  std::size_t dims = 0;
  HnswParams params;
  std::size_t elem = 0;  // precise_elem(params.quantization)
  float scale = 0;       // 0 until the first add chooses it
  float inv_scale2 = 0;  // 1 / scale²: code . code -> cosine

  // Slot-ordered storage: owned vectors for a built or loaded index, the file mapping for a view
  // (then `graph` owns the mapping and these point into it).
  std::vector<std::int8_t> codes_own;
  std::vector<unsigned char> precise_own;
  std::vector<std::uint8_t> removed_own;
  const std::int8_t* codes = nullptr;
  const unsigned char* precise = nullptr;
  const std::uint8_t* removed = nullptr;
  std::size_t removed_count = 0;
  std::unordered_map<std::uint64_t, std::uint32_t> slot_of;  // filled by remove() on demand

  std::string path;                      // memory_mapped_file_t keeps a pointer to it
  std::vector<std::int8_t> query_codes;  // one dims-sized code buffer per thread slot
  std::mutex slot_mu;
  std::vector<std::size_t> free_slots;  // a stack: the last released is taken first

  Impl(std::size_t d, const HnswParams& p)
      : dims(d), params(p), elem(precise_elem(p.quantization)), query_codes(thread_slots() * d) {
    for (std::size_t i = thread_slots(); i-- > 0;) free_slots.push_back(i);
  }

  // ---- distances ----
  const std::int8_t* code(const CodeRef& c) const { return c.p; }
  const std::int8_t* code(std::size_t slot) const { return codes + slot * dims; }
  template <typename Entry>
  const std::int8_t* code(const Entry& e) const {
    return code(static_cast<std::size_t>(get_slot(e)));
  }
  float code_distance(const std::int8_t* a, const std::int8_t* b) const {
    return 1.0f - static_cast<float>(dot_i8(a, b, dims)) * inv_scale2;
  }
  float precise_distance(const float* q, std::size_t slot) const {
    const unsigned char* row = precise + slot * dims * elem;
    float d = elem == 4 ? dot(q, reinterpret_cast<const float*>(row), dims)
                        : dot_f16(q, reinterpret_cast<const std::uint16_t*>(row), dims);
    return 1.0f - d;
  }
  void quantize(const float* v, std::int8_t* out) const {
    for (std::size_t i = 0; i < dims; ++i)
      out[i] = static_cast<std::int8_t>(std::clamp(std::nearbyint(v[i] * scale), -127.0f, 127.0f));
  }
  // The scale maps the largest |component| of the first batch, times kHeadroom, to 127, so
  // later vectors rarely saturate. Measured on the 100k x 384 set (recall@10, ef 64), scale
  // from: the 99.9th percentile 0.9715, the 99.99th 0.9725, the maximum 0.9730-0.9735, the
  // maximum x 1.25 0.9730: clipping costs more than resolution.
  void choose_scale(const float* v, std::size_t n) {
    constexpr float kHeadroom = 1.25f;
    float hi = 0;
    for (std::size_t i = 0; i < n * dims; ++i) hi = std::max(hi, std::fabs(v[i]));
    set_scale(hi > 1e-6f ? 127.0f / (hi * kHeadroom) : 127.0f);
  }
  void set_scale(float s) {
    scale = s;
    inv_scale2 = 1.0f / (s * s);
  }

  // The graph's metric: i8 codes of a value or a slot, either side. (Scoring the f32 query
  // against codes instead, measured: same recall, 15% slower.)
  struct Metric {
    const Impl* im;
    template <typename A, typename B>
    float operator()(const A& a, const B& b) const {
      return im->code_distance(im->code(a), im->code(b));
    }
  };
  // Called by the graph walk with the neighbours it is about to score (slots, or members):
  // their codes' cache lines are requested together, so the misses overlap.
  struct Prefetch {
    const Impl* im;
    static std::size_t slot(std::uint32_t s) { return s; }
    template <typename M>
    static std::size_t slot(const M& m) {
      return m.slot;
    }
    // `end` is const: USearch's candidate iterator declares a non-const operator==, so with two
    // mutable iterators C++20 also sees the reversed `end == begin` and clang calls it ambiguous.
    template <typename It>
    void operator()(It begin, const It end) const {
      for (; begin != end; ++begin) prefetch_lines(im->code(slot(*begin)), im->dims);
    }
  };

  void point_at_owned() {
    codes = codes_own.data();
    precise = precise_own.data();
    removed = removed_own.data();
  }
  void reserve(std::size_t members) {
    if (!graph.reserve(us::index_limits_t(members, thread_slots())))
      throw Error(Code::internal, "usearch: out of memory reserving the index");
    codes_own.resize(std::max(members, graph.size()) * dims);
    precise_own.resize(std::max(members, graph.size()) * dims * elem);
    removed_own.resize(std::max(members, graph.size()));
    point_at_owned();
  }
  std::size_t take_slot() {
    for (;;) {
      {
        std::lock_guard lock(slot_mu);
        if (!free_slots.empty()) {
          std::size_t s = free_slots.back();
          free_slots.pop_back();
          return s;
        }
      }
      std::this_thread::yield();  // every slot is in use by concurrent searches
    }
  }
  void give_slot(std::size_t s) {
    std::lock_guard lock(slot_mu);
    free_slots.push_back(s);
  }
};

HnswIndex::HnswIndex(std::unique_ptr<Impl> impl, bool view) : impl_(std::move(impl)), view_(view) {}
HnswIndex::~HnswIndex() = default;

std::unique_ptr<HnswIndex> HnswIndex::create(std::size_t dims, const HnswParams& p) {
  auto made = Graph::make(us::index_config_t(p.connectivity, p.connectivity * 2));
  if (!made) throw Error(Code::internal, std::string("usearch: ") + made.error.what());
  auto impl = std::make_unique<Impl>(dims, p);
  impl->graph = std::move(made.index);
  impl->reserve(0);
  return std::unique_ptr<HnswIndex>(new HnswIndex(std::move(impl), false));
}

std::unique_ptr<HnswIndex> HnswIndex::open(const std::string& path, std::size_t dims,
                                           const HnswParams& p, bool view, IndexStamp* stamp,
                                           std::string* why) {
  auto fail = [&](const std::string& reason) -> std::unique_ptr<HnswIndex> {
    if (why) *why = reason;
    return nullptr;
  };
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return fail("missing");
  struct Closer {
    std::FILE*& f;
    ~Closer() {
      if (f) std::fclose(f);
    }
  } closer{f};
  FileHeader h{};
  bool got = std::fread(&h, sizeof h, 1, f) == 1;
  std::error_code ec;
  auto file_size = std::filesystem::file_size(path, ec);
  if (!got || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kVersion ||
      h.checksum != header_checksum(h) || ec)
    return fail("corrupt header");
  if (h.dims != dims || h.quantization != static_cast<std::uint32_t>(p.quantization) ||
      h.connectivity != p.connectivity)
    return fail("built with other settings");
  Layout at(h.count, dims, p.quantization);
  if (file_size != at.graph + h.blob_bytes || !(h.code_scale > 0) || !std::isfinite(h.code_scale))
    return fail("corrupt header");

  auto impl = std::make_unique<Impl>(dims, p);
  impl->path = path;
  impl->set_scale(h.code_scale);
  std::size_t count = h.count;
  us::serialization_result_t res;
  if (view) {
    us::memory_mapped_file_t file(impl->path.c_str());
    res = file.open_if_not();
    if (!res) return fail(std::string("usearch: ") + res.error.what());
    const auto* base = reinterpret_cast<const unsigned char*>(file.data());
    impl->codes = reinterpret_cast<const std::int8_t*>(base + at.codes);
    impl->precise = base + at.precise;
    impl->removed = base + at.removed;
    res = impl->graph.view(std::move(file), at.graph);  // the graph keeps the mapping alive
  } else {
    impl->codes_own.resize(count * dims);
    impl->precise_own.resize(count * dims * impl->elem);
    impl->removed_own.resize(count);
    auto read_at = [&](std::size_t offset, void* buf, std::size_t n) {
      return n == 0 || (std::fseek(f, static_cast<long>(offset), SEEK_SET) == 0 &&
                        std::fread(buf, n, 1, f) == 1);
    };
    if (!read_at(at.codes, impl->codes_own.data(), impl->codes_own.size()) ||
        !read_at(at.precise, impl->precise_own.data(), impl->precise_own.size()) ||
        !read_at(at.removed, impl->removed_own.data(), count) ||
        std::fseek(f, static_cast<long>(at.graph), SEEK_SET) != 0)
      return fail("truncated");
    impl->point_at_owned();
    res = impl->graph.load_from_stream(
        [&](void* buf, std::size_t n) { return std::fread(buf, n, 1, f) == 1; });
  }
  if (!res) return fail(std::string("usearch: ") + res.error.what());
  if (impl->graph.size() != count || impl->graph.config().connectivity != p.connectivity)
    return fail("index does not match its header");
  if (view) {
    if (!impl->graph.reserve(us::index_limits_t(count, thread_slots())))
      return fail("out of memory");
  } else {
    impl->reserve(count);
  }
  impl->removed_count = static_cast<std::size_t>(
      std::count_if(impl->removed, impl->removed + count, [](std::uint8_t r) { return r != 0; }));
  if (stamp) *stamp = {h.epoch, h.seq, h.max_id};
  return std::unique_ptr<HnswIndex>(new HnswIndex(std::move(impl), view));
}

std::size_t HnswIndex::size() const {
  return impl_->graph.size() - impl_->removed_count;
}
std::size_t HnswIndex::removed() const {
  return impl_->removed_count;
}

void HnswIndex::add(const std::uint64_t* keys, const float* vectors, std::size_t n,
                    unsigned threads) {
  if (n == 0) return;
  auto& im = *impl_;
  if (view_) throw Error(Code::internal, "vector index: cannot add to a mapped index");
  if (im.scale == 0) im.choose_scale(vectors, n);
  std::size_t need = im.graph.size() + n;
  if (need > im.graph.capacity()) im.reserve(std::max(need, im.graph.capacity() * 3 / 2));
  im.slot_of.clear();  // slots of new keys are not in it
  std::size_t dims = im.dims;
  // Adds never overlap searches (the caller holds its scope exclusively): slots 0.. are free.
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(thread_slots())));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::string error;
  // Inserts rows next.. up to `end` (shared counter: each row is taken once).
  auto work = [&](std::size_t thread, std::size_t end) {
    std::int8_t* code = im.query_codes.data() + thread * dims;
    us::index_update_config_t config;
    config.expansion = im.params.expansion_add;
    config.thread = thread;
    for (std::size_t i; (i = next.load()) < end;) {
      if (!next.compare_exchange_weak(i, i + 1)) continue;
      const float* v = vectors + i * dims;
      im.quantize(v, code);
      // Runs once the slot is allocated, before the node is linked: neighbours measured against
      // the new node read its code from the storage.
      auto store = [&](const auto& member) {
        std::size_t s = member.slot;
        std::memcpy(im.codes_own.data() + s * dims, code, dims);
        im.removed_own[s] = 0;
        if (im.elem == 4) {
          std::memcpy(im.precise_own.data() + s * dims * 4, v, dims * 4);
        } else if (im.elem == 2) {
          auto* row = reinterpret_cast<std::uint16_t*>(im.precise_own.data() + s * dims * 2);
          for (std::size_t j = 0; j < dims; ++j) row[j] = f32_to_f16(v[j]);
        }
      };
      auto r = im.graph.add(keys[i], CodeRef{code}, Impl::Metric{&im}, config, store,
                            Impl::Prefetch{&im});
      if (!r && !failed.exchange(true)) error = r.error.what();
    }
  };
  // A small graph built by concurrent inserts can come out with unreachable regions (measured:
  // up to 13 of 300 vectors not finding themselves, in 1 build of 10): the first kSerialAdds
  // nodes are inserted one at a time, the rest concurrently.
  constexpr std::size_t kSerialAdds = 2048;
  work(0, im.graph.size() < kSerialAdds ? std::min(n, kSerialAdds - im.graph.size()) : 0);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t, n);
  work(0, n);
  for (auto& t : pool) t.join();
  if (failed) throw Error(Code::internal, "usearch add: " + error);
}

void HnswIndex::remove(std::uint64_t key) {
  auto& im = *impl_;
  if (view_) throw Error(Code::internal, "vector index: cannot remove from a mapped index");
  if (im.slot_of.empty())
    for (std::size_t s = 0; s < im.graph.size(); ++s)
      if (!im.removed_own[s])
        im.slot_of.emplace(
            static_cast<std::uint64_t>(im.graph.at(static_cast<std::uint32_t>(s)).key),
            static_cast<std::uint32_t>(s));
  auto it = im.slot_of.find(key);
  if (it == im.slot_of.end()) return;
  im.removed_own[it->second] = 1;
  ++im.removed_count;
  im.slot_of.erase(it);
}

std::vector<std::pair<std::uint64_t, float>> HnswIndex::search(
    const float* query, std::size_t k, const std::function<bool(std::uint64_t)>& allow,
    bool exact) const {
  std::vector<std::pair<std::uint64_t, float>> out;
  const auto& im = *impl_;
  std::size_t slots = im.graph.size();
  if (k == 0 || size() == 0) return out;
  auto key_at = [&](std::size_t s) {
    return static_cast<std::uint64_t>(im.graph.at(static_cast<std::uint32_t>(s)).key);
  };
  auto better = [](const std::pair<std::uint64_t, float>& a,
                   const std::pair<std::uint64_t, float>& b) {
    return a.second < b.second || (a.second == b.second && a.first < b.first);
  };

  if (exact) {
    // Every live, allowed slot scored with the precise copy (or the code, for i8).
    bool filtered = allow || im.removed_count > 0;
    auto ok = [&](std::size_t s) { return !im.removed[s] && (!allow || allow(key_at(s))); };
    if (im.elem == 4) {
      std::function<bool(std::size_t)> row_ok;
      if (filtered) row_ok = ok;
      for (const auto& s :
           scan_topk(query, reinterpret_cast<const float*>(im.precise), slots, im.dims, k, row_ok))
        out.emplace_back(key_at(s.row), s.distance);
      return out;
    }
    std::vector<std::int8_t> qc(im.dims);
    if (im.elem == 0) im.quantize(query, qc.data());
    for (std::size_t s = 0; s < slots; ++s)
      if (ok(s))
        out.emplace_back(key_at(s), im.elem ? im.precise_distance(query, s)
                                            : im.code_distance(qc.data(), im.code(s)));
    std::size_t keep = std::min(k, out.size());
    std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(),
                      better);
    out.resize(keep);
    return out;
  }

  std::size_t slot = impl_->take_slot();
  struct Release {
    Impl& impl;
    std::size_t slot;
    ~Release() { impl.give_slot(slot); }
  } release{*impl_, slot};
  std::int8_t* qc = impl_->query_codes.data() + slot * im.dims;
  im.quantize(query, qc);
  us::index_search_config_t config;
  config.thread = slot;
  config.expansion = im.params.expansion_search;
  // With a precise copy, every candidate the walk kept is re-scored, not only the k best.
  std::size_t wanted = im.elem ? std::max(k, im.params.expansion_search) : k;
  auto walk = [&](auto&& predicate) {
    return im.graph.search(CodeRef{qc}, wanted, Impl::Metric{&im}, config, predicate,
                           Impl::Prefetch{&im});
  };
  auto r = allow || im.removed_count > 0 ? walk([&](const Graph::member_cref_t& m) {
    return !im.removed[m.slot] && (!allow || allow(static_cast<std::uint64_t>(m.key)));
  })
                                         : walk(us::dummy_predicate_t{});
  if (!r) throw Error(Code::internal, std::string("usearch search: ") + r.error.what());
  out.reserve(r.size());
  if (im.elem == 0) {
    for (std::size_t i = 0; i < r.size(); ++i)
      out.emplace_back(static_cast<std::uint64_t>(r[i].member.key), r[i].distance);
    return out;
  }
  std::uint32_t cand[512];
  std::size_t m = std::min<std::size_t>(r.size(), 512);
  for (std::size_t i = 0; i < m; ++i) {
    cand[i] = static_cast<std::uint32_t>(r[i].member.slot);
    prefetch_lines(im.precise + cand[i] * im.dims * im.elem, im.dims * im.elem);
  }
  for (std::size_t i = 0; i < m; ++i)
    out.emplace_back(key_at(cand[i]), im.precise_distance(query, cand[i]));
  std::size_t keep = std::min(k, out.size());
  std::partial_sort(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(keep), out.end(),
                    better);
  out.resize(keep);
  return out;
}

void HnswIndex::save(const std::string& path, const IndexStamp& stamp) const {
  const auto& im = *impl_;
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) io_fail("cannot create", tmp);
  std::size_t count = im.graph.size();
  Layout at(count, im.dims, im.params.quantization);
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.dims = static_cast<std::uint32_t>(im.dims);
  h.quantization = static_cast<std::uint32_t>(im.params.quantization);
  h.connectivity = static_cast<std::uint32_t>(im.graph.config().connectivity);
  h.epoch = stamp.epoch;
  h.seq = stamp.seq;
  h.max_id = stamp.max_id;
  h.count = count;
  h.code_scale = im.scale > 0 ? im.scale : 127.0f;
  std::size_t pos = 0;
  auto put = [&](const void* p, std::size_t n) {
    pos += n;
    return n == 0 || std::fwrite(p, n, 1, f) == 1;
  };
  auto pad_to = [&](std::size_t offset) {
    static const char zeros[64] = {};
    return put(zeros, offset - pos);
  };
  bool ok = put(&h, sizeof h) && put(im.codes, count * im.dims) && pad_to(at.precise) &&
            put(im.precise, count * im.dims * im.elem) && pad_to(at.removed) &&
            put(im.removed, count) && pad_to(at.graph);
  std::uint64_t written = 0;
  ok = ok && im.graph.save_to_stream([&](const void* buf, std::size_t n) {
    written += n;
    return std::fwrite(buf, n, 1, f) == 1;
  });
  h.blob_bytes = written;
  h.checksum = header_checksum(h);
  ok = ok && std::fseek(f, 0, SEEK_SET) == 0 && std::fwrite(&h, sizeof h, 1, f) == 1 &&
       std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
  if (std::fclose(f) != 0) ok = false;
  if (!ok) {
    std::remove(tmp.c_str());
    io_fail("cannot write", tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    io_fail("cannot rename onto", path);
  }
  // The rename is durable only once the directory entry is.
  int dir = ::open(std::filesystem::path(path).parent_path().c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

}  // namespace quarry::store::embedded
