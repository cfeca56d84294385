// Grep mode (SPEC §4): RE2 over the Markdown files of one KB. Linear time, so an untrusted
// pattern cannot hang the process.
//
// Semantics, as in grep: a file is a sequence of '\n'-terminated lines (a last line without '\n'
// counts; nothing after a final '\n' does). A match never spans lines (RE2 never_nl: \s, [^x]
// and . never match '\n'); ^ and $ match at line boundaries. A pattern that can match the empty
// string (a*, $, "") matches every line. The front-matter block is a first line "---" up to the
// next line that is exactly "---"; an unclosed block is ordinary text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace quarry::search {

struct GrepOptions {
  std::string pattern;
  bool literal = false;  // pattern is a fixed string
  bool ignore_case = false;
  bool word = false;    // whole words only: the pattern between word boundaries (\b ... \b)
  bool invert = false;  // report the lines without a match instead
  // Lines of context before / after each match. Every match carries its own context, so nearby
  // matches may repeat lines (a match line can be another match's context). With
  // skip_front_matter, context stops at the front matter too.
  int before_context = 0;
  int after_context = 0;
  std::size_t max_matches = 1000;  // stop after this many matching lines; truncated = true
  bool skip_front_matter = true;   // do not match inside the YAML front-matter block
  // Memory budget of the compiled pattern (RE2::Options::max_mem: program + DFA cache). A pattern
  // whose program does not fit is refused as invalid_argument instead of compiling for seconds.
  std::int64_t max_pattern_memory = std::int64_t{64} << 20;
};

struct GrepFile {
  std::string doc_id;
  std::string filename;  // original document name, for display
  std::string path;      // the Markdown file on disk
};

struct GrepLine {
  int line = 0;  // 1-based line number in the file
  std::string text;
};

struct GrepMatch {
  std::string doc_id;
  std::string filename;
  int line = 0;      // 1-based, counting front-matter lines: the number in the file on disk
  std::string text;  // the matching line, without '\n'
  // Byte [begin, end) of each non-overlapping, non-empty match in text, left to right. Empty when
  // the line matched only the empty string. Highlighting gets bounded work per line: at most
  // 1,024 searches and about 32 times the line's length in bytes scanned; ranges past that are
  // left out (the line itself still matches).
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::vector<GrepLine> before, after;
};

struct GrepResult {
  std::vector<GrepMatch> matches;  // ordered by file (input order), then line
  bool truncated = false;  // more than max_matches lines matched; the first max_matches are here
  // Counted over the files up to and including the one holding the first match beyond the bound
  // (all files when not truncated), so the counts are the same for any number of threads.
  std::size_t files_searched = 0;
  std::size_t files_matched = 0;  // files with at least one match in `matches`
  std::size_t files_skipped = 0;  // vanished, unreadable or not a regular file
};

// Throws Error(invalid_argument) with RE2's message for a bad pattern (also with no files).
// Files that vanished between listing and reading are skipped. `threads` <= 0 means hardware
// concurrency; the result does not depend on it.
GrepResult grep_files(const std::vector<GrepFile>& files, const GrepOptions& opts, int threads = 0);

}  // namespace quarry::search
