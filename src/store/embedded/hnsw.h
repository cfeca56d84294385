// The HNSW index of one (kb, revision): USearch's graph (index_gt, the only file that includes
// its headers) over vectors this file stores itself, plus the on-disk framing that makes the
// index safe to share between processes.
//
// Two copies of every vector, both in slot order: an i8 code (one global scale per index, chosen
// from the first batch) that the graph walk reads — a quarter of the f32 bytes, so 4x less
// memory traffic per hop, with every hop's unvisited neighbours prefetched — and the precise
// vector (f32, or f16 with quantization f16; none with i8) that re-scores the walk's candidates
// (expansion_search of them) exactly before the k best are returned.
//
// File `<kb>.<revision>.usearch` = a 128-byte header (magic, checksum, dims, quantization,
// connectivity, code scale, and the stamp: scope epoch, sequence and highest row id the index
// reflects), then the codes, the precise vectors, one "removed" byte per slot, and USearch's
// serialisation of the graph, each section 64-byte aligned. Files are written to a temporary
// name, fsync'ed and renamed, so a reader sees a whole old file or a whole new one. A reader
// maps the file read-only (no copy) so a cold query touches only the pages it walks.
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
  Quantization quantization = Quantization::f32;  // the re-scoring copy (i8: codes only)
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
  std::size_t size() const;     // live (not removed) members
  std::size_t removed() const;  // removed members still in the graph (slots are not reused)
  // Adds normalised vectors (row-major, n x dims) under keys, on `threads` threads.
  void add(const std::uint64_t* keys, const float* vectors, std::size_t n, unsigned threads);
  // Marks a key removed (its node stays in the graph as a waypoint; searches skip it).
  void remove(std::uint64_t key);

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
