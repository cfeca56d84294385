// The `bert` provider (SPEC §5): a BERT-family sentence encoder from a model folder in the
// published layout, run locally. `bert:DIR` names the folder (a path, or a name under the
// models folders); the tokenizer is the folder's tokenizer.json (WordPiece), pooling comes
// from 1_Pooling/config.json (mean unless it says CLS), vectors are L2-normalised.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/plugin_version.h"
#include "core/util.h"
#include "embed/bert/bert_model.h"
#include "embed/provider.h"
#include "embed/static/wordpiece.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kMaxBatch = 32;          // sequences per forward pass
constexpr int kMaxBatchTokens = 8192;  // batch x padded length per forward pass

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

json optional_json(const fs::path& p) {
  if (!fs::exists(p)) return json::object();
  json j = json::parse(read_file(p), nullptr, false);
  if (j.is_discarded())
    throw Error(Code::corrupt_input, p.string() + " is not valid JSON", {{"path", p.string()}});
  return j;
}

// What a model folder says beyond config.json: pooling, length, prefixes.
struct Folder {
  bool cls_pooling = false;
  int max_length = 0;
  std::string query_prefix, document_prefix;
  std::string fingerprint;    // hashes everything that shapes the vectors
  std::string tokenizer_sha;  // of tokenizer.json (16 hex digits)
};

Folder read_folder(const fs::path& dir, int max_positions) {
  Folder f;
  // modules.json names the pooling module's folder (usually 1_Pooling).
  fs::path pooling = dir / "1_Pooling" / "config.json";
  json modules = optional_json(dir / "modules.json");
  if (modules.is_array())
    for (const auto& m : modules)
      if (m.is_object() && m.value("type", "").find("Pooling") != std::string::npos &&
          m.contains("path") && m["path"].is_string())
        pooling = dir / m["path"].get<std::string>() / "config.json";
  json pool = optional_json(pooling);
  if (pool.value("pooling_mode_max_tokens", false) ||
      pool.value("pooling_mode_mean_sqrt_len_tokens", false))
    throw Error(Code::unsupported_format,
                pooling.string() + ": only CLS and mean pooling are supported",
                {{"path", pooling.string()}});
  f.cls_pooling = pool.value("pooling_mode_cls_token", false);
  f.max_length = max_positions;
  json sbert = optional_json(dir / "sentence_bert_config.json");
  if (sbert.contains("max_seq_length") && sbert["max_seq_length"].is_number_integer())
    f.max_length = std::min(f.max_length, sbert["max_seq_length"].get<int>());
  const std::string tokenizer = read_file(dir / "tokenizer.json");
  f.tokenizer_sha = core::sha256_hex(tokenizer).substr(0, 16);
  f.fingerprint = core::sha256_hex(read_file(dir / "config.json") + "\n" + pool.dump() + "\n" +
                                   tokenizer + "\n" + std::to_string(f.max_length));
  return f;
}

// The model's WordPiece as the chunker counts it (spans in the original text).
class ChunkTokens final : public core::Tokenizer {
 public:
  ChunkTokens(const WordPieceTokenizer& tok, std::string id) : tok_(tok), id_(std::move(id)) {}
  std::string id() const override { return id_; }
  void spans(std::string_view text, Spans& out) const override { tok_.spans(text, out); }
  int count(std::string_view text) const override {
    return static_cast<int>(tok_.count_tokens(text));
  }

 private:
  const WordPieceTokenizer& tok_;  // owned by the provider, which outlives every KB using it
  std::string id_;
};

