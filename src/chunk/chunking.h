// How a KB's documents are cut under one config (SPEC §3): the config's profile and budgets,
// capped so that a chunk fits the embedding model's input, counted in the model's own tokens
// when it has a tokenizer (else in the word-piece approximation).
#pragma once

#include <string>

#include "chunk/chunker.h"
#include "quarry/config.h"

namespace quarry::chunk {

struct Chunking {
  ChunkOptions options;
  const Tokenizer* tokenizer = nullptr;  // owned by the Vectors that made this
  // The chunking revision (documents.chunking, revisions.config_revision): config_revision of
  // the config and, when it is not the approximation, of the tokenizer and the model's limit.
  std::string revision;
};

// The chunker's options under a KB's config alone (no model limit applied).
ChunkOptions chunk_options(const KbConfig& config);

}  // namespace quarry::chunk
