// Grep mode (SPEC §4): RE2 over the Markdown files of one KB. Linear time, so an untrusted
// pattern cannot hang the process.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace quarry::search {

struct GrepOptions {
  std::string pattern;
  bool literal = false;      // pattern is a fixed string
  bool ignore_case = false;
  int before_context = 0;    // lines of context before / after each match
  int after_context = 0;
  std::size_t max_matches = 1000;  // stop after this many matching lines; truncated = true
  bool skip_front_matter = true;   // do not match inside the YAML front-matter block
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
  int line = 0;                                       // 1-based
  std::string text;                                   // the matching line, without '\n'
  std::vector<std::pair<std::size_t, std::size_t>> ranges;  // byte [begin,end) of each match in text
  std::vector<GrepLine> before, after;
};

struct GrepResult {
  std::vector<GrepMatch> matches;  // ordered by file (input order), then line
  bool truncated = false;
  std::size_t files_searched = 0;
  std::size_t files_matched = 0;
};

// Throws Error(invalid_argument) with RE2's message for a bad pattern. Files that vanished
// between listing and reading are skipped. `threads` <= 0 means hardware concurrency.
GrepResult grep_files(const std::vector<GrepFile>& files, const GrepOptions& opts, int threads = 0);

}  // namespace quarry::search
