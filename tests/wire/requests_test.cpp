// The request codec (src/wire/requests.h): one decoder per request kind for REST, MCP and the
// CLI. These tests pin its defaults and bounds, and that every refusal is invalid_argument with
// details.field naming the field, so all three surfaces refuse the same input the same way.
#include "wire/requests.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "test_util.h"

namespace quarry::wire {
namespace {

using nlohmann::json;
using quarry::testing::error_of;

// The field a decoder names when it refuses `body` ("" and a failure when it accepts it).
std::string refused_field(const std::function<void()>& decode) {
  const Error e = error_of(decode);
  EXPECT_EQ(e.code(), Code::invalid_argument) << e.message();
  EXPECT_FALSE(e.message().empty());
  auto it = e.details().find("field");
  return it == e.details().end() ? "" : it->second;
}

std::string search_refuses(const json& body) {
  return refused_field([&] { decode_search(body, "k"); });
}
std::string grep_refuses(const json& body) {
  return refused_field([&] { decode_grep(body, "k"); });
}

TEST(SearchCodec, AMinimalRequestGetsTheOneSetOfDefaults) {
  const SearchRequest r = decode_search({{"query", "heron"}}, "notes");
  EXPECT_EQ(r.kb, "notes");
  EXPECT_EQ(r.query, "heron");
  EXPECT_FALSE(r.mode.has_value());  // the engine runs kDefaultMode: auto
  EXPECT_EQ(kDefaultMode, Mode::automatic);
  EXPECT_EQ(r.top_k, kTopKDefault);
  EXPECT_EQ(r.top_k, SearchRequest{}.top_k);  // the library's default and the codec's agree
  EXPECT_EQ(r.min_score, 0);
  EXPECT_EQ(r.filter_json, "");
  EXPECT_FALSE(r.fusion.has_value());
  EXPECT_FALSE(r.semantic_ratio.has_value());
  EXPECT_FALSE(r.advanced);
}

TEST(SearchCodec, ReadsEveryField) {
  const SearchRequest r = decode_search({{"query", "heron"},
                                         {"mode", "hybrid"},
                                         {"top_k", 3},
                                         {"min_score", 0.25},
                                         {"filter", {{"lang", "en"}}},
                                         {"fusion", "rrf"},
                                         {"semantic_ratio", 0.5},
                                         {"advanced", true}},
                                        "k");
  EXPECT_EQ(r.mode, Mode::hybrid);
  EXPECT_EQ(r.top_k, 3);
  EXPECT_DOUBLE_EQ(r.min_score, 0.25);
  EXPECT_EQ(json::parse(r.filter_json), json({{"lang", "en"}}));
  EXPECT_EQ(r.fusion, "rrf");
  EXPECT_DOUBLE_EQ(*r.semantic_ratio, 0.5);
  EXPECT_TRUE(r.advanced);
  // "auto" can be named too, and means the same as leaving the mode out.
  EXPECT_EQ(decode_search({{"query", "x"}, {"mode", "auto"}}, "k").mode, Mode::automatic);
}

TEST(SearchCodec, BoundsAreInclusiveAndTheSameForEveryone) {
  EXPECT_EQ(decode_search({{"query", "x"}, {"top_k", 1}}, "k").top_k, 1);
  EXPECT_EQ(decode_search({{"query", "x"}, {"top_k", kTopKMax}}, "k").top_k, kTopKMax);
  EXPECT_EQ(search_refuses({{"query", "x"}, {"top_k", 0}}), "top_k");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"top_k", kTopKMax + 1}}), "top_k");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"top_k", -5}}), "top_k");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"top_k", 1e30}}), "top_k");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"min_score", 1.01}}), "min_score");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"min_score", -0.1}}), "min_score");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"semantic_ratio", 2}}), "semantic_ratio");
}

TEST(SearchCodec, AWholeNumberWrittenAsAFloatIsAnInteger) {
  EXPECT_EQ(decode_search({{"query", "x"}, {"top_k", 5.0}}, "k").top_k, 5);
  EXPECT_EQ(search_refuses({{"query", "x"}, {"top_k", 5.5}}), "top_k");
}

