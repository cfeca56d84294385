// Strict KB config schema (SPEC §1, §3): unknown keys and out-of-range values are
// invalid_argument errors naming the dotted field; names follow [a-z0-9][a-z0-9_-]{0,62}.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/kb_config.h"
#include "quarry/error.h"

namespace quarry::core {
namespace {
using nlohmann::json;

// The error code and the details["field"] of what `fn` throws; fails the test if nothing does.
template <typename Fn>
std::pair<Code, std::string> error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    auto it = e.details().find("field");
    return {e.code(), it == e.details().end() ? std::string("<none>") : it->second};
  }
  ADD_FAILURE() << "expected an Error";
  return {Code::ok, ""};
}

std::pair<Code, std::string> config_error(const std::string& text) {
  return error_of([&] { kb_config_from_json(json::parse(text)); });
}

TEST(KbConfig, EmptyObjectGivesDefaults) {
  KbConfig c = kb_config_from_json(json::object());
  EXPECT_EQ(c.chunking.profile, "prose");
  EXPECT_EQ(c.chunking.effective_max_tokens(), 512);
  EXPECT_EQ(c.chunking.effective_overlap_tokens(), 64);
  EXPECT_EQ(c.modes, (std::vector<Mode>{Mode::grep, Mode::keyword}));
  EXPECT_EQ(c.limits.max_upload_bytes, 25LL * 1024 * 1024);
  EXPECT_EQ(c.limits.max_chunks_per_document, 2000);
}

TEST(KbConfig, DefaultOverlapIsMinOf64AndAnEighth) {
  EXPECT_EQ(kb_config_from_json(json::parse(R"({"chunking": {"max_tokens": 128}})"))
                .chunking.effective_overlap_tokens(),
            16);
  EXPECT_EQ(kb_config_from_json(json::parse(R"({"chunking": {"max_tokens": 4096}})"))
                .chunking.effective_overlap_tokens(),
            64);
}

TEST(KbConfig, UnknownKeyNamesTheDottedPath) {
  EXPECT_EQ(config_error(R"({"chunking": {"max_tokns": 100}})"),
            std::make_pair(Code::invalid_argument, std::string("chunking.max_tokns")));
  EXPECT_EQ(config_error(R"({"descripton": "x"})"),
            std::make_pair(Code::invalid_argument, std::string("descripton")));
  EXPECT_EQ(config_error(R"({"limits": {"max_bytes": 1}})"),
            std::make_pair(Code::invalid_argument, std::string("limits.max_bytes")));
  EXPECT_EQ(config_error(R"({"subjects": {"key": ["a"]}})"),
            std::make_pair(Code::invalid_argument, std::string("subjects.key")));
}

TEST(KbConfig, MaxTokensBoundsAreInclusive16To8191) {
  EXPECT_EQ(config_error(R"({"chunking": {"max_tokens": 15}})"),
            std::make_pair(Code::invalid_argument, std::string("chunking.max_tokens")));
  EXPECT_EQ(config_error(R"({"chunking": {"max_tokens": 8192}})"),
            std::make_pair(Code::invalid_argument, std::string("chunking.max_tokens")));
  EXPECT_EQ(
      *kb_config_from_json(json::parse(R"({"chunking": {"max_tokens": 16}})")).chunking.max_tokens,
      16);
  EXPECT_EQ(*kb_config_from_json(json::parse(R"({"chunking": {"max_tokens": 8191}})"))
                 .chunking.max_tokens,
            8191);
}

TEST(KbConfig, WrongTypesAreRefused) {
  EXPECT_EQ(config_error(R"({"chunking": {"max_tokens": "512"}})").second, "chunking.max_tokens");
  EXPECT_EQ(config_error(R"({"chunking": {"max_tokens": 100.5}})").second, "chunking.max_tokens");
  EXPECT_EQ(config_error(R"({"chunking": "prose"})").second, "chunking");
  EXPECT_EQ(config_error(R"({"modes": "keyword"})").second, "modes");
  EXPECT_EQ(config_error(R"({"description": 7})").second, "description");
  EXPECT_EQ(config_error(R"({"chunking": {"profile": "poetry"}})").second, "chunking.profile");
  EXPECT_EQ(config_error(R"({"modes": ["keyword", "telepathy"]})").second, "modes");
  EXPECT_EQ(config_error(R"([1, 2])").first, Code::invalid_argument);
}

