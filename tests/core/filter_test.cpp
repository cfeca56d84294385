// The metadata filter language of SPEC §4: parsing errors and the reference semantics
// (core::filter_matches) that every pushdown implementation is tested against.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/filter.h"
#include "numbered.h"
#include "quarry/error.h"

namespace quarry::core {
using quarry::testing::numbered;
namespace {
using nlohmann::json;

bool matches(const std::string& filter, const std::string& metadata) {
  return filter_matches(parse_filter_text(filter), json::parse(metadata));
}

Code parse_error(const std::string& text) {
  try {
    parse_filter_text(text);
  } catch (const Error& e) {
    return e.code();
  }
  return Code::ok;
}

std::string nested_and(int depth) {
  std::string s = R"({"a": 1})";
  for (int i = 0; i < depth; ++i) s = R"({"$and": [)" + s + "]}";
  return s;
}

TEST(FilterParse, EmptyTextAndEmptyObjectMatchEverything) {
  EXPECT_TRUE(parse_filter_text("").empty());
  EXPECT_TRUE(parse_filter_text("{}").empty());
  EXPECT_TRUE(matches("", R"({"a": 1})"));
  EXPECT_TRUE(matches("{}", "{}"));
}

TEST(FilterParse, UnknownOperatorIsInvalidArgument) {
  EXPECT_EQ(parse_error(R"({"a": {"$regex": "x"}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": {"$eq": 1, "$like": 2}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"$nor": [{"a": 1}]})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"$not": {"a": 1}})"), Code::invalid_argument);
}

TEST(FilterParse, BadFieldNamesAreInvalidArgument) {
  for (const char* f : {R"({"a b": 1})", R"({".a": 1})", R"({"a.": 1})", R"({"a..b": 1})",
                        R"({"a'b": 1})", R"({"a\"b": 1})", R"({"": 1})", R"({"a;drop": 1})"})
    EXPECT_EQ(parse_error(f), Code::invalid_argument) << f;
  EXPECT_EQ(parse_error("{\"" + std::string(129, 'a') + "\": 1}"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a.b-c_d9": 1})"), Code::ok);
}

TEST(FilterParse, MembershipNeedsAnArray) {
  EXPECT_EQ(parse_error(R"({"a": {"$in": 1}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": {"$nin": "x"}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": {"$in": {"b": 1}}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": {"$in": [[1]]}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": {"$in": [1, "x", null, true]}})"), Code::ok);
}

TEST(FilterParse, OtherShapeErrors) {
  EXPECT_EQ(parse_error("{not json"), Code::invalid_argument);
  EXPECT_EQ(parse_error("[1, 2]"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"("a")"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"$and": []})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"$or": {"a": 1}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"$and": [1]})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": {}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": {"$exists": 1}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": {"$gt": true}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": {"$lt": null}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": {"$eq": [1]}})"), Code::invalid_argument);
  EXPECT_EQ(parse_error(R"({"a": [1, 2]})"), Code::invalid_argument);
}

TEST(FilterParse, NestingDepthIsBounded) {
  EXPECT_EQ(parse_error(nested_and(10)), Code::ok);
  EXPECT_EQ(parse_error(nested_and(32)), Code::ok);
  EXPECT_EQ(parse_error(nested_and(33)), Code::invalid_argument);
  EXPECT_EQ(parse_error(nested_and(200)), Code::invalid_argument);
}

// The size is bounded (evaluation is linear in it, per document): 20,000 conditions and values
// in all, each value of an $in or $nin list counting one. Up to there every filter runs.
TEST(FilterParse, SizeIsBoundedAndTheErrorSaysTheLimit) {
  auto in_clauses = [](int clauses, int values) {
    json list = json::array();
    for (int v = 0; v < values; ++v) list.push_back(v);
    json all = json::array();
    for (int c = 0; c < clauses; ++c) all.push_back({{numbered("k", c), {{"$in", list}}}});
    return json{{"$and", all}}.dump();
  };
  EXPECT_EQ(parse_error(in_clauses(300, 50)), Code::ok);   // 15,001
  EXPECT_EQ(parse_error(in_clauses(19, 1000)), Code::ok);  // 19,001
  EXPECT_EQ(parse_error(in_clauses(21, 1000)), Code::invalid_argument);
  json ors = json::array();
  for (int i = 0; i < 20000; ++i) ors.push_back({{"a", i}});
  EXPECT_EQ(parse_error(json{{"$or", ors}}.dump()), Code::invalid_argument);  // 20,001
  ors.erase(ors.begin());
  EXPECT_EQ(parse_error(json{{"$or", ors}}.dump()), Code::ok);  // 20,000
  try {
    parse_filter_text(in_clauses(21, 1000));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("at most 20000 conditions and values"), std::string::npos)
        << e.message();
    EXPECT_EQ(e.details().at("field"), "filter");
  }
}

