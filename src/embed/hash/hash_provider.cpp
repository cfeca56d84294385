// The `hash` provider: a deterministic feature-hashing embedder that needs no model file.
//
// Scheme v1 (any change to it must bump kSchemeVersion, which is part of identity()):
//  - text is split into words: maximal runs of ASCII letters/digits and of non-ASCII bytes (so
//    UTF-8 words stay whole); ASCII is lowercased.
//  - features: the word itself (weight 1) and the byte n-grams, n = 3..5, of "#word#" (weight
//    kGramWeight each) so that inflections and typos still share most features.
//  - every feature is hashed with FNV-1a + splitmix64 (stable_hash.h), with a per-kind seed; the
//    bucket is h % dims and the sign is the top bit (signed hashing keeps collisions unbiased).
//  - a feature seen tf times adds sign * weight * (1 + ln tf) (sublinear tf), then the vector is
//    L2-normalised. An empty text gives the zero vector.
// It is honest about being lexical: it finds shared words and word pieces, not meaning.
#include <algorithm>
#include <cmath>

#include "core/plugin_version.h"
#include "embed/hash/stable_hash.h"
#include "embed/provider.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

constexpr int kSchemeVersion = 1;
constexpr int kDefaultDims = 256;
constexpr int kMaxDims = 8192;
constexpr float kGramWeight = 0.35f;
constexpr std::uint64_t kWordSeed = kFnvOffset ^ 0x5751ULL;  // distinct namespaces per kind
constexpr std::uint64_t kGramSeed = kFnvOffset ^ 0x4e47ULL;

bool is_word_byte(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80;
}

// Calls f(word) for every word of `text` (lowercased copy kept in `buf`).
template <class F>
void for_each_word(std::string_view text, std::string& buf, F&& f) {
  buf.assign(text);
  for (char& c : buf)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  std::size_t i = 0, n = buf.size();
  while (i < n) {
    while (i < n && !is_word_byte(static_cast<unsigned char>(buf[i]))) ++i;
    std::size_t start = i;
    while (i < n && is_word_byte(static_cast<unsigned char>(buf[i]))) ++i;
    if (i > start) f(std::string_view(buf).substr(start, i - start));
  }
}

struct Feature {
  std::uint64_t hash;
  float weight;
};

int parse_dims(const ProviderSpec& spec) {
  long long dims = 0;
  bool from_model = false;
  if (!spec.model.empty()) {
    const auto& m = spec.model;
    if (m.size() > 6 ||
        !std::all_of(m.begin(), m.end(), [](char c) { return c >= '0' && c <= '9'; }))
      throw Error(Code::invalid_argument,
                  "hash provider model '" + m + "' is not a dimension count: write e.g. 'hash:512'",
                  {{"field", "embedder.provider"}});
    dims = std::stoll(m);
    from_model = true;
  }
  if (settings_json(spec).contains("dimensions")) {
    const auto& d = settings_json(spec)["dimensions"];
    if (!d.is_number_integer())
      throw Error(Code::invalid_argument, "settings.dimensions must be an integer (1-8192)",
                  {{"field", "dimensions"}});
    long long sd = d.get<long long>();
    if (from_model && sd != dims)
      throw Error(Code::invalid_argument,
                  "hash provider: spec says " + std::to_string(dims) +
                      " dimensions but settings.dimensions says " + std::to_string(sd) +
                      "; give one of them",
                  {{"field", "dimensions"}});
    dims = sd;
  } else if (!from_model) {
    dims = kDefaultDims;
  }
  if (dims < 1 || dims > kMaxDims)
    throw Error(Code::invalid_argument,
                "hash provider dimensions must be 1-8192, got " + std::to_string(dims),
                {{"field", "dimensions"}});
  return static_cast<int>(dims);
}

class HashProvider final : public EmbeddingProvider {
 public:
  explicit HashProvider(int dims) : dims_(dims) {}

  std::string id() const override { return "hash"; }
  std::string model() const override { return std::to_string(dims_); }
  int dimensions() const override { return dims_; }
  int max_input_tokens() const override { return 8192; }

  std::size_t count_tokens(std::string_view text) const override {
    std::string buf;
    std::size_t n = 0;
    for_each_word(text, buf, [&](std::string_view) { ++n; });
    return n;
  }

  std::string identity() const override {
    return "hash;v=" + std::to_string(kSchemeVersion) + ";dims=" + std::to_string(dims_) +
           ";features=word1+char3-5;gram_weight=0.35;tf=1+ln;signed;l2";
  }

  std::vector<Vector> embed_documents(const std::vector<std::string>& texts) override {
    std::vector<Vector> out;
    out.reserve(texts.size());
    for (const auto& t : texts) out.push_back(embed(t));
    return out;
  }
  Vector embed_query(const std::string& text) override { return embed(text); }

 private:
  Vector embed(std::string_view text) const {
    std::string buf, framed;
    std::vector<Feature> feats;
    for_each_word(text, buf, [&](std::string_view w) {
      feats.push_back({mix64(fnv1a64(w, kWordSeed)), 1.0f});
      framed.clear();  // "#word#", built by appends (g++ 12 -O3: see GCC PR 105651)
      framed.push_back('#');
      framed.append(w);
      framed.push_back('#');
      for (std::size_t n = 3; n <= 5; ++n)
        for (std::size_t i = 0; i + n <= framed.size(); ++i)
          feats.push_back(
              {mix64(fnv1a64(std::string_view(framed).substr(i, n), kGramSeed ^ n)), kGramWeight});
    });
    std::sort(feats.begin(), feats.end(),
              [](const Feature& a, const Feature& b) { return a.hash < b.hash; });
    Vector v(static_cast<std::size_t>(dims_), 0.0f);
    for (std::size_t i = 0; i < feats.size();) {
      std::size_t j = i;
      while (j < feats.size() && feats[j].hash == feats[i].hash) ++j;
      float tf = 1.0f + std::log(static_cast<float>(j - i));
      std::uint64_t h = feats[i].hash;
      float sign = (h >> 63) ? -1.0f : 1.0f;
      v[h % static_cast<std::uint64_t>(dims_)] += sign * feats[i].weight * tf;
      i = j;
    }
    l2_normalize(v);
    return v;
  }

  int dims_;
};

}  // namespace

std::unique_ptr<EmbeddingProvider> make_hash_provider(const ProviderSpec& spec,
                                                      const ProviderContext&) {
  return std::make_unique<HashProvider>(parse_dims(spec));
}

// What parse_dims() reads.
PluginSchema hash_provider_schema() {
  PluginSchema s;
  s.description =
      "Feature hashing of words and word pieces: no model file, deterministic, lexical rather "
      "than semantic (tests, demos). The model is the dimension count: hash:512.";
  s.settings = {core::plugin_setting(
      "dimensions", "integer", std::to_string(kDefaultDims),
      "Vector length, 1-8192; when the spec also names one (hash:N), both must agree.")};
  return s;
}

}  // namespace quarry::embed
