// The converter port (SPEC §2): bytes of one uploaded file -> clean Markdown.
// One file per format implements it; the registry picks one by file extension.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace quarry::convert {

struct ConvertInput {
  std::string_view bytes;
  std::string filename;   // original name as uploaded (no directories)
  std::string extension;  // lower-case, without the dot ("pdf", "md"); may be empty
};

struct ConvertResult {
  std::string markdown;               // cleaned, valid UTF-8, '\n' newlines
  std::string title;                  // best guess (first heading, <title>, PDF title...) or ""
  std::string converter;              // id of the converter that produced it ("html", "pdf"...)
  std::vector<std::string> warnings;  // non-fatal notes (e.g. "invalid UTF-8 replaced")
};

class Converter {
 public:
  virtual ~Converter() = default;
  virtual std::string id() const = 0;
  // Extensions (lower-case, no dot) this converter claims.
  virtual std::vector<std::string> extensions() const = 0;
  // False when the engine library is missing at run time (-> engine_unavailable).
  virtual bool available() const { return true; }
  // Throws quarry::Error (corrupt_input, payload_too_large, ...) on bad input; never crashes.
  virtual ConvertResult convert(const ConvertInput& in) const = 0;
};

class Registry {
 public:
  // All built-in converters registered.
  static const Registry& builtin();

  void add(std::unique_ptr<Converter> c);
  // nullptr when no converter claims the extension.
  const Converter* find(const std::string& extension) const;
  std::vector<std::string> supported_extensions() const;

  // Picks the converter, converts, cleans. Errors: unsupported_format (no converter),
  // engine_unavailable (library missing), corrupt_input (bytes are not what the name says),
  // no_content (nothing left after cleaning).
  ConvertResult convert(const ConvertInput& in) const;

 private:
  std::vector<std::unique_ptr<Converter>> converters_;
};

// Cleaning (§2.2): '\r\n'/'\r' -> '\n', control characters dropped (tab kept), trailing
// whitespace trimmed, runs of blank lines collapsed, heading levels repaired (no jumps of more
// than one level), invalid UTF-8 replaced with U+FFFD.
// Details: C1 controls and U+FEFF are dropped too; a run of blank lines becomes one blank line
// and leading/trailing blank lines go, except inside fenced code, whose lines are kept as written
// (trailing whitespace aside) and never read as headings; a heading more than one level below
// the previous heading is raised to one below it, the first heading keeps its level. Returns ""
// when nothing but whitespace is left, otherwise text ending in exactly one '\n'. Idempotent.
std::string clean_markdown(std::string_view md);

// Front-matter block written at the top of kb/<name>/docs/<id>.md.
struct FrontMatter {
  std::string id;
  std::string filename;
  std::string source_sha256;
  std::string converter;
  std::string ingested_at;
  std::string title;
};
std::string render_front_matter(const FrontMatter& fm);
// Splits a stored file into its front matter and the Markdown body. `body_offset` is the byte
// offset of the body in `file` (the byte after the blank line that follows the closing "---");
// a file without front matter has body_offset 0. render_front_matter writes every value as a
// YAML double-quoted scalar with escapes, so parse(render(fm)) == fm for any value that is valid
// UTF-8 (invalid bytes are written as U+FFFD). Unknown keys are ignored; plain and single-quoted
// values (hand edits) are read too.
struct ParsedFile {
  FrontMatter front;
  std::size_t body_offset = 0;
};
ParsedFile parse_front_matter(std::string_view file);

}  // namespace quarry::convert
