// quarry embed --embedder SPEC [--query] TEXT... — embeds text with any provider, no KB needed,
// and prints each text's vector (and, for providers that tokenize locally, the token ids the
// model saw), so output can be compared with another implementation of the same model.
#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "core/secret_store.h"
#include "embed/provider.h"

namespace quarry::cli {
using nlohmann::json;

void add_embed_command(CLI::App& app, Globals& g, int& /*exit_code*/) {
  struct Args {
    std::string embedder, settings = "{}";
    bool query = false;
    std::vector<std::string> texts;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand(
      "embed", "Embed text with a provider and print the vectors (and token ids), no KB needed");
  cmd->add_option("--embedder", a->embedder,
                  "Provider spec, e.g. bert:/models/all-MiniLM-L6-v2, static:glove-100d, hash:256")
      ->required();
  cmd->add_flag("--query", a->query,
                "Embed as a search query (a model's query prefix) instead of as a document");
  cmd->add_option("--settings", a->settings,
                  "Provider settings as a JSON object, e.g. '{\"query_prefix\": \"\"}'");
  cmd->add_option("text", a->texts, "Texts ('-' reads stdin, '@file' a file)")->required();
  cmd->callback([&g, a] {
    json settings = json::parse(a->settings, nullptr, false);
    if (settings.is_discarded() || !settings.is_object())
      throw Error(Code::invalid_argument, "--settings must be a JSON object",
                  {{"field", "settings"}});
    embed::ProviderContext ctx;
    ctx.data_dir = g.data_dir;
    if (const char* m = std::getenv("QUARRY_MODELS_DIR")) ctx.models_dir = m;
    ctx.secret = core::secret_lookup(g.data_dir);
    auto p =
        embed::ProviderRegistry::builtin().create(embed::parse_spec(a->embedder, settings), ctx);
    if (auto av = p->is_available(); !av.ok)
      throw Error(Code::engine_unavailable, "embedder " + a->embedder + ": " + av.reason,
                  {{"embedder", a->embedder}});
    std::vector<std::string> texts;
    for (const auto& t : a->texts) texts.push_back(read_arg_or_file(t));
    std::vector<embed::Vector> vecs;
    if (a->query)
      for (const auto& t : texts) vecs.push_back(p->embed_query(t));
    else
      vecs = p->embed_documents(texts);
    json items = json::array();
    for (std::size_t i = 0; i < texts.size(); ++i) {
      json item = {{"text", texts[i]}, {"vector", vecs[i]}};
      // The ids the model saw (bert); the query side carries its prefix.
      auto ids = embed::bert_token_ids(*p, texts[i], a->query);
      if (!ids.empty()) item["token_ids"] = ids;
      items.push_back(std::move(item));
    }
    if (g.json) {
      print_json({{"embedder", a->embedder},
                  {"identity", p->identity()},
                  {"dimensions", p->dimensions()},
                  {"as", a->query ? "query" : "document"},
                  {"items", items}});
      return;
    }
    std::cout << p->identity() << ", " << p->dimensions() << " dimensions\n";
    for (const auto& it : items) {
      std::cout << it["text"].get<std::string>().substr(0, 60) << "\n  [";
      for (std::size_t d = 0; d < std::min<std::size_t>(6, it["vector"].size()); ++d)
        std::cout << (d ? ", " : "") << it["vector"][d].get<float>();
      std::cout << ", ...]";
      if (it.contains("token_ids")) std::cout << "  " << it["token_ids"].size() << " tokens";
      std::cout << "\n";
    }
  });
}

}  // namespace quarry::cli
