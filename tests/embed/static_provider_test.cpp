// The `static` provider and its safetensors reader: dtypes, SIF, lookup, corruption.
#include <gtest/gtest.h>

#include <random>
#include <thread>

#include "core/util.h"
#include "embed/provider.h"
#include "embed/static/half.h"
#include "embed/static/safetensors.h"
#include "embed/static/static_model.h"
#include "model_fixture.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

using quarry::testing::dot;
using quarry::testing::read_file;
using quarry::testing::ScopedEnv;
using quarry::testing::TempDir;
using quarry::testing::TinyModel;
using quarry::testing::write_file;

std::unique_ptr<EmbeddingProvider> make_at(const std::filesystem::path& dir,
                                           const std::string& name = "tiny") {
  return ProviderRegistry::builtin().create(
      parse_spec("static:" + name, {{"model_dir", dir.string()}}), {});
}

// The mean of the given rows, L2-normalised: what the provider must produce.
std::vector<float> expected(const TinyModel& m, const std::vector<std::size_t>& ids,
                            const std::vector<float>& w = {}) {
  std::vector<float> acc(static_cast<std::size_t>(m.dims), 0.0f);
  for (auto id : ids) {
    auto r = m.row(id);
    for (std::size_t i = 0; i < acc.size(); ++i) acc[i] += (w.empty() ? 1.0f : w[id]) * r[i];
  }
  l2_normalize(acc);
  return acc;
}

TEST(Half, RoundTripsAndRounds) {
  for (float f : {0.0f, 1.0f, -2.5f, 0.333f, 65504.0f, 6.1e-5f, 1e-7f})
    EXPECT_NEAR(half_to_float(float_to_half(f)), f, std::abs(f) * 1e-3f + 1e-7f) << f;
  EXPECT_EQ(float_to_half(1.0f), 0x3c00);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
}

TEST(StaticProvider, MeanOfTokenVectorsSkippingUnknownAndSpecial) {
  TempDir dir;
  TinyModel m;
  m.write(dir.path());
  auto p = make_at(dir.path());
  EXPECT_EQ(p->dimensions(), 4);
  ASSERT_TRUE(p->is_available().ok) << p->is_available().reason;
  auto v = p->embed_query("The cat, the DOG and [CLS] zebra");  // ids 8 4 8 5; rest unknown
  auto want = expected(m, {8, 4, 8, 5});
  for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(v[i], want[i], 1e-5);
  EXPECT_EQ(p->count_tokens("cats unable"), 4u);
}

TEST(StaticProvider, QueryCoverageIsTheShareOfKnownWords) {
  TempDir dir;
  TinyModel{}.write(dir.path());
  auto p = make_at(dir.path());
  EXPECT_EQ(p->query_coverage("cat dog"), 1.0);
  EXPECT_EQ(p->query_coverage("cat zebra"), 0.5);
  EXPECT_EQ(p->query_coverage("zebra giraffe"), 0.0);
  EXPECT_EQ(p->query_coverage(""), 0.0);
}

TEST(StaticProvider, UnknownOnlyTextIsTheZeroVector) {
  TempDir dir;
  TinyModel{}.write(dir.path());
  auto v = make_at(dir.path())->embed_documents({"zebra giraffe", ""});
  for (const auto& x : v)
    for (float f : x) EXPECT_EQ(f, 0.0f);
}

TEST(StaticProvider, F32F16AndI8AgreeWithinTolerance) {
  std::vector<std::vector<float>> got;
  for (const char* dt : {"F32", "F16", "I8"}) {
    TempDir dir;
    TinyModel m;
    m.dtype = dt;
    m.write(dir.path());
    got.push_back(make_at(dir.path())->embed_query("cat dog truck the cats"));
  }
  EXPECT_GT(dot(got[0], got[1]), 0.9999f);
  EXPECT_GT(dot(got[0], got[2]), 0.999f);
  for (std::size_t i = 0; i < got[0].size(); ++i) EXPECT_NEAR(got[0][i], got[2][i], 0.02);
}

TEST(StaticProvider, SifWeightsChangeTheMeanAndCanBeTurnedOff) {
  TinyModel m;
  m.weights.assign(m.vocab.size(), 1.0f);
  m.weights[8] = 0.01f;  // "the" nearly ignored
  TempDir a, b;
  m.write(a.path());
  auto weighted = make_at(a.path())->embed_query("the the the cat");
  auto want = expected(m, {8, 8, 8, 4}, m.weights);
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(weighted[i], want[i], 1e-5);
  EXPECT_GT(dot(weighted, expected(m, {4})), 0.99f);  // dominated by "cat"
  m.config["apply_sif"] = false;
  m.write(b.path());
  auto plain = make_at(b.path())->embed_query("the the the cat");
  auto want_plain = expected(m, {8, 8, 8, 4});
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(plain[i], want_plain[i], 1e-5);
  EXPECT_NE(make_at(a.path())->identity(), make_at(b.path())->identity());
}