TEST(KbConfig, OverlapAboveHalfOfMaxIsRefused) {
  EXPECT_EQ(config_error(R"({"chunking": {"max_tokens": 100, "overlap_tokens": 51}})"),
            std::make_pair(Code::invalid_argument, std::string("chunking.overlap_tokens")));
  auto c = kb_config_from_json(
      json::parse(R"({"chunking": {"max_tokens": 100, "overlap_tokens": 50}})"));
  EXPECT_EQ(c.chunking.effective_overlap_tokens(), 50);
  // Against the default max of 512: 256 is fine, 257 is not.
  EXPECT_NO_THROW(kb_config_from_json(json::parse(R"({"chunking": {"overlap_tokens": 256}})")));
  EXPECT_EQ(config_error(R"({"chunking": {"overlap_tokens": 257}})").second,
            "chunking.overlap_tokens");
}

TEST(KbConfig, BudgetsAreRefusedUnderProfileNone) {
  EXPECT_EQ(config_error(R"({"chunking": {"profile": "none", "max_tokens": 256}})"),
            std::make_pair(Code::invalid_argument, std::string("chunking.max_tokens")));
  EXPECT_EQ(config_error(R"({"chunking": {"profile": "none", "overlap_tokens": 8}})"),
            std::make_pair(Code::invalid_argument, std::string("chunking.overlap_tokens")));
  EXPECT_NO_THROW(kb_config_from_json(json::parse(R"({"chunking": {"profile": "none"}})")));
}

TEST(KbConfig, SubjectKeysMustBeIdentifiers) {
  auto c =
      kb_config_from_json(json::parse(R"({"subjects": {"keys": ["contact_id", "company_id"]}})"));
  EXPECT_EQ(c.subjects.keys, (std::vector<std::string>{"contact_id", "company_id"}));
  EXPECT_EQ(config_error(R"({"subjects": {"keys": ["has space"]}})").second, "subjects.keys");
  EXPECT_EQ(config_error(R"({"subjects": {"rule": "at_least_one"}})").second, "subjects.rule");
}

TEST(KbConfig, LimitsAreRangeChecked) {
  EXPECT_EQ(config_error(R"({"limits": {"max_upload_bytes": 0}})").second,
            "limits.max_upload_bytes");
  EXPECT_EQ(config_error(R"({"limits": {"max_chunks_per_document": 0}})").second,
            "limits.max_chunks_per_document");
  auto c = kb_config_from_json(json::parse(R"({"limits": {"max_upload_bytes": 10}})"));
  EXPECT_EQ(c.limits.max_upload_bytes, 10);
}

TEST(KbName, InvalidNamesAreRefused) {
  for (std::string bad : {"A", "-x", "a b", "_a", "", "kb/x", "a.b", "Ab", "é"}) {
    auto [code, field] = error_of([&] { validate_kb_name(bad); });
    EXPECT_EQ(code, Code::invalid_argument) << "'" << bad << "'";
    EXPECT_EQ(field, "name") << "'" << bad << "'";
  }
  EXPECT_EQ(error_of([] { validate_kb_name(std::string(64, 'a')); }).first, Code::invalid_argument);
}

TEST(KbName, ValidNamesAreAccepted) {
  for (std::string good : {std::string("a"), std::string("kb_1-x"), std::string("0"),
                           std::string("9lives"), std::string("a-"), std::string(63, 'z')})
    EXPECT_NO_THROW(validate_kb_name(good)) << good;
}

TEST(KbConfigSet, DottedKeyWithJsonNumber) {
  KbConfig c = kb_config_set({}, "chunking.max_tokens", "256");
  EXPECT_EQ(c.chunking.max_tokens, 256);
  EXPECT_EQ(c.chunking.profile, "prose");  // siblings untouched
}

TEST(KbConfigSet, BareWordsAreStrings) {
  KbConfig c = kb_config_set({}, "description", "hello world");
  EXPECT_EQ(c.description, "hello world");
  c = kb_config_set(c, "chunking.profile", "code");
  EXPECT_EQ(c.chunking.profile, "code");
  c = kb_config_set(c, "description", R"("42")");
  EXPECT_EQ(c.description, "42");
}

