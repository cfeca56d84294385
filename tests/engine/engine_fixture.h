// Shared helpers for the engine and lifecycle tests: an Engine on its own TempDir data directory.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/layout.h"
#include "quarry/engine.h"
#include "test_util.h"

namespace quarry::lifecycle::testing_support {

namespace fs = std::filesystem;

// The code of the quarry::Error `fn` throws, or Code::ok when it throws none.
using quarry::testing::code_of;

// A KB of `c` by name, as a request resolves it.
inline catalog::KbRef ref(const catalog::Catalog& c, const std::string& kb) {
  return c.kbs().get(kb).ref();
}

class EngineTest : public ::testing::Test {
 protected:
  quarry::testing::TempDir dir;
  std::string data = (dir / "data").string();
  std::unique_ptr<Engine> engine = open_engine();
  const std::string canonical_data = engine->data_dir();  // valid while `engine` is closed, too

  std::unique_ptr<Engine> open_engine() {
    EngineOptions o;
    o.data_dir = data;
    o.actor = "tester";
    o.lock_timeout_ms = 2000;
    return Engine::open(o);
  }

  // A read-only view of the catalog beside the engine (WAL readers never block).
  std::unique_ptr<catalog::Catalog> catalog() const {
    return catalog::Catalog::open(core::Layout{canonical_data}.catalog_path());
  }

  fs::path md_file(const std::string& kb, const std::string& id) const {
    return fs::path(canonical_data) / "kb" / kb / "docs" / (id + ".md");
  }
  fs::path raw_file(const std::string& kb, const std::string& id, const std::string& ext) const {
    return fs::path(canonical_data) / "kb" / kb / "raw" / (id + "." + ext);
  }

  // Where a write stages the file that becomes `final_path` before its catalog commit.
  fs::path staged(const fs::path& final_path) const {
    return core::Layout{canonical_data}.staged_path(final_path.string());
  }

  IngestItem add(const std::string& kb, const std::string& name, const std::string& bytes,
                 const std::string& metadata = "", bool replace = false) {
    IngestOptions o;
    o.metadata_json = metadata;
    o.replace = replace;
    return engine->ingest_bytes(kb, name, bytes, o);
  }

  std::vector<Hit> search(const std::string& kb, const std::string& query, int top_k = 50,
                          const std::string& filter = "") {
    SearchRequest r;
    r.kb = kb;
    r.query = query;
    r.mode = Mode::keyword;
    r.top_k = top_k;
    r.filter_json = filter;
    return engine->search(r).hits;
  }

  // Distinct documents among the hits, in rank order.
  std::vector<std::string> hit_docs(const std::string& kb, const std::string& query) {
    std::vector<std::string> ids;
    for (const auto& h : search(kb, query))
      if (std::find(ids.begin(), ids.end(), h.doc_id) == ids.end()) ids.push_back(h.doc_id);
    return ids;
  }

  std::vector<Document> all_documents(const std::string& kb, const std::string& filter = "") {
    return engine->list_documents(kb, "", 10000, filter).documents;
  }
};

}  // namespace quarry::lifecycle::testing_support
