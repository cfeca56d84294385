#include "embed/bert/bert_model.h"

#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "embed/static/safetensors.h"
#include "quarry/error.h"

namespace quarry::embed {

namespace {

// erf as a rational function of x (odd numerator, even denominator), x clamped to where
// erf(x) rounds to ±1 in float: at most ~1e-7 from std::erf, and no libm call, so the exact
// GELU's loop vectorises (std::erf was 8 % of a forward pass). The coefficients are the
// minimax fit used by Eigen's float erf; tests/embed/bert_test.cpp checks the whole forward
// pass against a double-precision BERT that calls std::erf.
inline float erf_approx(float x) {
  x = std::min(3.832506856900711f, std::max(-3.832506856900711f, x));
  const float x2 = x * x;
  float p = 0.00022905065861350646f;
  p = p * x2 + 0.0034082910107109506f;
  p = p * x2 + 0.050955695062380861f;
  p = p * x2 + 0.18520832239976145f;
  p = p * x2 + 1.128379143519084f;
  float q = -1.1791602954361697e-7f;
  q = q * x2 + 0.000023547966471313185f;
  q = q * x2 + 0.0010179625278914885f;
  q = q * x2 + 0.014070470171167667f;
  q = q * x2 + 0.11098505178285362f;
  q = q * x2 + 0.49746925110067538f;
  q = q * x2 + 1.0f;
  return x * p / q;
}

}  // namespace

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json read_json_file(const fs::path& p, const char* what) {
  std::ifstream in(p, std::ios::binary);
  if (!in)
    throw Error(Code::not_found,
                "the model folder has no " + p.filename().string() + " (" + what +
                    "): " + p.string() +
                    "; point bert: at a sentence-transformers folder with config.json, "
                    "model.safetensors and tokenizer.json (docs/models.md)",
                {{"path", p.string()}});
  std::stringstream ss;
  ss << in.rdbuf();
  json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw Error(Code::corrupt_input, p.string() + " is not a JSON object", {{"path", p.string()}});
  return j;
}

int positive(const json& j, const char* key, const fs::path& file, int def = -1) {
  if (!j.contains(key)) {
    if (def >= 0) return def;
    throw Error(Code::corrupt_input, file.string() + " has no '" + key + "'",
                {{"path", file.string()}, {"field", key}});
  }
  if (!j[key].is_number_integer() || j[key].get<long long>() < 1 ||
      j[key].get<long long>() > (1LL << 24))
    throw Error(Code::corrupt_input, file.string() + ": '" + key + "' must be a positive integer",
                {{"path", file.string()}, {"field", key}});
  return j[key].get<int>();
}

void layer_norm(float* x, int n, const float* g, const float* b, float eps) {
  double mean = 0;
  for (int i = 0; i < n; ++i) mean += x[i];
  mean /= n;
  double var = 0;
  for (int i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  var /= n;
  const float m = static_cast<float>(mean), inv = static_cast<float>(1.0 / std::sqrt(var + eps));
  for (int i = 0; i < n; ++i) x[i] = (x[i] - m) * inv * g[i] + b[i];
}

}  // namespace

BertConfig BertConfig::load(const std::string& dir) {
  const fs::path file = fs::path(dir) / "config.json";
  json j = read_json_file(file, "the model's configuration");
  const std::string type = j.value("model_type", "bert");
  // BERT-style encoders that share BertModel's weights and math.
  if (type != "bert")
    throw Error(Code::unsupported_format,
                file.string() + ": model_type '" + type +
                    "' is not supported; the bert provider runs BERT-style encoders (BertModel: "
                    "MiniLM, bge, e5, gte)",
                {{"path", file.string()}, {"field", "model_type"}});
  BertConfig c;
  c.vocab_size = positive(j, "vocab_size", file);
  c.hidden = positive(j, "hidden_size", file);
  c.layers = positive(j, "num_hidden_layers", file);
  c.heads = positive(j, "num_attention_heads", file);
  c.intermediate = positive(j, "intermediate_size", file);
  c.max_positions = positive(j, "max_position_embeddings", file);
  c.type_vocab = positive(j, "type_vocab_size", file, 2);
  if (j.contains("layer_norm_eps")) {
    if (!j["layer_norm_eps"].is_number() || j["layer_norm_eps"].get<double>() <= 0)
      throw Error(Code::corrupt_input, file.string() + ": 'layer_norm_eps' must be positive",
                  {{"path", file.string()}, {"field", "layer_norm_eps"}});
    c.eps = j["layer_norm_eps"].get<float>();
  }
  if (j.contains("hidden_act")) {
    c.activation = j["hidden_act"].is_string() ? j["hidden_act"].get<std::string>() : "";
    if (c.activation != "gelu" && c.activation != "gelu_new" &&
        c.activation != "gelu_pytorch_tanh" && c.activation != "relu")
      throw Error(Code::unsupported_format,
                  file.string() + ": hidden_act '" + c.activation +
                      "' is not supported (gelu, gelu_new, gelu_pytorch_tanh, relu)",
                  {{"path", file.string()}, {"field", "hidden_act"}});
  }
  if (c.hidden % c.heads != 0)
    throw Error(Code::corrupt_input,
                file.string() + ": hidden_size " + std::to_string(c.hidden) +
                    " is not a multiple of num_attention_heads " + std::to_string(c.heads),
                {{"path", file.string()}, {"field", "num_attention_heads"}});
  return c;
}

struct BertEncoder::Weights {
  std::vector<float> word, pos, type, emb_g, emb_b;
  struct Layer {
    std::vector<float> qkv_w, qkv_b;  // [3H, H], [3H]: query, key, value stacked
    std::vector<float> ao_w, ao_b, ln1_g, ln1_b;
    std::vector<float> in_w, in_b, out_w, out_b, ln2_g, ln2_b;
  };
  std::vector<Layer> layers;
};

BertEncoder::BertEncoder(BertConfig cfg) : cfg_(std::move(cfg)), w_(std::make_unique<Weights>()) {}
BertEncoder::~BertEncoder() = default;

std::unique_ptr<BertEncoder> BertEncoder::load(const std::string& dir) {
  auto cfg = BertConfig::load(dir);
  const fs::path file = fs::path(dir) / "model.safetensors";
  if (!fs::exists(file))
    throw Error(Code::not_found,
                "the model folder has no model.safetensors (the weights): " + file.string(),
                {{"path", file.string()}});
  SafetensorsFile st(file.string());
  openblas_set_num_threads(1);  // forward() runs its own threads
  std::unique_ptr<BertEncoder> enc(new BertEncoder(cfg));
  auto& w = *enc->w_;

  auto find = [&](const std::string& name) -> const TensorView* {
    for (const std::string& n : {name, "bert." + name}) {
      if (auto* t = st.find(n)) return t;
      // Old checkpoints: LayerNorm.gamma / LayerNorm.beta.
      for (auto [from, to] :
           {std::pair<const char*, const char*>{"LayerNorm.weight", "LayerNorm.gamma"},
            {"LayerNorm.bias", "LayerNorm.beta"}})
        if (auto at = n.rfind(from); at != std::string::npos && at + std::strlen(from) == n.size())
          if (auto* t = st.find(n.substr(0, at) + to)) return t;
    }
    return nullptr;
  };
  auto tensor = [&](const std::string& name, std::vector<std::int64_t> shape) {
    const TensorView* t = find(name);
    auto shape_text = [](const std::vector<std::int64_t>& s) {
      std::string out = "[";
      for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
      return out + "]";
    };
    if (!t)
      throw Error(Code::corrupt_input,
                  file.string() + " has no tensor '" + name + "' (expected " + shape_text(shape) +
                      " for this config.json)",
                  {{"path", file.string()}, {"tensor", name}});
    if (t->shape != shape)
      throw Error(Code::corrupt_input,
                  file.string() + ": tensor '" + t->name + "' is " + shape_text(t->shape) +
                      " but config.json implies " + shape_text(shape),
                  {{"path", file.string()}, {"tensor", t->name}});
    if (t->dtype != "F32" && t->dtype != "F16" && t->dtype != "BF16")
      throw Error(Code::unsupported_format,
                  file.string() + ": tensor '" + t->name + "' is " + t->dtype +
                      "; the bert provider reads F32, F16 and BF16 weights",
                  {{"path", file.string()}, {"tensor", t->name}});
    std::vector<float> out(
        static_cast<std::size_t>(t->rows() * (shape.size() > 1 ? t->cols() : 1)));
    if (shape.size() == 1) {
      for (std::size_t i = 0; i < out.size(); ++i) out[i] = decode_scalar(*t, i);
    } else {
      for (std::int64_t r = 0; r < t->rows(); ++r)
        decode_row(*t, static_cast<std::size_t>(r), out.data() + r * t->cols());
    }
    return out;
  };
  const std::int64_t H = cfg.hidden, I = cfg.intermediate;
  w.word = tensor("embeddings.word_embeddings.weight", {cfg.vocab_size, H});
  w.pos = tensor("embeddings.position_embeddings.weight", {cfg.max_positions, H});
  w.type = tensor("embeddings.token_type_embeddings.weight", {cfg.type_vocab, H});
  w.emb_g = tensor("embeddings.LayerNorm.weight", {H});
  w.emb_b = tensor("embeddings.LayerNorm.bias", {H});
  for (int l = 0; l < cfg.layers; ++l) {
    const std::string p = "encoder.layer." + std::to_string(l) + ".";
    Weights::Layer L;
    for (const char* part : {"query", "key", "value"}) {
      auto wt = tensor(p + "attention.self." + part + ".weight", {H, H});
      auto b = tensor(p + "attention.self." + part + ".bias", {H});
      L.qkv_w.insert(L.qkv_w.end(), wt.begin(), wt.end());
      L.qkv_b.insert(L.qkv_b.end(), b.begin(), b.end());
    }
    L.ao_w = tensor(p + "attention.output.dense.weight", {H, H});
    L.ao_b = tensor(p + "attention.output.dense.bias", {H});
    L.ln1_g = tensor(p + "attention.output.LayerNorm.weight", {H});
    L.ln1_b = tensor(p + "attention.output.LayerNorm.bias", {H});
    L.in_w = tensor(p + "intermediate.dense.weight", {I, H});
    L.in_b = tensor(p + "intermediate.dense.bias", {I});
    L.out_w = tensor(p + "output.dense.weight", {H, I});
    L.out_b = tensor(p + "output.dense.bias", {H});
    L.ln2_g = tensor(p + "output.LayerNorm.weight", {H});
    L.ln2_b = tensor(p + "output.LayerNorm.bias", {H});
    w.layers.push_back(std::move(L));
  }
  return enc;
}

namespace {

// Runs f(begin, end) over [0, n) split across `threads` (this one included).
template <class F>
void parallel_for(int n, int threads, F&& f) {
  if (threads <= 1 || n < 2) {
    f(0, n);
    return;
  }
  const int per = (n + threads - 1) / threads;
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) {
    const int b = t * per, e = std::min(n, b + per);
    if (b < e) pool.emplace_back([&f, b, e] { f(b, e); });
  }
  f(0, std::min(n, per));
  for (auto& t : pool) t.join();
}

// out[N, M] = in[N, K] x W[M, K]^T + b[M]; rows split across `threads`, each running a
// single-threaded sgemm on its share.
void linear(const float* in, int n, int k, const std::vector<float>& w, const std::vector<float>& b,
            int m, float* out, int threads) {
  parallel_for(n, threads, [&](int from, int to) {
    for (int r = from; r < to; ++r)
      std::copy(b.begin(), b.end(), out + static_cast<std::size_t>(r) * m);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, to - from, m, k, 1.0f,
                in + static_cast<std::size_t>(from) * k, k, w.data(), k, 1.0f,
                out + static_cast<std::size_t>(from) * m, m);
  });
}

}  // namespace

