// import_glove on a tiny synthetic wink-format file, then served by the static provider.
#include <gtest/gtest.h>

#include "embed/provider.h"
#include "embed/static/glove_import.h"
#include "embed/static/static_model.h"
#include "model_fixture.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

using quarry::testing::dot;
using quarry::testing::TempDir;
using quarry::testing::write_file;

// Entries out of rank order on purpose, a JSON escape, an accented word, and an unused field.
const char* kWink = R"({"precision":8,"l2NormIndex":3,"wordIndex":4,"size":4,"dimensions":3,)"
                    R"("words":["the","cat","caf\u00e9","\"q\""],)"
                    R"("vectors":{"cat":[0,1,0,1,1],"the":[1,0,0,1,0],"caf\u00e9":[0,0,1,1,2],)"
                    R"("\"q\"":[0.5,-0.5,0,0.7,3]},"unkVector":[0,0,0,0,-1]})";

TEST(GloveImport, WritesAModelTheStaticProviderServes) {
  TempDir dir;
  write_file(dir / "wink.json", kWink);
  auto out = dir / "glove-3d";
  auto rep = import_glove({(dir / "wink.json").string(), out.string(), "f32"});
  EXPECT_EQ(rep.words, 4u);
  EXPECT_EQ(rep.vocab_size, 8u);
  EXPECT_EQ(rep.dims, 3);
  EXPECT_EQ(rep.dtype, "F32");
  EXPECT_GT(rep.file_sizes.at("model.safetensors"), 0u);

  auto m = StaticModel::load(out.string());
  EXPECT_EQ(m->info().vocab_size, 8u);
  EXPECT_TRUE(m->info().apply_sif);
  std::vector<std::int32_t> ids;
  m->tokenizer().encode("the cat Café zebra", ids);
  EXPECT_EQ(ids, (std::vector<std::int32_t>{4, 5, 6, 1}));  // rank order after 4 specials

  auto p = ProviderRegistry::builtin().create(
      parse_spec("static:glove-3d", {{"model_dir", out.string()}}), {});
  EXPECT_EQ(p->dimensions(), 3);
  auto cat = p->embed_query("CAT");
  EXPECT_NEAR(cat[1], 1.0f, 1e-6);
  auto cafe = p->embed_query("café");
  EXPECT_NEAR(cafe[2], 1.0f, 1e-6);
  // SIF: "the" (rank 0) weighs less than "cat" (rank 1), so the mean leans to "cat".
  auto mix = p->embed_query("the cat");
  EXPECT_GT(mix[1], mix[0]);
}

TEST(GloveImport, SifWeightsFollowZipf) {
  TempDir dir;
  write_file(dir / "wink.json", kWink);
  import_glove({(dir / "wink.json").string(), (dir / "m").string(), "f16"});
  SafetensorsFile st((dir / "m" / "model.safetensors").string());
  const auto* w = st.find("weights");
  ASSERT_TRUE(w);
  EXPECT_EQ(st.find("embeddings")->dtype, "F16");
  const double h4 = 1 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4;
  for (std::size_t r = 0; r < 4; ++r) {
    double p = 1.0 / ((static_cast<double>(r) + 1) * h4);
    EXPECT_NEAR(decode_scalar(*w, r + 4), 1e-3 / (1e-3 + p), 1e-6) << r;
  }
  EXPECT_EQ(decode_scalar(*w, 1), 0.0f);  // [UNK] never counts
}

TEST(GloveImport, MalformedOrTruncatedInputIsCorruptInput) {
  TempDir dir;
  std::string text = kWink;
  for (std::size_t len : {std::size_t{0}, std::size_t{1}, text.size() / 2, text.size() - 1}) {
    write_file(dir / "bad.json", text.substr(0, len));
    try {
      import_glove({(dir / "bad.json").string(), (dir / "out").string(), "f16"});
      FAIL() << len;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::corrupt_input) << len << ": " << e.message();
    }
  }
  write_file(dir / "short.json", R"({"dimensions":3,"vectors":{"a":[1,2]}})");
  EXPECT_THROW(import_glove({(dir / "short.json").string(), (dir / "o").string(), "f16"}), Error);
  try {
    import_glove({(dir / "missing.json").string(), (dir / "o").string(), "f16"});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::not_found);
  }
  EXPECT_THROW(import_glove({(dir / "bad.json").string(), (dir / "o").string(), "f64"}), Error);
}

}  // namespace
}  // namespace quarry::embed
