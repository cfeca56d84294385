// Placeholder so the room links before its adapters exist (owner: the embed work package,
// which deletes this file).
#include "embed/provider.h"
#include "quarry/error.h"

namespace quarry::embed {
std::unique_ptr<EmbeddingProvider> make_hash_provider(const ProviderSpec&, const ProviderContext&) {
  throw Error(Code::engine_unavailable, "not built yet");
}
std::unique_ptr<EmbeddingProvider> make_static_provider(const ProviderSpec&,
                                                        const ProviderContext&) {
  throw Error(Code::engine_unavailable, "not built yet");
}
}  // namespace quarry::embed
