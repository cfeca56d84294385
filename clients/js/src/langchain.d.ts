// Types of quarry-client/langchain.
import type { BaseRetrieverInput } from '@langchain/core/retrievers';
import { BaseRetriever } from '@langchain/core/retrievers';
import type { Document } from '@langchain/core/documents';

import type { ClientOptions, Filter, Hit, Metadata, QuarryClient, SearchMode } from './index.js';

export interface QuarryRetrieverInput extends BaseRetrieverInput {
  /** The KB to search. */
  kb: string;
  /** Default hybrid. */
  mode?: SearchMode;
  /** Documents returned at most; default 4. */
  topK?: number;
  filter?: Filter;
  minScore?: number;
  /** Fetch each hit's whole chunk text (default true); false: the snippet is the pageContent. */
  fetchChunkText?: boolean;
  /** The client to use; else one is made from clientOptions (and QUARRY_URL/QUARRY_TOKEN). */
  client?: QuarryClient;
  clientOptions?: ClientOptions;
}

/** Document metadata: every field of the hit except its `metadata`, plus source, mode and doc_metadata. */
export type QuarryDocumentMetadata = Omit<Hit, 'metadata'> & {
  /** The filename. */
  source: string;
  /** The mode that answered (auto answers as hybrid or keyword). */
  mode: Exclude<SearchMode, 'auto'>;
  /** The document's own metadata. */
  doc_metadata: Metadata;
};

/** A LangChain.js retriever over a Quarry KB. */
export declare class QuarryRetriever extends BaseRetriever<QuarryDocumentMetadata> {
  constructor(fields: QuarryRetrieverInput);
  lc_namespace: string[];
  kb: string;
  mode: SearchMode;
  topK: number;
  filter?: Filter;
  minScore?: number;
  fetchChunkText: boolean;
  client: QuarryClient;
  _getRelevantDocuments(query: string): Promise<Document<QuarryDocumentMetadata>[]>;
}
