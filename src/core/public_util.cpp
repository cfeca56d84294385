// include/quarry/util.h: the helpers the public API shares with the shells, kept in core beside
// the implementations every room uses.
#include "quarry/util.h"

#include "core/util.h"

namespace quarry {

std::string iso8601_utc(std::int64_t ms_since_epoch) {
  return core::iso8601_utc(ms_since_epoch);
}

std::string repair_utf8(std::string_view text) {
  return core::repair_utf8(text);
}

bool json_nesting_within(std::string_view text, int max_depth) {
  return core::json_nesting_within(text, max_depth);
}

std::string random_hex(std::size_t bytes) {
  return core::random_hex(bytes);
}

}  // namespace quarry
