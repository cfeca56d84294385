// A rough throughput reading, not an assertion (DESIGN.md: no timed assertions in tests). Run with
//   ./test_chunk --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "chunk/chunker.h"
#include "chunk_checks.h"

namespace quarry::chunk {
namespace {

using test::approx;
using test::MarkdownGen;
using test::options;

double mb_per_s(const std::vector<std::string>& docs, const ChunkOptions& o, std::size_t& chunks) {
  std::size_t bytes = 0;
  chunks = 0;
  auto start = std::chrono::steady_clock::now();
  for (const std::string& d : docs) {
    chunks += chunk_markdown(d, o, approx()).size();
    bytes += d.size();
  }
  std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
  return static_cast<double>(bytes) / 1e6 / s.count();
}

// Abstract-sized documents (like SciFact's 5,183 abstracts) and one large generated document.
TEST(ChunkThroughput, DISABLED_Report) {
  MarkdownGen gen(1);
  std::vector<std::string> abstracts;
  std::size_t total = 0;
  while (total < 8'000'000) {
    std::string d = "# " + gen.sentence() + "\n\n";
    for (int i = 0; i < 12; ++i) d += gen.sentence() + " ";
    total += d.size();
    abstracts.push_back(std::move(d));
  }
  // English-like ASCII, closer to SciFact than the generator's mix of scripts.
  const char* kEnglish[] = {
      "the",        "of",      "protein",   "cells",         "a",    "expression",
      "we",         "results", "in",        "mitochondrial", "and",  "significantly",
      "patients",   "with",    "increased", "was",           "risk", "treatment",
      "associated", "to"};
  std::mt19937 rng(3);
  std::vector<std::string> english;
  std::size_t english_total = 0;
  while (english_total < 8'000'000) {
    std::string d = "# Title of the study\n\n";
    for (int w = 0; w < 250; ++w)
      d += std::string(kEnglish[rng() % 20]) + (w % 17 == 16 ? ". " : " ");
    english_total += d.size();
    english.push_back(std::move(d));
  }
  std::string big;
  while (big.size() < 8'000'000) big += gen.document() + "\n\n# Part\n\n";
  std::size_t n = 0;
  for (const char* profile : {"prose", "code", "none"}) {
    ChunkOptions o = options(profile, 512, 64);
    o.max_chunks = 1'000'000;
    double a = mb_per_s(abstracts, o, n);
    std::printf("%-5s abstracts: %7.1f MB/s (%zu docs, %zu chunks)\n", profile, a, abstracts.size(),
                n);
    double b = mb_per_s({big}, o, n);
    std::printf("%-5s one 8 MB doc: %7.1f MB/s (%zu chunks)\n", profile, b, n);
    double e = mb_per_s(english, o, n);
    std::printf("%-5s English abstracts: %7.1f MB/s (%zu docs, %zu chunks)\n", profile, e,
                english.size(), n);
  }
  for (int max : {64, 128}) {
    ChunkOptions o = options("prose", max, max / 8);
    o.max_chunks = 1'000'000;
    double b = mb_per_s({big}, o, n);
    std::printf("prose max %d one 8 MB doc: %7.1f MB/s (%zu chunks)\n", max, b, n);
  }
  auto start = std::chrono::steady_clock::now();
  std::size_t tokens = 0;
  for (const std::string& d : abstracts) tokens += static_cast<std::size_t>(approx().count(d));
  std::chrono::duration<double> s = std::chrono::steady_clock::now() - start;
  std::printf("approx tokenizer count: %7.1f MB/s (%zu tokens)\n",
              static_cast<double>(total) / 1e6 / s.count(), tokens);
  start = std::chrono::steady_clock::now();
  tokens = 0;
  for (const std::string& d : english) tokens += static_cast<std::size_t>(approx().count(d));
  s = std::chrono::steady_clock::now() - start;
  std::printf("approx tokenizer count, English: %7.1f MB/s (%zu tokens)\n",
              static_cast<double>(english_total) / 1e6 / s.count(), tokens);
}

}  // namespace
}  // namespace quarry::chunk