TEST(FilterParse, ErrorNamesTheFilterField) {
  try {
    parse_filter_text(R"({"a": {"$bogus": 1}})");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.details().at("field"), "filter");
    EXPECT_NE(e.message().find("$bogus"), std::string::npos);
  }
}

TEST(FilterMatches, ImplicitEquality) {
  EXPECT_TRUE(matches(R"({"lang": "en"})", R"({"lang": "en"})"));
  EXPECT_FALSE(matches(R"({"lang": "en"})", R"({"lang": "de"})"));
  EXPECT_FALSE(matches(R"({"lang": "en"})", R"({})"));
  EXPECT_TRUE(matches(R"({"n": 5})", R"({"n": 5.0})"));
  EXPECT_TRUE(matches(R"({"ok": true})", R"({"ok": true})"));
  EXPECT_FALSE(matches(R"({"ok": true})", R"({"ok": false})"));
  EXPECT_TRUE(matches(R"({"x": null})", R"({"x": null})"));
  EXPECT_FALSE(matches(R"({"x": null})", R"({})"));
}

TEST(FilterMatches, TypeMismatchesNeverCompareEqual) {
  EXPECT_FALSE(matches(R"({"n": "5"})", R"({"n": 5})"));
  EXPECT_FALSE(matches(R"({"n": 5})", R"({"n": "5"})"));
  EXPECT_FALSE(matches(R"({"b": true})", R"({"b": 1})"));
  EXPECT_FALSE(matches(R"({"b": 1})", R"({"b": true})"));
  EXPECT_FALSE(matches(R"({"b": 0})", R"({"b": false})"));
  EXPECT_FALSE(matches(R"({"x": null})", R"({"x": 0})"));
  EXPECT_FALSE(matches(R"({"x": ""})", R"({"x": null})"));
  EXPECT_FALSE(matches(R"({"x": 1})", R"({"x": [1]})"));
  EXPECT_FALSE(matches(R"({"x": 1})", R"({"x": {"y": 1}})"));
  // Mismatched kinds are not ordered either.
  EXPECT_FALSE(matches(R"({"n": {"$gt": "4"}})", R"({"n": 5})"));
  EXPECT_FALSE(matches(R"({"n": {"$lt": 9}})", R"({"n": "5"})"));
  EXPECT_FALSE(matches(R"({"n": {"$gte": 0}})", R"({"n": true})"));
  // ... but $ne and $nin do match them.
  EXPECT_TRUE(matches(R"({"n": {"$ne": "5"}})", R"({"n": 5})"));
  EXPECT_TRUE(matches(R"({"n": {"$nin": ["5"]}})", R"({"n": 5})"));
}

TEST(FilterMatches, EqAndNe) {
  EXPECT_TRUE(matches(R"({"a": {"$eq": "x"}})", R"({"a": "x"})"));
  EXPECT_FALSE(matches(R"({"a": {"$eq": "x"}})", R"({"a": "X"})"));
  EXPECT_FALSE(matches(R"({"a": {"$ne": "x"}})", R"({"a": "x"})"));
  EXPECT_TRUE(matches(R"({"a": {"$ne": "x"}})", R"({"a": "y"})"));
  EXPECT_TRUE(matches(R"({"a": {"$ne": "x"}})", R"({})"));  // missing matches $ne
  EXPECT_TRUE(matches(R"({"a": {"$ne": null}})", R"({"a": 0})"));
  EXPECT_FALSE(matches(R"({"a": {"$ne": null}})", R"({"a": null})"));
  EXPECT_FALSE(matches(R"({"a": {"$ne": false}})", R"({"a": false})"));
}

