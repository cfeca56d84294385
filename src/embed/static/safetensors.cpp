// safetensors reader (mmap + validation) and writer. See safetensors.h for the format.
#include "embed/static/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "embed/static/half.h"
#include "quarry/error.h"

namespace quarry::embed {

// The format is little-endian; decoding by memcpy is only right on a little-endian host.
static_assert(std::endian::native == std::endian::little, "safetensors reader assumes LE");

namespace {

constexpr std::uint64_t kMaxHeader = 100ull << 20;  // the reference implementation's limit

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
  throw Error(Code::corrupt_input,
              "model file " + path + " is corrupt: " + what +
                  "; re-download or re-convert the model (for the default model: `make model` in "
                  "the source tree, or reinstall the quarry package)",
              {{"path", path}});
}

}  // namespace

std::size_t dtype_size(std::string_view d) {
  if (d == "F64" || d == "I64" || d == "U64") return 8;
  if (d == "F32" || d == "I32" || d == "U32") return 4;
  if (d == "F16" || d == "BF16" || d == "I16" || d == "U16") return 2;
  if (d == "I8" || d == "U8" || d == "BOOL" || d == "F8_E4M3" || d == "F8_E5M2") return 1;
  return 0;
}

SafetensorsFile::SafetensorsFile(const std::string& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(Code::not_found,
                "model file " + path +
                    " is missing: re-convert the model (for the default model: `make model` in the "
                    "source tree, or reinstall the quarry package)",
                {{"path", path}});
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    corrupt(path, "not a regular file");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    corrupt(path,
            "only " + std::to_string(size_) + " bytes, shorter than the 8-byte header length");
  }
  map_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map_ == MAP_FAILED) {
    map_ = nullptr;
    throw Error(Code::io_error, "cannot map model file " + path, {{"path", path}});
  }
  try {
    const auto* base = static_cast<const unsigned char*>(map_);
    std::uint64_t n = 0;
    std::memcpy(&n, base, 8);
    if (n > kMaxHeader || n > size_ - 8)
      corrupt(path, "header length " + std::to_string(n) + " exceeds the file size " +
                        std::to_string(size_) + " (truncated?)");
    auto header = nlohmann::json::parse(base + 8, base + 8 + n, nullptr, false);
    if (header.is_discarded() || !header.is_object()) corrupt(path, "header is not a JSON object");
    const unsigned char* data = base + 8 + n;
    const std::uint64_t data_size = size_ - 8 - n;
    for (auto& [name, info] : header.items()) {
      if (name == "__metadata__") {
        if (info.is_object())
          for (auto& [k, v] : info.items())
            if (v.is_string()) metadata_[k] = v.get<std::string>();
        continue;
      }
      if (!info.is_object() || !info.contains("dtype") || !info["dtype"].is_string() ||
          !info.contains("shape") || !info["shape"].is_array() || !info.contains("data_offsets") ||
          !info["data_offsets"].is_array() || info["data_offsets"].size() != 2)
        corrupt(path, "tensor '" + name + "' lacks dtype, shape or data_offsets");
      TensorView t;
      t.name = name;
      t.dtype = info["dtype"].get<std::string>();
      std::size_t es = dtype_size(t.dtype);
      if (es == 0) corrupt(path, "tensor '" + name + "' has unknown dtype '" + t.dtype + "'");
      std::uint64_t count = 1;
      for (const auto& d : info["shape"]) {
        if (!d.is_number_unsigned()) corrupt(path, "tensor '" + name + "' has a bad shape");
        auto v = d.get<std::uint64_t>();
        if (v != 0 && count > std::numeric_limits<std::uint64_t>::max() / 8 / v)
          corrupt(path, "tensor '" + name + "' shape overflows");
        count *= v;
        t.shape.push_back(static_cast<std::int64_t>(v));
      }
      const auto& off = info["data_offsets"];
      if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned())
        corrupt(path, "tensor '" + name + "' has bad data_offsets");
      auto b = off[0].get<std::uint64_t>(), e = off[1].get<std::uint64_t>();
      if (b > e || e > data_size)
        corrupt(path, "tensor '" + name + "' data [" + std::to_string(b) + ", " +
                          std::to_string(e) + ") lies outside the " + std::to_string(data_size) +
                          " data bytes (truncated?)");
      if (e - b != count * es)
        corrupt(path, "tensor '" + name + "' has " + std::to_string(e - b) +
                          " bytes but its shape needs " + std::to_string(count * es));
      t.data = data + b;
      t.nbytes = e - b;
      tensors_.push_back(std::move(t));
    }
  } catch (...) {
    ::munmap(map_, size_);
    map_ = nullptr;
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) ::munmap(map_, size_);
}

const TensorView* SafetensorsFile::find(std::string_view name) const {
  for (const auto& t : tensors_)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {
inline float bf16_to_float(std::uint16_t h) {
  std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
}  // namespace

void decode_row(const TensorView& t, std::size_t row, float* out, float scale) {
  const auto cols = static_cast<std::size_t>(t.cols());
  if (t.dtype == "F32") {
    std::memcpy(out, t.data + row * cols * 4, cols * 4);
  } else if (t.dtype == "F16") {
    const unsigned char* p = t.data + row * cols * 2;
    for (std::size_t i = 0; i < cols; ++i) {
      std::uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = half_to_float(h);
    }
  } else if (t.dtype == "BF16") {
    const unsigned char* p = t.data + row * cols * 2;
    for (std::size_t i = 0; i < cols; ++i) {
      std::uint16_t h;
      std::memcpy(&h, p + 2 * i, 2);
      out[i] = bf16_to_float(h);
    }
  } else {  // I8
    const auto* p = reinterpret_cast<const std::int8_t*>(t.data + row * cols);
    for (std::size_t i = 0; i < cols; ++i) out[i] = static_cast<float>(p[i]) * scale;
  }
}

float decode_scalar(const TensorView& t, std::size_t i) {
  float v = 0;
  if (t.dtype == "F32") {
    std::memcpy(&v, t.data + 4 * i, 4);
  } else if (t.dtype == "F16" || t.dtype == "BF16") {
    std::uint16_t h;
    std::memcpy(&h, t.data + 2 * i, 2);
    v = t.dtype == "F16" ? half_to_float(h) : bf16_to_float(h);
  } else if (t.dtype == "I8") {
    v = static_cast<float>(reinterpret_cast<const std::int8_t*>(t.data)[i]);
  }
  return v;
}

void write_safetensors(const std::string& path, const std::vector<TensorData>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes.size()}}};
    offset += t.bytes.size();
  }
  std::string h = header.dump();
  while (h.size() % 8) h.push_back(' ');  // keeps the data 8-byte aligned in the file
  std::uint64_t n = h.size();
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  char len[8];
  std::memcpy(len, &n, 8);
  f.write(len, 8);
  f.write(h.data(), static_cast<std::streamsize>(h.size()));
  for (const auto& t : tensors)
    f.write(t.bytes.data(), static_cast<std::streamsize>(t.bytes.size()));
  f.close();
  if (!f)
    throw Error(Code::io_error, "cannot write " + path + ": check the folder and free space",
                {{"path", path}});
}

}  // namespace quarry::embed
