#include "convert/zip_reader.h"

#include <zip.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "quarry/error.h"

namespace quarry::convert::detail {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

std::string mib(std::size_t bytes) {
  return std::to_string(bytes / (1024 * 1024)) + " MiB";
}

}  // namespace

ZipReader::ZipReader(std::string_view bytes) {
  zip_error_t err;
  zip_error_init(&err);
  zip_source_t* src = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &err);
  if (src != nullptr) {
    zip_ = zip_open_from_source(src, ZIP_RDONLY, &err);
    if (zip_ == nullptr) zip_source_free(src);  // on success the archive owns the source
  }
  if (zip_ == nullptr) {
    std::string why = zip_error_strerror(&err);
    zip_error_fini(&err);
    throw Error(Code::corrupt_input, "not a valid zip archive (" + why + ")",
                {{"format", "zip"}, {"reason", why}});
  }
  zip_error_fini(&err);
}

ZipReader::~ZipReader() {
  if (zip_ != nullptr) zip_discard(zip_);
}

std::optional<std::string> ZipReader::read(const char* name, std::size_t max_bytes) const {
  zip_int64_t index = zip_name_locate(zip_, name, 0);
  if (index < 0) return std::nullopt;
  const auto idx = static_cast<zip_uint64_t>(index);
  zip_stat_t st;
  zip_stat_init(&st);
  if (zip_stat_index(zip_, idx, 0, &st) != 0) {
    throw Error(Code::corrupt_input, std::string("cannot read zip entry ") + name,
                {{"entry", name}});
  }
  const bool declared = (st.valid & ZIP_STAT_SIZE) != 0;
  if (declared && st.size > max_bytes) {
    throw Error(
        Code::payload_too_large,
        std::string(name) + " would inflate to " + mib(st.size) + ", over the limit of " +
            mib(max_bytes) + " (a zip bomb or an unusually large document)",
        {{"entry", name}, {"check", "declared_size"}, {"limit", std::to_string(max_bytes)}});
  }
  std::unique_ptr<zip_file_t, ZipFileCloser> file(zip_fopen_index(zip_, idx, 0));
  if (!file) {
    throw Error(Code::corrupt_input,
                std::string("cannot open zip entry ") + name + ": " + zip_strerror(zip_),
                {{"entry", name}});
  }
  std::string out;
  std::vector<char> buf(kReadChunk);
  while (true) {
    zip_int64_t n = zip_fread(file.get(), buf.data(), buf.size());
    if (n < 0) {
      throw Error(
          Code::corrupt_input,
          std::string("zip entry ") + name + " is damaged: " + zip_file_strerror(file.get()),
          {{"entry", name}});
    }
    if (n == 0) break;
    const auto got = static_cast<std::size_t>(n);
    // Never hold more than the cap or the declared size, whichever is smaller: libzip keeps
    // inflating past a size the directory understated, so this loop is what stops a lying bomb.
    // (An entry with a declared size always trips the mismatch first; the cap check is for one
    // without.)
    if (out.size() + got > max_bytes) {
      throw Error(Code::payload_too_large,
                  std::string(name) + " inflates to more than " + mib(max_bytes) +
                      " (a zip bomb or an unusually large document)",
                  {{"entry", name}, {"check", "inflated"}, {"limit", std::to_string(max_bytes)}});
    }
    if (declared && out.size() + got > st.size) {
      throw Error(Code::corrupt_input,
                  std::string("zip entry ") + name + " inflates to more than its declared size",
                  {{"entry", name}, {"check", "size_mismatch"}});
    }
    out.append(buf.data(), got);
  }
  return out;
}

}  // namespace quarry::convert::detail