TEST(FilterMatches, NumericRanges) {
  const char* md = R"({"year": 2021, "score": 0.5})";
  EXPECT_TRUE(matches(R"({"year": {"$gt": 2020}})", md));
  EXPECT_FALSE(matches(R"({"year": {"$gt": 2021}})", md));
  EXPECT_TRUE(matches(R"({"year": {"$gte": 2021}})", md));
  EXPECT_FALSE(matches(R"({"year": {"$gte": 2022}})", md));
  EXPECT_TRUE(matches(R"({"year": {"$lt": 2022}})", md));
  EXPECT_FALSE(matches(R"({"year": {"$lt": 2021}})", md));
  EXPECT_TRUE(matches(R"({"year": {"$lte": 2021}})", md));
  EXPECT_FALSE(matches(R"({"year": {"$lte": 2020}})", md));
  EXPECT_TRUE(matches(R"({"year": {"$gte": 2020, "$lt": 2024}})", md));
  EXPECT_FALSE(matches(R"({"year": {"$gte": 2022, "$lt": 2024}})", md));
  EXPECT_TRUE(matches(R"({"score": {"$gt": 0.25, "$lte": 0.5}})", md));
  EXPECT_TRUE(matches(R"({"year": {"$gt": 2020.5}})", md));
  EXPECT_FALSE(matches(R"({"score": {"$gt": 0}})", R"({})"));  // missing never in range
  EXPECT_FALSE(matches(R"({"score": {"$lte": 0}})", R"({})"));
}

TEST(FilterMatches, IntegersBeyondDoublePrecisionCompareExactly) {
  // 2^53 + 1 is not representable as a double; ids this large must not collide.
  EXPECT_FALSE(matches(R"({"id": 9007199254740992})", R"({"id": 9007199254740993})"));
  EXPECT_TRUE(matches(R"({"id": 9007199254740993})", R"({"id": 9007199254740993})"));
  EXPECT_TRUE(matches(R"({"id": {"$gt": 9007199254740992}})", R"({"id": 9007199254740993})"));
  EXPECT_TRUE(matches(R"({"id": {"$gt": 9007199254740992.0}})", R"({"id": 9007199254740993})"));
  EXPECT_TRUE(matches(R"({"id": {"$lt": 9007199254740993}})", R"({"id": 9007199254740992.0})"));
  EXPECT_TRUE(matches(R"({"id": 18446744073709551615})", R"({"id": 18446744073709551615})"));
  EXPECT_TRUE(
      matches(R"({"id": {"$gt": 9223372036854775807}})", R"({"id": 18446744073709551615})"));
  EXPECT_TRUE(matches(R"({"x": {"$gt": 2, "$lt": 3}})", R"({"x": 2.5})"));
  EXPECT_TRUE(matches(R"({"x": {"$gt": -3, "$lt": -2}})", R"({"x": -2.5})"));
  EXPECT_TRUE(matches(R"({"x": {"$gt": 2.5}})", R"({"x": 3})"));
  EXPECT_FALSE(matches(R"({"x": {"$gt": 3.5}})", R"({"x": 3})"));
}

TEST(FilterMatches, StringRangesAreByteOrder) {
  EXPECT_TRUE(matches(R"({"s": {"$gt": "apple"}})", R"({"s": "banana"})"));
  EXPECT_FALSE(matches(R"({"s": {"$gt": "banana"}})", R"({"s": "apple"})"));
  EXPECT_TRUE(matches(R"({"s": {"$lt": "a"}})", R"({"s": "Z"})"));  // 'Z' < 'a' in bytes
  EXPECT_TRUE(matches(R"({"s": {"$gt": "z"}})", R"({"s": "é"})"));  // UTF-8 bytes > ASCII
  EXPECT_TRUE(matches(R"({"s": {"$gte": ""}})", R"({"s": ""})"));
}