TEST(KbConfigSet, JsonArraysAndObjects) {
  KbConfig c = kb_config_set({}, "modes", R"(["grep"])");
  EXPECT_EQ(c.modes, (std::vector<Mode>{Mode::grep}));
  c = kb_config_set(c, "subjects.keys", R"(["contact_id"])");
  EXPECT_EQ(c.subjects.keys, (std::vector<std::string>{"contact_id"}));
  c = kb_config_set(c, "limits", R"({"max_upload_bytes": 99})");
  EXPECT_EQ(c.limits.max_upload_bytes, 99);
  EXPECT_EQ(c.limits.max_chunks_per_document, 2000);
}

// `null` resets a setting to its default at the top level too, as docs/cli.md says; a list
// typed as the shell user types it (`modes=keyword,vector`) is the list.
TEST(KbConfigSet, NullResetsTopLevelSettingsAndModesTakeACommaList) {
  KbConfig c = kb_config_set({}, "description", "team notes");
  c = kb_config_set(c, "modes", "keyword, grep");
  EXPECT_EQ(c.modes, (std::vector<Mode>{Mode::keyword, Mode::grep}));
  c = kb_config_set(c, "revision", "3");
  c = kb_config_set(c, "description", "null");
  EXPECT_EQ(c.description, "");
  c = kb_config_set(c, "modes", "null");
  EXPECT_EQ(c.modes, KbConfig{}.modes);
  c = kb_config_set(c, "revision", "null");
  EXPECT_EQ(c.revision, 0);
  // With an embedder, the default modes are the semantic ones too.
  c = kb_config_set(c, "embedder.provider", "hash");
  c = kb_config_set(c, "modes", "keyword");
  c = kb_config_set(c, "modes", "null");
  EXPECT_EQ(c.modes.size(), all_modes().size());
  EXPECT_EQ(error_of([&] { kb_config_set(c, "modes", "keyword,sideways"); }).second, "modes");
}

TEST(KbConfigSet, NullResetsHybridSettings) {
  KbConfig c = kb_config_set({}, "hybrid.semantic_ratio", "0.1");
  c = kb_config_set(c, "hybrid.weighting", "fixed");
  EXPECT_EQ(c.hybrid.semantic_ratio, 0.1);
  EXPECT_EQ(c.hybrid.weighting, "fixed");
  c = kb_config_set(c, "hybrid.semantic_ratio", "null");
  c = kb_config_set(c, "hybrid.weighting", "null");
  EXPECT_EQ(c.hybrid.semantic_ratio, HybridConfig{}.semantic_ratio);
  EXPECT_EQ(c.hybrid.weighting, "adaptive");
  EXPECT_EQ(error_of([&] { kb_config_set(c, "hybrid.weighting", "sometimes"); }).second,
            "hybrid.weighting");
}

// chunking.segmenter: a stored config without it is a KB from before the setting (none), whose
// chunking revision must not move; icu is part of the revision; null sets icu.
TEST(KbConfigSet, ChunkingSegmenterIsInTheRevisionOnlyWhenNotNone) {
  const KbConfig old =
      kb_config_from_json(nlohmann::json::parse(R"({"chunking": {"max_tokens": 256}})"));
  EXPECT_EQ(old.chunking.segmenter, "none");
  EXPECT_EQ(kb_config_to_json(old)["chunking"]["segmenter"], "none");
  KbConfig none = kb_config_set(old, "chunking.segmenter", "none");
  EXPECT_EQ(config_revision(none), config_revision(old));
  KbConfig icu = kb_config_set(old, "chunking.segmenter", "icu");
  EXPECT_NE(config_revision(icu), config_revision(old));
  EXPECT_EQ(kb_config_set(old, "chunking.segmenter", "null").chunking.segmenter, "icu");
  // Round trip: what is stored reads back the same.
  EXPECT_EQ(kb_config_from_json(kb_config_to_json(icu)).chunking.segmenter, "icu");
  EXPECT_EQ(error_of([&] { kb_config_set(old, "chunking.segmenter", "bigram"); }).second,
            "chunking.segmenter");
}

