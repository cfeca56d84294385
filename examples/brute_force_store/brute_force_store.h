// An out-of-tree vector store, written the way an application adds one to Quarry
// (docs/plugins.md): it includes only the public headers (quarry/...), keeps every vector in
// memory and answers queries by brute force, and evaluates filters with quarry::filter_matches().
// tests/store/example/ runs it through the same contract suite as the built-in stores.
#pragma once

namespace quarry_example {

// The id a KB names it by: {"store": {"id": "brute-force"}}.
inline constexpr const char* kBruteForceStoreId = "brute-force";

// Registers the store with quarry::register_store(); call it once at start-up, before opening
// an Engine. A second call throws quarry::Error(invalid_argument): the id is taken.
void register_brute_force_store();

}  // namespace quarry_example
