// A small reader and writer for the safetensors format: 8-byte little-endian header length N,
// N bytes of JSON ({"name": {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__"}),
// then the tensor bytes (offsets relative to the end of the header).
//
// The reader memory-maps the file and validates every length, shape and offset against the file
// size before handing out a pointer: a truncated or corrupted file is Error(corrupt_input) naming
// the file and what is wrong, never an out-of-bounds read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace quarry::embed {

struct TensorView {
  std::string name;
  std::string dtype;  // "F32", "F16", "BF16", "I8", ... as written in the header
  std::vector<std::int64_t> shape;
  const unsigned char* data = nullptr;  // into the mapping; not aligned: read with memcpy
  std::size_t nbytes = 0;

  std::int64_t rows() const { return shape.empty() ? 1 : shape[0]; }
  std::int64_t cols() const { return shape.size() < 2 ? 1 : shape[1]; }
};

class SafetensorsFile {
 public:
  // Throws Error(not_found) when the file is missing, Error(corrupt_input) when it is malformed.
  explicit SafetensorsFile(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::string& path() const { return path_; }
  std::size_t file_size() const { return size_; }
  const std::vector<TensorView>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const TensorView* find(std::string_view name) const;

 private:
  std::string path_;
  void* map_ = nullptr;
  std::size_t size_ = 0;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// Bytes per element of a safetensors dtype; 0 for an unknown one.
std::size_t dtype_size(std::string_view dtype);

// Converts row `row` of a 2-D F32/F16/BF16/I8 tensor to floats (`out` has cols() entries),
// multiplying by `scale` (used for I8). The caller has checked the dtype and bounds.
void decode_row(const TensorView& t, std::size_t row, float* out, float scale = 1.0f);
// Element `i` of a 1-D F32/F16/BF16/I8 tensor as a float.
float decode_scalar(const TensorView& t, std::size_t i);

struct TensorData {
  std::string name;
  std::string dtype;
  std::vector<std::int64_t> shape;
  std::string bytes;  // little-endian element data
};

// Writes a safetensors file (header padded to 8 bytes, as the reference writer does). Throws
// Error(io_error) when the file cannot be written.
void write_safetensors(const std::string& path, const std::vector<TensorData>& tensors,
                       const std::map<std::string, std::string>& metadata = {});

}  // namespace quarry::embed