TEST(KbConfigSet, UnknownDottedKeyIsNamed) {
  auto [code, field] = error_of([] { kb_config_set({}, "chunking.max_tokns", "100"); });
  EXPECT_EQ(code, Code::invalid_argument);
  EXPECT_EQ(field, "chunking.max_tokns");
  EXPECT_EQ(error_of([] { kb_config_set({}, "colour", "red"); }).second, "colour");
}

TEST(KbConfigSet, OutOfRangeValuesAreRefusedAndLeaveInputUntouched) {
  KbConfig base = kb_config_set({}, "chunking.max_tokens", "100");
  EXPECT_EQ(error_of([&] { kb_config_set(base, "chunking.overlap_tokens", "51"); }).second,
            "chunking.overlap_tokens");
  EXPECT_EQ(error_of([&] { kb_config_set(base, "chunking.max_tokens", "8192"); }).second,
            "chunking.max_tokens");
  EXPECT_EQ(base.chunking.max_tokens, 100);
}

TEST(KbConfigSet, SwitchingToNoneClearsBudgets) {
  KbConfig c = kb_config_set({}, "chunking.max_tokens", "128");
  c = kb_config_set(c, "chunking.overlap_tokens", "10");
  c = kb_config_set(c, "chunking.profile", "none");
  EXPECT_EQ(c.chunking.profile, "none");
  EXPECT_FALSE(c.chunking.max_tokens.has_value());
  EXPECT_FALSE(c.chunking.overlap_tokens.has_value());
  // ... and a budget cannot be set while the profile is none.
  EXPECT_EQ(error_of([&] { kb_config_set(c, "chunking.max_tokens", "64"); }).second,
            "chunking.max_tokens");
}

TEST(KbConfigSet, NullResetsAnOptionalBudget) {
  KbConfig c = kb_config_set({}, "chunking.max_tokens", "128");
  c = kb_config_set(c, "chunking.max_tokens", "null");
  EXPECT_FALSE(c.chunking.max_tokens.has_value());
  EXPECT_EQ(c.chunking.effective_max_tokens(), 512);
}

TEST(KbConfig, RoundTripsThroughJson) {
  KbConfig c;
  c.description = "support tickets";
  c.modes = {Mode::grep, Mode::keyword, Mode::hybrid};
  c.chunking.profile = "code";
  c.chunking.max_tokens = 300;
  c.chunking.overlap_tokens = 20;
  c.subjects.keys = {"contact_id", "company_id"};
  c.limits.max_upload_bytes = 1234;
  c.limits.max_chunks_per_document = 77;
  c.limits.max_chunks_per_call = 888;
  c.revision = 5;
  json j = kb_config_to_json(c);
  KbConfig back = kb_config_from_json(j);
  EXPECT_EQ(kb_config_to_json(back), j);
  EXPECT_EQ(back.description, c.description);
  EXPECT_EQ(back.modes, c.modes);
  EXPECT_EQ(back.chunking.profile, "code");
  EXPECT_EQ(back.chunking.max_tokens, 300);
  EXPECT_EQ(back.chunking.overlap_tokens, 20);
  EXPECT_EQ(back.subjects.keys, c.subjects.keys);
  EXPECT_EQ(back.limits.max_upload_bytes, 1234);
  EXPECT_EQ(back.limits.max_chunks_per_document, 77);
  EXPECT_EQ(back.limits.max_chunks_per_call, 888);
  EXPECT_EQ(back.revision, 5);
}

TEST(KbConfig, DerivedDefaultsAreNotStored) {
  json j = kb_config_to_json(KbConfig{});
  EXPECT_FALSE(j["chunking"].contains("max_tokens"));
  EXPECT_FALSE(j["chunking"].contains("overlap_tokens"));
  // so a stored default overlap follows a later change of max_tokens
  KbConfig c = kb_config_set(kb_config_from_json(j), "chunking.max_tokens", "64");
  EXPECT_EQ(c.chunking.effective_overlap_tokens(), 8);
}

