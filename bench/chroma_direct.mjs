// Chroma called directly with the records the chroma store writes: the same ids, base64 float32
// embeddings and per-record metadata keys (quarry:kb, quarry:doc_id, quarry:chunk_index,
// quarry:chunk_id, quarry:vector_sha), sent with /upsert in batches of the server's
// max_batch_size. The shared kit's bench_chroma_http.mjs sends ids and embeddings only (/add),
// so this separates what the metadata costs Chroma from what the store costs itself.
// Usage (bench/stores.sh runs it): PEERS_HOME=... node bench/chroma_direct.mjs 20k url=... pid=...
import crypto from 'node:crypto';
import path from 'node:path';

const home = process.env.PEERS_HOME ?? '/tmp/quarry-peers';
const { loadData, argN, runQueries, procMem, report, kv: KV, K } = await import(
  path.join(home, 'bench', 'common.mjs'));

const n = argN(), kv = KV();
const API = `${kv.url ?? 'http://127.0.0.1:8000'}/api/v2`;
const COLS = `${API}/tenants/default_tenant/databases/default_database/collections`;
async function call(method, url, body) {
  const r = await fetch(url, { method, headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body) });
  const t = await r.text();
  if (!r.ok) throw new Error(`${method} ${url} -> ${r.status} ${t.slice(0, 300)}`);
  return t ? JSON.parse(t) : null;
}
const version = await call('GET', `${API}/version`);
const pre = await call('GET', `${API}/pre-flight-checks`);
const BATCH = Math.min(+(kv.batch ?? 5000), pre.max_batch_size);
const data = loadData(n);
const name = `direct_meta_${n}`;
try { await call('DELETE', `${COLS}/${name}`); } catch {}
const hnsw = { space: 'cosine', max_neighbors: 16, ef_construction: 200, ef_search: 64 };
const col = await call('POST', COLS, { name, configuration: { hnsw }, get_or_create: false });
const bytes = (f32) => Buffer.from(f32.buffer, f32.byteOffset, f32.byteLength);
const t0 = performance.now();
for (let s = 0; s < n; s += BATCH) {
  const e = Math.min(n, s + BATCH), ids = [], embeddings = [], metadatas = [];
  for (let i = s; i < e; i++) {
    const b = bytes(data.row(i));
    ids.push(`v${i}#0`);
    embeddings.push(b.toString('base64'));
    metadatas.push({ 'quarry:kb': 'bench', 'quarry:doc_id': `v${i}`, 'quarry:chunk_index': 0,
      'quarry:chunk_id': '', 'quarry:vector_sha':
        crypto.createHash('sha256').update(b).digest('hex').slice(0, 16) });
  }
  await call('POST', `${COLS}/${col.id}/upsert`, { ids, embeddings, metadatas });
}
const addS = (performance.now() - t0) / 1000;
const qbody = (i) => ({ query_embeddings: [Array.from(data.q(i))], n_results: K,
  include: ['metadatas', 'distances'] });
const q = await runQueries(data, async (i) =>
  (await call('POST', `${COLS}/${col.id}/query`, qbody(i))).metadatas[0]
    .map((m) => Number(m['quarry:doc_id'].slice(1))));
const mem = kv.pid ? procMem(kv.pid) : { rssMB: NaN, hwmMB: NaN };
report({ peer: 'chroma HTTP direct, the store\'s records (upsert + metadata)', version: `server ${version}`,
  n, buildS: +addS.toFixed(2), buildVps: Math.round(n / addS), ...q, ...mem,
  note: `upsert ${addS.toFixed(1)}s; batch=${BATCH} b64; 5 metadata keys per record; RSS=server pid ${kv.pid}` });
await call('DELETE', `${COLS}/${name}`).catch(() => {});
