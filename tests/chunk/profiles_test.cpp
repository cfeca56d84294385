// The none and code profiles, option checks, and the no_content / too_many_chunks errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chunk/chunker.h"
#include "chunk_checks.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::chunk {
namespace {

using test::approx;
using test::check_invariants;
using test::options;

Code code_of(const std::string& md, const ChunkOptions& o) {
  return quarry::testing::code_of([&] { chunk_markdown(md, o, approx()); });
}

std::string long_text(int words) {
  std::string s;
  for (int i = 0; i < words; ++i)
    s += "word" + std::to_string(i % 10) + (i % 12 == 11 ? ". " : " ");
  return s;
}

TEST(NoneProfile, OneTrimmedChunkForTheWholeDocument) {
  std::string md = "\n\n  # Title\n\nBody text.\n\n## Sub\n\nMore.  \n\n";
  ChunkOptions o = options("none", 512, 64);
  auto chunks = chunk_markdown(md, o, approx());
  ASSERT_TRUE(check_invariants(md, chunks, o));
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].offset, 4u);
  EXPECT_EQ(chunks[0].text, "# Title\n\nBody text.\n\n## Sub\n\nMore.");
  EXPECT_TRUE(chunks[0].heading_path.empty());
  EXPECT_FALSE(chunks[0].parent_chunk);
}

TEST(NoneProfile, TrimsUnicodeSpacesAndByteOrderMarkToo) {
  std::string md = "\xEF\xBB\xBF\u00a0 body \u2003text\u3000\u00a0\n";
  auto chunks = chunk_markdown(md, options("none", 512, 64), approx());
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].text, "body \u2003text");
  EXPECT_EQ(chunks[0].offset, 6u);
}

TEST(NoneProfile, IgnoresTheBudgets) {
  std::string md = long_text(3000);
  ChunkOptions o = options("none", 16, 500);  // out of bounds, but unused under none
  auto chunks = chunk_markdown(md, o, approx());
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_GT(chunks[0].token_count, 3000);
  EXPECT_EQ(chunks[0].token_count, approx().count(chunks[0].text));
}

TEST(CodeProfile, CutsAtTopLevelDefinitionsWithoutBreadcrumbs) {
  std::string src;
  for (int i = 0; i < 12; ++i) {
    src += "# helper number " + std::to_string(i) + "\n@cached\ndef helper_" + std::to_string(i) +
           "(x, y):\n    total = x + y\n    return total * " + std::to_string(i) + "\n\n";
  }
  ChunkOptions o = options("code", 64, 8);
  auto chunks = chunk_markdown(src, o, approx());
  ASSERT_TRUE(check_invariants(src, chunks, o));
  ASSERT_GE(chunks.size(), 3u);
  for (std::size_t i = 0; i + 1 < chunks.size(); ++i) {
    std::size_t end = chunks[i].offset + chunks[i].length;
    // Each window ends with a whole function; the comment and decorator go with the next one.
    EXPECT_EQ(src.compare(end, 3, "\n\n#"), 0) << chunks[i].text;
    EXPECT_LT(chunks[i + 1].offset, end) << "code windows overlap";
  }
}

TEST(CodeProfile, CutsAfterAClosingBraceAndABlankLine) {
  std::string src;
  for (int i = 0; i < 10; ++i) {
    src += "int f" + std::to_string(i) + "(int a) {\n  int b = a * 2;\n  return b + " +
           std::to_string(i) + ";\n}\n\n";
  }
  ChunkOptions o = options("code", 48, 0);
  auto chunks = chunk_markdown(src, o, approx());
  ASSERT_TRUE(check_invariants(src, chunks, o));
  ASSERT_GE(chunks.size(), 3u);
  for (const Chunk& c : chunks) {
    EXPECT_EQ(c.text.substr(0, 5), "int f") << c.text;
    EXPECT_EQ(c.text.back(), '}') << c.text;
  }
}

TEST(CodeProfile, ShortFileIsOneChunk) {
  std::string src = "package main\n\nfunc main() {}\n";
  ChunkOptions o = options("code", 512, 64);
  auto chunks = chunk_markdown(src, o, approx());
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].text, "package main\n\nfunc main() {}");
  EXPECT_FALSE(chunks[0].parent_chunk);
}

TEST(Chunking, EmptyOrWhiteSpaceOnlyIsNoContent) {
  for (const char* profile : {"none", "prose", "code"}) {
    ChunkOptions o = options(profile, 512, 64);
    EXPECT_EQ(code_of("", o), Code::no_content) << profile;
    EXPECT_EQ(code_of(" \n\t\n  \n", o), Code::no_content) << profile;
    EXPECT_EQ(code_of("\u00a0 \u3000\n", o), Code::no_content) << profile;
    EXPECT_EQ(code_of("x", o), Code::ok) << profile;
  }
}

TEST(Chunking, TooManyChunksNamesCountAndLimit) {
  std::string md;
  for (int i = 0; i < 50; ++i) md += "## Section " + std::to_string(i) + "\n\nText.\n\n";
  ChunkOptions o = options("prose", 512, 64);
  o.max_chunks = 10;
  try {
    chunk_markdown(md, o, approx());
    FAIL() << "expected too_many_chunks";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::too_many_chunks);
    EXPECT_EQ(e.details().at("limit"), "10");
    int estimate = std::stoi(e.details().at("count"));
    EXPECT_GE(estimate, 30);  // extrapolated: the planner stops at the 11th chunk
    EXPECT_LE(estimate, 70);
    EXPECT_NE(e.message().find("10"), std::string::npos) << e.message();
  }
  o.max_chunks = 50;
  EXPECT_EQ(chunk_markdown(md, o, approx()).size(), 50u);
}

TEST(Chunking, TooManyChunksAppliesToWindowsAndCode) {
  std::string md = long_text(20000);
  for (const char* profile : {"prose", "code"}) {
    ChunkOptions o = options(profile, 16, 0);
    o.max_chunks = 100;
    EXPECT_EQ(code_of(md, o), Code::too_many_chunks) << profile;
  }
}

TEST(Chunking, RefusesOutOfBoundsOptions) {
  auto field_of = [](const ChunkOptions& o) -> std::string {
    try {
      validate_chunk_options(o);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::invalid_argument);
      return e.details().at("field");
    }
    return "";
  };
  EXPECT_EQ(field_of(options("poetry", 512, 64)), "chunking.profile");
  EXPECT_EQ(field_of(options("prose", 15, 0)), "chunking.max_tokens");
  EXPECT_EQ(field_of(options("code", 8192, 0)), "chunking.max_tokens");
  EXPECT_EQ(field_of(options("prose", 100, 51)), "chunking.overlap_tokens");
  EXPECT_EQ(field_of(options("prose", 100, -1)), "chunking.overlap_tokens");
  EXPECT_EQ(field_of(options("prose", 100, 50)), "");
  EXPECT_EQ(field_of(options("code", 16, 8)), "");
  EXPECT_EQ(field_of(options("none", 1, 99)), "");
  EXPECT_EQ(code_of("text", options("prose", 8, 0)), Code::invalid_argument);
}

}  // namespace
}  // namespace quarry::chunk
