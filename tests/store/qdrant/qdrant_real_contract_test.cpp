// OPT-IN: the store contract suite (tests/store/contract_test.cpp, unchanged) against a REAL
// Qdrant server at QUARRY_QDRANT_URL (e.g. http://127.0.0.1:6333; an API key, if the server
// wants one, in QUARRY_QDRANT_API_KEY). No Qdrant server can run in this project's CI, so this
// binary (test_store_qdrant_real) is registered with ctest only when QUARRY_QDRANT_URL is set at
// configure time (CMakeLists.txt), and otherwise is a build target you run by hand. Without the
// variable, or with no server answering there, every test here FAILS: it never passes by
// skipping. Each test uses a collection_prefix of its own and drops nothing else.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

#include "core/util.h"
#include "store/qdrant/qdrant_store.h"
#include "store_contract.h"

namespace quarry::store::contract {
namespace {
using nlohmann::json;

std::string qdrant_url() {
  const char* url = std::getenv("QUARRY_QDRANT_URL");
  if (!url || !*url)
    throw std::runtime_error(
        "QUARRY_QDRANT_URL is not set: this opt-in test needs a real Qdrant server; start one "
        "(docker run -p 6333:6333 qdrant/qdrant) and export "
        "QUARRY_QDRANT_URL=http://127.0.0.1:6333");
  return url;
}

std::unique_ptr<VectorStore> real(json extra) {
  std::string prefix = "quarrytest" + core::new_ulid();
  std::transform(prefix.begin(), prefix.end(), prefix.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  json s = {{"url", qdrant_url()},
            {"allow_private", true},
            {"collection_prefix", prefix},
            {"timeout_ms", 60000},
            {"exact", true}};  // the suite compares with brute force
  StoreContext ctx;
  if (const char* key = std::getenv("QUARRY_QDRANT_API_KEY"); key && *key) {
    s["api_key_secret"] = "qdrant";
    std::string k = key;
    ctx.secret = [k](const std::string&) { return k; };
  }
  s.update(extra);
  auto store = qdrant::make_qdrant_store(s, ctx);
  if (!store->is_available())
    throw std::runtime_error("no Qdrant server answers at " + qdrant_url() +
                             " (QUARRY_QDRANT_URL)");
  return store;
}

std::unique_ptr<VectorStore> namespace_store(const std::filesystem::path&) {
  return real(json::object());
}
std::unique_ptr<VectorStore> collection_store(const std::filesystem::path&) {
  return real({{"tenancy", "collection"}});
}

INSTANTIATE_TEST_SUITE_P(QdrantReal, StoreContract,
                         ::testing::Values(StoreUnderTest{"qdrant_namespace", namespace_store},
                                           StoreUnderTest{"qdrant_collection", collection_store}),
                         StoreUnderTest::name_of);

}  // namespace
}  // namespace quarry::store::contract
