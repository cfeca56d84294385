// md4c reports blocks and text runs but no block offsets. Text runs point into the input buffer,
// so a block starts on the line of the first run inside it; a fenced code block starts on its
// fence line, which precedes its first run; verbatim regions end on the line of their last run
// (plus the closing fence). Runs md4c synthesises (soft breaks, code newlines) point elsewhere and
// are ignored for positions.
#include <md4c.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "chunk/outline.h"

namespace quarry::chunk {

void normalise_marks(std::vector<Mark>& marks) {
  std::sort(marks.begin(), marks.end(), [](const Mark& a, const Mark& b) {
    return a.offset != b.offset ? a.offset < b.offset : a.level > b.level;
  });
  marks.erase(std::unique(marks.begin(), marks.end(),
                          [](const Mark& a, const Mark& b) { return a.offset == b.offset; }),
              marks.end());
}

namespace {

constexpr std::int64_t kUnset = -1;

struct OpenBlock {
  MD_BLOCKTYPE type = MD_BLOCK_DOC;
  bool tracked = false;         // gets a mark (cells and table sections do not)
  std::int64_t first = kUnset;  // line start of the block, once known
  std::uint32_t last_end = 0;   // end of the last text run inside (verbatim blocks only)
  char fence_char = 0;
};

bool is_verbatim(MD_BLOCKTYPE t) {
  return t == MD_BLOCK_CODE || t == MD_BLOCK_TABLE || t == MD_BLOCK_HTML;
}

class OutlineBuilder {
 public:
  explicit OutlineBuilder(std::string_view md) : md_(md) {}

  MarkdownOutline build() {
    MD_PARSER parser{};
    parser.abi_version = 0;
    parser.flags = MD_DIALECT_GITHUB;
    parser.enter_block = [](MD_BLOCKTYPE t, void* d, void* u) { return self(u)->enter(t, d); };
    parser.leave_block = [](MD_BLOCKTYPE t, void*, void* u) { return self(u)->leave(t); };
    parser.enter_span = [](MD_SPANTYPE t, void* d, void* u) { return self(u)->span(t, d); };
    parser.leave_span = [](MD_SPANTYPE, void*, void*) { return 0; };
    parser.text = [](MD_TEXTTYPE, const MD_CHAR* p, MD_SIZE n, void* u) {
      return self(u)->text(p, n);
    };
    md_parse(md_.data(), static_cast<MD_SIZE>(md_.size()), &parser, this);
    normalise_marks(out_.marks);
    std::sort(out_.verbatim.begin(), out_.verbatim.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
    return std::move(out_);
  }

 private:
  static OutlineBuilder* self(void* u) { return static_cast<OutlineBuilder*>(u); }

  int enter(MD_BLOCKTYPE type, void* detail) {
    OpenBlock b;
    b.type = type;
    b.tracked = type != MD_BLOCK_DOC && type != MD_BLOCK_THEAD && type != MD_BLOCK_TBODY &&
                type != MD_BLOCK_TH && type != MD_BLOCK_TD;
    if (type == MD_BLOCK_H && stack_.size() == 1) {
      in_top_heading_ = true;
      heading_level_ = static_cast<int>(static_cast<MD_BLOCK_H_DETAIL*>(detail)->level);
      heading_text_.clear();
    }
    if (b.tracked) ++pending_;
    if (is_verbatim(type)) verbatim_open_ = static_cast<int>(stack_.size());
    std::int64_t info_at = kUnset;
    if (type == MD_BLOCK_CODE) {
      const auto* cd = static_cast<MD_BLOCK_CODE_DETAIL*>(detail);
      b.fence_char = cd->fence_char;
      if (cd->info.size > 0) info_at = offset_of(cd->info.text);
    }
    stack_.push_back(b);
    // The info string sits on the fence line itself: it anchors even an empty fenced block.
    if (info_at != kUnset) locate(static_cast<std::uint32_t>(info_at), 0, /*on_fence=*/true);
    return 0;
  }

  int leave(MD_BLOCKTYPE type) {
    OpenBlock b = stack_.back();
    stack_.pop_back();
    if (b.tracked && b.first == kUnset) --pending_;
    bool top = stack_.size() == 1;
    if (b.tracked && b.first != kUnset) {
      out_.marks.push_back({static_cast<std::uint32_t>(b.first), top ? kTopBlock : kInnerBlock});
    }
    if (is_verbatim(type)) {
      verbatim_open_ = -1;
      if (b.first != kUnset) {
        out_.verbatim.push_back({static_cast<std::uint32_t>(b.first), verbatim_end(b)});
      }
    }
    if (type == MD_BLOCK_H && top) {
      in_top_heading_ = false;
      if (b.first != kUnset) {
        out_.headings.push_back(
            {static_cast<std::uint32_t>(b.first), heading_level_, collapse(heading_text_)});
      }
    }
    return 0;
  }

  // Link targets and image sources are input text that no text run reports ("![](a.png)").
  int span(MD_SPANTYPE type, void* detail) {
    const MD_ATTRIBUTE* a = nullptr;
    if (type == MD_SPAN_A) a = &static_cast<MD_SPAN_A_DETAIL*>(detail)->href;
    if (type == MD_SPAN_IMG) a = &static_cast<MD_SPAN_IMG_DETAIL*>(detail)->src;
    if (a && a->size > 0) {
      std::int64_t at = offset_of(a->text);
      if (at != kUnset) locate(static_cast<std::uint32_t>(at), a->size);
    }
    return 0;
  }

  int text(const MD_CHAR* p, MD_SIZE n) {
    if (in_top_heading_ && p) heading_text_.append(p, n);
    std::int64_t at = offset_of(p);
    if (at != kUnset) locate(static_cast<std::uint32_t>(at), n);
    return 0;
  }

  // Input text at [at, at+n) was seen inside every open block.
  void locate(std::uint32_t at, MD_SIZE n, bool on_fence = false) {
    if (verbatim_open_ >= 0) {
      auto& v = stack_[static_cast<std::size_t>(verbatim_open_)];
      v.last_end = std::max<std::uint32_t>(v.last_end, at + n);
    }
    if (pending_ == 0) return;
    std::uint32_t anchor = line_start(at);
    const OpenBlock& top = stack_.back();
    if (!on_fence && top.type == MD_BLOCK_CODE && top.fence_char && top.first == kUnset) {
      anchor = fence_line(anchor, top.fence_char);
    }
    // Outer blocks were opened first, so once one is located all below it are too.
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (!it->tracked) continue;
      if (it->first != kUnset) break;
      it->first = anchor;
      --pending_;
    }
  }

