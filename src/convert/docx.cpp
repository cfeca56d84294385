// DOCX -> Markdown via libzip + pugixml. Reads word/document.xml (paragraphs, headings, lists,
// tables, bold/italic, external hyperlinks) with help from styles.xml (which style is a heading
// or a list), numbering.xml (bullet or numbered) and the document's relationships (link
// targets). Every part is read through ZipReader's caps; pugixml never expands external
// entities, so hostile XML cannot reach the file system or the network.
#include <pugixml.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "convert/builtin.h"
#include "convert/text_util.h"
#include "convert/zip_reader.h"
#include "quarry/error.h"

namespace quarry::convert {
namespace {

// Nesting the walk follows (content controls in content controls, runs in hyperlinks in
// insertions...). Real documents stay far below; hostile ones are cut off, not followed.
constexpr int kMaxDepth = 32;
constexpr std::size_t kSmallPart = 4u << 20;  // rels, core properties

// Word's namespace prefix is conventionally "w:", but only the namespace is fixed: match local
// names so a document written with another prefix still converts.
std::string_view local(const pugi::xml_node& n) {
  std::string_view name = n.name();
  std::size_t colon = name.find(':');
  return colon == std::string_view::npos ? name : name.substr(colon + 1);
}

pugi::xml_node child(const pugi::xml_node& n, std::string_view name) {
  for (pugi::xml_node c : n.children()) {
    if (local(c) == name) return c;
  }
  return {};
}

std::string attr(const pugi::xml_node& n, std::string_view name) {
  for (pugi::xml_attribute a : n.attributes()) {
    std::string_view an = a.name();
    std::size_t colon = an.find(':');
    if ((colon == std::string_view::npos ? an : an.substr(colon + 1)) == name) return a.value();
  }
  return "";
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// <w:b/>, <w:b w:val="true"/> are on; <w:b w:val="0"/> is off.
bool toggle_on(const pugi::xml_node& n) {
  if (!n) return false;
  std::string v = lower(attr(n, "val"));
  return v != "0" && v != "false" && v != "off" && v != "none";
}

// False (with the parser's reason in *why) when `xml` is not well-formed.
bool parse_part(const std::string& xml, pugi::xml_document* doc, std::string* why) {
  pugi::xml_parse_result ok =
      doc->load_buffer(xml.data(), xml.size(), pugi::parse_default | pugi::parse_ws_pcdata);
  if (!ok) *why = ok.description();
  return static_cast<bool>(ok);
}

struct StyleInfo {
  int heading = 0;  // 1..9, 0 = not a heading
  std::string num_id;
  int ilvl = 0;
  bool list_name = false;     // "List Bullet", "List Number" ...
  bool ordered_name = false;  // "List Number" ...
};

// Heading level from a style name ("heading 2", "Title") or its outline level.
int heading_from(const std::string& name, const pugi::xml_node& ppr) {
  std::string n = lower(name);
  if (n == "title") return 1;
  if (n.size() == 9 && n.starts_with("heading ") && n[8] >= '1' && n[8] <= '9') return n[8] - '0';
  if (n.size() == 8 && n.starts_with("heading") && n[7] >= '1' && n[7] <= '9') return n[7] - '0';
  pugi::xml_node outline = child(ppr, "outlineLvl");
  if (outline) {
    int lvl = std::atoi(attr(outline, "val").c_str());
    if (lvl >= 0 && lvl < 9) return lvl + 1;
  }
  return 0;
}

struct Context {
  std::map<std::string, StyleInfo> styles;           // styleId -> info
  std::map<std::string, std::vector<bool>> ordered;  // numId -> per-level "is numbered"
  std::map<std::string, std::string> links;          // relationship id -> URL
  std::map<std::string, std::vector<int>> counters;  // numId -> per-level item counters
  int cut = 0;  // subtrees below kMaxDepth that were not followed (their text is lost)
};

void load_styles(const pugi::xml_document& doc, Context* ctx) {
  for (pugi::xml_node s : doc.document_element().children()) {
    if (local(s) != "style") continue;
    StyleInfo info;
    pugi::xml_node ppr = child(s, "pPr");
    std::string name = attr(child(s, "name"), "val");
    info.heading = heading_from(name, ppr);
    pugi::xml_node numpr = child(ppr, "numPr");
    info.num_id = attr(child(numpr, "numId"), "val");
    info.ilvl = std::atoi(attr(child(numpr, "ilvl"), "val").c_str());
    std::string n = lower(name);
    info.list_name = n.starts_with("list bullet") || n.starts_with("list number");
    info.ordered_name = n.starts_with("list number");
    ctx->styles[attr(s, "styleId")] = info;
  }
}

void load_numbering(const pugi::xml_document& doc, Context* ctx) {
  std::map<std::string, std::vector<bool>> abstract;
  pugi::xml_node root = doc.document_element();
  for (pugi::xml_node a : root.children()) {
    if (local(a) != "abstractNum") continue;
    std::vector<bool> levels(9, false);
    for (pugi::xml_node lvl : a.children()) {
      if (local(lvl) != "lvl") continue;
      int i = std::atoi(attr(lvl, "ilvl").c_str());
      std::string fmt = attr(child(lvl, "numFmt"), "val");
      if (i >= 0 && i < 9) levels[static_cast<std::size_t>(i)] = fmt != "bullet" && fmt != "none";
    }
    abstract[attr(a, "abstractNumId")] = levels;
  }
  for (pugi::xml_node n : root.children()) {
    if (local(n) != "num") continue;
    auto it = abstract.find(attr(child(n, "abstractNumId"), "val"));
    if (it != abstract.end()) ctx->ordered[attr(n, "numId")] = it->second;
  }
}

void load_links(const pugi::xml_document& doc, Context* ctx) {
  for (pugi::xml_node r : doc.document_element().children()) {
    if (local(r) == "Relationship" && lower(attr(r, "TargetMode")) == "external") {
      ctx->links[attr(r, "Id")] = attr(r, "Target");
    }
  }
}

struct Segment {
  std::string text;
  bool bold = false;
  bool italic = false;
  bool raw = false;  // already Markdown (a link): no emphasis wrapping, no merging
};

void run_text(const pugi::xml_node& r, std::vector<Segment>* out) {
  pugi::xml_node rpr = child(r, "rPr");
  Segment seg{"", toggle_on(child(rpr, "b")), toggle_on(child(rpr, "i")), false};
  for (pugi::xml_node c : r.children()) {
    std::string_view name = local(c);
    if (name == "t")
      seg.text += c.text().get();
    else if (name == "tab")
      seg.text += ' ';
    else if (name == "br" || name == "cr")
      seg.text += '\n';
    else if (name == "noBreakHyphen")
      seg.text += '-';
  }
  if (!seg.text.empty()) out->push_back(std::move(seg));
}

std::string render_segments(std::vector<Segment> segs, bool plain);

// Runs of a paragraph, in order, through the wrappers Word puts around them (hyperlinks,
// tracked insertions, smart tags, simple fields, content controls). Deleted text is skipped.
void collect_runs(const pugi::xml_node& n, Context& ctx, int depth, std::vector<Segment>* out) {
  for (pugi::xml_node c : n.children()) {
    std::string_view name = local(c);
    if (name == "r") {
      run_text(c, out);
    } else if (name == "del" || name == "moveFrom" || name == "pPr" || name == "rPr") {
      continue;
    } else if (depth < kMaxDepth && name == "hyperlink") {
      std::vector<Segment> inner;
      collect_runs(c, ctx, depth + 1, &inner);
      std::string text = render_segments(std::move(inner), /*plain=*/true);
      auto link = ctx.links.find(attr(c, "id"));
      if (link != ctx.links.end() && !text.empty() && !link->second.empty()) {
        out->push_back({"[" + text + "](" + link->second + ")", false, false, true});
      } else {
        out->push_back({text, false, false, false});
      }
    } else if (depth < kMaxDepth) {
      collect_runs(c, ctx, depth + 1, out);
    } else if (c.first_child()) {
      ++ctx.cut;
    }
  }
}

std::string render_segments(std::vector<Segment> segs, bool plain) {
  std::string out;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    Segment s = std::move(segs[i]);
    // Word splits text into many runs with the same formatting; merge them so emphasis is
    // "**one phrase**", not "**one** **phrase**".
    while (!s.raw && i + 1 < segs.size() && !segs[i + 1].raw && segs[i + 1].bold == s.bold &&
           segs[i + 1].italic == s.italic) {
      s.text += segs[++i].text;
    }
    const char* mark = plain || s.raw       ? ""
                       : s.bold && s.italic ? "***"
                       : s.bold             ? "**"
                       : s.italic           ? "*"
                                            : "";
    if (*mark == '\0') {
      out += s.text;
      continue;
    }
    // Edge spaces go outside the markers: "** x **" would not be emphasis.
    std::size_t b = s.text.find_first_not_of(" \n");
    if (b == std::string::npos) {
      out += s.text;
      continue;
    }
    std::size_t e = s.text.find_last_not_of(" \n") + 1;
    out += s.text.substr(0, b) + mark + s.text.substr(b, e - b) + mark + s.text.substr(e);
  }
  return out;
}

class DocxWriter {
 public:
  explicit DocxWriter(Context* ctx) : ctx_(ctx) {}

