// quarry docs list|get|edit|delete|reconvert
#include <iostream>

#include "cli/commands.h"

namespace quarry::cli {
using nlohmann::json;

void add_docs_commands(CLI::App& app, Globals& g, int& /*exit_code*/) {
  auto* docs = app.add_subcommand("docs", "List, read, edit, delete and reconvert documents");
  docs->require_subcommand(1);

  struct ListArgs {
    std::string kb, cursor, filter;
    int limit = 100;
  };
  auto la = std::make_shared<ListArgs>();
  auto* list = docs->add_subcommand("list", "List documents (cursor-paginated, ordered by id)");
  list->add_option("--kb", la->kb)->required();
  list->add_option("--limit", la->limit, "Page size (1-10000)");
  list->add_option("--cursor", la->cursor,
                   "Continue after this id (the previous page's next_cursor)");
  list->add_option("--filter", la->filter, "Metadata filter (JSON, §4 language)");
  list->callback([&g, la] {
    auto page =
        open_engine(g)->list_documents(la->kb, la->cursor, la->limit, read_arg_or_file(la->filter));
    if (g.json) {
      json arr = json::array();
      for (const auto& d : page.documents) arr.push_back(to_json(d));
      print_json(
          {{"documents", arr},
           {"next_cursor", page.next_cursor.empty() ? json(nullptr) : json(page.next_cursor)}});
      return;
    }
    if (page.documents.empty())  // say so: nothing printed reads like a command that failed
      std::cout << (la->cursor.empty() ? "no documents" : "no more documents")
                << (la->filter.empty() ? "" : " match the filter") << " in knowledge base '"
                << la->kb << "'\n";
    for (const auto& d : page.documents)
      std::cout << d.id << "  " << d.filename << "  (" << d.chunk_count << " chunks, "
                << d.converter << ")\n";
    if (!page.next_cursor.empty()) std::cout << "more: --cursor " << page.next_cursor << "\n";
  });

  struct DocArgs {
    std::string kb, id, file, where;
    bool meta_only = false;
  };
  auto ga = std::make_shared<DocArgs>();
  auto* get = docs->add_subcommand("get", "Print a document's Markdown (and metadata with --json)");
  get->add_option("id", ga->id)->required();
  get->add_option("--kb", ga->kb)->required();
  get->add_flag("--meta", ga->meta_only, "Print metadata only");
  get->callback([&g, ga] {
    auto engine = open_engine(g);
    Document d = engine->get_document(ga->kb, ga->id);
    if (g.json) {
      json j = to_json(d);
      if (!ga->meta_only) j["markdown"] = engine->read_markdown(ga->kb, ga->id);
      print_json(j);
      return;
    }
    if (ga->meta_only) {
      std::cout << to_json(d).dump(2) << "\n";
      return;
    }
    std::cout << engine->read_markdown(ga->kb, ga->id);
  });

  auto ea = std::make_shared<DocArgs>();
  auto* edit = docs->add_subcommand("edit", "Replace a document's Markdown (from --file or stdin)");
  edit->add_option("id", ea->id)->required();
  edit->add_option("--kb", ea->kb)->required();
  edit->add_option("--file", ea->file, "Markdown file (default: stdin)");
  edit->callback([&g, ea] {
    std::string md = read_arg_or_file(ea->file.empty() ? "-" : "@" + ea->file);
    Document d = open_engine(g)->edit_document(ea->kb, ea->id, md);
    if (g.json)
      print_json(to_json(d));
    else
      std::cout << "edited " << d.id << " (" << d.chunk_count << " chunks)\n";
  });

  auto da = std::make_shared<DocArgs>();
  auto* del =
      docs->add_subcommand("delete", "Delete a document, or every document matching --where");
  del->add_option("id", da->id);
  del->add_option("--kb", da->kb)->required();
  del->add_option("--where", da->where, "Metadata filter: delete all matches (e.g. one subject)");
  del->callback([&g, da] {
    auto engine = open_engine(g);
    if (da->id.empty() == da->where.empty())
      throw Error(Code::invalid_argument, "give either a document id or --where FILTER",
                  {{"field", "id"}});
    std::vector<std::string> ids;
    if (!da->id.empty()) {
      engine->delete_document(da->kb, da->id);
      ids.push_back(da->id);
    } else {
      ids = engine->delete_where(da->kb, read_arg_or_file(da->where));
    }
    if (g.json)
      print_json({{"deleted", ids}});
    else
      std::cout << "deleted " << ids.size() << " document(s)\n";
  });

  auto ra = std::make_shared<DocArgs>();
  auto* rec = docs->add_subcommand("reconvert", "Convert the stored original again");
  rec->add_option("id", ra->id)->required();
  rec->add_option("--kb", ra->kb)->required();
  rec->callback([&g, ra] {
    Document d = open_engine(g)->reconvert_document(ra->kb, ra->id);
    if (g.json)
      print_json(to_json(d));
    else
      std::cout << "reconverted " << d.id << " with " << d.converter << " (" << d.chunk_count
                << " chunks)\n";
  });
}

}  // namespace quarry::cli
