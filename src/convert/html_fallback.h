// A linear-time safety net for HTML that gumbo would take quadratic time over: gumbo's
// tree builder scans the stack of open elements for many start tags, so hostile nesting
// (millions of unclosed <div>s in a 25 MB upload) would hang a worker for hours.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace quarry::convert::detail {

// Most elements that could be open at once, from a scan of the tags (an upper bound for
// well-formed HTML). Void elements, self-closing tags, elements HTML closes implicitly (p, li,
// td...), comments and the content of script/style/textarea/title are not counted.
std::size_t html_nesting_estimate(std::string_view html);

// The text of `html` with tags removed, block-level tags turned into paragraph breaks and the
// common character references decoded. No structure, but linear time on any input.
std::string html_to_plain_text(std::string_view html);

}  // namespace quarry::convert::detail