TEST(SearchCodec, EveryRefusalNamesItsField) {
  EXPECT_EQ(search_refuses(json::object()), "query");
  EXPECT_EQ(search_refuses({{"query", ""}}), "query");
  EXPECT_EQ(search_refuses({{"query", 7}}), "query");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"mode", "semantic"}}), "mode");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"mode", 1}}), "mode");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"top_k", "10"}}), "top_k");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"min_score", "high"}}), "min_score");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"filter", "lang=en"}}), "filter");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"filter", json::array()}}), "filter");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"fusion", "max"}}), "fusion");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"advanced", "yes"}}), "advanced");
  EXPECT_EQ(search_refuses({{"query", "x"}, {"topk", 3}}), "topk");    // a typo is not ignored
  EXPECT_EQ(search_refuses({{"query", "x"}, {"kb", "other"}}), "kb");  // the KB is not a field
}

TEST(SearchCodec, NullIsAbsent) {
  const SearchRequest r = decode_search(
      {{"query", "x"}, {"mode", nullptr}, {"top_k", nullptr}, {"filter", nullptr}}, "k");
  EXPECT_FALSE(r.mode.has_value());
  EXPECT_EQ(r.top_k, kTopKDefault);
  EXPECT_EQ(r.filter_json, "");
}

TEST(SearchCodec, EncodesWhatItDecodes) {
  SearchRequest r;
  r.kb = "k";
  r.query = "heron";
  r.mode = Mode::vector;
  r.top_k = 7;
  r.min_score = 0.5;
  r.filter_json = R"({"a":1})";
  r.fusion = "rrf";
  r.semantic_ratio = 0.3;
  r.advanced = true;
  const SearchRequest back = decode_search(encode_search(r), "k");
  EXPECT_EQ(back.query, r.query);
  EXPECT_EQ(back.mode, r.mode);
  EXPECT_EQ(back.top_k, r.top_k);
  EXPECT_EQ(back.min_score, r.min_score);
  EXPECT_EQ(back.filter_json, r.filter_json);
  EXPECT_EQ(back.fusion, r.fusion);
  EXPECT_EQ(back.semantic_ratio, r.semantic_ratio);
  EXPECT_EQ(back.advanced, r.advanced);
  // No mode stays no mode: the default is the engine's, not written into the request.
  SearchRequest plain;
  plain.query = "x";
  EXPECT_FALSE(encode_search(plain).contains("mode"));
  EXPECT_FALSE(decode_search(encode_search(plain), "k").mode.has_value());
}

TEST(GrepCodec, AMinimalRequestGetsTheOneSetOfDefaults) {
  const GrepRequest r = decode_grep({{"pattern", "err(or)?"}}, "k");
  EXPECT_EQ(r.kb, "k");
  EXPECT_EQ(r.pattern, "err(or)?");
  EXPECT_FALSE(r.literal);
  EXPECT_FALSE(r.ignore_case);
  EXPECT_EQ(r.before_context, 0);
  EXPECT_EQ(r.after_context, 0);
  EXPECT_EQ(r.max_matches, static_cast<std::size_t>(kMaxMatchesDefault));
  EXPECT_EQ(r.max_matches, GrepRequest{}.max_matches);
  EXPECT_EQ(kMaxMatchesDefault, 1000);
  EXPECT_EQ(r.filter_json, "");
}

TEST(GrepCodec, ContextSetsBothSidesAndEachSideOverridesIt) {
  const GrepRequest both = decode_grep({{"pattern", "x"}, {"context", 2}}, "k");
  EXPECT_EQ(both.before_context, 2);
  EXPECT_EQ(both.after_context, 2);
  const GrepRequest mixed =
      decode_grep({{"pattern", "x"}, {"context", 2}, {"after_context", 5}}, "k");
  EXPECT_EQ(mixed.before_context, 2);
  EXPECT_EQ(mixed.after_context, 5);
}

TEST(GrepCodec, BoundsAreInclusive) {
  EXPECT_EQ(decode_grep({{"pattern", "x"}, {"context", kContextMax}}, "k").after_context,
            kContextMax);
  EXPECT_EQ(kContextMax, 100);
  EXPECT_EQ(grep_refuses({{"pattern", "x"}, {"context", kContextMax + 1}}), "context");
  EXPECT_EQ(grep_refuses({{"pattern", "x"}, {"before_context", -1}}), "before_context");
  EXPECT_EQ(grep_refuses({{"pattern", "x"}, {"after_context", 101}}), "after_context");
  EXPECT_EQ(decode_grep({{"pattern", "x"}, {"max_matches", kMaxMatchesMax}}, "k").max_matches,
            static_cast<std::size_t>(kMaxMatchesMax));
  EXPECT_EQ(grep_refuses({{"pattern", "x"}, {"max_matches", 0}}), "max_matches");
  EXPECT_EQ(grep_refuses({{"pattern", "x"}, {"max_matches", kMaxMatchesMax + 1}}), "max_matches");
}