class BertProvider final : public EmbeddingProvider {
 public:
  BertProvider(std::string name, fs::path dir, json settings)
      : name_(std::move(name)), dir_(std::move(dir)), settings_(std::move(settings)) {
    try {
      cfg_ = BertConfig::load(dir_.string());
      dims_ = cfg_.hidden;
    } catch (const Error& e) {
      error_ = e.message();
    }
    // Known prefixes by family; the settings win.
    const std::string lower = [&] {
      std::string s = name_;
      std::transform(s.begin(), s.end(), s.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      return s;
    }();
    if (lower.find("e5") != std::string::npos) {
      query_prefix_ = "query: ";
      document_prefix_ = "passage: ";
    } else if (lower.find("bge") != std::string::npos) {
      query_prefix_ = "Represent this sentence for searching relevant passages: ";
    }
    if (settings_.contains("query_prefix")) query_prefix_ = settings_["query_prefix"];
    if (settings_.contains("document_prefix")) document_prefix_ = settings_["document_prefix"];
  }

  std::string id() const override { return "bert"; }
  std::string model() const override { return name_; }
  int dimensions() const override { return dims_; }
  int max_input_tokens() const override {
    return const_cast<BertProvider*>(this)->loaded() ? folder_.max_length : 512;
  }
  std::size_t count_tokens(std::string_view text) const override {
    if (!const_cast<BertProvider*>(this)->loaded()) return text.size() / 4 + 2;
    return tok_->count_tokens(text) + 2;  // with [CLS] and [SEP]
  }
  std::string identity() const override {
    const_cast<BertProvider*>(this)->loaded();
    return "bert:" + name_ + ":" + std::to_string(dims_) + ":" +
           (folder_.cls_pooling ? "cls" : "mean") + ":l2:" +
           core::sha256_hex(folder_.fingerprint + "\n" + query_prefix_ + "\n" + document_prefix_)
               .substr(0, 16);
  }
  Availability is_available() override {
    if (!loaded()) return {false, error_};
    return {};
  }
  ModelTokenizer model_tokenizer() override {
    if (!loaded()) return {};
    std::lock_guard lock(mu_);
    if (!chunk_tokens_) {
      // [CLS], [SEP] and the document prefix share the model's input with the text.
      const int reserved = 2 + static_cast<int>(tok_->count_tokens(document_prefix_));
      chunk_max_ = std::max(1, folder_.max_length - reserved);
      chunk_tokens_ = std::make_shared<ChunkTokens>(*tok_, "wordpiece:" + folder_.tokenizer_sha);
    }
    return {chunk_tokens_, chunk_max_};
  }

  std::vector<Vector> embed_documents(const std::vector<std::string>& texts) override {
    return embed(texts, document_prefix_);
  }
  Vector embed_query(const std::string& text) override {
    return embed({text}, query_prefix_).at(0);
  }

  // Token ids of a text embedded as a query or a document (with that side's prefix).
  std::vector<std::int32_t> ids_as_embedded(const std::string& text, bool query) {
    return ids((query ? query_prefix_ : document_prefix_) + text);
  }
  // Token ids of one text as the model sees it ([CLS] ... [SEP], truncated).
  std::vector<std::int32_t> ids(const std::string& text) {
    require();
    std::vector<std::int32_t> out = {cls_};
    tok_->encode(text, out);
    if (static_cast<int>(out.size()) > folder_.max_length - 1)
      out.resize(static_cast<std::size_t>(folder_.max_length - 1));
    out.push_back(sep_);
    return out;
  }

 private:
  // Loads the weights and tokenizer on first use (a model folder may be installed after the KB
  // names it); false with error_ set when it cannot.
  bool loaded() {
    std::lock_guard lock(mu_);
    if (enc_) return true;
    try {
      auto enc = BertEncoder::load(dir_.string());
      const fs::path tj = dir_ / "tokenizer.json";
      if (!fs::exists(tj))
        throw Error(
            Code::not_found,
            "the model folder has no tokenizer.json (the WordPiece tokenizer): " + tj.string(),
            {{"path", tj.string()}});
      auto tok = std::make_unique<WordPieceTokenizer>(WordPieceTokenizer::load(tj.string()));
      const auto cls = tok->token_id("[CLS]"), sep = tok->token_id("[SEP]");
      if (cls < 0 || sep < 0)
        throw Error(Code::corrupt_input, tj.string() + " has no [CLS] or [SEP] token",
                    {{"path", tj.string()}});
      if (tok->vocab_size() > static_cast<std::size_t>(enc->config().vocab_size))
        throw Error(Code::corrupt_input,
                    tj.string() + " has " + std::to_string(tok->vocab_size()) +
                        " tokens but config.json's vocab_size is " +
                        std::to_string(enc->config().vocab_size),
                    {{"path", tj.string()}});
      folder_ = read_folder(dir_, enc->config().max_positions);
      cls_ = cls;
      sep_ = sep;
      dims_ = enc->config().hidden;
      tok_ = std::move(tok);
      enc_ = std::move(enc);
      error_.clear();
      return true;
    } catch (const Error& e) {
      error_ = e.message();
      return false;
    }
  }
  void require() {
    if (!loaded())
      throw Error(Code::engine_unavailable, "bert model '" + name_ + "' cannot be used: " + error_,
                  {{"model", name_}});
  }

  std::vector<Vector> embed(const std::vector<std::string>& texts, const std::string& prefix) {
    require();
    std::vector<std::vector<std::int32_t>> seqs;
    seqs.reserve(texts.size());
    for (const auto& t : texts) seqs.push_back(ids(prefix + t));
    // Similar lengths together, so that padding stays small.
    std::vector<std::size_t> order(seqs.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return seqs[a].size() < seqs[b].size(); });
    std::vector<Vector> out(texts.size());
    std::vector<std::int32_t> ids, mask;
    std::vector<float> hidden;
    const int H = dims_;
    for (std::size_t from = 0; from < order.size();) {
      std::size_t to = from;
      int T = 0;
      while (to < order.size() && static_cast<int>(to - from) < kMaxBatch) {
        const int t = std::max(T, static_cast<int>(seqs[order[to]].size()));
        if (to > from && t * static_cast<int>(to - from + 1) > kMaxBatchTokens) break;
        T = t;
        ++to;
      }
      const int B = static_cast<int>(to - from);
      ids.assign(static_cast<std::size_t>(B) * T, 0);
      mask.assign(static_cast<std::size_t>(B) * T, 0);
      for (int b = 0; b < B; ++b) {
        const auto& s = seqs[order[from + static_cast<std::size_t>(b)]];
        std::copy(s.begin(), s.end(), ids.begin() + static_cast<std::ptrdiff_t>(b) * T);
        std::fill_n(mask.begin() + static_cast<std::ptrdiff_t>(b) * T, s.size(), 1);
      }
      enc_->forward(ids, mask, B, T, hidden);
      for (int b = 0; b < B; ++b) {
        const auto& s = seqs[order[from + static_cast<std::size_t>(b)]];
        Vector v(static_cast<std::size_t>(H), 0.0f);
        const float* rows = hidden.data() + static_cast<std::size_t>(b) * T * H;
        if (folder_.cls_pooling) {
          std::copy(rows, rows + H, v.begin());
        } else {
          for (std::size_t t = 0; t < s.size(); ++t)
            for (int i = 0; i < H; ++i) v[static_cast<std::size_t>(i)] += rows[t * H + i];
          for (float& x : v) x /= static_cast<float>(s.size());
        }
        l2_normalize(v);
        out[order[from + static_cast<std::size_t>(b)]] = std::move(v);
      }
      from = to;
    }
    return out;
  }