  void body(const pugi::xml_node& n, int depth) {
    for (pugi::xml_node c : n.children()) {
      std::string_view name = local(c);
      if (name == "p") {
        paragraph(c);
      } else if (name == "tbl") {
        table(c);
      } else if (name == "sdt" || name == "sdtContent" || name == "customXml" || name == "ins") {
        if (depth < kMaxDepth)
          body(c, depth + 1);
        else if (c.first_child())
          ++ctx_->cut;
      }
    }
  }

  std::string markdown() const { return out_; }
  const std::string& first_heading() const { return first_heading_; }

 private:
  void block(const std::string& text, bool list_item) {
    if (!out_.empty()) out_ += list_item && last_was_item_ ? "\n" : "\n\n";
    out_ += text;
    last_was_item_ = list_item;
  }

  void paragraph(const pugi::xml_node& p) {
    pugi::xml_node ppr = child(p, "pPr");
    std::string style = attr(child(ppr, "pStyle"), "val");
    auto it = ctx_->styles.find(style);
    StyleInfo info = it != ctx_->styles.end() ? it->second : StyleInfo{};
    if (it == ctx_->styles.end()) info.heading = heading_from(style, ppr);  // no styles.xml
    pugi::xml_node numpr = child(ppr, "numPr");
    std::string num_id = numpr ? attr(child(numpr, "numId"), "val") : info.num_id;
    int ilvl = numpr ? std::atoi(attr(child(numpr, "ilvl"), "val").c_str()) : info.ilvl;
    ilvl = std::clamp(ilvl, 0, 8);

    std::vector<Segment> segs;
    collect_runs(p, *ctx_, 0, &segs);
    if (info.heading > 0) {
      std::string text = detail::collapse_whitespace(render_segments(std::move(segs), true));
      if (text.empty()) return;
      if (first_heading_.empty()) first_heading_ = text;
      block(std::string(static_cast<std::size_t>(std::min(info.heading, 6)), '#') + " " + text,
            false);
      return;
    }
    std::string text = render_segments(std::move(segs), false);
    if (detail::collapse_whitespace(text).empty()) return;
    bool is_list = (!num_id.empty() && num_id != "0") || info.list_name;
    if (!is_list) {
      std::string para;
      std::size_t pos = 0;
      while (pos <= text.size()) {
        std::size_t end = std::min(text.find('\n', pos), text.size());
        para += detail::escape_heading_marker(text.substr(pos, end - pos));
        if (end < text.size()) para += '\n';
        pos = end + 1;
      }
      return block(para, false);
    }
    block(list_item(num_id, ilvl, info.ordered_name) + detail::collapse_whitespace(text), true);
  }

