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
#include <usearch/index_dense.hpp>

#include "quarry/error.h"
#include "store/embedded/kernels.h"

namespace quarry::store::embedded {
namespace us = unum::usearch;

namespace {

constexpr char kMagic[8] = {'Q', 'R', 'Y', 'H', 'N', 'S', 'W', 1};
constexpr std::uint32_t kVersion = 1;
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
  std::uint64_t count;
  std::uint64_t blob_bytes;
  std::uint64_t checksum;  // FNV-1a over the header with this field zero
  std::uint8_t reserved[56];
};
static_assert(sizeof(FileHeader) == 128);

std::uint64_t header_checksum(FileHeader h) {
  h.checksum = 0;
  std::uint64_t x = 1469598103934665603ull;
  const auto* p = reinterpret_cast<const unsigned char*>(&h);
  for (std::size_t i = 0; i < sizeof h; ++i) x = (x ^ p[i]) * 1099511628211ull;
  return x;
}

us::scalar_kind_t scalar_of(Quantization q) {
  switch (q) {
    case Quantization::f16:
      return us::scalar_kind_t::f16_k;
    case Quantization::i8:
      return us::scalar_kind_t::i8_k;
    default:
      return us::scalar_kind_t::f32_k;
  }
}

// USearch's builtin i8 cosine returns 0 (identical) when the dot product is exactly 0, which
// happens to orthogonal-ish vectors often enough at low precision; this one says 1.
float i8_cosine_distance(std::size_t a, std::size_t b, std::size_t n) {
  const auto* x = reinterpret_cast<const std::int8_t*>(a);
  const auto* y = reinterpret_cast<const std::int8_t*>(b);
  std::int32_t ab = 0, a2 = 0, b2 = 0;
  for (std::size_t i = 0; i < n; ++i) {
    ab += std::int32_t{x[i]} * y[i];
    a2 += std::int32_t{x[i]} * x[i];
    b2 += std::int32_t{y[i]} * y[i];
  }
  if (a2 == 0 || b2 == 0) return a2 == b2 ? 0.0f : 1.0f;
  return 1.0f - static_cast<float>(ab) /
                    (std::sqrt(static_cast<float>(a2)) * std::sqrt(static_cast<float>(b2)));
}

// f32 uses our own kernel (kernels.cpp, vectorised with the right flags), i8 the one above;
// f16 uses USearch's builtin cosine, compiled in this file with the same flags (CMakeLists.txt).
us::metric_punned_t metric_for(std::size_t dims, Quantization q) {
  if (q == Quantization::i8)
    return us::metric_punned_t::stateless(dims,
                                          reinterpret_cast<std::uintptr_t>(&i8_cosine_distance),
                                          us::metric_punned_signature_t::array_array_size_k,
                                          us::metric_kind_t::cos_k, us::scalar_kind_t::i8_k);
  if (q == Quantization::f32)
    return us::metric_punned_t::stateless(
        dims, reinterpret_cast<std::uintptr_t>(&usearch_cosine_distance),
        us::metric_punned_signature_t::array_array_size_k, us::metric_kind_t::cos_k,
        us::scalar_kind_t::f32_k);
  return us::metric_punned_t::builtin(dims, us::metric_kind_t::cos_k, scalar_of(q));
}

[[noreturn]] void io_fail(const std::string& what, const std::string& path) {
  throw Error(Code::io_error, what + " " + path + ": " + std::strerror(errno), {{"path", path}});
}

}  // namespace

struct HnswIndex::Impl {
  us::index_dense_t index;
  std::string path;  // memory_mapped_file_t keeps a pointer to it
  std::size_t dims = 0;
  std::mutex slot_mu;
  std::vector<std::size_t> free_slots;  // a stack: the last released is taken first

