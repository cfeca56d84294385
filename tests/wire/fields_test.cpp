// The field rules under every decoder (src/wire/fields.h): request bodies are parsed defensively
// and every refusal says which field to fix.
#include "wire/fields.h"

#include <gtest/gtest.h>

#include <string>

#include "test_util.h"

namespace quarry::wire {
namespace {

using nlohmann::json;
using quarry::testing::error_of;

TEST(Fields, ParseObjectRefusesWhatIsNotAnObjectOrNestsTooDeep) {
  EXPECT_EQ(parse_object(R"({"a": [1, {"b": 2}]})"), json({{"a", {1, {{"b", 2}}}}}));
  for (const std::string& text : {std::string("[1]"), std::string("{bad"), std::string(""),
                                  std::string(200, '[') + std::string(200, ']')}) {
    const Error e = error_of([&] { parse_object(text); });
    EXPECT_EQ(e.code(), Code::invalid_argument) << text;
    EXPECT_EQ(e.details().at("field"), "body") << text;
  }
}

TEST(Fields, UnknownKeysAreRefusedAndTheKnownOnesListed) {
  const Error e = error_of([] { Fields(json{{"qeury", "x"}}, {"query", "mode"}); });
  EXPECT_EQ(e.code(), Code::invalid_argument);
  EXPECT_EQ(e.details().at("field"), "qeury");
  EXPECT_NE(e.message().find("query or mode"), std::string::npos) << e.message();
}

TEST(Fields, IntegersAreWholeAndWithinRange) {
  const json j = {{"a", 3}, {"b", 3.0}, {"c", 3.5}, {"d", 18446744073709551615ull}, {"e", -1}};
  const Fields f(j, {"a", "b", "c", "d", "e", "f"});
  EXPECT_EQ(f.integer("a", 0, 10), 3);
  EXPECT_EQ(f.integer("b", 0, 10), 3);
  EXPECT_FALSE(f.integer("f", 0, 10).has_value());
  for (const char* bad : {"c", "d", "e"}) {
    const Error e = error_of([&] { f.integer(bad, 0, 10); });
    EXPECT_EQ(e.code(), Code::invalid_argument) << bad;
    EXPECT_EQ(e.details().at("field"), bad);
  }
}

TEST(Fields, RequiredStringsMayBeAllowedToBeEmpty) {
  const json j = {{"text", ""}};
  const Fields f(j, {"text", "other"});
  EXPECT_EQ(f.required_string("text", /*may_be_empty=*/true), "");
  EXPECT_EQ(error_of([&] { f.required_string("text"); }).details().at("field"), "text");
  EXPECT_EQ(error_of([&] { f.required_string("other"); }).details().at("field"), "other");
}

}  // namespace
}  // namespace quarry::wire