TEST(GrepCodec, EveryRefusalNamesItsField) {
  EXPECT_EQ(grep_refuses(json::object()), "pattern");
  EXPECT_EQ(grep_refuses({{"pattern", ""}}), "pattern");
  EXPECT_EQ(grep_refuses({{"pattern", true}}), "pattern");
  EXPECT_EQ(grep_refuses({{"pattern", "x"}, {"literal", 1}}), "literal");
  EXPECT_EQ(grep_refuses({{"pattern", "x"}, {"ignore_case", "no"}}), "ignore_case");
  EXPECT_EQ(grep_refuses({{"pattern", "x"}, {"context", 1.5}}), "context");
  EXPECT_EQ(grep_refuses({{"pattern", "x"}, {"filter", 3}}), "filter");
  EXPECT_EQ(grep_refuses({{"pattern", "x"}, {"max", 3}}), "max");
  EXPECT_EQ(refused_field([] { decode_grep(json::array({1}), "k"); }), "body");
}

TEST(GrepCodec, EncodesWhatItDecodes) {
  GrepRequest r;
  r.pattern = "a.c";
  r.literal = true;
  r.ignore_case = true;
  r.before_context = 1;
  r.after_context = 4;
  r.max_matches = 9;
  r.filter_json = R"({"b":true})";
  const GrepRequest back = decode_grep(encode_grep(r), "k");
  EXPECT_EQ(back.pattern, r.pattern);
  EXPECT_EQ(back.literal, r.literal);
  EXPECT_EQ(back.ignore_case, r.ignore_case);
  EXPECT_EQ(back.before_context, r.before_context);
  EXPECT_EQ(back.after_context, r.after_context);
  EXPECT_EQ(back.max_matches, r.max_matches);
  EXPECT_EQ(back.filter_json, r.filter_json);
}

TEST(UploadCodec, TextOrBase64ExactlyOne) {
  const UploadBatch text = decode_upload({{"filename", "a.md"}, {"content", "# A"}});
  ASSERT_EQ(text.uploads.size(), 1u);
  EXPECT_EQ(text.uploads[0].filename, "a.md");
  EXPECT_EQ(text.uploads[0].bytes, "# A");
  EXPECT_FALSE(text.options.replace);
  EXPECT_EQ(text.options.metadata_json, "");

  // "hello\0\xff" in base64, wrapped as some encoders do.
  const UploadBatch bin = decode_upload({{"filename", "b.bin"},
                                         {"content_base64", "aGVs\nbG8A/w=="},
                                         {"metadata", {{"team", "ops"}}},
                                         {"replace", true}});
  EXPECT_EQ(bin.uploads[0].bytes, std::string("hello\0\xff", 7));
  EXPECT_EQ(json::parse(bin.options.metadata_json), json({{"team", "ops"}}));
  EXPECT_TRUE(bin.options.replace);

  auto refuses = [](const json& b) { return refused_field([&] { decode_upload(b); }); };
  EXPECT_EQ(refuses({{"filename", "a.md"}}), "content");
  EXPECT_EQ(refuses({{"filename", "a.md"}, {"content", "x"}, {"content_base64", "eA=="}}),
            "content");
  EXPECT_EQ(refuses({{"content", "x"}}), "filename");
  EXPECT_EQ(refuses({{"filename", "a.md"}, {"content_base64", "not base64!"}}), "content_base64");
  EXPECT_EQ(refuses({{"filename", "a.md"}, {"content_base64", "eA=x"}}), "content_base64");
  EXPECT_EQ(refuses({{"filename", "a.md"}, {"content_base64", "e"}}), "content_base64");
  EXPECT_EQ(refuses({{"filename", "a.md"}, {"content", "x"}, {"metadata", "team=ops"}}),
            "metadata");
  EXPECT_EQ(refuses({{"filename", "a.md"}, {"content", "x"}, {"replace", "true"}}), "replace");
  EXPECT_EQ(refuses({{"filename", "a.md"}, {"content", "x"}, {"path", "/etc"}}), "path");
}