  std::string name_;
  fs::path dir_;
  json settings_;
  BertConfig cfg_;
  int dims_ = 384;  // until the folder's config.json says otherwise
  std::string error_;
  std::string query_prefix_, document_prefix_;
  std::mutex mu_;
  std::unique_ptr<BertEncoder> enc_;
  std::unique_ptr<WordPieceTokenizer> tok_;
  Folder folder_;
  std::int32_t cls_ = -1, sep_ = -1;
  std::shared_ptr<ChunkTokens> chunk_tokens_;
  int chunk_max_ = 0;
};

}  // namespace

std::unique_ptr<EmbeddingProvider> make_bert_provider(const ProviderSpec& spec,
                                                      const ProviderContext& ctx) {
  if (spec.model.empty())
    throw Error(Code::invalid_argument,
                "the bert provider needs a model folder: bert:/path/to/all-MiniLM-L6-v2",
                {{"field", "embedder.provider"}});
  for (const auto& [k, v] : settings_json(spec).items()) {
    if (k != "query_prefix" && k != "document_prefix")
      throw Error(Code::invalid_argument,
                  "unknown bert setting '" + k + "' (known: query_prefix, document_prefix)",
                  {{"field", k}});
    if (!v.is_string())
      throw Error(Code::invalid_argument, "bert setting '" + k + "' must be a string",
                  {{"field", k}});
  }
  fs::path dir = spec.model;
  if (!fs::is_directory(dir)) {  // a name: the models folders
    std::vector<fs::path> roots;
    if (!ctx.models_dir.empty()) roots.emplace_back(ctx.models_dir);
    if (!ctx.data_dir.empty()) roots.push_back(fs::path(ctx.data_dir) / "models");
    for (const auto& r : roots)
      if (fs::is_directory(r / spec.model)) {
        dir = r / spec.model;
        break;
      }
  }
  std::string name = fs::path(spec.model).filename().string();
  if (name.empty()) name = fs::path(spec.model).parent_path().filename().string();
  return std::make_unique<BertProvider>(name, fs::absolute(dir), settings_json(spec));
}

// Token ids as the bert provider feeds them to the model (for `quarry embed` and tests);
// empty when `p` is not a bert provider.
std::vector<std::int32_t> bert_token_ids(EmbeddingProvider& p, const std::string& text,
                                         bool query) {
  auto* b = dynamic_cast<BertProvider*>(&p);
  return b ? b->ids_as_embedded(text, query) : std::vector<std::int32_t>{};
}

// What make_bert_provider() reads.
PluginSchema bert_provider_schema() {
  PluginSchema s;
  s.description =
      "BERT-family transformer encoders (MiniLM, bge, e5, gte) from a local folder "
      "(model.safetensors, tokenizer.json, config.json); the model is the folder or its name "
      "in the models folders: bert:all-MiniLM-L6-v2.";
  s.settings = {core::plugin_setting("query_prefix", "string", "",
                                     "Text put before every query (default: the model family's: "
                                     "\"query: \" for e5, bge's instruction, else none)."),
                core::plugin_setting("document_prefix", "string", "",
                                     "Text put before every chunk (default: \"passage: \" for e5, "
                                     "else none).")};
  return s;
}

}  // namespace quarry::embed
