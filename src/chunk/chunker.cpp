// chunk_markdown: the three profiles of SPEC §3. Planning works on byte ranges only; chunks get
// their ids and text once the plan is complete and within max_chunks.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chunk/chunker.h"
#include "chunk/outline.h"
#include "chunk/windows.h"
#include "core/util.h"
#include "quarry/error.h"

namespace quarry::chunk {
namespace {

// A stretch of the document chunked on its own: a Markdown section, or the whole text.
struct Unit {
  std::vector<std::string> heading_path;
  bool windows_share_parent = false;  // windows cut from it are siblings under one parent id
  int chunks = 0;
};

struct Plan {
  std::vector<Unit> units;
  std::vector<PlannedChunk> chunks;
};

[[noreturn]] void bad_option(const std::string& field, const std::string& why) {
  throw Error(Code::invalid_argument, "chunking." + field + " " + why,
              {{"field", "chunking." + field}});
}

WindowSettings settings_for(const ChunkOptions& opts, bool prose) {
  WindowSettings s;
  s.max_tokens = opts.max_tokens;
  s.overlap_tokens = opts.overlap_tokens;
  s.max_chunks = static_cast<std::size_t>(opts.max_chunks);
  s.prose = prose;
  s.words = opts.words;
  return s;
}

// `none`: the whole text, trimmed, whatever its length.
void plan_none(std::string_view md, const Tokenizer& tokenizer, Plan& plan) {
  std::uint32_t b = 0;
  auto e = static_cast<std::uint32_t>(md.size());
  trim_blank(md, b, e);
  if (b == e) return;
  int tokens = tokenizer.count(md.substr(b, e - b));
  if (tokens == 0) return;
  plan.units.push_back({});
  plan.chunks.push_back({b, e, 0, tokens});
}

// `code`: one stream of overlapping windows. Code windows are not siblings of an oversize
// section: each covers different definitions, so search must not collapse them.
void plan_code(std::string_view md, const ChunkOptions& opts, const Tokenizer& tokenizer,
               Plan& plan) {
  std::vector<Mark> marks = outline_code(md);
  std::vector<ByteRange> no_verbatim;
  WindowPlanner planner(md, tokenizer, settings_for(opts, false), marks, no_verbatim);
  plan.units.push_back({});
  planner.plan(0, static_cast<std::uint32_t>(md.size()), 0, plan.chunks);
}

struct Section {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;
  int heading = -1;  // index into outline.headings; -1 for the text before the first heading
};

// A heading with nothing under it but deeper headings is a breadcrumb: it joins the section
// after it rather than standing alone as a chunk of one line.
bool is_bare_heading(const MarkdownOutline& outline, const Section& s) {
  auto it = std::upper_bound(outline.marks.begin(), outline.marks.end(), s.begin,
                             [](std::uint32_t off, const Mark& m) { return off < m.offset; });
  for (; it != outline.marks.end() && it->offset < s.end; ++it) {
    if (it->level == kTopBlock) return false;
  }
  return true;
}

std::vector<Section> sections_of(std::string_view md, const MarkdownOutline& outline) {
  std::vector<Section> out;
  const auto n = static_cast<std::uint32_t>(md.size());
  std::uint32_t first = outline.headings.empty() ? n : outline.headings[0].offset;
  if (first > 0) out.push_back({0, first, -1});
  for (std::size_t i = 0; i < outline.headings.size(); ++i) {
    std::uint32_t end = i + 1 < outline.headings.size() ? outline.headings[i + 1].offset : n;
    out.push_back({outline.headings[i].offset, end, static_cast<int>(i)});
  }
  return out;
}

// Whether section i is a bare heading that joins the deeper section after it.
bool joins_next(const MarkdownOutline& outline, const std::vector<Section>& sections,
                std::size_t i) {
  if (sections[i].heading < 0 || i + 1 >= sections.size()) return false;
  const auto level = [&](std::size_t k) {
    return outline.headings[static_cast<std::size_t>(sections[k].heading)].level;
  };
  return level(i + 1) > level(i) && is_bare_heading(outline, sections[i]);
}

std::vector<std::string> breadcrumbs(const std::vector<const Heading*>& stack) {
  std::vector<std::string> path;
  for (const Heading* h : stack) {
    if (!h->text.empty()) path.push_back(h->text);  // "# ![](logo.png)" adds nothing
  }
  return path;
}

// `prose`: a unit per heading section, with heading_path from the enclosing headings.
void plan_prose(std::string_view md, const ChunkOptions& opts, const Tokenizer& tokenizer,
                Plan& plan) {
  MarkdownOutline outline = outline_markdown(md);
  WindowPlanner planner(md, tokenizer, settings_for(opts, true), outline.marks, outline.verbatim);
  std::vector<Section> sections = sections_of(md, outline);
  std::vector<const Heading*> stack;  // enclosing headings, outermost first
  std::optional<std::uint32_t> carried_begin;
  for (std::size_t i = 0; i < sections.size(); ++i) {
    const Section& sec = sections[i];
    std::uint32_t begin = carried_begin.value_or(sec.begin);
    carried_begin.reset();
    if (sec.heading >= 0) {
      const Heading& h = outline.headings[static_cast<std::size_t>(sec.heading)];
      while (!stack.empty() && stack.back()->level >= h.level) stack.pop_back();
      stack.push_back(&h);
    }
    if (joins_next(outline, sections, i)) {
      carried_begin = begin;
      continue;
    }
    plan.units.push_back({breadcrumbs(stack), /*windows_share_parent=*/true, 0});
    int made = planner.plan(begin, sec.end, static_cast<int>(plan.units.size() - 1), plan.chunks);
    if (made == 0) plan.units.pop_back();
  }
}

std::vector<Chunk> materialize(std::string_view md, Plan& plan) {
  for (const PlannedChunk& pc : plan.chunks) ++plan.units[static_cast<std::size_t>(pc.unit)].chunks;
  std::vector<std::optional<std::string>> parents(plan.units.size());
  for (std::size_t u = 0; u < plan.units.size(); ++u) {
    if (plan.units[u].windows_share_parent && plan.units[u].chunks > 1) {
      parents[u] = core::new_uuid();
    }
  }
  std::vector<Chunk> chunks(plan.chunks.size());
  for (std::size_t i = 0; i < plan.chunks.size(); ++i) {
    const PlannedChunk& pc = plan.chunks[i];
    const auto u = static_cast<std::size_t>(pc.unit);
    Chunk& c = chunks[i];
    c.index = static_cast<int>(i);
    c.chunk_id = core::new_uuid();
    c.parent_chunk = parents[u];
    c.heading_path = plan.units[u].heading_path;
    c.offset = pc.begin;
    c.length = pc.end - pc.begin;
    c.token_count = pc.tokens;
    c.text.assign(md.substr(c.offset, c.length));
  }
  return chunks;
}

}  // namespace

void validate_chunk_options(const ChunkOptions& opts) {
  if (opts.profile != "none" && opts.profile != "prose" && opts.profile != "code") {
    bad_option("profile", "must be one of none, prose, code (got '" + opts.profile + "')");
  }
  if (opts.max_chunks < 1) {
    throw Error(Code::invalid_argument, "max_chunks must be at least 1", {{"field", "max_chunks"}});
  }
  if (opts.profile == "none") return;  // budgets do not apply to one chunk per document
  if (opts.max_tokens < kMinMaxTokens || opts.max_tokens > kMaxMaxTokens) {
    bad_option("max_tokens", "must be between " + std::to_string(kMinMaxTokens) + " and " +
                                 std::to_string(kMaxMaxTokens));
  }
  if (opts.overlap_tokens < 0 || opts.overlap_tokens > opts.max_tokens / 2) {
    bad_option("overlap_tokens", "must be between 0 and half of max_tokens (" +
                                     std::to_string(opts.max_tokens / 2) + ")");
  }
}

ChunkOptions within_model_limit(ChunkOptions o, int model_max_tokens) {
  if (model_max_tokens <= 0 || o.max_tokens <= model_max_tokens) return o;
  o.max_tokens = std::max(kMinMaxTokens, model_max_tokens);
  o.overlap_tokens = std::min(o.overlap_tokens, o.max_tokens / 2);
  return o;
}

std::vector<Chunk> chunk_markdown(std::string_view markdown, const ChunkOptions& opts,
                                  const Tokenizer& tokenizer) {
  validate_chunk_options(opts);
  if (markdown.size() >= std::numeric_limits<std::uint32_t>::max()) {
    throw Error(Code::payload_too_large, "a document must be smaller than 4 GiB to be chunked");
  }
  Plan plan;
  if (opts.profile == "none") {
    plan_none(markdown, tokenizer, plan);
  } else if (opts.profile == "code") {
    plan_code(markdown, opts, tokenizer, plan);
  } else {
    plan_prose(markdown, opts, tokenizer, plan);
  }
  if (plan.chunks.empty()) {
    throw Error(Code::no_content, "the document has no text to chunk (empty or white space only)");
  }
  return materialize(markdown, plan);
}

}  // namespace quarry::chunk
