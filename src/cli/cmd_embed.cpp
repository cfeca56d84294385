// quarry embed --embedder SPEC [--query] TEXT... — embeds text with any provider, no KB needed,
// and prints each text's vector (and, for providers that tokenize locally, the token ids the
// model saw), so output can be compared with another implementation of the same model.
#include <iostream>

#include "cli/commands.h"
#include "quarry/models.h"

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
    EmbedTextsRequest req;
    req.data_dir = g.data_dir;
    req.embedder = a->embedder;
    req.settings_json = a->settings;
    req.as_query = a->query;
    for (const auto& t : a->texts) req.texts.push_back(read_arg_or_file(t));
    const EmbedTextsResult res = embed_texts(req);
    json items = json::array();
    for (const auto& it : res.items) {
      json item = {{"text", it.text}, {"vector", it.vector}};
      // The ids the model saw (bert); the query side carries its prefix.
      if (!it.token_ids.empty()) item["token_ids"] = it.token_ids;
      items.push_back(std::move(item));
    }
    if (g.json) {
      print_json({{"embedder", a->embedder},
                  {"identity", res.identity},
                  {"dimensions", res.dimensions},
                  {"as", a->query ? "query" : "document"},
                  {"items", items}});
      return;
    }
    std::cout << res.identity << ", " << res.dimensions << " dimensions\n";
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