TEST(StaticProvider, MissingModelIsUnavailableWithAReasonNotAnException) {
  TempDir dir;
  ScopedEnv env("QUARRY_MODELS_DIR", dir.path().c_str());
  ProviderContext ctx;
  ctx.data_dir = (dir / "data").string();
  auto p = ProviderRegistry::builtin().create(ProviderSpec::parse("static:nomodel-100d"), ctx);
  EXPECT_EQ(p->dimensions(), 100);  // from the name while the files are missing
  auto av = p->is_available();
  EXPECT_FALSE(av.ok);
  EXPECT_NE(av.reason.find("model 'nomodel-100d' not found in"), std::string::npos) << av.reason;
  EXPECT_NE(av.reason.find((dir / "nomodel-100d").string()), std::string::npos);
  // The installed and build-tree folders, found from the running executable, not compiled in.
  const std::filesystem::path exe = quarry::core::executable_dir();
  ASSERT_FALSE(exe.empty());
  EXPECT_NE(av.reason.find((exe.parent_path() / "share/quarry/models/nomodel-100d").string()),
            std::string::npos)
      << av.reason;
  EXPECT_NE(av.reason.find((exe / "share/quarry/models/nomodel-100d").string()), std::string::npos);
  EXPECT_NE(av.reason.find("make model"), std::string::npos);
  try {
    p->embed_query("cat");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::engine_unavailable);
  }
  EXPECT_EQ(p->count_tokens("two words"), 2u);  // estimate without the tokenizer
  // Installing the model later makes the same provider work: failures are not cached.
  TinyModel m;
  m.dims = 100;
  m.write(dir / "nomodel-100d");
  EXPECT_TRUE(p->is_available().ok);
  EXPECT_EQ(p->embed_query("cat").size(), 100u);
}

TEST(StaticProvider, LookupOrderEnvThenContextThenDataDir) {
  TempDir env_dir, ctx_dir, data_dir;
  TinyModel small;
  small.dims = 4;
  small.write(data_dir / "models" / "m");
  ProviderContext ctx;
  ctx.data_dir = data_dir.path().string();
  ctx.models_dir = ctx_dir.path().string();
  ScopedEnv env("QUARRY_MODELS_DIR", env_dir.path().c_str());
  auto create = [&] {
    return ProviderRegistry::builtin().create(ProviderSpec::parse("static:m"), ctx);
  };
  EXPECT_EQ(create()->dimensions(), 4);
  TinyModel mid;
  mid.dims = 6;
  mid.write(ctx_dir / "m");
  EXPECT_EQ(create()->dimensions(), 6);
  TinyModel top;
  top.dims = 8;
  top.write(env_dir / "m");
  EXPECT_EQ(create()->dimensions(), 8);
}

TEST(StaticProvider, RejectsPathLikeModelNamesAndBadSettings) {
  for (auto bad : {"static:../x", "static:a/b", "static:.hidden"})
    EXPECT_THROW(ProviderRegistry::builtin().create(ProviderSpec::parse(bad), {}), Error) << bad;
  EXPECT_THROW(ProviderRegistry::builtin().create(parse_spec("static:x", {{"model_dir", 3}}), {}),
               Error);
  TempDir dir;
  TinyModel{}.write(dir.path());
  EXPECT_THROW(
      ProviderRegistry::builtin().create(
          parse_spec("static:x", {{"model_dir", dir.path().string()}, {"dimensions", 5}}), {}),
      Error);
}

TEST(StaticProvider, IdentityIsStableAndDescribesTheModel) {
  TempDir dir;
  TinyModel{}.write(dir.path());
  auto id1 = make_at(dir.path())->identity();
  auto id2 = make_at(dir.path())->identity();
  EXPECT_EQ(id1, id2);
  for (const char* s : {"static", "model=tiny", "dims=4", "vocab=14", "content="})
    EXPECT_NE(id1.find(s), std::string::npos) << s << " in " << id1;
  TinyModel f16;
  f16.dtype = "F16";
  TempDir d16;
  f16.write(d16.path());
  EXPECT_EQ(make_at(d16.path())->identity(), id1);  // storage dtype is not identity
}