TEST(FilterMatches, InAndNin) {
  EXPECT_TRUE(matches(R"({"tag": {"$in": ["a", "b"]}})", R"({"tag": "b"})"));
  EXPECT_FALSE(matches(R"({"tag": {"$in": ["a", "b"]}})", R"({"tag": "c"})"));
  EXPECT_FALSE(matches(R"({"tag": {"$in": ["a", "b"]}})", R"({})"));
  EXPECT_FALSE(matches(R"({"tag": {"$in": []}})", R"({"tag": "a"})"));
  EXPECT_TRUE(matches(R"({"tag": {"$in": [1, "1", null]}})", R"({"tag": null})"));
  EXPECT_TRUE(matches(R"({"tag": {"$in": [1, "1"]}})", R"({"tag": 1.0})"));
  EXPECT_TRUE(matches(R"({"tag": {"$in": [true]}})", R"({"tag": true})"));
  EXPECT_FALSE(matches(R"({"tag": {"$nin": ["a", "b"]}})", R"({"tag": "a"})"));
  EXPECT_TRUE(matches(R"({"tag": {"$nin": ["a", "b"]}})", R"({"tag": "c"})"));
  EXPECT_TRUE(matches(R"({"tag": {"$nin": ["a", "b"]}})", R"({})"));  // missing matches $nin
  EXPECT_TRUE(matches(R"({"tag": {"$nin": []}})", R"({"tag": "a"})"));
}

TEST(FilterMatches, Exists) {
  EXPECT_TRUE(matches(R"({"a": {"$exists": true}})", R"({"a": 1})"));
  EXPECT_TRUE(matches(R"({"a": {"$exists": true}})", R"({"a": null})"));  // null is present
  EXPECT_FALSE(matches(R"({"a": {"$exists": true}})", R"({"b": 1})"));
  EXPECT_TRUE(matches(R"({"a": {"$exists": false}})", R"({"b": 1})"));
  EXPECT_FALSE(matches(R"({"a": {"$exists": false}})", R"({"a": false})"));
}

TEST(FilterMatches, NestedFieldsUseDots) {
  const char* md = R"({"author": {"name": "Ada", "born": 1815, "address": {"city": "London"}}})";
  EXPECT_TRUE(matches(R"({"author.name": "Ada"})", md));
  EXPECT_TRUE(matches(R"({"author.born": {"$lt": 1900}})", md));
  EXPECT_TRUE(matches(R"({"author.address.city": "London"})", md));
  EXPECT_FALSE(matches(R"({"author.address.city": "Paris"})", md));
  EXPECT_TRUE(matches(R"({"author.address": {"$exists": true}})", md));
  EXPECT_FALSE(matches(R"({"author.missing": {"$exists": true}})", md));
  EXPECT_TRUE(matches(R"({"author.name.first": {"$exists": false}})", md));  // through a string
  EXPECT_FALSE(matches(R"({"name": "Ada"})", md));
  EXPECT_FALSE(matches(R"({"list.0": 1})", R"({"list": [1, 2]})"));  // arrays are not objects
  EXPECT_FALSE(matches(R"({"author": "Ada"})", md));                 // an object equals no scalar
}

TEST(FilterMatches, AndOrAndImplicitAnd) {
  const char* md = R"({"lang": "en", "year": 2020, "draft": false})";
  EXPECT_TRUE(matches(R"({"lang": "en", "year": 2020})", md));
  EXPECT_FALSE(matches(R"({"lang": "en", "year": 2021})", md));
  EXPECT_TRUE(matches(R"({"$or": [{"lang": "de"}, {"year": 2020}]})", md));
  EXPECT_FALSE(matches(R"({"$or": [{"lang": "de"}, {"year": 2021}]})", md));
  EXPECT_TRUE(matches(R"({"$and": [{"lang": "en"}, {"draft": false}]})", md));
  EXPECT_FALSE(matches(R"({"$and": [{"lang": "en"}, {"draft": true}]})", md));
  EXPECT_TRUE(matches(
      R"({"$or": [{"$and": [{"lang": "de"}, {"year": 2020}]}, {"$and": [{"lang": "en"}, {"draft": {"$ne": true}}]}]})",
      md));
  EXPECT_FALSE(matches(R"({"lang": "en", "$or": [{"year": 1999}, {"draft": true}]})", md));
}

}  // namespace
}  // namespace quarry::core
