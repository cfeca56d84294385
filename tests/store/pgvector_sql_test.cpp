// The pure half of the pgvector store (src/store/pgvector/pg_sql.h): settings, names and the SQL
// it sends, without a server. What the SQL means on a real server is checked by
// tests/store/pgvector/ (the contract suite and the filter edge cases against pgvector).
#include <gtest/gtest.h>

#include <charconv>
#include <cstring>

#include "quarry/error.h"
#include "store/pgvector/pg_sql.h"
#include "test_util.h"

namespace quarry::store::pgvector {
namespace {
using nlohmann::json;

Code code_of(const json& settings) {
  return quarry::testing::code_of([&] { parse_pg_settings(settings); });
}

TEST(PgSql, SettingsHaveDefaultsAndRefuseUnknownOrBadKeys) {
  auto s = parse_pg_settings({{"dsn_secret", "pg"}});
  EXPECT_EQ(s.schema, "quarry");
  EXPECT_EQ(s.tenancy, "row_filter");
  EXPECT_EQ(s.index, "hnsw");
  EXPECT_EQ(code_of(json::object()), Code::invalid_argument);  // dsn_secret required
  EXPECT_EQ(code_of({{"dsn_secret", "pg"}, {"dsn", "host=x"}}), Code::invalid_argument);
  EXPECT_EQ(code_of({{"dsn_secret", "pg"}, {"tenancy", "namespace"}}), Code::invalid_argument);
  EXPECT_EQ(code_of({{"dsn_secret", "pg"}, {"schema", "a\"; DROP"}}), Code::invalid_argument);
  EXPECT_EQ(code_of({{"dsn_secret", "pg"}, {"m", 0}}), Code::invalid_argument);
  EXPECT_EQ(code_of({{"dsn_secret", "pg"}, {"m", 64}, {"ef_construction", 64}}),
            Code::invalid_argument);
  EXPECT_EQ(code_of({{"dsn_secret", "pg"}, {"pool_size", "2"}}), Code::invalid_argument);
  try {
    parse_pg_settings({{"dsn_secret", "pg"}, {"lits", 3}});
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_EQ(e.details().at("key"), "lits");
  }
}

TEST(PgSql, IdentifiersAreQuotedAndTableNamesFollowTenancy) {
  EXPECT_EQ(quote_ident("a\"b"), "\"a\"\"b\"");
  EXPECT_EQ(qualified("quarry", "t"), "\"quarry\".\"t\"");
  PgSettings row;
  PgSettings col;
  col.tenancy = "collection";
  EXPECT_EQ(table_name(row, "kb1", "r1"), table_name(row, "kb2", "r1"));
  EXPECT_NE(table_name(row, "kb1", "r1"), table_name(row, "kb1", "r2"));
  EXPECT_NE(table_name(col, "kb1", "r1"), table_name(col, "kb2", "r1"));
  EXPECT_NE(table_name(col, "kb1", "r1"), table_name(col, "kb1", "r2"));
  // (kb "a", rev "bc") and (kb "ab", rev "c") are different scopes.
  EXPECT_NE(table_name(col, "a", "bc"), table_name(col, "ab", "c"));
  for (const auto& t : {table_name(row, "x", "y"), table_name(col, "x\"; DROP", "y")}) {
    EXPECT_LT(t.size(), 63u);
    for (char c : t)
      EXPECT_TRUE(std::islower(static_cast<unsigned char>(c)) || std::isdigit(c) || c == '_') << t;
  }
}

TEST(PgSql, DdlUsesTheConfiguredIndex) {
  PgSettings s;
  s.m = 24;
  s.ef_construction = 100;
  auto hnsw = vectors_table_ddl(s, "v_1", 384);
  ASSERT_EQ(hnsw.size(), 2u);
  EXPECT_NE(hnsw[0].find("embedding vector(384)"), std::string::npos);
  EXPECT_NE(hnsw[0].find("PRIMARY KEY (kb, doc_id, chunk_index)"), std::string::npos);
  EXPECT_NE(
      hnsw[1].find("USING hnsw (embedding vector_cosine_ops) WITH (m = 24, ef_construction = 100)"),
      std::string::npos);
  s.index = "ivfflat";
  s.lists = 7;
  EXPECT_NE(vectors_table_ddl(s, "v_1", 3)[1].find(
                "USING ivfflat (embedding vector_cosine_ops) WITH (lists = 7)"),
            std::string::npos);
}

TEST(PgSql, QuerySettingsRaiseEfSearchToKAndIterateOnlyWhenSupported) {
  PgSettings s;
  EXPECT_EQ(query_settings_sql(s, 10, true),
            "SET LOCAL hnsw.ef_search = 40;SET LOCAL hnsw.iterative_scan = relaxed_order;");
  EXPECT_EQ(query_settings_sql(s, 200, false), "SET LOCAL hnsw.ef_search = 200;");
  EXPECT_EQ(query_settings_sql(s, 5000, false), "SET LOCAL hnsw.ef_search = 1000;");
  s.iterative_scan = "off";
  EXPECT_EQ(query_settings_sql(s, 10, true), "SET LOCAL hnsw.ef_search = 40;");
  s.index = "ivfflat";
  s.probes = 3;
  s.iterative_scan = "relaxed_order";
  EXPECT_EQ(query_settings_sql(s, 10, true),
            "SET LOCAL ivfflat.probes = 3;SET LOCAL ivfflat.iterative_scan = relaxed_order;");
}

TEST(PgSql, FilterValuesTravelAsParametersNeverInTheSql) {
  SqlParams p;
  p.add("kb");
  auto f = core::parse_filter_text(
      R"({"lang": "x' OR 1=1 --", "year": {"$gte": 2020}, "info.team": {"$in": ["red", 3]}})");
  std::string sql = filter_sql(f, p);
  EXPECT_EQ(sql.find("OR 1=1"), std::string::npos) << sql;
  EXPECT_EQ(sql.find("2020"), std::string::npos) << sql;
  EXPECT_EQ(sql.find("red"), std::string::npos) << sql;
  ASSERT_GE(p.values().size(), 6u);
  EXPECT_EQ(p.values()[0], "kb");
  EXPECT_NE(std::find(p.values().begin(), p.values().end(), "\"x' OR 1=1 --\""), p.values().end());
  EXPECT_NE(std::find(p.values().begin(), p.values().end(), "2020"), p.values().end());
  EXPECT_NE(std::find(p.values().begin(), p.values().end(), "{\"info\",\"team\"}"),
            p.values().end());
  EXPECT_NE(sql.find("$2::text"), std::string::npos) << sql;
}

TEST(PgSql, FilterShapesMatchTheReferenceSemantics) {
  auto sql = [](const char* text) {
    SqlParams p;
    return filter_sql(core::parse_filter_text(text), p);
  };
  EXPECT_EQ(sql(""), "TRUE");
  EXPECT_EQ(sql(R"({"a": 1})"), "(((metadata -> $1::text) = $2::jsonb) IS TRUE)");
  EXPECT_EQ(sql(R"({"a": {"$ne": 1}})"), "(((metadata -> $1::text) = $2::jsonb) IS NOT TRUE)");
  EXPECT_EQ(sql(R"({"a": {"$in": []}})"), "FALSE");
  EXPECT_EQ(sql(R"({"a": {"$nin": []}})"), "TRUE");
  EXPECT_EQ(sql(R"({"a": {"$exists": false}})"), "((metadata -> $1::text) IS NULL)");
  // Order comparisons test the kind first, inside CASE (no cast of a string to numeric).
  EXPECT_EQ(sql(R"({"a": {"$lt": 3}})"),
            "(CASE WHEN jsonb_typeof((metadata -> $1::text)) = 'number' THEN ((metadata -> "
            "$1::text))::numeric < $2::numeric ELSE FALSE END)");
  EXPECT_NE(sql(R"({"a": {"$gt": "m"}})").find("COLLATE \"C\" > $2::text"), std::string::npos);
  // Paths with a numeric segment check that every parent is an object (no array indexing).
  EXPECT_NE(sql(R"({"a.0": 1})").find("jsonb_typeof(metadata #> $2::text[]) = 'object'"),
            std::string::npos);
  EXPECT_EQ(sql(R"({"a.b": 1})"), "(((metadata #> $1::text[]) = $2::jsonb) IS TRUE)");
  EXPECT_EQ(sql(R"({"$or": [{"a": 1}, {"b": 2}]})"),
            "((((metadata -> $1::text) = $2::jsonb) IS TRUE) OR (((metadata -> $3::text) = "
            "$4::jsonb) IS TRUE))");
}

TEST(PgSql, VectorLiteralsRoundTripFloatsExactly) {
  std::vector<float> v = {0.1f, -1e-30f, 3.4028235e38f, 1.0f / 3};
  std::string lit = vector_literal(v);
  EXPECT_EQ(lit.front(), '[');
  EXPECT_EQ(lit.back(), ']');
  std::vector<float> back;
  const char* p = lit.c_str() + 1;
  while (*p && *p != ']') {
    float f = 0;
    auto r = std::from_chars(p, lit.c_str() + lit.size(), f);
    back.push_back(f);
    p = r.ptr + (*r.ptr == ',' ? 1 : 0);
  }
  EXPECT_EQ(back, v);
  EXPECT_EQ(vector_literal({}), "[]");
}

// pgvector's vector_recv: uint16 dimensions, uint16 unused (0), then big-endian float32s.
TEST(PgSql, BinaryVectorsAreBigEndianWithTheDimensionsFirst) {
  std::vector<float> v = {1.0f, -2.5f, 0.1f};
  std::string b = vector_binary(v);
  ASSERT_EQ(b.size(), 4u + 4 * v.size());
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(b[i]); };
  EXPECT_EQ(byte(0), 0);
  EXPECT_EQ(byte(1), 3);
  EXPECT_EQ(byte(2), 0);
  EXPECT_EQ(byte(3), 0);
  EXPECT_EQ(byte(4), 0x3f);  // 1.0f = 0x3f800000
  EXPECT_EQ(byte(5), 0x80);
  EXPECT_EQ(byte(6), 0x00);
  EXPECT_EQ(byte(7), 0x00);
  EXPECT_EQ(byte(8), 0xc0);  // -2.5f = 0xc0200000
  EXPECT_EQ(byte(9), 0x20);
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::uint32_t u = 0;
    for (int k = 0; k < 4; ++k) u = (u << 8) | byte(4 + 4 * i + static_cast<std::size_t>(k));
    float f;
    std::memcpy(&f, &u, 4);
    EXPECT_EQ(f, v[i]);
  }
  std::vector<float> wide(1000, 0.5f);
  std::string w = vector_binary(wide);
  EXPECT_EQ(static_cast<unsigned char>(w[0]) * 256 + static_cast<unsigned char>(w[1]), 1000);
}

TEST(PgSql, MetadataNumbersAreWrittenSoSqlComparesThemLikeTheReference) {
  json m = {{"small", 0.1},
            {"int", 3},
            {"big", 1152921504606846976.0},
            {"nested", {{"x", -9007199254740994.0}}},
            {"list", {1e300}},
            {"u", 18446744073709551615ULL}};
  json back = json::parse(metadata_json(m));
  EXPECT_EQ(back["small"], 0.1);
  EXPECT_EQ(back["int"], 3);
  EXPECT_EQ(metadata_json({{"big", 1152921504606846976.0}}), R"({"big":1152921504606846976})");
  EXPECT_EQ(back["nested"]["x"].get<std::int64_t>(), -9007199254740994LL);
  EXPECT_EQ(back["list"][0], 1e300);
  EXPECT_TRUE(back["u"].is_number_float());
  SqlParams p;
  filter_sql(core::parse_filter_text(R"({"a": {"$gt": 1152921504606846976.0}})"), p);
  EXPECT_EQ(p.values().back(), "1152921504606846976");
}

TEST(PgSql, TextArraysAndVersions) {
  EXPECT_EQ(text_array_literal({"a", "b\"c", "d\\e"}), "{\"a\",\"b\\\"c\",\"d\\\\e\"}");
  EXPECT_TRUE(version_at_least("0.8.7", 0, 8));
  EXPECT_TRUE(version_at_least("1.0", 0, 8));
  EXPECT_FALSE(version_at_least("0.7.4", 0, 8));
  EXPECT_FALSE(version_at_least("", 0, 8));
}

}  // namespace
}  // namespace quarry::store::pgvector