  // "- " or "N. " indented 4 spaces per level: enough to nest under either marker width and
  // never enough to become an indented code block.
  std::string list_item(const std::string& num_id, int ilvl, bool ordered_by_name) {
    auto level = static_cast<std::size_t>(ilvl);
    auto fmt = ctx_->ordered.find(num_id);
    bool ordered = fmt != ctx_->ordered.end() ? fmt->second[level] : ordered_by_name;
    std::vector<int>& counters = ctx_->counters[num_id];
    counters.resize(9, 0);
    // A new item at this level restarts the numbering of every deeper level.
    std::fill(counters.begin() + static_cast<long>(level) + 1, counters.end(), 0);
    int number = ++counters[level];
    std::string indent(4 * level, ' ');
    return indent + (ordered ? std::to_string(number) + ". " : "- ");
  }

  void table(const pugi::xml_node& tbl) {
    std::vector<std::vector<std::string>> rows;
    for (pugi::xml_node tr : tbl.children()) {
      if (local(tr) != "tr") continue;
      rows.emplace_back();
      for (pugi::xml_node tc : tr.children()) {
        if (local(tc) == "tc") rows.back().push_back(cell_text(tc));
      }
    }
    // A table without a word in it (its cells' text all cut or absent) is not content.
    bool any = false;
    for (const auto& r : rows)
      for (const auto& c : r) any = any || !c.empty();
    if (!any) return;
    std::string md = detail::render_table(rows);
    if (!md.empty()) block(md, false);
  }

