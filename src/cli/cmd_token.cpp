// quarry token create|list|revoke — bearer tokens for `quarry serve` (SPEC §10). The secret is
// printed once, at creation; only its hash is stored.
#include <iostream>

#include "cli/commands.h"

namespace quarry::cli {

void add_token_commands(CLI::App& app, Globals& g, int& /*exit_code*/) {
  auto* token = app.add_subcommand("token", "Bearer tokens for the REST and MCP server");
  token->require_subcommand(1);

  struct CreateArgs {
    std::string name, scope = "read";
    std::vector<std::string> kbs;
  };
  auto ca = std::make_shared<CreateArgs>();
  auto* create = token->add_subcommand(
      "create", "Create a token; its secret is shown once (read < write < admin)");
  create->add_option("--name", ca->name, "A label, e.g. the app or person using it")->required();
  create
      ->add_option("--scope", ca->scope,
                   "read: search and read; write: also ingest, edit, re-embed (spends); "
                   "admin: also KB settings and tokens")
      ->check(CLI::IsMember({"read", "write", "admin"}));
  create->add_option("--kb", ca->kbs, "Limit the token to this knowledge base (repeatable)");
  create->callback([&g, ca] {
    auto engine = open_engine(g);
    NewToken t = engine->create_token(ca->name, ca->scope, ca->kbs);
    if (g.json) {
      print_json({{"token", to_json(t.token)}, {"secret", t.secret}});  // as POST /api/v1/tokens
      return;
    }
    std::cout << "token " << t.token.id << " (" << t.token.scope;
    if (!t.token.kbs.empty()) {
      std::cout << ", KBs:";
      for (const auto& k : t.token.kbs) std::cout << " " << k;
    }
    std::cout << ")\n  secret: " << t.secret
              << "\n  It is shown only now; send it as `Authorization: Bearer <secret>`.\n";
  });

  auto* list = token->add_subcommand("list", "List tokens (never their secrets)");
  list->callback([&g] {
    auto engine = open_engine(g);
    auto tokens = engine->list_tokens();
    if (g.json) {
      nlohmann::json arr = nlohmann::json::array();
      for (const auto& t : tokens) arr.push_back(to_json(t));
      print_json({{"tokens", arr}});
      return;
    }
    if (tokens.empty()) std::cout << "no tokens (create one with `quarry token create`)\n";
    for (const auto& t : tokens) {
      std::cout << t.id << "  " << t.scope << "  " << t.name;
      if (!t.kbs.empty()) {
        std::cout << "  KBs:";
        for (const auto& k : t.kbs) std::cout << " " << k;
      }
      if (!t.revoked_at.empty()) std::cout << "  (revoked " << t.revoked_at << ")";
      std::cout << "\n";
    }
  });

  auto id = std::make_shared<std::string>();
  auto* revoke = token->add_subcommand("revoke", "Revoke a token at once");
  revoke->add_option("id", *id, "Token id (from `quarry token list`)")->required();
  revoke->callback([&g, id] {
    open_engine(g)->revoke_token(*id);
    if (g.json)
      print_json({{"id", *id}, {"revoked", true}});
    else
      std::cout << "token " << *id << " revoked\n";
  });
}

}  // namespace quarry::cli
