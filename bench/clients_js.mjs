// What the JavaScript client (clients/js, quarry-client) adds over a bare fetch: the same
// keyword queries against one real server, each sent through QuarryClient.search and through a
// raw fetch with the same JSON body, alternating (client first on even queries, raw first on
// odd ones) so that both see the same server state. Both use Node's global fetch, which keeps
// connections alive in its pool. Each side first runs 50 unmeasured warm-up queries.
//
//   node bench/clients_js.mjs [--dataset ../shared/datasets/scifact] [--queries 1000]
//                             [--quarry build/quarry (or $QUARRY_BINARY)] [--data DIR (reuse)]
//
// SciFact's corpus is written one Markdown file per document and ingested with
// `quarry ingest DIR --kb scifact` (keyword only: no embedder). The queries are SciFact's test
// queries followed by its training queries. Prints p50/p99 per call and the client/raw ratios.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

import { QuarryClient } from '../clients/js/src/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const dataset = path.resolve(arg('dataset', path.join(root, '../shared/datasets/scifact')));
const nQueries = Number(arg('queries', 1000));
const bin = path.resolve(arg('quarry', process.env.QUARRY_BINARY ?? path.join(root, 'build/quarry')));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-clients-js-bench-'));
const data = arg('data') ? path.resolve(arg('data')) : path.join(work, 'data');
const KB = 'scifact';
const WARMUP = 50;

const quarry = (...args) => {
  const r = spawnSync(bin, ['--data-dir', data, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`quarry ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const jsonl = (f) => fs.readFileSync(path.join(dataset, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };

if (!fs.existsSync(data)) {
  const docs = path.join(work, 'docs');
  fs.mkdirSync(docs);
  for (const d of jsonl('corpus.jsonl'))
    fs.writeFileSync(path.join(docs, `${d._id.replace(/[^A-Za-z0-9_-]/g, '_')}.md`), `# ${d.title || d._id}\n\n${d.text}\n`);
  const t0 = performance.now();
  quarry('kb', 'create', KB);
  quarry('ingest', docs, '--kb', KB, '-q');
  console.error(`ingested ${fs.readdirSync(docs).length} documents in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
const queries = [...jsonl('queries.jsonl'), ...jsonl('queries_train.jsonl')].map((q) => q.text).slice(0, nQueries);
if (queries.length < nQueries) throw new Error(`only ${queries.length} queries in ${dataset}`);

const portFile = path.join(work, 'port');
const server = spawn(bin, ['--data-dir', data, 'serve', '--port', '0', '--port-file', portFile, '--no-indexer'], { stdio: 'ignore' });
process.on('exit', () => { server.kill('SIGKILL'); fs.rmSync(work, { recursive: true, force: true }); });
for (let i = 0; i < 300 && !fs.existsSync(portFile); i++) await new Promise((r) => setTimeout(r, 50));
const base = `http://127.0.0.1:${fs.readFileSync(portFile, 'utf8').trim()}`;

const client = new QuarryClient({ baseUrl: base, token: null });
const searchUrl = `${base}/api/v1/kbs/${KB}/search`;
const viaClient = (query) => client.search(KB, query, { mode: 'keyword' });
const viaFetch = async (query) => {
  const res = await fetch(searchUrl, {
    method: 'POST',
    headers: { Accept: 'application/json', 'Content-Type': 'application/json' },
    body: JSON.stringify({ query, mode: 'keyword' }),
  });
  if (!res.ok) throw new Error(`raw fetch: ${res.status} ${await res.text()}`);
  return res.json();
};
const timed = async (fn, query) => {
  const t0 = performance.now();
  const r = await fn(query);
  const ms = performance.now() - t0;
  if (r.mode !== 'keyword') throw new Error(`answered in mode ${r.mode}`);
  return ms;
};

for (const q of queries.slice(0, WARMUP)) { await viaClient(q); await viaFetch(q); }
const clientMs = [];
const rawMs = [];
for (const [i, q] of queries.entries()) {
  if (i % 2 === 0) { clientMs.push(await timed(viaClient, q)); rawMs.push(await timed(viaFetch, q)); }
  else { rawMs.push(await timed(viaFetch, q)); clientMs.push(await timed(viaClient, q)); }
}
server.kill('SIGTERM');

const row = (xs) => ({ p50_ms: +pct(xs, 50).toFixed(3), p99_ms: +pct(xs, 99).toFixed(3) });
const report = {
  queries: queries.length, node: process.version, client: row(clientMs), raw_fetch: row(rawMs),
  ratio_p50: +(pct(clientMs, 50) / pct(rawMs, 50)).toFixed(3),
  ratio_p99: +(pct(clientMs, 99) / pct(rawMs, 99)).toFixed(3),
};
console.log(JSON.stringify(report, null, 2));
console.log(`\n| Path | p50 ms | p99 ms |\n|---|---|---|\n| quarry-client search | ${report.client.p50_ms} | ${report.client.p99_ms} |\n| raw fetch | ${report.raw_fetch.p50_ms} | ${report.raw_fetch.p99_ms} |\n| ratio | ${report.ratio_p50}x | ${report.ratio_p99}x |`);
