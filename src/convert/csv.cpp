// CSV/TSV -> one GFM table. The parser follows RFC 4180 (quoted fields, "" escapes, newlines
// inside quotes, CRLF) and is lenient where real files are not: a stray quote inside an unquoted
// field is literal, an unterminated quote runs to the end of the file (with a warning).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "convert/builtin.h"
#include "convert/text_util.h"

namespace quarry::convert {
namespace {

using Row = std::vector<std::string>;

// Excel in many locales writes ';'-separated ".csv", and some tools write tab-separated files
// named ".csv": pick whichever of ',', ';' and tab is most frequent on the first line (outside
// quotes), preferring ','.
char sniff_delimiter(std::string_view text) {
  std::size_t commas = 0;
  std::size_t semis = 0;
  std::size_t tabs = 0;
  bool quoted = false;
  for (char c : text) {
    if (c == '"') quoted = !quoted;
    if (quoted) continue;
    if (c == '\n' || c == '\r') break;
    if (c == ',') ++commas;
    if (c == ';') ++semis;
    if (c == '\t') ++tabs;
  }
  if (semis > commas && semis >= tabs) return ';';
  if (tabs > commas && tabs > semis) return '\t';
  return ',';
}

class CsvParser {
 public:
  CsvParser(std::string_view text, char delim) : text_(text), delim_(delim) {}

  // Next record; false at end of input. Blank lines are skipped (they are not records).
  bool next(Row* row) {
    row->clear();
    while (pos_ < text_.size()) {
      if (text_[pos_] == '\n' || text_[pos_] == '\r') {
        skip_newline();
        continue;
      }
      bool end_of_record = false;
      while (!end_of_record) {
        row->push_back(field(&end_of_record));
        // Past the column cap the row is still consumed, but its extra cells are dropped.
        if (row->size() > column_cap_) row->pop_back(), truncated_columns_ = true;
      }
      return true;
    }
    return false;
  }

  void set_column_cap(std::size_t cap) { column_cap_ = cap; }
  bool unterminated_quote() const { return unterminated_; }
  bool truncated_columns() const { return truncated_columns_; }

 private:
  void skip_newline() {
    if (text_[pos_] == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') ++pos_;
    ++pos_;
  }

  // One field; sets *end_of_record when it ended at a newline or the end of input.
  std::string field(bool* end_of_record) {
    std::string out;
    if (pos_ < text_.size() && text_[pos_] == '"') {
      ++pos_;
      while (true) {
        if (pos_ >= text_.size()) {
          unterminated_ = true;
          break;
        }
        char c = text_[pos_++];
        if (c != '"') {
          out += c;
        } else if (pos_ < text_.size() && text_[pos_] == '"') {
          out += '"';
          ++pos_;
        } else {
          break;
        }
      }
      // Text between the closing quote and the delimiter ("a"b,) is kept, as most readers do.
    }
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == delim_) {
        ++pos_;
        return out;
      }
      if (c == '\n' || c == '\r') {
        skip_newline();
        *end_of_record = true;
        return out;
      }
      out += c;
      ++pos_;
    }
    *end_of_record = true;
    return out;
  }

  std::string_view text_;
  char delim_;
  std::size_t pos_ = 0;
  std::size_t column_cap_ = static_cast<std::size_t>(-1);
  bool unterminated_ = false;
  bool truncated_columns_ = false;
};

class CsvConverter final : public Converter {
 public:
  explicit CsvConverter(CsvLimits limits) : limits_(limits) {}
  std::string id() const override { return "csv"; }
  std::vector<std::string> extensions() const override { return {"csv", "tsv"}; }

  ConvertResult convert(const ConvertInput& in) const override {
    ConvertResult r;
    r.converter = id();
    r.title = in.filename;
    std::string text = detail::decode_text(in.bytes, "CSV", &r.warnings);
    char delim = in.extension == "tsv" ? '\t' : sniff_delimiter(text);
    CsvParser parser(text, delim);
    parser.set_column_cap(std::max<std::size_t>(1, limits_.max_columns));

    std::vector<Row> rows;
    std::size_t widest = 1;
    Row row;
    bool truncated_rows = false;
    while (parser.next(&row)) {
      // Drop records that hold only empty cells (",,," lines): nothing to search for.
      bool empty = std::all_of(row.begin(), row.end(), [](const std::string& c) {
        return detail::collapse_whitespace(c).empty();
      });
      if (empty) continue;
      std::size_t new_widest = std::max(widest, row.size());
      // Every row is padded to the widest, so the cell budget is rows x widest.
      bool over = rows.size() > limits_.max_rows ||
                  (rows.size() + 1) * new_widest > std::max(limits_.max_cells, new_widest);
      if (over) {
        truncated_rows = true;
        break;
      }
      widest = new_widest;
      rows.push_back(std::move(row));
    }
    if (parser.unterminated_quote()) r.warnings.push_back("unterminated quoted field at end");
    if (parser.truncated_columns()) {
      r.warnings.push_back("columns beyond " + std::to_string(limits_.max_columns) + " dropped");
    }
    if (truncated_rows) {
      r.warnings.push_back("table truncated to " + std::to_string(rows.size() - 1) + " data rows");
    }
    r.markdown = detail::render_table(rows);
    if (!r.markdown.empty()) r.markdown += '\n';
    return r;
  }

 private:
  CsvLimits limits_;
};

}  // namespace

std::unique_ptr<Converter> make_csv_converter(CsvLimits limits) {
  return std::make_unique<CsvConverter>(limits);
}

}  // namespace quarry::convert