TEST(StaticProvider, ConcurrentFirstUseLoadsOnce) {
  TempDir dir;
  TinyModel{}.write(dir.path());
  auto p = make_at(dir.path());
  std::vector<std::vector<float>> out(4);
  std::vector<std::thread> ts;
  for (int i = 0; i < 4; ++i)
    ts.emplace_back([&, i] { out[static_cast<std::size_t>(i)] = p->embed_query("cat dog"); });
  for (auto& t : ts) t.join();
  for (const auto& v : out) EXPECT_EQ(v, out[0]);
}

Code load_code(const std::filesystem::path& dir, std::string* msg = nullptr) {
  try {
    StaticModel::load(dir.string());
  } catch (const Error& e) {
    if (msg) *msg = e.message();
    return e.code();
  }
  return Code::ok;
}

TEST(Safetensors, TruncatedFilesAreCorruptInputNamingTheFile) {
  TempDir dir;
  TinyModel{}.write(dir.path());
  auto path = dir / "model.safetensors";
  const std::string good = read_file(path);
  for (std::size_t len : {std::size_t{0}, std::size_t{5}, std::size_t{8}, std::size_t{20},
                          good.size() / 2, good.size() - 1}) {
    write_file(path, good.substr(0, len));
    std::string msg;
    EXPECT_EQ(load_code(dir.path(), &msg), Code::corrupt_input) << len;
    EXPECT_NE(msg.find("model.safetensors"), std::string::npos) << msg;
  }
}

TEST(Safetensors, FlippedBytesNeverCrash) {
  TempDir dir;
  TinyModel{}.write(dir.path());
  auto path = dir / "model.safetensors";
  const std::string good = read_file(path);
  std::mt19937 rng(42);
  int corrupt = 0;
  for (int i = 0; i < 300; ++i) {
    std::string bad = good;
    std::size_t header_end = 8 + 200;  // most damage where the structure is
    auto pos = rng() % std::min(bad.size(), header_end);
    bad[pos] = static_cast<char>(bad[pos] ^ (1 << (rng() % 8)));
    write_file(path, bad);
    Code c = load_code(dir.path());
    EXPECT_TRUE(c == Code::ok || c == Code::corrupt_input) << static_cast<int>(c);
    corrupt += c == Code::corrupt_input;
    if (c == Code::ok) make_at(dir.path())->embed_query("cat dog the");  // must not crash
  }
  EXPECT_GT(corrupt, 50);
}

TEST(Safetensors, ShapeAndOffsetLiesAreCaught) {
  TempDir dir;
  auto path = (dir / "x.safetensors").string();
  auto write_header = [&](const std::string& h, std::size_t data_bytes) {
    std::string s(8, '\0');
    std::uint64_t n = h.size();
    std::memcpy(s.data(), &n, 8);
    write_file(path, s + h + std::string(data_bytes, '\0'));
  };
  auto code = [&] {
    try {
      SafetensorsFile f(path);
      return Code::ok;
    } catch (const Error& e) {
      return e.code();
    }
  };
  write_header(R"({"e":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]}})", 16);
  EXPECT_EQ(code(), Code::ok);
  write_header(R"({"e":{"dtype":"F32","shape":[2,3],"data_offsets":[0,16]}})", 16);
  EXPECT_EQ(code(), Code::corrupt_input);
  write_header(R"({"e":{"dtype":"F32","shape":[2,2],"data_offsets":[8,24]}})", 16);
  EXPECT_EQ(code(), Code::corrupt_input);
  write_header(R"({"e":{"dtype":"Q7","shape":[2,2],"data_offsets":[0,16]}})", 16);
  EXPECT_EQ(code(), Code::corrupt_input);
  write_header(R"({"e":{"dtype":"F32","shape":[-2,2],"data_offsets":[0,16]}})", 16);
  EXPECT_EQ(code(), Code::corrupt_input);
  write_header(R"({"e":{"dtype":"I8","shape":[4294967296,4294967296],"data_offsets":[0,16]}})", 16);
  EXPECT_EQ(code(), Code::corrupt_input);
}

TEST(StaticModel, VocabularyLargerThanMatrixIsCorrupt) {
  TempDir dir;
  TinyModel m;
  m.write(dir.path());
  TinyModel bigger = m;
  bigger.vocab.push_back("extra");
  TempDir other;
  bigger.write(other.path());
  std::filesystem::copy_file(other / "tokenizer.json", dir / "tokenizer.json",
                             std::filesystem::copy_options::overwrite_existing);
  std::string msg;
  EXPECT_EQ(load_code(dir.path(), &msg), Code::corrupt_input);
  EXPECT_NE(msg.find("rows"), std::string::npos) << msg;
  write_file(dir / "config.json", "{broken");
  EXPECT_EQ(load_code(dir.path()), Code::corrupt_input);
}

}  // namespace
}  // namespace quarry::embed
