// A read-only view of a zip archive held in memory (for DOCX), hardened against hostile input:
// every member read is capped, both by the size the archive declares and by the bytes actually
// inflated, because a zip bomb can lie about the former.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

struct zip;

namespace quarry::convert::detail {

class ZipReader {
 public:
  // `bytes` must outlive the reader. Throws corrupt_input when they are not a zip archive.
  explicit ZipReader(std::string_view bytes);
  ~ZipReader();
  ZipReader(const ZipReader&) = delete;
  ZipReader& operator=(const ZipReader&) = delete;

  // The member's bytes, or nullopt when there is no such member. Throws payload_too_large when
  // it would inflate to more than `max_bytes` (details: "check" = "declared_size" when the
  // directory says so, "inflated" when found while reading), corrupt_input when its data is
  // damaged, encrypted, or inflates to more than its declared size.
  std::optional<std::string> read(const char* name, std::size_t max_bytes) const;

 private:
  struct zip* zip_ = nullptr;
};

}  // namespace quarry::convert::detail
