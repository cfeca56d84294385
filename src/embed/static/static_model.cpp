// Loading and pooling for static embedding models (see static_model.h).
#include "embed/static/static_model.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "embed/hash/stable_hash.h"
#include "embed/provider.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw Error(Code::corrupt_input,
              "model file " + path + " is not usable: " + what +
                  "; re-download or re-convert the model (for the default model: `make model` in "
                  "the source tree, or reinstall the quarry package)",
              {{"path", path}});
}

std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw Error(Code::not_found,
                "model file " + path +
                    " is missing: re-convert the model (for the default model: `make model` in the "
                    "source tree, or reinstall the quarry package)",
                {{"path", path}});
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool is_float_dtype(const std::string& d) {
  return d == "F32" || d == "F16" || d == "BF16" || d == "I8";
}

std::string hex64(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<std::size_t>(i)] = digits[v & 15];
  return s;
}

}  // namespace

const TensorView* find_embedding_tensor(const SafetensorsFile& st) {
  if (const auto* t = st.find("embeddings")) return t;
  const TensorView* only = nullptr;
  for (const auto& t : st.tensors())
    if (t.shape.size() == 2) {
      if (only) return nullptr;
      only = &t;
    }
  return only;
}

std::unique_ptr<StaticModel> StaticModel::load(const std::string& dir) {
  namespace fs = std::filesystem;
  const std::string st_path = (fs::path(dir) / "model.safetensors").string();
  const std::string tok_path = (fs::path(dir) / "tokenizer.json").string();
  const std::string cfg_path = (fs::path(dir) / "config.json").string();

  std::unique_ptr<StaticModel> m(new StaticModel());
  auto& info = m->info_;
  info.dir = dir;

  std::string cfg_text = read_all(cfg_path);
  auto cfg = nlohmann::json::parse(cfg_text, nullptr, false);
  if (cfg.is_discarded() || !cfg.is_object()) bad(cfg_path, "not a JSON object");

  m->st_ = std::make_unique<SafetensorsFile>(st_path);
  m->tok_ = WordPieceTokenizer::load(tok_path);

  const auto& st = *m->st_;
  m->emb_ = find_embedding_tensor(st);
  if (!m->emb_ || m->emb_->shape.size() != 2)
    bad(st_path, "no 2-D 'embeddings' tensor (and no single 2-D tensor to use instead)");
  const auto& emb = *m->emb_;
  if (!is_float_dtype(emb.dtype))
    bad(st_path, "embeddings have dtype " + emb.dtype + "; F32, F16, BF16 or I8 is needed");
  if (st.find("mapping"))
    throw Error(Code::unsupported_format,
                "model " + dir +
                    " uses a token->row 'mapping' tensor (vocabulary quantisation), "
                    "which the static provider does not read; export the model without it",
                {{"path", st_path}});
  info.rows = static_cast<std::size_t>(emb.rows());
  info.dims = static_cast<int>(emb.cols());
  info.dtype = emb.dtype;
  info.vocab_size = m->tok_.vocab_size();
  if (info.dims <= 0 || info.rows == 0) bad(st_path, "the embedding matrix is empty");
  if (info.vocab_size > info.rows)
    bad(st_path, "the tokenizer has " + std::to_string(info.vocab_size) +
                     " ids but the embedding matrix only " + std::to_string(info.rows) + " rows");
  for (const char* key : {"hidden_dim", "dimensions"})
    if (cfg.contains(key) && cfg[key].is_number_integer() && cfg[key].get<long long>() != info.dims)
      bad(cfg_path, std::string(key) + " is " + std::to_string(cfg[key].get<long long>()) +
                        " but the embedding matrix has " + std::to_string(info.dims) + " columns");

  if (const auto* w = st.find("weights")) {
    if (w->shape.size() != 1 || static_cast<std::size_t>(w->shape[0]) != info.rows ||
        !is_float_dtype(w->dtype) || w->dtype == "I8")
      bad(st_path, "'weights' must be a float vector with one entry per embedding row");
    info.has_weights = true;
    info.apply_sif = cfg.value("apply_sif", true);
    if (info.apply_sif) m->weights_ = w;
  }
  if (emb.dtype == "I8") {
    // model2vec quantises to int8 with one scale; we also accept one per row. Without a scale
    // the vectors are only defined up to a factor, which L2 normalisation removes anyway.
    if (const auto* s = st.find("scales")) {
      if (s->shape.size() > 1 ||
          !(s->rows() == 1 || static_cast<std::size_t>(s->rows()) == info.rows) ||
          !is_float_dtype(s->dtype) || s->dtype == "I8")
        bad(st_path, "'scales' must be a float scalar or one float per embedding row");
      for (std::size_t i = 0; i < static_cast<std::size_t>(s->rows()); ++i)
        m->scales_.push_back(decode_scalar(*s, i));
    } else {
      m->scales_.push_back(cfg.value("embedding_scale", 1.0f));
    }
  }
  if (cfg.contains("seq_length") && cfg["seq_length"].is_number_unsigned())
    info.max_input_tokens =
        static_cast<int>(std::min<std::uint64_t>(cfg["seq_length"].get<std::uint64_t>(), 1u << 20));

  std::uint64_t h = fnv1a64(cfg_text);
  h = fnv1a64(std::to_string(info.vocab_size) + "/" + std::to_string(info.dims) + "/" +
                  (info.apply_sif ? "sif" : "mean"),
              h);
  info.content_hash = hex64(mix64(h));
  for (const auto& p : {st_path, tok_path, cfg_path}) {
    std::error_code ec;
    info.file_sizes[fs::path(p).filename().string()] = fs::file_size(p, ec);
  }
  return m;
}

double StaticModel::coverage(std::string_view text) const {
  std::vector<std::int32_t> ids;
  tok_.encode(text, ids);
  std::size_t known = 0, all = 0;
  for (std::int32_t id : ids) {
    if (id == tok_.unk_id()) {
      ++all;
    } else if (!tok_.is_special(id)) {
      ++all;
      ++known;
    }
  }
  return all == 0 ? 0.0 : static_cast<double>(known) / static_cast<double>(all);
}

std::vector<float> StaticModel::embed(std::string_view text) const {
  thread_local std::vector<std::int32_t> ids;
  thread_local std::vector<float> row;
  ids.clear();
  tok_.encode(text, ids);
  const auto dims = static_cast<std::size_t>(info_.dims);
  std::vector<float> acc(dims, 0.0f);
  row.resize(dims);
  std::size_t used = 0;
  for (std::int32_t id : ids) {
    if (tok_.is_special(id)) continue;
    auto r = static_cast<std::size_t>(id);
    float scale = scales_.empty() ? 1.0f : scales_.size() == 1 ? scales_[0] : scales_[r];
    decode_row(*emb_, r, row.data(), scale);
    float w = weights_ ? decode_scalar(*weights_, r) : 1.0f;
    for (std::size_t i = 0; i < dims; ++i) acc[i] += w * row[i];
    ++used;
  }
  if (used == 0) return acc;
  for (float& x : acc) x /= static_cast<float>(used);  // the mean; normalising makes it moot
  l2_normalize(acc);
  return acc;
}

}  // namespace quarry::embed
