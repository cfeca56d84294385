// The chroma store's pure parts, no server: the filter -> `where` translation (its table and its
// exactness against core::filter_matches() through a model of Chroma's operator semantics),
// metadata flattening, names, ids, settings, and what an unreachable server looks like.
// tests/store/chroma/ runs the contract suite against a real Chroma server.
#include <gtest/gtest.h>

#include <random>

#include "quarry/error.h"
#include "store/chroma/chroma_http.h"
#include "store/chroma/chroma_store.h"

namespace quarry::store::chroma {
namespace {
using nlohmann::json;

json where(const char* filter) {
  return translate_filter(core::parse_filter_text(filter));
}

TEST(ChromaFilterTranslation, OperatorTable) {
  EXPECT_EQ(where(R"({"lang": "en"})"), json::parse(R"({"lang": {"$eq": "en"}})"));
  EXPECT_EQ(where(R"({"n": {"$ne": 3}})"), json::parse(R"({"n": {"$ne": 3}})"));
  EXPECT_EQ(where(R"({"n": {"$gt": 2.5}})"), json::parse(R"({"n": {"$gt": 2.5}})"));
  EXPECT_EQ(where(R"({"n": {"$gte": 1}})"), json::parse(R"({"n": {"$gte": 1}})"));
  EXPECT_EQ(where(R"({"n": {"$lt": 1}})"), json::parse(R"({"n": {"$lt": 1}})"));
  EXPECT_EQ(where(R"({"n": {"$lte": 1}})"), json::parse(R"({"n": {"$lte": 1}})"));
  EXPECT_EQ(where(R"({"t": {"$in": ["a", "b"]}})"), json::parse(R"({"t": {"$in": ["a", "b"]}})"));
  EXPECT_EQ(where(R"({"t": {"$nin": ["a"]}})"), json::parse(R"({"t": {"$nin": ["a"]}})"));
  EXPECT_EQ(where(R"({"a": {"$exists": true}})"),
            json::parse(R"({"quarry:has:a": {"$eq": true}})"));
  EXPECT_EQ(where(R"({"a": {"$exists": false}})"),
            json::parse(R"({"quarry:has:a": {"$ne": true}})"));
  EXPECT_EQ(where(R"({"info.team": "red"})"), json::parse(R"({"info.team": {"$eq": "red"}})"));
  EXPECT_EQ(where(R"({"a": null})"), json::parse(R"({"quarry:null:a": {"$eq": true}})"));
  EXPECT_EQ(where(R"({"a": {"$ne": null}})"), json::parse(R"({"quarry:null:a": {"$ne": true}})"));
  EXPECT_EQ(where(R"({"$or": [{"a": 1}, {"b": true}]})"),
            json::parse(R"({"$or": [{"a": {"$eq": 1}}, {"b": {"$eq": true}}]})"));
  EXPECT_EQ(where(R"({"a": 1, "b": 2})"),
            json::parse(R"({"$and": [{"a": {"$eq": 1}}, {"b": {"$eq": 2}}]})"));
  EXPECT_EQ(translate_filter(core::Filter{}), json::object());
}

TEST(ChromaFilterTranslation, MixedListsAreSplitByType) {
  // Chroma refuses a $in/$nin list of several types ("Invalid where clause").
  EXPECT_EQ(where(R"({"t": {"$in": ["a", 1, 2.5, true, null]}})"),
            json::parse(R"({"$or": [{"t": {"$in": ["a"]}}, {"t": {"$in": [1]}},
                                    {"t": {"$in": [2.5]}}, {"t": {"$in": [true]}},
                                    {"quarry:null:t": {"$eq": true}}]})"));
  EXPECT_EQ(where(R"({"t": {"$nin": ["a", 1]}})"),
            json::parse(R"({"$and": [{"t": {"$nin": ["a"]}}, {"t": {"$nin": [1]}}]})"));
  // Chroma refuses empty lists too: $in [] matches nothing, $nin [] everything.
  EXPECT_EQ(where(R"({"t": {"$in": []}})"), json::parse(R"({"quarry:chunk_index": {"$lt": 0}})"));
  EXPECT_EQ(where(R"({"t": {"$nin": []}})"), json::parse(R"({"quarry:chunk_index": {"$gte": 0}})"));
}

TEST(ChromaFilterTranslation, StringOrderComparisonIsRefusedNotApproximated) {
  try {
    where(R"({"date": {"$gte": "2020-01-01"}})");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::mode_unavailable);
    EXPECT_NE(e.message().find("date"), std::string::npos);
  }
}

