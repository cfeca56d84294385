// Five `quarry mcp` processes and one `quarry serve` on one data directory (SPEC §10: several
// MCP processes are normal; one writer at a time, readers never block, a writer that cannot
// get its turn fails with a clear error and never corrupts). Each MCP client (the official SDK
// over stdio) adds and searches documents for QUARRY_MP_SECONDS (default 30) while a REST
// client does the same through the server. Afterwards: the catalog passes
// PRAGMA integrity_check, every acknowledged document is there and findable by its unique
// word, nothing unacknowledged appeared, and every failure was a coded error.
//   node tests/js/mcp_multiprocess.test.mjs --quarry BUILD/quarry --tmp DIR
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import { quarry, scratch, sleep, sqlite, startServe } from './lib/env.mjs';
import { call, connectStdio } from './lib/mcp_client.mjs';

const SECONDS = Number(process.env.QUARRY_MP_SECONDS ?? 30);
const MCP_PROCESSES = Number(process.env.QUARRY_MP_PROCESSES ?? 5);
const EMBEDDER = process.env.QUARRY_MP_EMBEDDER ?? 'hash:64';
// What a concurrent write may fail with: the writer lock was not free in time.
const ALLOWED_ERRORS = new Set(['busy']);
const KB = 'shared';

const tmp = scratch('mcp-multi');
const cleanups = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => {});
  tmp.cleanup();
});

const words = (who, i) => `${who}w${i}uniq`;  // one unique keyword per document
const content = (who, i) =>
  `# Note ${i} of ${who}\n\nThis note carries the marker ${words(who, i)} and ordinary words ` +
  `about concurrency, locks and search.\n`;

function tally(stats, code) {
  stats.errors[code] = (stats.errors[code] ?? 0) + 1;
}

// One MCP client: add, then search for one of its own acknowledged words, until the deadline.
async function mcpWorker(conn, who, deadline, stats, acked) {
  for (let i = 0; Date.now() < deadline; ++i) {
    const t0 = Date.now();
    const r = await call(conn.client, 'add_document',
      { kb: KB, filename: `${who}-${i}.md`, content: content(who, i) });
    stats.latencies.push(Date.now() - t0);
    if (r.isError) {
      const err = r.structuredContent?.error;
      assert.ok(err?.code && err.message, `a coded error: ${JSON.stringify(r)}`);
      tally(stats, err.code);
      stats.failed.push({ who, i, code: err.code, message: err.message });
    } else {
      assert.equal(r.structuredContent.status, 'added');
      acked.set(r.structuredContent.doc_id, words(who, i));
      stats.writes += 1;
    }
    const own = [...acked.entries()].filter(([, w]) => w.startsWith(`${who}w`));
    if (own.length === 0) continue;
    const [id, word] = own[Math.floor(Math.random() * own.length)];
    const s = await call(conn.client, 'search', { kb: KB, query: word, mode: 'keyword' });
    if (s.isError) {
      tally(stats, `search:${s.structuredContent.error.code}`);
      continue;
    }
    stats.searches += 1;
    if (!s.structuredContent.hits.some((h) => h.doc_id === id)) stats.searchMisses.push({ who, id, word });
  }
}

