// Small helpers of the public API that the shells (the CLI, the servers) and the request codec
// need besides the Engine: timestamps as the library writes them, text made safe to print, a
// guard for untrusted JSON, and random ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace quarry {

// RFC 3339 UTC with milliseconds ("2026-01-02T03:04:05.678Z"), as every timestamp of the API.
std::string iso8601_utc(std::int64_t ms_since_epoch);

// Valid UTF-8: every invalid sequence becomes U+FFFD (never throws).
std::string repair_utf8(std::string_view text);

// True when the JSON text nests arrays and objects at most `max_depth` deep (strings skipped).
// Check it before parsing untrusted JSON: parsing is iterative, but copying and printing a
// parsed value recurse, so a deep document could exhaust the stack later.
bool json_nesting_within(std::string_view text, int max_depth);

// `bytes` cryptographically random bytes as lower-case hex (session ids, secrets).
std::string random_hex(std::size_t bytes);

}  // namespace quarry
