// The qdrant store's pure parts, no server: the filter translation (its operator table and what
// it refuses), point ids, collection names, payload sanitising and settings.
// tests/store/qdrant/ runs the contract suite through a fake Qdrant (documented shapes and
// semantics; not a real server) and, opt-in, against a real one.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "quarry/error.h"
#include "store/qdrant/qdrant_store.h"
#include "test_util.h"

namespace quarry::store::qdrant {
namespace {
using nlohmann::json;

json tr(const char* filter) {
  return translate_filter(core::parse_filter_text(filter));
}

using quarry::testing::code_of;

TEST(QdrantFilterTranslation, OperatorTable) {
  EXPECT_EQ(tr(R"({"lang": "en"})"), json::parse(R"({"key": "m.lang", "match": {"value": "en"}})"));
  EXPECT_EQ(tr(R"({"d": true})"), json::parse(R"({"key": "m.d", "match": {"value": true}})"));
  // Numbers: a range, so 1 matches a stored 1.0 as Quarry's numeric comparison does.
  EXPECT_EQ(tr(R"({"n": 3})"), json::parse(R"({"key": "m.n", "range": {"gte": 3, "lte": 3}})"));
  EXPECT_EQ(tr(R"({"n": {"$ne": 3}})"),
            json::parse(R"({"must_not": [{"key": "m.n", "range": {"gte": 3, "lte": 3}}]})"));
  EXPECT_EQ(tr(R"({"n": {"$gt": 2.5}})"), json::parse(R"({"key": "m.n", "range": {"gt": 2.5}})"));
  EXPECT_EQ(tr(R"({"n": {"$gte": 1}})"), json::parse(R"({"key": "m.n", "range": {"gte": 1}})"));
  EXPECT_EQ(tr(R"({"n": {"$lt": 1}})"), json::parse(R"({"key": "m.n", "range": {"lt": 1}})"));
  EXPECT_EQ(tr(R"({"n": {"$lte": 1}})"), json::parse(R"({"key": "m.n", "range": {"lte": 1}})"));
  EXPECT_EQ(tr(R"({"t": {"$in": ["a", "b"]}})"),
            json::parse(R"({"key": "m.t", "match": {"any": ["a", "b"]}})"));
  EXPECT_EQ(tr(R"({"t": {"$nin": ["a", "b"]}})"),
            json::parse(R"({"must_not": [{"key": "m.t", "match": {"any": ["a", "b"]}}]})"));
  EXPECT_EQ(tr(R"({"a": null})"), json::parse(R"({"is_null": {"key": "m.a"}})"));
  EXPECT_EQ(tr(R"({"a": {"$ne": null}})"),
            json::parse(R"({"must_not": [{"is_null": {"key": "m.a"}}]})"));
  EXPECT_EQ(tr(R"({"a": {"$exists": true}})"),
            json::parse(R"({"key": "quarry_has", "match": {"value": "a"}})"));
  EXPECT_EQ(tr(R"({"a": {"$exists": false}})"),
            json::parse(R"({"must_not": [{"key": "quarry_has", "match": {"value": "a"}}]})"));
  EXPECT_EQ(tr(R"({"info.team": "red"})"),
            json::parse(R"({"key": "m.info.team", "match": {"value": "red"}})"));
  EXPECT_EQ(tr(R"({"$or": [{"a": "x"}, {"b": true}]})"),
            json::parse(R"({"should": [{"key": "m.a", "match": {"value": "x"}},
                                       {"key": "m.b", "match": {"value": true}}]})"));
  EXPECT_EQ(tr(R"({"a": "x", "b": "y"})"),
            json::parse(R"({"must": [{"key": "m.a", "match": {"value": "x"}},
                                     {"key": "m.b", "match": {"value": "y"}}]})"));
  EXPECT_TRUE(translate_filter(core::Filter{}).is_null());
}

TEST(QdrantFilterTranslation, MixedListsSplitByKindAndEmptyListsAreConstants) {
  EXPECT_EQ(tr(R"({"t": {"$in": ["a", 1, true, null]}})"),
            json::parse(R"({"should": [{"key": "m.t", "match": {"value": "a"}},
                                       {"key": "m.t", "range": {"gte": 1, "lte": 1}},
                                       {"key": "m.t", "match": {"value": true}},
                                       {"is_null": {"key": "m.t"}}]})"));
  // $in [] matches nothing, $nin [] everything (quarry_chunk >= 0 on every point).
  EXPECT_EQ(tr(R"({"t": {"$in": []}})"),
            json::parse(R"({"key": "quarry_chunk", "range": {"lt": 0}})"));
  EXPECT_EQ(tr(R"({"t": {"$nin": []}})"),
            json::parse(R"({"key": "quarry_chunk", "range": {"gte": 0}})"));
}

TEST(QdrantFilterTranslation, WhatQdrantCannotSayExactlyIsRefusedNotApproximated) {
  EXPECT_EQ(code_of([] { tr(R"({"date": {"$gte": "2020-01-01"}})"); }), Code::mode_unavailable);
  EXPECT_EQ(code_of([] { tr(R"({"id": 9007199254740993})"); }), Code::mode_unavailable);
  EXPECT_EQ(code_of([] { tr(R"({"id": {"$lt": -9007199254740992}})"); }), Code::mode_unavailable);
  EXPECT_EQ(code_of([] { tr(R"({"id": {"$in": ["a", 1e300]}})"); }), Code::mode_unavailable);
  EXPECT_EQ(code_of([] { tr(R"({"id": 9007199254740991})"); }), Code::ok);
  EXPECT_EQ(code_of([] { tr(R"({"b": {"$gt": true}})"); }), Code::invalid_argument);
  try {
    tr(R"({"date": {"$gte": "2020-01-01"}})");
  } catch (const Error& e) {
    EXPECT_NE(e.message().find("date"), std::string::npos) << e.message();
  }
}

