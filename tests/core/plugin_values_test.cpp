// The value types of the public plugin API (quarry/settings.h, quarry/filter.h), used the way a
// plugin uses them: through the public headers only, with JSON as text.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "quarry/error.h"
#include "quarry/filter.h"
#include "quarry/settings.h"
#include "test_util.h"

namespace quarry {
namespace {

using quarry::testing::code_of;

TEST(PluginSettings, TypedGettersReadWhatIsThere) {
  Settings s = Settings::parse(
      R"({"url": "http://h", "n": 3, "x": 2.5, "on": true, "tags": ["a"], "nested": {"k": 1},
          "gone": null})");
  EXPECT_EQ(s.get_string("url"), "http://h");
  EXPECT_EQ(s.get_integer("n"), 3);
  EXPECT_EQ(s.get_number("n"), 3.0);  // an integer is a number too
  EXPECT_EQ(s.get_number("x"), 2.5);
  EXPECT_EQ(s.get_bool("on"), true);
  EXPECT_EQ(s.get_json("tags"), R"(["a"])");
  EXPECT_EQ(s.get_object("nested").get_integer("k"), 1);
  EXPECT_EQ(s.keys(), (std::vector<std::string>{"gone", "n", "nested", "on", "tags", "url", "x"}));
  EXPECT_FALSE(s.empty());
  // Missing and null read as not set; a null key is still present.
  EXPECT_EQ(s.get_string("missing"), std::nullopt);
  EXPECT_EQ(s.get_integer("gone"), std::nullopt);
  EXPECT_TRUE(s.has("gone"));
  EXPECT_FALSE(s.has("missing"));
  EXPECT_TRUE(s.get_object("missing").empty());
}

TEST(PluginSettings, WrongTypesAreRefusedNamingTheKey) {
  Settings s =
      Settings::parse(R"({"url": 5, "n": 2.5, "big": 18446744073709551615, "o": [], "s": "x"})");
  std::map<std::string, std::string> details;
  std::string message;
  EXPECT_EQ(code_of([&] { s.get_string("url"); }, &details, &message), Code::invalid_argument);
  EXPECT_EQ(details["field"], "url");
  EXPECT_NE(message.find("'url' must be a string"), std::string::npos) << message;
  EXPECT_EQ(code_of([&] { s.get_integer("n"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { s.get_integer("big"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { s.get_bool("n"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { s.get_number("s"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { s.get_object("o"); }), Code::invalid_argument);
}

TEST(PluginSettings, ParseTakesOnlyAnObjectAndKeepsItsText) {
  EXPECT_TRUE(Settings().empty());
  EXPECT_EQ(Settings().json_text(), "{}");
  EXPECT_TRUE(Settings::parse("").empty());
  EXPECT_EQ(Settings::parse(R"({ "b": 1, "a": "x" })").json_text(), R"({"a":"x","b":1})");
  EXPECT_EQ(code_of([] { Settings::parse("[1, 2]"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([] { Settings::parse("{"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([] { Settings::parse("null"); }), Code::ok);  // null counts as {}
  Settings a = Settings::parse(R"({"k": "v"})");
  Settings b = a;  // copies are cheap and equal
  EXPECT_EQ(b.json_text(), a.json_text());
}

TEST(PluginFilter, ReferenceSemanticsOverMetadataText) {
  const std::string md = R"({"lang": "en", "year": 2021, "info": {"team": "red"}, "n": null})";
  auto m = [&](const char* filter) { return filter_matches(parse_filter(filter), md); };
  EXPECT_TRUE(m(R"({"lang": "en"})"));
  EXPECT_FALSE(m(R"({"lang": "de"})"));
  EXPECT_TRUE(m(R"({"year": {"$gte": 2020, "$lt": 2022}})"));
  EXPECT_TRUE(m(R"({"year": 2021.0})"));   // numbers compare numerically
  EXPECT_FALSE(m(R"({"year": "2021"})"));  // but never with strings
  EXPECT_TRUE(m(R"({"info.team": {"$in": ["red", "blue"]}})"));
  EXPECT_TRUE(m(R"({"missing": {"$ne": 1}})"));   // a missing field matches $ne ...
  EXPECT_FALSE(m(R"({"missing": {"$gt": 1}})"));  // ... and no order comparison
  EXPECT_TRUE(m(R"({"n": null})"));
  EXPECT_TRUE(m(R"({"$or": [{"lang": "de"}, {"year": {"$exists": true}}]})"));
  EXPECT_TRUE(filter_matches(parse_filter(""), md));  // the empty filter matches everything
  EXPECT_TRUE(parse_filter("{}").empty());
}

TEST(PluginFilter, EmptyMetadataIsAnObjectAndOtherTextIsRefused) {
  Filter f = parse_filter(R"({"a": {"$exists": false}})");
  EXPECT_TRUE(filter_matches(f, ""));
  EXPECT_TRUE(filter_matches(f, "{}"));
  EXPECT_EQ(code_of([&] { filter_matches(f, "[1]"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { filter_matches(f, "{oops"); }), Code::invalid_argument);
  EXPECT_EQ(code_of([] { parse_filter(R"({"a": {"$near": 1}})"); }), Code::invalid_argument);
}

TEST(PluginFilter, TheTreeIsPlainData) {
  Filter f = parse_filter(R"({"a": 1, "b": {"$in": ["x", null]}})");
  ASSERT_EQ(f.op, Filter::Op::And);
  ASSERT_EQ(f.children.size(), 2u);
  EXPECT_EQ(f.children[0].op, Filter::Op::Eq);
  EXPECT_EQ(f.children[0].field, "a");
  EXPECT_EQ(std::get<std::int64_t>(f.children[0].values.at(0)), 1);
  EXPECT_EQ(f.children[1].op, Filter::Op::In);
  EXPECT_EQ(std::get<std::string>(f.children[1].values.at(0)), "x");
  EXPECT_TRUE(std::holds_alternative<std::nullptr_t>(f.children[1].values.at(1)));
}

}  // namespace
}  // namespace quarry
