// QuarryRetriever in real LangChain.js steps (invoke, and a chain with a formatting step)
// against a real server with a KB that embeds with GloVe, so that hybrid search answers.
// Imported through the package's own "exports" (quarry-client/langchain), as a user would.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import { RunnableLambda, RunnableSequence } from '@langchain/core/runnables';
import { Document } from '@langchain/core/documents';
import { QuarryClient } from 'quarry-client';
import { QuarryRetriever } from 'quarry-client/langchain';

import { scratch, startServer, waitFor } from '../test-lib/server.mjs';

const KB = 'handbook';
const DOCS = {
  'cats.md': '# Pets\n\n## Cats\n\nCats purr and sleep in the warm sun all afternoon.\n\n## Dogs\n\nDogs fetch sticks and bark at the mail carrier.\n',
  'boats.md': '# Travel\n\n## Boats\n\nSailing boats cross the harbour when the wind is steady.\n',
};

describe('QuarryRetriever', () => {
  let tmp;
  let server;
  let client;

  before(async () => {
    tmp = scratch('langchain');
    server = await startServer(tmp.data);
    client = new QuarryClient({ baseUrl: server.url, token: null });
    await client.createKb(KB, { config: { embedder: { provider: 'static:glove-100d' } } });
    await client.addDocuments(KB, [
      { name: 'cats.md', content: DOCS['cats.md'] },
    ], { metadata: { topic: 'pets' } });
    await client.addDocuments(KB, [{ name: 'boats.md', content: DOCS['boats.md'] }], { metadata: { topic: 'travel' } });
    await waitFor(async () => (await client.getKbStatus(KB)).index_status.vector === 'ready', 'vectors');
  });
  after(async () => {
    await server?.stop();
    tmp?.cleanup();
  });

  test('invoke returns Documents with the chunk text, score and hit metadata', async () => {
    const retriever = new QuarryRetriever({ kb: KB, clientOptions: { baseUrl: server.url, token: null } });
    assert.equal(retriever.mode, 'hybrid');
    const docs = await retriever.invoke('cats sleeping in the sun');
    assert.ok(docs.length > 0 && docs.length <= 4);
    const top = docs[0];
    assert.ok(top instanceof Document);
    assert.equal(top.pageContent, '# Pets\n\n## Cats\n\nCats purr and sleep in the warm sun all afternoon.');
    const m = top.metadata;
    assert.ok(m.score > 0 && m.score <= 1);
    assert.deepEqual([m.kb, m.mode, m.source, m.filename, m.title], [KB, 'hybrid', 'cats.md', 'cats.md', 'Pets']);
    assert.deepEqual(m.heading_path, ['Pets', 'Cats']);
    assert.equal(top.id, m.chunk_id);
    assert.match(m.doc_id, /^[0-9A-Z]{26}$/);
    assert.deepEqual(m.doc_metadata, { topic: 'pets' });
    for (const key of ['raw_score', 'metric', 'chunk_index', 'offset', 'length', 'snippet', 'highlights']) {
      assert.ok(key in m, `metadata lacks ${key}`);
    }
    // The text is the chunk's, as GET .../chunks has it.
    const { chunks } = await client.listDocumentChunks(KB, m.doc_id);
    assert.equal(chunks.find((c) => c.chunk_id === m.chunk_id).text, top.pageContent);
  });

  test('in a chain with a formatting step, filtered and in keyword mode', async () => {
    const retriever = new QuarryRetriever({ kb: KB, client, mode: 'keyword', topK: 2, filter: { topic: 'travel' } });
    const format = RunnableLambda.from((docs) => docs
      .map((d) => `[${d.metadata.heading_path.join(' > ')}] (${d.metadata.score.toFixed(2)}) ${d.pageContent}`)
      .join('\n---\n'));
    const chain = RunnableSequence.from([retriever, format]);
    const text = await chain.invoke('boats harbour');
    assert.match(text, /^\[Travel > Boats\] \((0|1)\.\d\d\) # Travel\n\n## Boats\n\nSailing boats cross the harbour/);
    assert.doesNotMatch(text, /Cats/);

    const piped = await retriever.pipe(RunnableLambda.from((docs) => docs.map((d) => d.metadata.mode))).invoke('wind');
    assert.deepEqual(piped, ['keyword']);
  });

  test('fetchChunkText: false uses the snippet and makes one request', async () => {
    let requests = 0;
    const counting = new QuarryClient({
      baseUrl: server.url, token: null, fetch: (url, init) => { requests++; return fetch(url, init); },
    });
    const retriever = new QuarryRetriever({ kb: KB, client: counting, mode: 'vector', fetchChunkText: false });
    const docs = await retriever.invoke('dogs barking');
    assert.ok(docs.length > 0);
    assert.equal(requests, 1);
    assert.equal(docs[0].pageContent, docs[0].metadata.snippet_text);
  });
});