TEST(KbConfigEmbedding, EmbedderStoreAndHybridRoundTrip) {
  KbConfig c = kb_config_from_json(json::parse(R"({
    "embedder": {"provider": "openai:text-embedding-3-small", "settings": {"dimensions": 512}},
    "store": {"id": "embedded", "settings": {"hnsw_threshold": 100}, "embedding_mode": "platform"},
    "hybrid": {"fusion": "rrf", "semantic_ratio": 0.35, "rrf_k": 30, "vector_weight": 2}})"));
  EXPECT_EQ(c.embedder.provider, "openai:text-embedding-3-small");
  EXPECT_EQ(json::parse(c.embedder.settings_json)["dimensions"], 512);
  EXPECT_EQ(c.store.embedding_mode, "platform");
  EXPECT_EQ(c.hybrid.fusion, "rrf");
  EXPECT_DOUBLE_EQ(c.hybrid.semantic_ratio, 0.35);
  EXPECT_EQ(c.hybrid.rrf_k, 30);
  json j = kb_config_to_json(c);
  EXPECT_EQ(kb_config_to_json(kb_config_from_json(j)), j);
}

TEST(KbConfigEmbedding, AnEmbedderOnDefaultModesEnablesTheSemanticModes) {
  KbConfig c = kb_config_from_json(json::parse(R"({"embedder": "hash"})"));
  EXPECT_EQ(c.modes, (std::vector<Mode>{Mode::grep, Mode::keyword, Mode::vector, Mode::hybrid,
                                        Mode::automatic}));
  // Explicit modes win.
  c = kb_config_from_json(json::parse(R"({"embedder": "hash", "modes": ["keyword"]})"));
  EXPECT_EQ(c.modes, (std::vector<Mode>{Mode::keyword}));
  // Without an embedder the defaults stay keyword + grep.
  EXPECT_EQ(kb_config_from_json(json::object()).modes,
            (std::vector<Mode>{Mode::grep, Mode::keyword}));
}

TEST(KbConfigEmbedding, BadValuesNameTheirField) {
  EXPECT_EQ(config_error(R"({"embedder": {"provider": "Bad Id"}})").second, "embedder.provider");
  EXPECT_EQ(config_error(R"({"embedder": {"model": "x"}})").second, "embedder.model");
  EXPECT_EQ(config_error(R"({"embedder": {"settings": []}})").second, "embedder.settings");
  EXPECT_EQ(config_error(R"({"store": {"embedding_mode": "sometimes"}})").second,
            "store.embedding_mode");
  EXPECT_EQ(config_error(R"({"store": {"id": ""}})").second, "store.id");
  EXPECT_EQ(config_error(R"({"hybrid": {"semantic_ratio": 1.5}})").second, "hybrid.semantic_ratio");
  EXPECT_EQ(config_error(R"({"hybrid": {"fusion": "max"}})").second, "hybrid.fusion");
  EXPECT_EQ(config_error(R"({"hybrid": {"rrf_k": 0}})").second, "hybrid.rrf_k");
  EXPECT_EQ(config_error(R"({"hybrid": {"keyword_weight": 0, "vector_weight": 0}})").second,
            "hybrid.vector_weight");
}

TEST(Revision, ChangesWithWhatChangesVectorsOnly) {
  KbConfig a;
  const std::string base = revision(a, "hash|256");
  EXPECT_EQ(base.size(), 16u);
  EXPECT_EQ(revision(a, "hash|256"), base);  // stable
  EXPECT_NE(revision(a, "hash|512"), base);  // embedder identity
  KbConfig b = a;
  b.chunking.max_tokens = 256;
  EXPECT_NE(revision(b, "hash|256"), base);  // chunking budget
  EXPECT_NE(config_revision(b), config_revision(a));
  KbConfig c = a;
  c.revision = 1;
  EXPECT_NE(revision(c, "hash|256"), base);  // manual counter
  KbConfig d = a;                            // settings that do not change vectors
  d.description = "other";
  d.hybrid.semantic_ratio = 0.9;
  d.store.embedding_mode = "platform";
  d.embedder.settings_json = R"({"timeout_ms": 5})";
  d.limits.max_upload_bytes = 10;
  EXPECT_EQ(revision(d, "hash|256"), base);
  // An explicit budget equal to the default is the same chunking.
  KbConfig e = a;
  e.chunking.max_tokens = 512;
  EXPECT_EQ(config_revision(e), config_revision(a));
}

}  // namespace
}  // namespace quarry::core
