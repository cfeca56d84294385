// quarry-client/langchain: QuarryRetriever, a LangChain.js retriever over a Quarry KB.
// @langchain/core is an optional peer dependency: only this subpath imports it.
import { Document } from '@langchain/core/documents';
import { BaseRetriever } from '@langchain/core/retrievers';

import { QuarryClient } from './client.js';

/**
 * Retrieves a KB's best chunks for a query, as LangChain Documents.
 *
 * Each Document's `pageContent` is the chunk's whole text and its `id` the chunk id. Its
 * `metadata` carries every field of the search hit (`score`, `raw_score`, `metric`, `kb`,
 * `doc_id`, `chunk_id`, `chunk_index`, `parent_chunk`, `heading_path`, `filename`, `title`,
 * `offset`, `length`, `subject`, `snippet`, `snippet_text`, `highlights`), plus `source` (the
 * filename, LangChain's usual key), `mode` (the mode that answered) and `doc_metadata` (the
 * document's own metadata, kept apart so that its keys cannot shadow the hit's).
 *
 * A hit carries a snippet, not its chunk's text, so the retriever fetches the chunks of each
 * document hit (`GET .../documents/{id}/chunks`, one request per document, in parallel). With
 * `fetchChunkText: false` it skips those requests and uses the snippet as `pageContent`.
 */
export class QuarryRetriever extends BaseRetriever {
  static lc_name() { return 'QuarryRetriever'; }

  lc_namespace = ['quarry_client', 'retrievers'];

  /** @param {import('./langchain.js').QuarryRetrieverInput} fields */
  constructor(fields) {
    super(fields);
    if (!fields?.kb) throw new TypeError('QuarryRetriever: `kb` is required');
    this.kb = fields.kb;
    this.mode = fields.mode ?? 'hybrid';
    this.topK = fields.topK ?? 4;
    this.filter = fields.filter;
    this.minScore = fields.minScore;
    this.fetchChunkText = fields.fetchChunkText ?? true;
    this.client = fields.client ?? new QuarryClient(fields.clientOptions);
  }

  /**
   * @param {string} query
   * @returns {Promise<Document[]>}
   */
  async _getRelevantDocuments(query) {
    const response = await this.client.search(this.kb, query, {
      mode: this.mode, topK: this.topK, filter: this.filter, minScore: this.minScore,
    });
    const texts = this.fetchChunkText ? await this.#chunkTexts(response.hits) : new Map();
    return response.hits.map(({ metadata: docMetadata, ...hit }) => new Document({
      id: hit.chunk_id,
      pageContent: texts.get(hit.chunk_id) ?? hit.snippet_text,
      metadata: { ...hit, source: hit.filename, mode: response.mode, doc_metadata: docMetadata },
    }));
  }

  /** chunk_id -> text for every chunk of the documents the hits come from. */
  async #chunkTexts(hits) {
    const docIds = [...new Set(hits.map((h) => h.doc_id))];
    const lists = await Promise.all(docIds.map((id) => this.client.listDocumentChunks(this.kb, id)));
    return new Map(lists.flatMap((l) => l.chunks.map((c) => [c.chunk_id, c.text])));
  }
}