void BertEncoder::forward(const std::vector<std::int32_t>& ids,
                          const std::vector<std::int32_t>& mask, int batch, int seq,
                          std::vector<float>& out) const {
  const int H = cfg_.hidden, I = cfg_.intermediate, heads = cfg_.heads, d = H / heads;
  const int N = batch * seq;
  if (static_cast<int>(ids.size()) != N || static_cast<int>(mask.size()) != N)
    throw Error(Code::internal, "bert forward: ids and mask must hold batch x seq entries");
  if (seq > cfg_.max_positions)
    throw Error(Code::internal, "bert forward: " + std::to_string(seq) +
                                    " tokens exceed the model's " +
                                    std::to_string(cfg_.max_positions) + " positions");
  // Real tokens come first in each row (right padding): attention runs over each row's length.
  std::vector<int> len(static_cast<std::size_t>(batch), 0);
  for (int b = 0; b < batch; ++b)
    while (len[b] < seq && mask[static_cast<std::size_t>(b * seq + len[b])]) ++len[b];

  const auto& w = *w_;
  out.assign(static_cast<std::size_t>(N) * H, 0.0f);
  float* x = out.data();
  for (int b = 0; b < batch; ++b)
    for (int t = 0; t < seq; ++t) {
      const int n = b * seq + t;
      const int id = ids[static_cast<std::size_t>(n)];
      if (id < 0 || id >= cfg_.vocab_size)
        throw Error(Code::internal,
                    "bert forward: token id " + std::to_string(id) + " is outside the vocabulary");
      float* row = x + static_cast<std::size_t>(n) * H;
      const float* we = w.word.data() + static_cast<std::size_t>(id) * H;
      const float* pe = w.pos.data() + static_cast<std::size_t>(t) * H;
      const float* te = w.type.data();
      for (int i = 0; i < H; ++i) row[i] = we[i] + pe[i] + te[i];
      layer_norm(row, H, w.emb_g.data(), w.emb_b.data(), cfg_.eps);
    }

  std::vector<float> qkv(static_cast<std::size_t>(N) * 3 * H), ctx(static_cast<std::size_t>(N) * H),
      tmp(static_cast<std::size_t>(N) * H), inter(static_cast<std::size_t>(N) * I);
  // Our threads split every step (OpenBLAS itself runs single-threaded: its spinning workers
  // would compete with ours for the cores between GEMMs).
  // A short input (a query) runs on this thread alone: starting threads would cost more.
  const int threads =
      N < 64 ? 1
             : (threads_ > 0 ? threads_
                             : std::max(1, static_cast<int>(std::thread::hardware_concurrency())));
  std::vector<std::vector<float>> scores(static_cast<std::size_t>(threads),
                                         std::vector<float>(static_cast<std::size_t>(seq) * seq));
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  const bool tanh_gelu = cfg_.activation == "gelu_new" || cfg_.activation == "gelu_pytorch_tanh";
  const bool relu = cfg_.activation == "relu";
  const int per_thread = (batch * heads + threads - 1) / threads;
  auto residual_norm = [&](const std::vector<float>& g, const std::vector<float>& b) {
    parallel_for(N, threads, [&](int from, int to) {
      for (int n = from; n < to; ++n) {
        float* row = x + static_cast<std::size_t>(n) * H;
        const float* add = tmp.data() + static_cast<std::size_t>(n) * H;
        for (int i = 0; i < H; ++i) row[i] += add[i];
        layer_norm(row, H, g.data(), b.data(), cfg_.eps);
      }
    });
  };
  for (const auto& L : w.layers) {
    linear(x, N, H, L.qkv_w, L.qkv_b, 3 * H, qkv.data(), threads);
    std::fill(ctx.begin(), ctx.end(), 0.0f);
    // One (sequence, head) pair at a time per thread, each with its own scores buffer.
    parallel_for(batch * heads, threads, [&](int from, int to) {
      float* sc = scores[static_cast<std::size_t>(from / std::max(1, per_thread))].data();
      for (int bh = from; bh < to; ++bh) {
        const int b = bh / heads, h = bh % heads, T = len[static_cast<std::size_t>(b)];
        if (T == 0) continue;
        const float* base = qkv.data() + static_cast<std::size_t>(b) * seq * 3 * H;
        const float* q = base + h * d;
        const float* k = base + H + h * d;
        const float* v = base + 2 * H + h * d;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, T, T, d, scale, q, 3 * H, k, 3 * H,
                    0.0f, sc, T);
        for (int i = 0; i < T; ++i) {  // softmax over the row's real tokens
          float* s = sc + static_cast<std::size_t>(i) * T;
          const float mx = *std::max_element(s, s + T);
          float sum = 0;
          for (int j = 0; j < T; ++j) sum += (s[j] = std::exp(s[j] - mx));
          const float inv = 1.0f / sum;
          for (int j = 0; j < T; ++j) s[j] *= inv;
        }
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, T, d, T, 1.0f, sc, T, v, 3 * H, 0.0f,
                    ctx.data() + static_cast<std::size_t>(b) * seq * H + h * d, H);
      }
    });
    linear(ctx.data(), N, H, L.ao_w, L.ao_b, H, tmp.data(), threads);
    residual_norm(L.ln1_g, L.ln1_b);
    linear(x, N, H, L.in_w, L.in_b, I, inter.data(), threads);
    parallel_for(N, threads, [&](int from, int to) {
      float* p = inter.data() + static_cast<std::size_t>(from) * I;
      const std::size_t n = static_cast<std::size_t>(to - from) * I;
      // One loop per activation, so that each vectorises.
      if (relu) {
        for (std::size_t k = 0; k < n; ++k) p[k] = p[k] > 0 ? p[k] : 0;
      } else if (tanh_gelu) {
        for (std::size_t k = 0; k < n; ++k) {
          const float v = p[k];
          p[k] = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
        }
      } else {
        for (std::size_t k = 0; k < n; ++k)
          p[k] = 0.5f * p[k] * (1.0f + erf_approx(p[k] * 0.70710678f));
      }
    });
    linear(inter.data(), N, I, L.out_w, L.out_b, H, tmp.data(), threads);
    residual_norm(L.ln2_g, L.ln2_b);
  }
}

}  // namespace quarry::embed
