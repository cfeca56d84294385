// The web UI's speed in headless Chromium (Debian's chromium, driven by playwright-core from
// tests/js): first-load transfer and time to interactive, and search latency from the request
// leaving the page to its results laid out, on a real KB, beside the bare REST round trip the
// same page makes with fetch (the peer: what the page adds over the API it calls).
//
//   node bench/ui.mjs [--dataset ../shared/datasets/scifact] [--queries 200] [--loads 20]
//                     [--quarry build/quarry] [--data DIR (reuse an ingested data dir)]
//
// Prints a JSON report and a Markdown table for docs/benchmarks.md.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(root, 'tests/js/package.json'));
const { chromium } = require('playwright-core');

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : def;
};
const dataset = path.resolve(arg('dataset', path.join(root, '../shared/datasets/scifact')));
const nQueries = Number(arg('queries', 200));
const nLoads = Number(arg('loads', 20));
const bin = path.resolve(arg('quarry', path.join(root, 'build/quarry')));
const embedder = arg('embedder', 'static:glove-100d');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'quarry-ui-bench-'));
const data = arg('data') ? path.resolve(arg('data')) : path.join(work, 'data');

const q = (...args) => {
  const r = spawnSync(bin, ['--data-dir', data, ...args], { encoding: 'utf8', maxBuffer: 1 << 28 });
  if (r.status !== 0) throw new Error(`quarry ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
};
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]; };
const med = (xs) => pct(xs, 50);

const lines = (f) => fs.readFileSync(path.join(dataset, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const kb = path.basename(dataset).replace(/[^a-z0-9_-]/g, '-');
if (!fs.existsSync(data)) {
  const docs = path.join(work, 'docs');
  fs.mkdirSync(docs);
  for (const d of lines('corpus.jsonl'))
    fs.writeFileSync(path.join(docs, `${d._id.replace(/[^A-Za-z0-9_-]/g, '_')}.md`), `# ${d.title || d._id}\n\n${d.text}\n`);
  const t0 = Date.now();
  q('kb', 'create', kb, '--embedder', embedder);
  q('ingest', docs, '--kb', kb, '--wait', '-q');
  console.error(`ingested ${fs.readdirSync(docs).length} documents in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
const queries = lines('queries.jsonl').slice(0, nQueries).map((x) => x.text);

const portFile = path.join(work, 'port');
const server = spawn(bin, ['--data-dir', data, 'serve', '--port', '0', '--port-file', portFile, '--no-indexer'], { stdio: 'ignore' });
process.on('exit', () => server.kill('SIGKILL'));
for (let i = 0; i < 300 && !fs.existsSync(portFile); i++) await new Promise((r) => setTimeout(r, 50));
const base = `http://127.0.0.1:${fs.readFileSync(portFile, 'utf8').trim()}`;

const browser = await chromium.launch({ executablePath: process.env.QUARRY_CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
const report = { dataset: path.basename(dataset), queries: queries.length, loads: nLoads, chromium: browser.version() };

// 1. First load: every asset, in a fresh context (no cache), and the time to the first view.
{
  const tti = [];
  let assets = null;
  for (let i = 0; i < nLoads; i++) {
    const ctx = await browser.newContext();
    const page = await ctx.newPage();
    const got = [];
    page.on('response', async (r) => {
      if (!r.url().startsWith(base) || r.url().includes('/api/')) return;
      try { got.push({ url: r.url().slice(base.length), body: await r.body() }); } catch { /* redirect */ }
    });
    await page.goto(`${base}/#/`, { waitUntil: 'load' });
    await page.waitForFunction(() => performance.getEntriesByName('quarry:interactive').length > 0);
    tti.push(await page.evaluate(() => performance.getEntriesByName('quarry:interactive')[0].startTime));
    await page.waitForTimeout(100);
    if (!assets) assets = got.map((g) => ({ url: g.url, bytes: g.body.length, gzip: zlib.gzipSync(g.body, { level: 9 }).length }));
    await ctx.close();
  }
  report.first_load = {
    assets,
    bytes: assets.reduce((a, x) => a + x.bytes, 0),
    gzip_bytes: assets.reduce((a, x) => a + x.gzip, 0),
    interactive_ms: { p50: med(tti), p95: pct(tti, 95) },
  };
}

// 2. Search: the page's own timing (request leaving -> results laid out), then the bare fetch.
const page = await (await browser.newContext({ viewport: { width: 1440, height: 900 } })).newPage();
report.search = {};
for (const mode of ['keyword', 'hybrid']) {
  await page.goto(`${base}/#/kb/${kb}/search?mode=${mode}`);
  await page.locator('#q').waitFor();
  await page.evaluate(() => { performance.clearMeasures('quarry:search'); performance.clearMeasures('quarry:search-answer'); });
  for (const text of queries) {
    const seq = await page.locator('#results').getAttribute('data-seq');
    await page.locator('#q').fill(text);
    await page.locator('#q').press('Enter');
    await page.waitForFunction((s) => document.getElementById('results').dataset.seq !== s, seq);
    // Let the answer paint before the next query, as it would between a person's searches.
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  }
  const ui = await page.evaluate(() => performance.getEntriesByName('quarry:search').map((e) => e.duration));
  const answer = await page.evaluate(() => performance.getEntriesByName('quarry:search-answer').map((e) => e.duration));
  const bare = await page.evaluate(async ({ kb, mode, queries }) => {
    const out = [];
    for (const query of queries) {
      const t0 = performance.now();
      const r = await fetch(`/api/v1/kbs/${kb}/search`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ query, mode, top_k: 10 }) });
      await r.json();
      out.push(performance.now() - t0);
    }
    return out;
  }, { kb, mode, queries });
  report.search[mode] = {
    n: ui.length,
    page_ms: { p50: med(ui), p95: pct(ui, 95) },
    page_answer_ms: { p50: med(answer), p95: pct(answer, 95) },
    bare_fetch_ms: { p50: med(bare), p95: pct(bare, 95) },
    ratio_p50: med(ui) / med(bare),
  };
}
await browser.close();
server.kill('SIGTERM');

console.log(JSON.stringify(report, null, 2));
const f = (x) => x.toFixed(1);
console.log(`\n| Measure | p50 | p95 |\n|---|---|---|`);
console.log(`| First load: ${report.first_load.assets.length} files, ${(report.first_load.bytes / 1024).toFixed(1)} KB, ${(report.first_load.gzip_bytes / 1024).toFixed(1)} KB gzip; time to interactive (ms) | ${f(report.first_load.interactive_ms.p50)} | ${f(report.first_load.interactive_ms.p95)} |`);
for (const [mode, s] of Object.entries(report.search)) {
  console.log(`| ${mode}: request to results laid out, page (ms) | ${f(s.page_ms.p50)} | ${f(s.page_ms.p95)} |`);
  console.log(`| ${mode}: request to answer parsed, page (ms) | ${f(s.page_answer_ms.p50)} | ${f(s.page_answer_ms.p95)} |`);
  console.log(`| ${mode}: bare fetch + JSON from the same page (ms) | ${f(s.bare_fetch_ms.p50)} | ${f(s.bare_fetch_ms.p95)} |`);
}
fs.rmSync(work, { recursive: true, force: true });  // --data lives elsewhere and stays
