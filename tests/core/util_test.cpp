// Ids, hashes, clock and UTF-8 helpers of core/util.h.
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>

#include "core/util.h"

namespace quarry::core {
namespace {

constexpr const char* kCrockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

std::int64_t ulid_time_ms(const std::string& ulid) {
  // The first 10 characters carry the 48-bit millisecond timestamp.
  std::int64_t v = 0;
  for (int i = 0; i < 10; ++i)
    v = v * 32 + static_cast<std::int64_t>(std::string(kCrockford).find(ulid[i]));
  return v;
}

TEST(Ulid, Is26CrockfordCharacters) {
  for (int i = 0; i < 200; ++i) {
    std::string id = new_ulid();
    ASSERT_EQ(id.size(), 26u);
    for (char c : id) EXPECT_NE(std::string(kCrockford).find(c), std::string::npos) << id;
    EXPECT_LE(id[0], '7') << "first character carries only 3 bits: " << id;
  }
}

TEST(Ulid, StrictlyIncreasingOver10000Calls) {
  std::string prev = new_ulid();
  for (int i = 0; i < 10000; ++i) {
    std::string id = new_ulid();
    ASSERT_LT(prev, id) << "call " << i;
    prev = id;
  }
}

TEST(Ulid, TimePrefixIsTheCurrentMillisecond) {
  std::int64_t before = now_ms();
  std::string id = new_ulid();
  std::int64_t after = now_ms();
  // Monotonic ids may run ahead of the clock by the ids minted in the same millisecond, never
  // behind it.
  EXPECT_GE(ulid_time_ms(id), before - 1);
  EXPECT_LE(ulid_time_ms(id), after + 1000);
}

TEST(Uuid, IsVersion4LowerCaseWithHyphens) {
  static const std::regex re("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string u = new_uuid();
    EXPECT_TRUE(std::regex_match(u, re)) << u;
    seen.insert(u);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // Embedded NUL bytes count.
  EXPECT_NE(sha256_hex(std::string("a\0b", 3)), sha256_hex("ab"));
}

TEST(Clock, Iso8601UtcWithMilliseconds) {
  EXPECT_EQ(iso8601_utc(0), "1970-01-01T00:00:00.000Z");
  EXPECT_EQ(iso8601_utc(1700000000123), "2023-11-14T22:13:20.123Z");
}

TEST(Utf8, ValidSequencesAreAccepted) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii"));
  EXPECT_TRUE(is_valid_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));  // é € 😀
  EXPECT_TRUE(is_valid_utf8("\xF4\x8F\xBF\xBF"));                           // U+10FFFF
  EXPECT_TRUE(is_valid_utf8("\xED\x9F\xBF"));                               // U+D7FF
  EXPECT_TRUE(is_valid_utf8(std::string("\0", 1)));
}

TEST(Utf8, OverlongEncodingsAreInvalid) {
  EXPECT_FALSE(is_valid_utf8("\xC0\xAF"));  // '/' in two bytes
  EXPECT_FALSE(is_valid_utf8("\xC1\xBF"));
  EXPECT_FALSE(is_valid_utf8("\xE0\x80\xAF"));      // '/' in three bytes
  EXPECT_FALSE(is_valid_utf8("\xF0\x80\x80\xAF"));  // '/' in four bytes
}

TEST(Utf8, SurrogatesAndOutOfRangeAreInvalid) {
  EXPECT_FALSE(is_valid_utf8("\xED\xA0\x80"));      // U+D800
  EXPECT_FALSE(is_valid_utf8("\xED\xBF\xBF"));      // U+DFFF
  EXPECT_FALSE(is_valid_utf8("\xF4\x90\x80\x80"));  // U+110000
  EXPECT_FALSE(is_valid_utf8("\xF8\x88\x80\x80\x80"));
  EXPECT_FALSE(is_valid_utf8("\xFF"));
}

TEST(Utf8, TruncatedAndStrayBytesAreInvalid) {
  EXPECT_FALSE(is_valid_utf8("\xE2\x82"));         // € missing its last byte
  EXPECT_FALSE(is_valid_utf8("abc\xF0\x9F\x98"));  // at the end of the input
  EXPECT_FALSE(is_valid_utf8("\xC3"));
  EXPECT_FALSE(is_valid_utf8("\x80"));   // lone continuation byte
  EXPECT_FALSE(is_valid_utf8("\xC3 "));  // lead byte followed by a non-continuation
}

TEST(Utf8, RepairReplacesInvalidBytesAndKeepsTheRest) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(repair_utf8("a\xFF"
                        "b"),
            "a" + fffd + "b");
  EXPECT_EQ(repair_utf8("\x80"), fffd);
  const std::string valid = "caf\xC3\xA9 \xF0\x9F\x98\x80";
  EXPECT_EQ(repair_utf8(valid), valid);
  for (std::string bad :
       {std::string("\xC0\xAF"), std::string("\xED\xA0\x80x"), std::string("x\xE2\x82"),
        std::string("\xF4\x90\x80\x80"), std::string("ok\xC3 done"), std::string("\xF0\x9F\x98")}) {
    std::string fixed = repair_utf8(bad);
    EXPECT_TRUE(is_valid_utf8(fixed)) << bad;
    EXPECT_NE(fixed.find(fffd), std::string::npos) << bad;
  }
  // Surrounding ASCII survives repair.
  EXPECT_EQ(repair_utf8("ok\xC3 done"), "ok" + fffd + " done");
  EXPECT_EQ(repair_utf8("x\xE2\x82").substr(0, 1), "x");
}

TEST(Utf8, RepairOfArbitraryBytesIsAlwaysValid) {
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  for (int i = 255; i >= 0; --i) all.push_back(static_cast<char>(i));
  EXPECT_TRUE(is_valid_utf8(repair_utf8(all)));
  std::uint64_t x = 88172645463325252ULL;  // xorshift: deterministic junk
  for (int round = 0; round < 200; ++round) {
    std::string junk;
    for (int i = 0; i < 64; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      junk.push_back(static_cast<char>(x & 0xFF));
    }
    EXPECT_TRUE(is_valid_utf8(repair_utf8(junk)));
  }
}

}  // namespace
}  // namespace quarry::core

TEST(JsonNesting, CountsBracketsOutsideStrings) {
  using quarry::core::json_nesting_within;
  EXPECT_TRUE(json_nesting_within(R"({"a": [1, {"b": 2}]})", 3));
  EXPECT_FALSE(json_nesting_within(R"({"a": [1, {"b": 2}]})", 2));
  EXPECT_TRUE(json_nesting_within(R"({"a": "[[[[[[\"]]]]"})", 1));  // brackets in strings
  EXPECT_FALSE(json_nesting_within(std::string(1000, '[') + std::string(1000, ']'), 999));
  EXPECT_TRUE(json_nesting_within("", 0));
}
