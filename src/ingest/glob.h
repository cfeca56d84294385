#pragma once

#include <string_view>

namespace quarry::ingest {

// Glob match on '/'-separated relative paths: `*` and `?` stay within one segment, `**` spans
// segments, `[...]` is a character class. A pattern without '/' also matches the last segment
// alone, as in .gitignore ("*.pdf" matches "a/b/c.pdf").
bool glob_match(std::string_view pattern, std::string_view path);

}  // namespace quarry::ingest