TEST(QdrantPointIds, DeterministicUuidsFromKbDocumentAndChunk) {
  const std::string id = point_id("kb", "doc", 3);
  EXPECT_EQ(id, point_id("kb", "doc", 3));
  static const std::regex uuid(
      "^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$");
  EXPECT_TRUE(std::regex_match(id, uuid)) << id;
  std::set<std::string> ids = {id,
                               point_id("kb", "doc", 4),
                               point_id("kb2", "doc", 3),
                               point_id("kb", "doc2", 3),
                               point_id("k", "bdoc", 3),  // separators keep the parts apart
                               point_id("kb", "doc3", 0)};
  EXPECT_EQ(ids.size(), 6u);
}

TEST(QdrantNames, CollectionsPerRevisionOrPerKbAndRevision) {
  QdrantSettings ns = parse_qdrant_settings({{"collection_prefix", "q"}});
  EXPECT_EQ(collection_name(ns, "a", "r1"), collection_name(ns, "b", "r1"));
  EXPECT_NE(collection_name(ns, "a", "r1"), collection_name(ns, "a", "r2"));
  EXPECT_EQ(collection_name(ns, "a", "r1").rfind(collection_family(ns, "a"), 0), 0u);
  QdrantSettings per_kb =
      parse_qdrant_settings({{"collection_prefix", "q"}, {"tenancy", "collection"}});
  EXPECT_NE(collection_name(per_kb, "a", "r1"), collection_name(per_kb, "b", "r1"));
  EXPECT_EQ(collection_name(per_kb, "a", "r2").rfind(collection_family(per_kb, "a"), 0), 0u);
  EXPECT_NE(collection_name(per_kb, "b", "r1").rfind(collection_family(per_kb, "a"), 0), 0u);
  static const std::regex safe("^[a-z0-9_-]+$");
  EXPECT_TRUE(std::regex_match(collection_name(ns, "x", "Rév/1 ?"), safe));
}

TEST(QdrantPayload, MetadataKeepsObjectsAndScalarsDropsArraysAndUnreachableKeys) {
  json md = json::parse(R"({"lang": "en", "n": 2, "x": 2.5, "b": false, "z": null,
                            "info": {"team": "red", "tags": [1]}, "tags": ["a"],
                            "bad key": 1, "a.b": 2, "big": 18446744073709551615})");
  json m = payload_metadata(md);
  EXPECT_EQ(m["lang"], "en");
  EXPECT_EQ(m["n"], 2);
  EXPECT_EQ(m["info"], json({{"team", "red"}}));
  EXPECT_TRUE(m["z"].is_null());
  EXPECT_TRUE(m["big"].is_number_float());
  EXPECT_FALSE(m.contains("tags"));
  EXPECT_FALSE(m.contains("bad key"));
  EXPECT_FALSE(m.contains("a.b"));
  json has = present_paths(md);
  std::set<std::string> paths(has.begin(), has.end());
  for (const char* p : {"lang", "z", "info", "info.team", "info.tags", "tags", "big"})
    EXPECT_TRUE(paths.count(p)) << p;
  EXPECT_FALSE(paths.count("bad key"));
}

TEST(QdrantSettingsParse, DefaultsAndRefusals) {
  QdrantSettings s = parse_qdrant_settings(nullptr);
  EXPECT_EQ(s.url, "http://127.0.0.1:6333");
  EXPECT_EQ(s.tenancy, "namespace");
  EXPECT_EQ(parse_qdrant_settings({{"url", "http://h:1/"}}).url, "http://h:1");
  EXPECT_EQ(code_of([] {
              parse_qdrant_settings({{"tenancy", "row_filter"}});
            }),
            Code::invalid_argument);
  EXPECT_EQ(code_of([] {
              parse_qdrant_settings({{"collection_prefix", "a/b"}});
            }),
            Code::invalid_argument);
  EXPECT_EQ(code_of([] { parse_qdrant_settings({{"batch_size", 0}}); }), Code::invalid_argument);
  try {
    parse_qdrant_settings({{"colour", 1}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_NE(e.message().find("colour"), std::string::npos);
  }
  EXPECT_EQ(code_of([] {
              make_qdrant_store({{"api_key_secret", "k"}},
                                StoreContext{"", [](const std::string&) { return ""; }});
            }),
            Code::unauthorized);
}

TEST(QdrantCapabilities, TenancyIsReportedAsConfigured) {
  EXPECT_EQ(make_qdrant_store(json::object(), StoreContext{})->capabilities().tenancy, "namespace");
  auto c = make_qdrant_store({{"tenancy", "collection"}}, StoreContext{})->capabilities();
  EXPECT_EQ(c.tenancy, "collection");
  EXPECT_FALSE(c.embeds_on_write);
  EXPECT_TRUE(c.metadata_filter);
  EXPECT_TRUE(StoreRegistry::builtin().has("qdrant"));
}

}  // namespace
}  // namespace quarry::store::qdrant
