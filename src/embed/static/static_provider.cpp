// The `static` provider: static token-embedding models (model2vec layout), found by name.
//
// Where a model named N is looked for, first hit wins:
//   settings.model_dir (exactly that folder; nothing else is searched)
//   $QUARRY_MODELS_DIR/N, ProviderContext.models_dir/N, <data_dir>/models/N,
//   <exe>/../share/quarry/models/N (an install: /usr/bin/quarry -> /usr/share/quarry/models),
//   <exe>/share/quarry/models/N (a build tree: the build links it to .deps/models, where
//   `make model` puts the default model).
// Both last two are found from the running executable, so no build path is compiled in.
// A missing model is not an error at create(): the provider exists, is_available() says what is
// missing and how to fix it, and the embed calls throw engine_unavailable. The files are loaded
// lazily on first use (once, under a mutex) and then shared read-only by all threads.
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "core/plugin_version.h"
#include "core/util.h"
#include "embed/provider.h"
#include "embed/static/static_model.h"
#include "quarry/error.h"

namespace quarry::embed {
namespace {

namespace fs = std::filesystem;

constexpr const char* kDefaultModel = "glove-100d";
constexpr int kFallbackDims = 100;  // only while a model is missing and nothing says otherwise

// A model name becomes a path component, and KB configs come from API callers: no separators,
// no "..", nothing hidden.
void check_model_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 128 && name[0] != '.' && name != "..";
  for (char c : name)
    ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.');
  if (!ok)
    throw Error(Code::invalid_argument,
                "static model name '" + name +
                    "' is not valid: use letters, digits, '-', '_' and '.', e.g. 'glove-100d' "
                    "(point settings.model_dir at a folder instead of using a path)",
                {{"field", "embedding.provider"}});
}

std::vector<std::string> candidate_dirs(const std::string& name, const ProviderContext& ctx) {
  std::vector<std::string> out;
  if (const char* env = std::getenv("QUARRY_MODELS_DIR"); env && *env)
    out.push_back((fs::path(env) / name).string());
  if (!ctx.models_dir.empty()) out.push_back((fs::path(ctx.models_dir) / name).string());
  if (!ctx.data_dir.empty()) out.push_back((fs::path(ctx.data_dir) / "models" / name).string());
  if (std::string exe = core::executable_dir(); !exe.empty()) {
    out.push_back((fs::path(exe).parent_path() / "share" / "quarry" / "models" / name).string());
    out.push_back((fs::path(exe) / "share" / "quarry" / "models" / name).string());
  }
  return out;
}

// "glove-100d" -> 100: lets a missing model still report the dimensions it will have.
int dims_from_name(const std::string& name) {
  auto d = name.rfind('d');
  if (d == std::string::npos || d + 1 != name.size()) return 0;
  auto start = d;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(name[start - 1]))) --start;
  if (start == d || d - start > 4) return 0;
  return std::stoi(name.substr(start, d - start));
}

class StaticProvider final : public EmbeddingProvider {
 public:
  StaticProvider(std::string name, std::string explicit_dir, std::vector<std::string> candidates,
                 int dims)
      : name_(std::move(name)),
        explicit_dir_(std::move(explicit_dir)),
        candidates_(std::move(candidates)),
        dims_(dims) {}

  std::string id() const override { return "static"; }
  std::string model() const override { return name_; }
  int dimensions() const override { return dims_; }
  int max_input_tokens() const override {
    const auto* m = try_model();
    return m ? m->info().max_input_tokens : 8192;
  }

  std::size_t count_tokens(std::string_view text) const override {
    if (const auto* m = try_model()) return m->tokenizer().count_tokens(text);
    // Without the tokenizer, the BERT pre-tokens are a close lower bound.
    std::size_t n = 0;
    std::string scratch;
    bert_pre_tokenize(text, BertNormalizerOptions{}, scratch, [&](std::string_view) { ++n; });
    return n;
  }

  std::string identity() const override {
    const auto* m = try_model();
    if (!m) return "static;model=" + name_ + ";dims=" + std::to_string(dims_) + ";unavailable";
    const auto& i = m->info();
    const auto& n = m->tokenizer().normalizer();
    return "static;model=" + name_ + ";dims=" + std::to_string(i.dims) +
           ";vocab=" + std::to_string(i.vocab_size) + ";pool=" + (i.apply_sif ? "sif" : "mean") +
           // hf: the normaliser matches Hugging Face's exactly (ICU; earlier: compact tables)
           ";norm=l2;tok=wordpiece-hf(lower=" + (n.lowercase ? "1" : "0") +
           ",strip=" + (n.strip_accents ? "1" : "0") + ")" + ";content=" + i.content_hash;
  }

  Availability is_available() override {
    try {
      loaded();
      return {};
    } catch (const Error& e) {
      return {false, e.message()};
    }
  }

  std::vector<Vector> embed_documents(const std::vector<std::string>& texts) override {
    const auto& m = loaded();
    std::vector<Vector> out;
    out.reserve(texts.size());
    for (const auto& t : texts) out.push_back(m.embed(t));
    return out;
  }
  Vector embed_query(const std::string& text) override { return loaded().embed(text); }
  std::optional<double> query_coverage(const std::string& text) override {
    return loaded().coverage(text);
  }

 private:
  const StaticModel* try_model() const {
    try {
      return &loaded();
    } catch (const Error&) {
      return nullptr;
    }
  }

