#include "chunk/chunking.h"

namespace quarry::chunk {

ChunkOptions chunk_options(const KbConfig& c) {
  ChunkOptions o;
  o.profile = c.chunking.profile;
  o.max_tokens = c.chunking.effective_max_tokens();
  o.overlap_tokens = c.chunking.effective_overlap_tokens();
  o.max_chunks = c.limits.max_chunks_per_document;
  o.words = c.chunking.segmenter == "icu";
  return o;
}

}  // namespace quarry::chunk
