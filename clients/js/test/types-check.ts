// The type check (`tsc --noEmit -p test/tsconfig.json`, ctest's clients.js_types): it uses the
// API the way a TypeScript caller would, through the package's own "exports", and fails to
// compile when index.d.ts or langchain.d.ts stop describing it. It is never run.
import {
  NotFoundError, OPERATIONS, QuarryClient, QuarryError,
  type Document, type Hit, type IngestReport, type KbChangePlan, type KbInfo, type SearchResponse,
} from 'quarry-client';
import { QuarryRetriever, type QuarryDocumentMetadata } from 'quarry-client/langchain';
import type { Document as LcDocument } from '@langchain/core/documents';

export async function usage(): Promise<void> {
  const client = new QuarryClient({ baseUrl: 'http://127.0.0.1:7720', token: null, timeoutMs: 5000, maxRetries: 2 });

  const kb: KbInfo = await client.createKb('notes', { description: 'd', config: { chunking: { max_tokens: 256 } } });
  const plan: KbChangePlan = await client.updateKb(kb.name, { 'chunking.max_tokens': 384 }, { dryRun: true });
  const changed: KbInfo = await client.updateKb(kb.name, { description: 'x' }, { cutover: 'immediate' });
  const re: boolean = plan.re_cut && changed.documents >= 0;

  const report: IngestReport = await client.addDocuments('notes', ['a.md', { name: 'b.csv', content: 'a,b\n' }],
    { metadata: { lang: 'en' }, replace: true });
  await client.addDocument('notes', 'c.bin', new Uint8Array([1, 2]), { signal: AbortSignal.timeout(1000) });
  const status: 'added' | 'updated' | 'unchanged' | 'failed' = report.items[0].status;

  const r: SearchResponse = await client.search('notes', 'q', { mode: 'hybrid', topK: 5, filter: { lang: 'en' }, semanticRatio: 0.5 });
  const hit: Hit = r.hits[0];
  const crumbs: string[] = hit.heading_path;
  const score: number = hit.score;
  const g = await client.grep('notes', 'x', { ignoreCase: true, context: 1 });
  const line: number = g.matches[0].line;

  for await (const doc of client.iterDocuments('notes', { pageSize: 10, filter: { lang: 'en' } })) {
    const d: Document = doc;
    void d.filename;
  }
  for await (const entry of client.iterActivity({ kb: 'notes' })) void entry.action;
  const md: string = await client.getDocumentMarkdown('notes', 'id');
  const metrics: string = await client.getMetrics();
  const { secret } = await client.createToken('reader', { scope: 'read', kbs: ['notes'] });
  const progress = (await client.getReindex('notes')).progress?.done;

  try {
    await client.getKb('nope');
  } catch (e) {
    if (e instanceof NotFoundError) void e.details.kb;
    if (e instanceof QuarryError) { const c: string = e.code; const s: number = e.status; void [c, s]; }
  }
  const method: keyof QuarryClient = OPERATIONS.search;

  const retriever = new QuarryRetriever({ kb: 'notes', topK: 3, filter: { lang: 'en' }, clientOptions: { token: null } });
  const docs: LcDocument<QuarryDocumentMetadata>[] = await retriever.invoke('q');
  const meta: QuarryDocumentMetadata = docs[0].metadata;
  const fromMeta: [number, string, string[], string] = [meta.score, meta.chunk_id, meta.heading_path, meta.source];
  void [re, status, crumbs, score, line, md, metrics, secret, progress, method, fromMeta];
}

// @ts-expect-error: search needs a query
void new QuarryClient().search('notes');
// @ts-expect-error: topK is a number
void new QuarryClient().search('notes', 'q', { topK: '5' });
// @ts-expect-error: not a mode
void new QuarryRetriever({ kb: 'notes', mode: 'fuzzy' });
