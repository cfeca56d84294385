// quarry kb create|list|describe|set|delete
#include <unistd.h>

#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "cli/interrupt.h"
#include "wire/requests.h"

namespace quarry::cli {
using nlohmann::json;

std::string read_arg_or_file(const std::string& v) {
  if (v == "-") {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    return ss.str();
  }
  if (!v.empty() && v[0] == '@') {
    std::ifstream f(v.substr(1), std::ios::binary);
    if (!f) throw Error(Code::not_found, "cannot read " + v.substr(1), {{"path", v.substr(1)}});
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  return v;
}

namespace {

void print_kb_human(const KbInfo& k) {
  const auto& c = k.config;
  std::cout << k.name << (c.description.empty() ? "" : " — " + c.description) << "\n"
            << "  documents: " << k.documents << "   chunks: " << k.chunks
            << "   markdown: " << k.markdown_bytes << " bytes\n"
            << "  modes: ";
  for (std::size_t i = 0; i < c.modes.size(); ++i)
    std::cout << (i ? ", " : "") << mode_name(c.modes[i]);
  std::cout << "\n  chunking: " << c.chunking.profile;
  if (c.chunking.profile != "none")
    std::cout << " (max_tokens " << k.chunk_max_tokens << ", overlap " << k.chunk_overlap_tokens
              << ", segmenter " << c.chunking.segmenter << ", tokens: " << k.chunk_tokenizer << ")";
  std::cout << "\n";
  if (!c.subjects.keys.empty()) {
    std::cout << "  subjects (" << c.subjects.rule << "): ";
    for (std::size_t i = 0; i < c.subjects.keys.size(); ++i)
      std::cout << (i ? ", " : "") << c.subjects.keys[i];
    std::cout << "\n";
  }
  std::cout << "  embedder: " << (c.embedder.provider.empty() ? "none" : c.embedder.provider)
            << "   store: " << c.store.id << "   hybrid: " << c.hybrid.fusion << " (semantic ratio "
            << c.hybrid.semantic_ratio
            << (c.hybrid.fusion == "interpolation" ? ", " + c.hybrid.weighting : std::string())
            << ")\n";
  std::cout << "  keyword: "
            << (c.keyword.legacy()
                    ? std::string("spaces only (made before keyword settings)")
                    : c.keyword.segmenter + " segmenter, diacritics " + c.keyword.diacritics)
            << "\n";
  std::cout << "  index: keyword " << k.index_status.keyword << ", vector " << k.index_status.vector
            << "\n";
  print_vectors_human(k);
  std::cout << "  created " << k.created_at << ", updated " << k.updated_at << "\n";
}

}  // namespace

void add_kb_commands(CLI::App& app, Globals& g, int& exit_code) {
  auto* kb =
      app.add_subcommand("kb", "Create, list, describe, configure and delete knowledge bases");
  kb->require_subcommand(1);

  struct CreateArgs {
    std::string name, description, config, profile, subject_keys, embedder, store;
    int max_tokens = 0, overlap = -1;
  };
  auto ca = std::make_shared<CreateArgs>();
  auto* create = kb->add_subcommand("create", "Create a knowledge base");
  create->add_option("name", ca->name, "Name: a-z, 0-9, '_' and '-'")->required();
  create->add_option("--description", ca->description, "One line describing the KB");
  create->add_option("--config", ca->config, "Full config as JSON, @file or - (stdin)");
  create->add_option("--profile", ca->profile, "Chunking profile: none | prose | code");
  // Presence, not value, decides whether a budget was given: `--max-tokens 0` must reach the
  // schema check and be refused, not be mistaken for "not set".
  auto* max_opt =
      create->add_option("--max-tokens", ca->max_tokens, "Chunk budget in tokens (16-8191)");
  auto* overlap_opt =
      create->add_option("--overlap", ca->overlap, "Overlap between windows in tokens");
  create->add_option("--subject-keys", ca->subject_keys,
                     "Comma-separated subject keys (exactly one per document)");
  create->add_option("--embedder", ca->embedder,
                     "Embedding provider: static:glove-100d | hash[:DIMS] | openai:MODEL");
  create->add_option("--store", ca->store, "Vector store: embedded (default) | memory");
  create->callback([&g, ca, max_opt, overlap_opt] {
    json cfg = json::object();
    if (!ca->config.empty()) {
      cfg = json::parse(read_arg_or_file(ca->config), nullptr, false);
      if (cfg.is_discarded() || !cfg.is_object())
        throw Error(Code::invalid_argument, "--config is not a JSON object", {{"field", "config"}});
    }
    if (!ca->description.empty()) cfg["description"] = ca->description;
    if (!ca->profile.empty()) cfg["chunking"]["profile"] = ca->profile;
    if (!ca->embedder.empty()) cfg["embedder"]["provider"] = ca->embedder;
    if (!ca->store.empty()) cfg["store"]["id"] = ca->store;
    if (max_opt->count()) cfg["chunking"]["max_tokens"] = ca->max_tokens;
    if (overlap_opt->count()) cfg["chunking"]["overlap_tokens"] = ca->overlap;
    if (!ca->subject_keys.empty()) {
      json keys = json::array();
      std::stringstream ss(ca->subject_keys);
      for (std::string k; std::getline(ss, k, ',');)
        if (!k.empty()) keys.push_back(k);
      cfg["subjects"]["keys"] = keys;
    }
    // The request REST takes, decoded by the same codec.
    const wire::KbCreate c = wire::decode_kb_create({{"name", ca->name}, {"config", cfg}});
    auto info = open_engine(g)->create_kb(c.name, c.config_json);
    if (g.json)
      print_json(to_json(info));
    else
      std::cout << "created knowledge base '" << info.name << "'\n";
  });

  auto* list = kb->add_subcommand("list", "List knowledge bases");
  list->callback([&g] {
    auto kbs = open_engine(g)->list_kbs();
    if (g.json) {
      json arr = json::array();
      for (const auto& k : kbs) arr.push_back(to_json(k));
      print_json({{"knowledge_bases", arr}});
      return;
    }
    if (kbs.empty()) {
      std::cout << "no knowledge bases yet; create one with `quarry kb create NAME`\n";
      return;
    }
    for (const auto& k : kbs)
      std::cout << k.name << "\t" << k.documents << " docs\t" << k.chunks << " chunks\t"
                << k.config.description << "\n";
  });

  auto name = std::make_shared<std::string>();
  auto* describe = kb->add_subcommand("describe", "Show a knowledge base's config and counts");
  describe->add_option("name", *name)->required();
  describe->callback([&g, name] {
    auto info = open_engine(g)->describe_kb(*name);
    if (g.json)
      print_json(to_json(info));
    else
      print_kb_human(info);
  });

  auto set_name = std::make_shared<std::string>();
  auto pairs = std::make_shared<std::vector<std::string>>();
  auto* set =
      kb->add_subcommand("set", "Change settings: quarry kb set NAME chunking.max_tokens=256 ...");
  set->add_option("name", *set_name)->required();
  set->add_option("settings", *pairs,
                  "key=value pairs (dotted keys; values parsed as JSON when they parse)")
      ->required();
  auto cutover = std::make_shared<std::string>("on-complete");
  set->add_option("--cutover", *cutover,
                  "When a new revision replaces the serving one: on-complete (blue-green, the "
                  "default) or immediate (drop the old vectors now)")
      ->check(CLI::IsMember({"on-complete", "immediate"}));
  auto dry_run = std::make_shared<bool>(false);
  set->add_flag("--dry-run", *dry_run,
                "Check the change and say what it would do (re-cut, re-embed), without doing it");
  set->callback([&g, set_name, pairs, cutover, dry_run] {
    // key=value pairs are the settings REST takes, in the order given; values stay text (the
    // engine reads them as JSON when they parse), and the codec checks the change as REST's.
    std::vector<std::pair<std::string, json>> settings;
    for (const auto& p : *pairs) {
      auto eq = p.find('=');
      if (eq == std::string::npos || eq == 0)
        throw Error(Code::invalid_argument,
                    "setting '" + p + "' is not key=value: write it as `quarry kb set " +
                        *set_name + " " + (eq == 0 ? std::string("KEY") : p) +
                        "=VALUE` (VALUE null resets it to the default)",
                    {{"field", p}});
      settings.emplace_back(p.substr(0, eq), p.substr(eq + 1));
    }
    const wire::KbChange c = wire::decode_kb_change(settings, *cutover);
    if (*dry_run) {
      const KbChangePlan p =
          open_engine(g)->plan_kb_change(*set_name, c.settings, c.cutover_immediate);
      if (g.json) {
        print_json(to_json(p));
      } else {
        std::cout << "dry run: nothing was changed\n"
                  << "re-cut:   "
                  << (p.re_cut ? (p.re_cut_at == "now" ? "yes, every document now"
                                                       : "yes, at the cut-over of the new build")
                               : "no")
                  << " (" << p.documents << " documents, " << p.chunks << " -> " << p.chunks_after
                  << " chunks)\n"
                  << "re-embed: " << (p.re_embed ? "yes" : "no") << " (vectors: " << p.vectors
                  << ")\n"
                  << "revision: " << p.revision_before << " -> " << p.revision_after << "\n";
      }
      return;
    }
    auto info = open_engine(g)->set_kb(*set_name, c.settings, c.cutover_immediate);
    if (g.json)
      print_json(to_json(info));
    else
      print_kb_human(info);
  });

  auto del_name = std::make_shared<std::string>();
  auto yes = std::make_shared<bool>(false);
  auto* del = kb->add_subcommand("delete", "Delete a knowledge base with all its documents");
  del->add_option("name", *del_name)->required();
  del->add_flag("--yes,-y", *yes, "Do not ask for confirmation");
  del->callback([&g, del_name, yes] {
    auto engine = open_engine(g);
    auto info = engine->describe_kb(*del_name);
    if (!*yes) {
      if (!isatty(STDIN_FILENO))
        throw Error(Code::invalid_argument,
                    "refusing to delete '" + *del_name + "' without confirmation; pass --yes",
                    {{"field", "yes"}});
      std::cerr << "Delete knowledge base '" << *del_name << "' and its " << info.documents
                << " documents? [y/N] ";
      std::string answer;
      std::getline(std::cin, answer);
      if (answer != "y" && answer != "Y" && answer != "yes") {
        std::cerr << "not deleted\n";
        return;
      }
    }
    engine->delete_kb(*del_name);
    if (g.json)
      print_json({{"deleted", *del_name}, {"documents", info.documents}});
    else
      std::cout << "deleted knowledge base '" << *del_name << "' (" << info.documents
                << " documents)\n";
  });

  struct MigrateArgs {
    std::string name, to, settings = "{}";
  };
  auto ma = std::make_shared<MigrateArgs>();
  auto* migrate = kb->add_subcommand(
      "migrate-store", "Move a KB's vectors to another store without re-embedding, then switch");
  migrate->add_option("name", ma->name)->required();
  migrate->add_option("--to", ma->to, "Target store id (embedded, chroma, ...)")->required();
  migrate->add_option("--settings", ma->settings,
                      "The target store's settings as JSON, or @file (see docs/stores.md)");
  migrate->callback([&g, ma, &exit_code] {
    auto engine = open_engine(g);
    const std::string settings = read_arg_or_file(ma->settings);
    StoreMigrationOptions o;
    ProgressBar bar;
    if (!g.json && stderr_is_tty())
      o.progress = [&bar](std::int64_t done, std::int64_t total) {
        bar.draw("copying vectors ", static_cast<std::size_t>(done),
                 static_cast<std::size_t>(total), "documents");
      };
    // Ctrl-C or SIGTERM: the copy stops after the page in hand and the target is emptied; the
    // KB never switched, so there is nothing to undo and the next run starts over.
    Interruption interruption;
    o.cancel = interruption.flag();
    StoreMigrationReport r;
    try {
      r = engine->migrate_store(ma->name, ma->to, settings, o);
    } catch (const Error& e) {
      bar.clear();
      if (e.code() != Code::cancelled || !interruption.requested()) throw;
      if (g.json)
        print_json({{"kb", ma->name},
                    {"cancelled", true},
                    {"signal", interruption.name()},
                    {"message", e.message()}});
      else
        std::cout << interruption.name() << ": " << e.message() << "\n";
      exit_code = interruption.exit_status();
      return;
    }
    bar.clear();
    if (g.json) {
      print_json({{"kb", r.kb},
                  {"from", r.from_store},
                  {"to", r.to_store},
                  {"revision", r.revision},
                  {"documents", r.documents},
                  {"chunks", r.chunks},
                  {"pending", r.pending},
                  {"took_ms", r.took_ms}});
      return;
    }
    std::cout << "moved " << r.chunks << " vectors of " << r.documents << " documents of '" << r.kb
              << "' from " << r.from_store << " to " << r.to_store << " (revision " << r.revision
              << "), counted there; '" << r.kb << "' now uses " << r.to_store << "\n";
    if (r.pending)
      std::cout << "  " << r.pending << " documents not embedded yet will be embedded there\n";
  });
}

}  // namespace quarry::cli