  void reserve(std::size_t members) {
    index.reserve(us::index_limits_t(members, thread_slots()));
    std::lock_guard lock(slot_mu);
    free_slots.clear();
    for (std::size_t i = thread_slots(); i-- > 0;) free_slots.push_back(i);
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
  us::index_dense_config_t config(p.connectivity, p.expansion_add, p.expansion_search);
  auto made = us::index_dense_t::make(metric_for(dims, p.quantization), config);
  if (!made) throw Error(Code::internal, std::string("usearch: ") + made.error.what());
  auto impl = std::make_unique<Impl>();
  impl->index = std::move(made.index);
  impl->dims = dims;
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
  FileHeader h{};
  bool got = std::fread(&h, sizeof h, 1, f) == 1;
  std::error_code ec;
  auto file_size = std::filesystem::file_size(path, ec);
  if (!got || std::memcmp(h.magic, kMagic, sizeof kMagic) != 0 || h.version != kVersion ||
      h.checksum != header_checksum(h) || ec || file_size != sizeof h + h.blob_bytes) {
    std::fclose(f);
    return fail("corrupt header");
  }
  if (h.dims != dims || h.quantization != static_cast<std::uint32_t>(p.quantization) ||
      h.connectivity != p.connectivity) {
    std::fclose(f);
    return fail("built with other settings");
  }
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->dims = dims;
  us::serialization_result_t res;
  if (view) {
    std::fclose(f);
    res = impl->index.view(us::memory_mapped_file_t(impl->path.c_str()), sizeof h);
  } else {
    res = impl->index.load_from_stream(
        [f](void* buf, std::size_t n) { return std::fread(buf, n, 1, f) == 1; });
    std::fclose(f);
  }
  if (!res) return fail(std::string("usearch: ") + res.error.what());
  if (impl->index.dimensions() != dims) return fail("index does not match its header");
  impl->index.change_metric(metric_for(dims, p.quantization));
  impl->index.change_expansion_search(p.expansion_search);
  impl->index.change_expansion_add(p.expansion_add);
  impl->reserve(impl->index.capacity());
  if (stamp) *stamp = {h.epoch, h.seq, h.max_id};
  return std::unique_ptr<HnswIndex>(new HnswIndex(std::move(impl), view));
}

std::size_t HnswIndex::size() const {
  return impl_->index.size();
}

void HnswIndex::add(const std::uint64_t* keys, const float* vectors, std::size_t n,
                    unsigned threads) {
  auto& index = impl_->index;
  std::size_t need = index.size() + n;
  if (need > index.capacity()) impl_->reserve(std::max(need, index.capacity() * 3 / 2));
  std::size_t dims = impl_->dims;
  // Adds never overlap searches (the caller holds its scope exclusively): slots 0.. are free.
  threads = std::max(1u, std::min<unsigned>(threads, static_cast<unsigned>(thread_slots())));
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::string error;
  auto work = [&](std::size_t slot) {
    for (std::size_t i; (i = next.fetch_add(1)) < n;) {
      auto r = index.add(keys[i], vectors + i * dims, slot);
      if (!r && !failed.exchange(true)) error = r.error.what();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (auto& t : pool) t.join();
  if (failed) throw Error(Code::internal, "usearch add: " + error);
}

void HnswIndex::remove(std::uint64_t key) {
  impl_->index.remove(key);
}
bool HnswIndex::contains(std::uint64_t key) const {
  return impl_->index.contains(key);
}
bool HnswIndex::get(std::uint64_t key, float* out) const {
  return impl_->index.get(key, out) > 0;
}

std::vector<std::pair<std::uint64_t, float>> HnswIndex::search(
    const float* query, std::size_t k, const std::function<bool(std::uint64_t)>& allow,
    bool exact) const {
  std::vector<std::pair<std::uint64_t, float>> out;
  if (k == 0 || impl_->index.size() == 0) return out;
  std::size_t slot = impl_->take_slot();
  struct Release {
    Impl& impl;
    std::size_t slot;
    ~Release() { impl.give_slot(slot); }
  } release{*impl_, slot};
  auto r = allow ? impl_->index.filtered_search(query, k, allow, slot, exact)
                 : impl_->index.search(query, k, slot, exact);
  if (!r) throw Error(Code::internal, std::string("usearch search: ") + r.error.what());
  out.reserve(r.size());
  for (std::size_t i = 0; i < r.size(); ++i)
    out.emplace_back(static_cast<std::uint64_t>(r[i].member.key), r[i].distance);
  return out;
}

void HnswIndex::save(const std::string& path, const IndexStamp& stamp) const {
  std::random_device rd;
  std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(rd());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) io_fail("cannot create", tmp);
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kVersion;
  h.dims = static_cast<std::uint32_t>(impl_->dims);
  h.connectivity = static_cast<std::uint32_t>(impl_->index.config().connectivity);
  h.epoch = stamp.epoch;
  h.seq = stamp.seq;
  h.max_id = stamp.max_id;
  h.count = impl_->index.size();
  std::uint64_t written = 0;
  bool ok = std::fwrite(&h, sizeof h, 1, f) == 1;
  ok = ok && impl_->index.save_to_stream([&](const void* buf, std::size_t n) {
    written += n;
    return std::fwrite(buf, n, 1, f) == 1;
  });
  h.blob_bytes = written;
  h.quantization = static_cast<std::uint32_t>(
      impl_->index.scalar_kind() == us::scalar_kind_t::f16_k  ? Quantization::f16
      : impl_->index.scalar_kind() == us::scalar_kind_t::i8_k ? Quantization::i8
                                                              : Quantization::f32);
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
