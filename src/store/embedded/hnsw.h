// The HNSW index of one (kb, revision): a thin layer over USearch (the only file that includes
// its headers), plus the on-disk framing that makes the index safe to share between processes.
//
// File `<kb>.<revision>.usearch` = a 128-byte header (magic, checksum, dims, quantization,
// connectivity, and the stamp: scope epoch, sequence and highest row id the index reflects)
// followed by USearch's own serialisation. Files are written to a temporary name, fsync'ed and
// renamed, so a reader sees a whole old file or a whole new one. A reader maps the file
// (USearch view(), read-only, no copy) so a cold query touches only the pages it walks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace quarry::store::embedded {

enum class Quantization { f32, f16, i8 };

struct HnswParams {
  std::size_t connectivity = 16;
  std::size_t expansion_add = 128;
  std::size_t expansion_search = 64;
  Quantization quantization = Quantization::f32;
};

// What a persisted index reflects: the scope incarnation (epoch), the scope sequence number at
// the time, and the highest row id included (every live row with id <= max_id is in it).
struct IndexStamp {
  std::int64_t epoch = 0;
  std::int64_t seq = 0;
  std::int64_t max_id = 0;
};

class HnswIndex {
 public:
  ~HnswIndex();
  HnswIndex(const HnswIndex&) = delete;
  HnswIndex& operator=(const HnswIndex&) = delete;

  static std::unique_ptr<HnswIndex> create(std::size_t dims, const HnswParams& params);
  // Opens `path`; nullptr with `why` set when it is missing, corrupt, or built with other
  // dims/settings. view = memory-map read-only; otherwise load a mutable copy.
  static std::unique_ptr<HnswIndex> open(const std::string& path, std::size_t dims,
                                         const HnswParams& params, bool view, IndexStamp* stamp,
                                         std::string* why);

  bool is_view() const { return view_; }
  std::size_t size() const;
  // Adds normalised vectors (row-major, n x dims) under keys, on `threads` threads.
  void add(const std::uint64_t* keys, const float* vectors, std::size_t n, unsigned threads);
  void remove(std::uint64_t key);
  bool contains(std::uint64_t key) const;
  // Copies the stored vector (dequantised) into out; false when the key is absent.
  bool get(std::uint64_t key, float* out) const;

  // k nearest (key, cosine distance), best first; `allow` (may be empty) filters keys.
  std::vector<std::pair<std::uint64_t, float>> search(
      const float* query, std::size_t k, const std::function<bool(std::uint64_t)>& allow,
      bool exact = false) const;

  // Atomic write (tmp + fsync + rename + fsync of the directory). Throws Error(io_error).
  void save(const std::string& path, const IndexStamp& stamp) const;

 private:
  struct Impl;
  explicit HnswIndex(std::unique_ptr<Impl> impl, bool view);
  std::unique_ptr<Impl> impl_;
  bool view_ = false;
};

}  // namespace quarry::store::embedded
