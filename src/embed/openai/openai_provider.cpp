// Placeholder: the OpenAI-compatible provider is being written (owner: the net work package).
#include "embed/provider.h"
#include "quarry/error.h"

namespace quarry::embed {
std::unique_ptr<EmbeddingProvider> make_openai_provider(const ProviderSpec&,
                                                        const ProviderContext&) {
  throw Error(Code::engine_unavailable, "the openai provider is not built yet");
}
}  // namespace quarry::embed
