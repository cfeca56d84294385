// quarry status [--kb NAME]: per-KB counts and index status.
#include <iostream>

#include "cli/commands.h"

namespace quarry::cli {
using nlohmann::json;

void add_status_command(CLI::App& app, Globals& g, int& /*exit_code*/) {
  auto kb = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("status", "Knowledge bases, documents and index status");
  cmd->add_option("--kb", *kb, "Only this knowledge base");
  cmd->callback([&g, kb] {
    auto engine = open_engine(g);
    std::vector<KbInfo> kbs;
    if (kb->empty())
      kbs = engine->list_kbs();
    else
      kbs.push_back(engine->describe_kb(*kb));
    if (g.json) {
      json arr = json::array();
      for (const auto& k : kbs) arr.push_back(to_json(k));
      print_json({{"data_dir", engine->data_dir()}, {"knowledge_bases", arr}});
      return;
    }
    std::cout << "data dir: " << engine->data_dir() << "\n";
    for (const auto& k : kbs) {
      std::cout << "  " << k.name << ": " << k.documents << " documents, " << k.chunks
                << " chunks; keyword " << k.index_status.keyword << ", vector "
                << k.index_status.vector << "\n";
      print_vectors_human(k);
    }
  });
}

}  // namespace quarry::cli
