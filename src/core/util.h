// Small leaf utilities shared by every room: ids, hashes, clock, UTF-8.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace quarry::core {

// ULID (26 chars, Crockford base32, millisecond time prefix + 80 random bits). Ids minted within
// one process are strictly increasing, so they also sort by creation order.
std::string new_ulid();
// True for text new_ulid() could have made: 26 upper-case Crockford base32 characters whose
// first is 0-7 (128 bits).
bool is_ulid(std::string_view s);
// Random (version 4) UUID, lower-case with hyphens.
std::string new_uuid();

// Lower-case hex SHA-256.
std::string sha256_hex(std::string_view bytes);
// Lower-case hex of bytes.
std::string to_hex(std::string_view bytes);
// `bytes` cryptographically random bytes as hex (OpenSSL's CSPRNG), for secrets such as tokens.
std::string random_hex(std::size_t bytes);

// Secret names: [A-Za-z_][A-Za-z0-9_]{0,63}, the shape of an environment variable, so a secret
// can fall back to the variable of the same name (the secret store; configs that name a secret).
bool valid_secret_name(std::string_view name);

// Who runs this process, for the audit log: $USER, else the account's name, else "unknown".
std::string os_user();

// The folder holding this process's executable (from /proc/self/exe, symlinks resolved), or ""
// when it cannot be read. Installed files are found relative to it (share/quarry/models).
std::string executable_dir();

// Wall clock: milliseconds since the epoch, and RFC 3339 UTC with milliseconds.
std::int64_t now_ms();
std::string iso8601_utc(std::int64_t ms);

// UTF-8: validity check, and repair (every invalid sequence becomes U+FFFD; never throws).
// True when the JSON text nests arrays/objects at most `max_depth` deep (strings skipped). Run
// before parsing untrusted JSON: the parse is iterative, but copying and printing a value recurse.
bool json_nesting_within(std::string_view text, int max_depth);

bool is_valid_utf8(std::string_view s);
std::string repair_utf8(std::string_view s);
// Appends the UTF-8 encoding of `cp`; surrogates and values above U+10FFFF become U+FFFD.
void append_utf8(std::string& out, std::uint32_t cp);

}  // namespace quarry::core