TEST(ChromaMetadata, FlattensToReachablePathsWithMarkers) {
  json md = json::parse(R"({"lang": "en", "year": 2020, "rank": 2.5, "draft": false,
                            "info": {"team": "red", "deep": {"x": 1}}, "tags": ["a", "b"],
                            "none": null, "bad key": 1, "a.b": 2, "big": 18446744073709551615})");
  json f = flatten_metadata(md);
  EXPECT_EQ(f["lang"], "en");
  EXPECT_EQ(f["year"], 2020);
  EXPECT_EQ(f["rank"], 2.5);
  EXPECT_EQ(f["draft"], false);
  EXPECT_EQ(f["info.team"], "red");
  EXPECT_EQ(f["info.deep.x"], 1);
  EXPECT_TRUE(f["big"].is_number_float());
  for (const char* p : {"lang", "info", "info.deep", "info.deep.x", "tags", "none"})
    EXPECT_EQ(f[std::string(kHasPrefix) + p], true) << p;
  EXPECT_EQ(f[std::string(kNullPrefix) + "none"], true);
  EXPECT_FALSE(f.contains("tags"));
  EXPECT_FALSE(f.contains("info"));
  EXPECT_FALSE(f.contains("bad key"));  // no filter field can name these two
  EXPECT_FALSE(f.contains("a.b"));
  EXPECT_FALSE(f.contains(std::string(kHasPrefix) + "a.b"));
  for (const auto& [k, v] : f.items()) EXPECT_TRUE(v.is_primitive() && !v.is_null()) << k;
}

// Chroma 1.0's `where` semantics as observed against the real server (tests/store/chroma/ checks
// the same cases end to end): $ne/$nin hold for a missing key or another type; numbers compare
// across int and float; bools and strings only with their own kind; order needs numbers.
bool same_kind(const json& a, const json& b) {
  if (a.is_boolean() || b.is_boolean()) return a.is_boolean() && b.is_boolean();
  if (a.is_number() || b.is_number()) return a.is_number() && b.is_number();
  return a.is_string() && b.is_string();
}
bool chroma_eq(const json& md, const std::string& key, const json& v) {
  auto it = md.find(key);
  return it != md.end() && same_kind(*it, v) && *it == v;
}
bool chroma_matches(const json& w, const json& md) {
  auto [key, cond] = *w.items().begin();
  if (key == "$and" || key == "$or") {
    for (const auto& c : cond)
      if (chroma_matches(c, md) == (key == "$or")) return key == "$or";
    return key == "$and";
  }
  auto [op, v] = *cond.items().begin();
  if (op == "$eq") return chroma_eq(md, key, v);
  if (op == "$ne") return !chroma_eq(md, key, v);
  if (op == "$in" || op == "$nin") {
    bool any = false;
    for (const auto& e : v) any = any || chroma_eq(md, key, e);
    return op == "$in" ? any : !any;
  }
  auto it = md.find(key);
  if (it == md.end() || !it->is_number() || it->is_boolean()) return false;
  double a = it->get<double>(), b = v.get<double>();
  return op == "$gt" ? a > b : op == "$gte" ? a >= b : op == "$lt" ? a < b : a <= b;
}

TEST(ChromaFilterTranslation, AgreesWithReferenceSemanticsOnRandomMetadata) {
  std::mt19937 rng(42);
  auto pick = [&](std::vector<json> xs) { return xs[rng() % xs.size()]; };
  std::vector<json> docs;
  for (int i = 0; i < 300; ++i) {
    json m = json::object();
    if (rng() % 4) m["a"] = pick({"x", "y", 1, 2, 2.5, true, false, nullptr, json::array({1})});
    if (rng() % 3) m["o"] = rng() % 2 ? json{{"b", pick({"x", 1, nullptr})}} : json("flat");
    if (rng() % 2) m["n"] = pick({0, 1, 1.0, 3, -2.5});
    docs.push_back(m);
  }
  const char* filters[] = {
      R"({"a": "x"})",
      R"({"a": 1})",
      R"({"a": 2.0})",
      R"({"a": true})",
      R"({"a": null})",
      R"({"a": {"$ne": "x"}})",
      R"({"a": {"$ne": 1}})",
      R"({"a": {"$ne": null}})",
      R"({"a": {"$in": ["x", 1, null]}})",
      R"({"a": {"$nin": ["y", 2, false]}})",
      R"({"a": {"$gt": 1}})",
      R"({"a": {"$lte": 2.5}})",
      R"({"a": {"$exists": true}})",
      R"({"a": {"$exists": false}})",
      R"({"o": {"$exists": true}})",
      R"({"o": "flat"})",
      R"({"o": {"$ne": "flat"}})",
      R"({"o.b": "x"})",
      R"({"o.b": {"$exists": true}})",
      R"({"o.b": null})",
      R"({"o.b": {"$nin": [1]}})",
      R"({"$or": [{"n": {"$gte": 1}}, {"a": {"$exists": false}}]})",
      R"({"$and": [{"n": {"$ne": 1}}, {"o.b": {"$ne": "x"}}]})",
      R"({"n": {"$in": [1, 3]}})",
      R"({"n": {"$nin": [1.0]}})",
  };
  for (const char* text : filters) {
    auto f = core::parse_filter_text(text);
    json w = translate_filter(f);
    int matched = 0;
    for (const auto& d : docs) {
      bool want = core::filter_matches(f, d);
      matched += want;
      EXPECT_EQ(chroma_matches(w, flatten_metadata(d)), want) << text << " on " << d.dump();
    }
    EXPECT_GT(matched, 0) << text;  // each case exercises something
  }
}

