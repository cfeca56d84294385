// Quarry as a library: open a data directory, make a KB, add a document, embed it and search.
// Usage: embed_engine DATA_DIR
#include <cstdio>
#include <exception>

#include "quarry/engine.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: embed_engine DATA_DIR\n");
    return 2;
  }
  try {
    auto engine = quarry::Engine::open({.data_dir = argv[1]});
    // `hash` embeds without a model file; `static:glove-100d` would use the installed model.
    engine->create_kb("notes", R"({"embedder": {"provider": "hash"}})");
    engine->ingest_bytes("notes", "tides.md",
                         "# Tides\n\nThe moon's pull raises the tides twice a day.\n", {});
    engine->ingest_bytes("notes", "bread.md",
                         "# Bread\n\nKnead the dough, let it rise, then bake it.\n", {});
    engine->reindex("notes", {});  // embed what ingest left pending

    quarry::SearchRequest request;
    request.kb = "notes";
    request.query = "why are there tides";
    request.mode = quarry::Mode::hybrid;
    request.top_k = 2;
    auto response = engine->search(request);
    std::printf("mode: %s\n", quarry::mode_name(response.mode));
    for (const auto& hit : response.hits)
      std::printf("%.3f %s %s\n", hit.score, hit.filename.c_str(), hit.snippet.c_str());
    return response.hits.empty() ? 1 : 0;
  } catch (const quarry::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