async function rest(url, route, body) {
  const res = await fetch(`${url}/api/v1${route}`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

async function restWorker(url, deadline, stats, acked) {
  const who = 'rest';
  for (let i = 0; Date.now() < deadline; ++i) {
    const t0 = Date.now();
    const r = await rest(url, `/kbs/${KB}/documents`, { filename: `${who}-${i}.md`, content: content(who, i) });
    stats.latencies.push(Date.now() - t0);
    if (r.status >= 400) {
      assert.ok(r.json?.error?.code && r.json.error.message, `a coded error: ${JSON.stringify(r)}`);
      tally(stats, r.json.error.code);
      stats.failed.push({ who, i, status: r.status, code: r.json.error.code, message: r.json.error.message });
    } else {
      const item = r.json.items[0];
      assert.equal(item.status, 'added');
      acked.set(item.doc_id, words(who, i));
      stats.writes += 1;
    }
    const s = await rest(url, `/kbs/${KB}/search`, { query: words(who, Math.floor(Math.random() * (i + 1))) });
    if (s.status >= 400) tally(stats, `search:${s.json?.error?.code}`);
    else stats.searches += 1;
  }
}

test(`${MCP_PROCESSES} quarry mcp processes and quarry serve write one data dir for ${SECONDS} s`, async () => {
  quarry(tmp.data, ['kb', 'create', KB, ...(EMBEDDER ? ['--embedder', EMBEDDER] : [])]);
  const server = await startServe(tmp.data);
  cleanups.push(server.stop);
  const conns = [];
  for (let p = 0; p < MCP_PROCESSES; ++p) {
    const c = await connectStdio(tmp.data, [], `mp-${p}`);
    conns.push(c);
    cleanups.push(async () => { await c.close(); });
  }

  const acked = new Map();  // doc_id -> unique word, for every acknowledged write
  const stats = Object.fromEntries(['total', ...conns.map((_, p) => `mcp${p}`), 'rest'].map(
    (k) => [k, { writes: 0, searches: 0, errors: {}, failed: [], searchMisses: [], latencies: [] }]));
  const started = Date.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all([
    ...conns.map((c, p) => mcpWorker(c, `mcp${p}`, deadline, stats[`mcp${p}`], acked)),
    restWorker(server.url, deadline, stats.rest, acked),
  ]);
  const elapsed = (Date.now() - started) / 1000;

  for (const c of conns) {
    cleanups.splice(cleanups.indexOf(c.close), 1);
    const exit = await c.close();
    assert.deepEqual(exit, { code: 0, signal: null }, `an mcp process exited cleanly:\n${c.stderr()}`);
  }
  await server.stop();

  // Totals and the report (printed whatever the outcome below).
  const parts = Object.entries(stats).filter(([k]) => k !== 'total');
  const total = stats.total;
  for (const [, s] of parts) {
    total.writes += s.writes;
    total.searches += s.searches;
    for (const [code, n] of Object.entries(s.errors)) total.errors[code] = (total.errors[code] ?? 0) + n;
    total.latencies.push(...s.latencies);
  }
  const lat = total.latencies.sort((a, b) => a - b);
  const pct = (q) => lat[Math.min(lat.length - 1, Math.floor(q * lat.length))];
  const report = {
    seconds: elapsed, processes: MCP_PROCESSES, embedder: EMBEDDER,
    acknowledged_writes: acked.size, writes_per_s: +(acked.size / elapsed).toFixed(1),
    searches: total.searches, errors: total.errors,
    write_ms: { p50: pct(0.5), p99: pct(0.99), max: lat[lat.length - 1] },
    per_client: Object.fromEntries(parts.map(([k, s]) => [k, { writes: s.writes, searches: s.searches, errors: s.errors }])),
    search_misses: parts.reduce((n, [, s]) => n + s.searchMisses.length, 0),
  };
  console.log(`# multiprocess report ${JSON.stringify(report)}`);
  for (const [, s] of parts) for (const f of s.failed.slice(0, 3)) console.log(`# failure ${JSON.stringify(f)}`);

  // Every failure was a coded error a client can act on.
  for (const code of Object.keys(total.errors))
    assert.ok(ALLOWED_ERRORS.has(code), `unexpected error code ${code}: ${JSON.stringify(report)}`);
  assert.ok(acked.size > 0, 'some writes were acknowledged');
  for (const [, s] of parts) assert.deepEqual(s.searchMisses, [], 'a process finds its own acknowledged writes');

  // The catalog is intact, holds exactly the acknowledged documents, and finds each one.
  assert.deepEqual(sqlite(path.join(tmp.data, 'catalog.db'), 'PRAGMA integrity_check'), ['ok']);
  // The keyword index agrees with its chunks, and the vector and cache databases are intact.
  const [kbId] = sqlite(path.join(tmp.data, 'catalog.db'), `SELECT id FROM kbs WHERE name = '${KB}'`);
  // (FTS5's own 'integrity-check' needs Quarry's `quarry` tokenizer, which the sqlite3 shell
  // lacks: the catalog tests run it through Quarry's connection. Here: one index row per chunk.)
  const [chunks] = sqlite(path.join(tmp.data, 'catalog.db'), `SELECT COUNT(*) FROM chunks WHERE kb_id = ${kbId}`);
  const [indexed] = sqlite(path.join(tmp.data, 'catalog.db'), `SELECT COUNT(*) FROM fts_${kbId}_docsize`);
  assert.equal(indexed, chunks, 'the keyword index holds one row per chunk');
  for (const db of ['vectors/vectors.db', 'cache/embeddings.db'])
    assert.deepEqual(sqlite(path.join(tmp.data, db), 'PRAGMA integrity_check'), ['ok'], db);
  // The vectors converge: after one more sweep every chunk has exactly one vector.
  const [swept] = quarry(tmp.data, ['reindex', '--kb', KB]).json.reindex;
  assert.equal(swept.pending, 0, `reindex left work: ${JSON.stringify(swept)}`);
  const described = quarry(tmp.data, ['kb', 'describe', KB]).json;
  assert.equal(described.vectors.pending, 0);
  assert.equal(described.vectors.failed, 0);
  assert.equal(described.vectors.stored_vectors, described.chunks,
    `one vector per chunk: ${JSON.stringify(described.vectors)} vs ${described.chunks} chunks`);
  const listed = quarry(tmp.data, ['docs', 'list', '--kb', KB, '--limit', '10000']).json.documents;
  const ids = new Set(listed.map((d) => d.id));
  const missing = [...acked.keys()].filter((id) => !ids.has(id));
  const unexpected = [...ids].filter((id) => !acked.has(id));
  assert.deepEqual(missing, [], 'every acknowledged document is present');
  assert.deepEqual(unexpected, [], 'no document appeared that was not acknowledged');
  const checker = await connectStdio(tmp.data, ['--no-indexer', '--read-only'], 'mp-check');
  try {
    for (const [id, word] of acked) {
      const s = await call(checker.client, 'search', { kb: KB, query: word, mode: 'keyword' });
      assert.deepEqual(s.structuredContent.hits.map((h) => h.doc_id), [id], `keyword search for ${word}`);
    }
  } finally {
    await checker.close();
  }
});