  // Loads on first use. A failure is not cached: running `make model` while the server is up
  // makes the model available at the next call.
  const StaticModel& loaded() const {
    if (const auto* m = loaded_.load(std::memory_order_acquire)) return *m;
    std::lock_guard<std::mutex> lock(mu_);
    if (const auto* m = loaded_.load(std::memory_order_relaxed)) return *m;
    std::string dir = resolve();
    auto m = StaticModel::load(dir);
    if (m->dims() != dims_)
      throw Error(Code::dimension_mismatch,
                  "static model '" + name_ + "' in " + dir + " has " + std::to_string(m->dims()) +
                      " dimensions but the provider was configured for " + std::to_string(dims_) +
                      ": fix settings.dimensions or reconfigure the knowledge base",
                  {{"provider", "static"}, {"model", name_}});
    owned_ = std::move(m);
    loaded_.store(owned_.get(), std::memory_order_release);
    return *owned_;
  }

  std::string resolve() const {
    auto has_files = [](const std::string& d) {
      std::error_code ec;
      return fs::is_directory(d, ec) && fs::exists(fs::path(d) / "model.safetensors", ec);
    };
    if (!explicit_dir_.empty()) {
      if (has_files(explicit_dir_)) return explicit_dir_;
      throw Error(Code::engine_unavailable,
                  "model '" + name_ + "' not found in " + explicit_dir_ +
                      " (settings.model_dir): point model_dir at a folder with model.safetensors, "
                      "tokenizer.json and config.json",
                  {{"provider", "static"}, {"model", name_}});
    }
    std::string searched;
    for (const auto& d : candidates_) {
      if (has_files(d)) return d;
      searched += (searched.empty() ? "" : ", ") + d;
    }
    throw Error(Code::engine_unavailable,
                "model '" + name_ + "' not found in " +
                    (searched.empty() ? std::string("any models folder") : searched) +
                    ": run `make model` in Quarry's source tree, install the quarry package "
                    "(docs/install.md), or set model_dir (or QUARRY_MODELS_DIR) to its folder",
                {{"provider", "static"}, {"model", name_}});
  }

  std::string name_, explicit_dir_;
  std::vector<std::string> candidates_;
  int dims_;
  mutable std::mutex mu_;
  mutable std::unique_ptr<StaticModel> owned_;
  mutable std::atomic<const StaticModel*> loaded_{nullptr};
};

// The dimensions of the model on disk, without loading it (the safetensors header only; the
// file is mapped, not read); 0 when no readable model is there yet.
int peek_dims(const std::vector<std::string>& dirs) {
  for (const auto& d : dirs) {
    try {
      SafetensorsFile st((fs::path(d) / "model.safetensors").string());
      const auto* t = find_embedding_tensor(st);
      if (t && t->shape.size() == 2 && t->cols() > 0) return static_cast<int>(t->cols());
    } catch (const Error&) {
      // missing or corrupt: is_available() reports it; keep looking
    }
  }
  return 0;
}

}  // namespace

std::unique_ptr<EmbeddingProvider> make_static_provider(const ProviderSpec& spec,
                                                        const ProviderContext& ctx) {
  std::string name = spec.model.empty() ? kDefaultModel : spec.model;
  check_model_name(name);
  std::string explicit_dir;
  if (settings_json(spec).contains("model_dir")) {
    const auto& d = settings_json(spec)["model_dir"];
    if (!d.is_string() || d.get<std::string>().empty())
      throw Error(Code::invalid_argument, "settings.model_dir must be a non-empty folder path",
                  {{"field", "model_dir"}});
    explicit_dir = d.get<std::string>();
  }
  auto candidates = explicit_dir.empty() ? candidate_dirs(name, ctx) : std::vector<std::string>{};
  int dims = peek_dims(explicit_dir.empty() ? candidates : std::vector<std::string>{explicit_dir});
  if (settings_json(spec).contains("dimensions")) {
    const auto& d = settings_json(spec)["dimensions"];
    if (!d.is_number_integer() || d.get<long long>() < 1 || d.get<long long>() > 65536)
      throw Error(Code::invalid_argument, "settings.dimensions must be a positive integer",
                  {{"field", "dimensions"}});
    int want = static_cast<int>(d.get<long long>());
    if (dims != 0 && dims != want)
      throw Error(Code::invalid_argument,
                  "settings.dimensions is " + std::to_string(want) + " but static model '" + name +
                      "' has " + std::to_string(dims) + ": drop the setting or fix it",
                  {{"field", "dimensions"}});
    dims = want;
  }
  // While the model is missing, its dimensions come from the name ("glove-100d") or a fallback.
  if (dims == 0) dims = dims_from_name(name);
  if (dims == 0) dims = kFallbackDims;
  return std::make_unique<StaticProvider>(std::move(name), std::move(explicit_dir),
                                          std::move(candidates), dims);
}

// What make_static_provider() reads.
PluginSchema static_provider_schema() {
  PluginSchema s;
  s.description =
      "Static token-embedding models (model2vec layout) and word vectors converted to it "
      "(GloVe), from a local folder: fast and offline, a paraphrase helper for hybrid search.";
  s.settings = {
      core::plugin_setting("model_dir", "string", "",
                           "The model's folder; without it the model is looked up by name in "
                           "the models folders (QUARRY_MODELS_DIR, <data-dir>/models)."),
      core::plugin_setting("dimensions", "integer", "",
                           "The vector length, when known before the model is installed; it "
                           "must match the model's (default: the model's).")};
  s.models = {{kDefaultModel, dims_from_name(kDefaultModel),
               "GloVe 6B word vectors, 100 dimensions, with SIF weighting (`make model` "
               "or the quarry package installs it)",
               true}};
  return s;
}

}  // namespace quarry::embed