  std::int64_t offset_of(const MD_CHAR* p) const {
    auto a = reinterpret_cast<std::uintptr_t>(p);
    auto base = reinterpret_cast<std::uintptr_t>(md_.data());
    if (!p || a < base || a >= base + md_.size()) return kUnset;
    return static_cast<std::int64_t>(a - base);
  }

  std::uint32_t line_start(std::uint32_t at) const {
    while (at > 0 && md_[at - 1] != '\n') --at;
    return at;
  }

  std::uint32_t line_end(std::uint32_t at) const {
    const void* nl = std::memchr(md_.data() + at, '\n', md_.size() - at);
    return nl ? static_cast<std::uint32_t>(static_cast<const char*>(nl) - md_.data())
              : static_cast<std::uint32_t>(md_.size());
  }

  // The line [b, e) without indentation, blockquote markers and list markers.
  std::string_view stripped(std::uint32_t b, std::uint32_t e) const {
    std::string_view l = md_.substr(b, e - b);
    for (;;) {
      std::size_t k = l.find_first_not_of(" \t>");
      if (k == std::string_view::npos) return {};
      l.remove_prefix(k);
      std::size_t m = 0;
      while (m < l.size() && m < 9 && l[m] >= '0' && l[m] <= '9') ++m;
      bool bullet = m == 0 && (l[0] == '-' || l[0] == '+' || l[0] == '*');
      bool ordinal = m > 0 && m < l.size() && (l[m] == '.' || l[m] == ')');
      std::size_t marker = bullet ? 1 : ordinal ? m + 1 : 0;
      if (marker == 0 || marker >= l.size() || (l[marker] != ' ' && l[marker] != '\t')) return l;
      l.remove_prefix(marker);
    }
  }

  bool is_fence(std::string_view l, char c) const {
    return l.size() >= 3 && l[0] == c && l[1] == c && l[2] == c;
  }

  // The opening fence: the first non-blank line above the first line of content.
  std::uint32_t fence_line(std::uint32_t content_line, char fence) const {
    std::uint32_t at = content_line;
    while (at > 0) {
      std::uint32_t prev = line_start(at - 1);
      std::string_view l = stripped(prev, at - 1);
      if (!l.empty() && l.find_first_not_of(" \t\r") != std::string_view::npos) {
        return is_fence(l, fence) ? prev : content_line;
      }
      at = prev;
    }
    return content_line;
  }

  // End of the last content line, extended over a closing fence below it.
  std::uint32_t verbatim_end(const OpenBlock& b) const {
    std::uint32_t end = line_end(std::max<std::uint32_t>(b.last_end, b.first));
    if (!b.fence_char) return end;
    std::uint32_t at = end;
    while (at < md_.size()) {
      std::uint32_t next_end = line_end(at + 1);
      std::string_view l = stripped(at + 1, next_end);
      if (is_fence(l, b.fence_char)) return next_end;
      if (l.find_first_not_of(" \t\r") != std::string_view::npos) return end;
      at = next_end;
    }
    return end;
  }

  static std::string collapse(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
      bool ws = c == ' ' || c == '\t' || c == '\n' || c == '\r';
      if (ws) {
        if (!out.empty() && out.back() != ' ') out.push_back(' ');
      } else {
        out.push_back(c);
      }
    }
    if (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
  }

  std::string_view md_;
  MarkdownOutline out_;
  std::vector<OpenBlock> stack_;
  int pending_ = 0;         // tracked open blocks not yet located
  int verbatim_open_ = -1;  // stack index of the open verbatim block (they never nest)
  bool in_top_heading_ = false;
  int heading_level_ = 0;
  std::string heading_text_;
};

}  // namespace

MarkdownOutline outline_markdown(std::string_view md) {
  return OutlineBuilder(md).build();
}

}  // namespace quarry::chunk
