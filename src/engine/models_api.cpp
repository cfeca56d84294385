// The public model API (include/quarry/models.h) over the embedding room.
#include "quarry/models.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "embed/local_models.h"
#include "embed/provider.h"
#include "quarry/error.h"
#include "secrets/secret_store.h"

namespace quarry {

GloveImportReport import_glove(const GloveImportOptions& options) {
  embed::GloveImportOptions o;
  o.from = options.from;
  o.out = options.out;
  o.dtype = options.dtype;
  auto r = embed::import_glove(o);
  return {r.words, r.vocab_size, r.dims, r.dtype, std::move(r.file_sizes), r.seconds};
}

StaticModelInfo static_model_info(const std::string& dir) {
  auto m = embed::StaticModel::load(dir);
  const auto& i = m->info();
  return {i.dir,         i.dims,      i.vocab_size,       i.rows,         i.dtype,
          i.has_weights, i.apply_sif, i.max_input_tokens, i.content_hash, i.file_sizes};
}

EmbedTextsResult embed_texts(const EmbedTextsRequest& request) {
  const auto settings = nlohmann::json::parse(request.settings_json, nullptr, false);
  if (settings.is_discarded() || !settings.is_object())
    throw Error(Code::invalid_argument, "--settings must be a JSON object",
                {{"field", "settings"}});
  embed::ProviderContext ctx;
  ctx.data_dir = request.data_dir;
  if (const char* m = std::getenv("QUARRY_MODELS_DIR")) ctx.models_dir = m;
  ctx.secret = secrets::secret_lookup(request.data_dir);
  const embed::ProviderSpec spec = embed::parse_spec(request.embedder, settings);
  auto p = embed::ProviderRegistry::builtin().create(spec, ctx);
  // An endpoint the SSRF guard refuses is the caller's setting to change, not an outage.
  if (auto refused = embed::endpoint_refusal(spec, "settings")) throw *refused;
  if (auto av = p->is_available(); !av.ok)
    throw Error(av.code, "embedder " + request.embedder + ": " + av.reason,
                {{"embedder", request.embedder}});
  std::vector<embed::Vector> vecs;
  if (request.as_query)
    for (const auto& t : request.texts) vecs.push_back(p->embed_query(t));
  else
    vecs = p->embed_documents(request.texts);
  EmbedTextsResult out;
  out.identity = p->identity();
  out.dimensions = p->dimensions();
  for (std::size_t i = 0; i < request.texts.size(); ++i) {
    EmbeddedText item;
    item.text = request.texts[i];
    item.vector.assign(vecs[i].begin(), vecs[i].end());
    item.token_ids = embed::bert_token_ids(*p, request.texts[i], request.as_query);
    out.items.push_back(std::move(item));
  }
  return out;
}

}  // namespace quarry