  // A cell's paragraphs (and any nested table's text) as one line.
  std::string cell_text(const pugi::xml_node& tc) {
    std::string out;
    std::vector<std::pair<pugi::xml_node, int>> stack{{tc, 0}};
    while (!stack.empty()) {
      auto [n, depth] = stack.back();
      stack.pop_back();
      if (local(n) == "p") {
        std::vector<Segment> segs;
        collect_runs(n, *ctx_, 0, &segs);
        out += render_segments(std::move(segs), false) + " ";
        continue;
      }
      if (depth >= kMaxDepth) {
        if (n.first_child()) ++ctx_->cut;
        continue;
      }
      std::vector<pugi::xml_node> kids(n.begin(), n.end());
      for (auto k = kids.rbegin(); k != kids.rend(); ++k) stack.emplace_back(*k, depth + 1);
    }
    return detail::collapse_whitespace(out);
  }

  Context* ctx_;
  std::string out_;
  std::string first_heading_;
  bool last_was_item_ = false;
};

class DocxConverter final : public Converter {
 public:
  explicit DocxConverter(DocxLimits limits) : limits_(limits) {}
  std::string id() const override { return "docx"; }
  std::vector<std::string> extensions() const override { return {"docx"}; }

  ConvertResult convert(const ConvertInput& in) const override {
    detail::ZipReader zip(in.bytes);
    std::optional<std::string> main = zip.read("word/document.xml", limits_.max_part_bytes);
    if (!main) {
      throw Error(Code::corrupt_input, "not a DOCX file: the archive has no word/document.xml",
                  {{"format", "docx"}});
    }
    ConvertResult r;
    r.converter = id();
    std::string why;
    // Parts other than the document only refine the output: a damaged one costs a warning.
    auto optional_part = [&](const char* name, std::size_t cap, auto&& load) {
      std::optional<std::string> xml = zip.read(name, cap);
      if (!xml) return;
      pugi::xml_document part;
      if (parse_part(*xml, &part, &why)) {
        load(part);
      } else {
        r.warnings.push_back(std::string(name) + " ignored: " + why);
      }
    };
    Context ctx;
    const std::size_t small = std::min(kSmallPart, limits_.max_part_bytes);
    optional_part("word/styles.xml", limits_.max_part_bytes,
                  [&](const pugi::xml_document& d) { load_styles(d, &ctx); });
    optional_part("word/numbering.xml", limits_.max_part_bytes,
                  [&](const pugi::xml_document& d) { load_numbering(d, &ctx); });
    optional_part("word/_rels/document.xml.rels", small,
                  [&](const pugi::xml_document& d) { load_links(d, &ctx); });
    optional_part("docProps/core.xml", small, [&](const pugi::xml_document& d) {
      r.title = detail::tidy_title(child(d.document_element(), "title").text().get());
    });

    pugi::xml_document doc;
    if (!parse_part(*main, &doc, &why)) {
      throw Error(Code::corrupt_input, "word/document.xml is not well-formed XML: " + why,
                  {{"format", "docx"}, {"part", "word/document.xml"}});
    }
    main.reset();  // the DOM holds its own copy; do not keep both alive
    pugi::xml_node body = child(doc.document_element(), "body");
    if (!body) {
      throw Error(Code::corrupt_input, "word/document.xml has no <w:body>", {{"format", "docx"}});
    }
    DocxWriter writer(&ctx);
    writer.body(body, 0);
    r.markdown = writer.markdown() + "\n";
    if (ctx.cut > 0) {
      // Hostile (or broken) nesting: the text below the limit is not followed. Say so, rather
      // than a silent no_content or a document with holes.
      const std::string limit = std::to_string(kMaxDepth);
      if (r.markdown.find_first_not_of(" \t\r\n") == std::string::npos)
        throw Error(Code::no_content,
                    "the document's text is nested deeper than " + limit +
                        " levels (content controls, hyperlinks or tracked changes inside each "
                        "other), where conversion stops, and there is no text above that depth; "
                        "flatten it (save it again without the nested controls, or as .txt or "
                        ".md) and ingest it again",
                    {{"format", "docx"}, {"reason", "nesting_limit"}, {"limit", limit}});
      r.warnings.push_back("text nested deeper than " + limit + " levels was cut (" +
                           std::to_string(ctx.cut) +
                           " nested parts not converted); flatten the document to keep it");
    }
    if (r.title.empty()) r.title = writer.first_heading();
    return r;
  }

 private:
  DocxLimits limits_;
};

}  // namespace

std::unique_ptr<Converter> make_docx_converter(DocxLimits limits) {
  return std::make_unique<DocxConverter>(limits);
}

}  // namespace quarry::convert