TEST(UploadCodec, FormsTakeFilePartsAndTextFields) {
  const UploadBatch b = decode_upload_form({{"metadata", R"({"a": 1})"}, {"replace", "true"}},
                                           {{"file", "a.md", "# A"}, {"file", "b.md", "# B"}});
  ASSERT_EQ(b.uploads.size(), 2u);
  EXPECT_EQ(b.uploads[1].filename, "b.md");
  EXPECT_TRUE(b.options.replace);
  EXPECT_EQ(json::parse(b.options.metadata_json), json({{"a", 1}}));

  auto refuses = [](const std::map<std::string, std::string>& fields,
                    const std::vector<FormFile>& files) {
    return refused_field([&] { decode_upload_form(fields, files); });
  };
  EXPECT_EQ(refuses({}, {}), "file");
  EXPECT_EQ(refuses({}, {{"upload", "a.md", "x"}}), "upload");
  EXPECT_EQ(refuses({{"metadata", "[1]"}}, {{"file", "a.md", "x"}}), "metadata");
  EXPECT_EQ(refuses({{"replace", "yes"}}, {{"file", "a.md", "x"}}), "replace");
  EXPECT_EQ(refuses({{"colour", "red"}}, {{"file", "a.md", "x"}}), "colour");
}

TEST(IngestOptionsCodec, ReadsGlobsAndRefusesWhatIsNotAList) {
  const IngestOptions o = decode_ingest_options(
      {{"replace", true}, {"include", {"*.md"}}, {"exclude", {"drafts/**", "*.tmp"}}});
  EXPECT_TRUE(o.replace);
  EXPECT_EQ(o.include, std::vector<std::string>{"*.md"});
  EXPECT_EQ(o.exclude, (std::vector<std::string>{"drafts/**", "*.tmp"}));
  EXPECT_EQ(refused_field([] { decode_ingest_options({{"include", "*.md"}}); }), "include");
  EXPECT_EQ(refused_field([] { decode_ingest_options({{"exclude", {1}}}); }), "exclude");
  EXPECT_EQ(refused_field([] { decode_ingest_options({{"recursive", true}}); }), "recursive");
}

TEST(KbCodec, CreateMergesTheDescriptionIntoTheConfig) {
  const KbCreate c = decode_kb_create({{"name", "notes"},
                                       {"config", {{"chunking", {{"profile", "code"}}}}},
                                       {"description", "Team notes"}});
  EXPECT_EQ(c.name, "notes");
  EXPECT_EQ(json::parse(c.config_json),
            json({{"chunking", {{"profile", "code"}}}, {"description", "Team notes"}}));
  EXPECT_EQ(json::parse(decode_kb_create({{"name", "n"}}).config_json), json::object());

  auto refuses = [](const json& b) { return refused_field([&] { decode_kb_create(b); }); };
  EXPECT_EQ(refuses(json::object()), "name");
  EXPECT_EQ(refuses({{"name", "n"}, {"config", "{}"}}), "config");
  EXPECT_EQ(refuses({{"name", "n"}, {"description", 3}}), "description");
  EXPECT_EQ(refuses({{"name", "n"}, {"modes", {"keyword"}}}), "modes");
}

TEST(KbCodec, ChangeTakesScalarSettingsAndACutover) {
  const KbChange c = decode_kb_change(
      {{"settings", {{"chunking.max_tokens", 256}, {"description", "x"}, {"flag", true}}},
       {"cutover", "immediate"}});
  EXPECT_TRUE(c.cutover_immediate);
  EXPECT_EQ(c.settings,
            (std::vector<std::pair<std::string, std::string>>{
                {"chunking.max_tokens", "256"}, {"description", "x"}, {"flag", "true"}}));
  EXPECT_FALSE(decode_kb_change({{"settings", {{"a", 1}}}}).cutover_immediate);
  // The CLI's key=value pairs keep their order.
  const KbChange ordered = decode_kb_change({{"z", "1"}, {"a", "2"}}, "on-complete");
  EXPECT_EQ(ordered.settings[0].first, "z");

  auto refuses = [](const json& b) { return refused_field([&] { decode_kb_change(b); }); };
  EXPECT_EQ(refuses(json::object()), "settings");
  EXPECT_EQ(refuses({{"settings", json::object()}}), "settings");
  EXPECT_EQ(refuses({{"settings", {{"a", {1, 2}}}}}), "a");
  EXPECT_EQ(refuses({{"settings", {{"a", 1}}}, {"cutover", "now"}}), "cutover");
  EXPECT_EQ(refuses({{"settings", {{"a", 1}}}, {"when", "now"}}), "when");
}

}  // namespace
}  // namespace quarry::wire