TEST(ChromaNames, CollectionNamesAreDeterministicSafeAndDistinct) {
  const std::string a = collection_name("My KB/ü", "r1");
  EXPECT_EQ(a, collection_name("My KB/ü", "r1"));
  EXPECT_NE(a, collection_name("My KB/ü", "r2"));
  EXPECT_NE(a, collection_name("my-kb--", "r1"));
  const std::string long_name = collection_name(std::string(300, 'k'), std::string(300, 'r'));
  for (const auto& n : {a, long_name, collection_name("", "")}) {
    EXPECT_GE(n.size(), 3u);
    EXPECT_LE(n.size(), 63u);
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(n.front())));
    EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(n.back())));
    for (char c : n) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c)) || c == '-') << n;
  }
  EXPECT_EQ(record_id("doc#1", 3), "doc#1#3");
}

TEST(ChromaSettingsTest, DefaultsAndValidation) {
  auto s = parse_chroma_settings(json::object());
  EXPECT_EQ(s.url, "http://127.0.0.1:8000");
  EXPECT_EQ(s.tenant, "default_tenant");
  EXPECT_EQ(s.database, "default_database");
  EXPECT_FALSE(s.allow_private);
  s = parse_chroma_settings({{"url", "http://h:1/"}, {"allow_private", true}, {"timeout_ms", 500}});
  EXPECT_EQ(s.url, "http://h:1");
  auto code = [](const json& j) {
    try {
      parse_chroma_settings(j);
    } catch (const Error& e) {
      return e.code();
    }
    return Code::ok;
  };
  EXPECT_EQ(code({{"nope", 1}}), Code::invalid_argument);
  EXPECT_EQ(code({{"timeout_ms", "5"}}), Code::invalid_argument);
  EXPECT_EQ(code({{"url", ""}}), Code::invalid_argument);
  EXPECT_EQ(code(json::array()), Code::invalid_argument);
}

TEST(ChromaWire, Base64FloatsIsLittleEndianFloat32) {
  EXPECT_EQ(base64_floats({}), "");
  EXPECT_EQ(base64_floats({1.0f}), "AACAPw==");             // 00 00 80 3f
  EXPECT_EQ(base64_floats({1.0f, -2.0f}), "AACAPwAAAMA=");  // + 00 00 00 c0
  EXPECT_EQ(path_segment("a b/c"), "a%20b%2Fc");
}

TEST(ChromaUnreachable, IsUnavailableAndCallsNameTheUrl) {
  // Port 1 on loopback: nothing listens there, the connection is refused at once.
  auto store = make_chroma_store(
      {{"url", "http://127.0.0.1:1"}, {"allow_private", true}, {"max_retries", 0}}, {});
  EXPECT_EQ(store->id(), "chroma");
  EXPECT_EQ(store->capabilities().tenancy, "collection");
  EXPECT_FALSE(store->is_available());
  try {
    store->count(Scope{"kb", "r1", 4});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_TRUE(e.code() == Code::upstream_error || e.code() == Code::timeout) << e.message();
    EXPECT_NE(e.message().find("http://127.0.0.1:1"), std::string::npos) << e.message();
  }
  // Without allow_private the SSRF guard refuses a loopback server, and says how to allow it.
  auto guarded = make_chroma_store({{"url", "http://127.0.0.1:1"}, {"max_retries", 0}}, {});
  EXPECT_FALSE(guarded->is_available());
  try {
    guarded->count(Scope{"kb", "r1", 4});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::blocked_address);
    EXPECT_NE(e.message().find("allow_private"), std::string::npos) << e.message();
  }
}

}  // namespace
}  // namespace quarry::store::chroma
