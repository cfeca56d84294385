// Private to grep.cpp: the compiled pattern and the scan of one file's bytes. Split out so the
// hot loop can be read (and tested through grep_files) apart from file I/O and threading.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "search/grep.h"

namespace re2 {
class RE2;
}

namespace quarry::search::detail {

// A pattern compiled once per grep_files call and shared by all workers (RE2 is thread-safe for
// matching). Matches never contain '\n', so every match lies within one line.
class LineMatcher {
 public:
  // Throws Error(invalid_argument) for a pattern RE2 refuses or that exceeds the memory budget.
  explicit LineMatcher(const GrepOptions& opts);
  ~LineMatcher();
  LineMatcher(const LineMatcher&) = delete;
  LineMatcher& operator=(const LineMatcher&) = delete;

  // The leftmost match lying within text[from, to) (possibly empty, even at `to`), reported as
  // [*begin, *end). The whole of `text` is the context for ^, $ and \b, so a search that starts
  // mid-line does not treat `from` as a line start.
  bool find(std::string_view text, std::size_t from, std::size_t to, std::size_t* begin,
            std::size_t* end) const;

 private:
  std::string literal_;  // the needle of the memmem path (case-sensitive fixed strings)
  bool use_memmem_ = false;
  bool never_ = false;  // a fixed string with '\n' in it: no line can contain it
  std::unique_ptr<re2::RE2> re_;
};

// Offset of the first byte after a leading "---\n ... \n---\n" YAML block, or 0 when the text does
// not open with one (or never closes it: then nothing is front matter).
std::size_t front_matter_end(std::string_view text);

// Scans one file's bytes for matching lines, appending at most `max_lines` of them to `out` in
// line order (doc_id and filename are left for the caller). Returns how many it appended.
std::size_t scan_text(std::string_view text, const LineMatcher& matcher, const GrepOptions& opts,
                      std::size_t max_lines, std::vector<GrepMatch>* out);

}  // namespace quarry::search::detail
