// Ctrl-C and SIGTERM on the long commands (issue 26, point 4): the real binary gets the real
// signal mid-run and must print what it committed, exit 130 (INT) or 143 (TERM), leave nothing
// half-written, and the next run must carry on where it stopped.
//
// The signal lands mid-run by construction where a peer is involved: the test's own embedding
// server (reindex), the app's webhook (pump run) and a proxy in front of a real Chroma server
// (migrate-store) send it while they hold a request. Ingest
// has no peer: the signal goes when the first committed file's line appears, with thousands of
// files still to go.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';

import { quarry, quarryBin, repoRoot, scratch } from './lib/env.mjs';

// A running `quarry` whose stdout is collected; `exited` resolves to {code, signal}.
function start(data, args) {
  const child = spawn(quarryBin, ['--data-dir', data, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  const run = { child, stdout: '', stderr: '' };
  child.stdout.on('data', (b) => { run.stdout += b; });
  child.stderr.on('data', (b) => { run.stderr += b; });
  run.exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return run;
}

async function until(what, predicate, ms = 60_000) {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

// Resolves with the exit status, or fails the test if the process outlives `ms`.
async function exitOf(run, ms = 120_000) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => {
      run.child.kill('SIGKILL');
      reject(new Error(`still running after ${ms} ms:\n${run.stdout}\n${run.stderr}`));
    }, ms);
  });
  try {
    return await Promise.race([run.exited, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// `quarry --json ARGS` without blocking this process's event loop (the test's servers answer
// it); fails on a non-zero exit.
async function quarryAsync(data, args) {
  const run = start(data, ['--json', ...args]);
  const { code } = await exitOf(run);
  assert.equal(code, 0, `quarry ${args.join(' ')}: ${run.stdout}${run.stderr}`);
  return JSON.parse(run.stdout);
}

function listen(handler) {
  return new Promise((resolve) => {
    const server = http.createServer(handler);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

function body(req) {
  return new Promise((resolve) => {
    let s = '';
    req.on('data', (b) => { s += b; });
    req.on('end', () => resolve(s));
  });
}

const SIGNALS = [['SIGINT', 130, 'interrupted'], ['SIGTERM', 143, 'terminated']];

for (const [signal, status, word] of SIGNALS) {
  test(`ingest: ${signal} stops after the document in hand, reports it, exits ${status}; again resumes`, async () => {
    const tmp = scratch('intr-ingest');
    try {
      const docs = path.join(tmp.dir, 'docs');
      fs.mkdirSync(docs, { recursive: true });
      const N = 6000;
      for (let i = 0; i < N; i++)
        fs.writeFileSync(path.join(docs, `n${String(i).padStart(5, '0')}.md`),
          `# Note ${i}\n\nword${i} is about topic ${i % 17}.\n`);
      quarry(tmp.data, ['kb', 'create', 'k']);

      const run = start(tmp.data, ['ingest', docs, '--kb', 'k']);  // stdout is a pipe, not a tty
      await until('the first committed file', () => /^added /m.test(run.stdout));
      run.child.kill(signal);
      const { code } = await exitOf(run);
      assert.equal(code, status, run.stdout + run.stderr);

      const lines = run.stdout.split('\n');
      const added = lines.filter((l) => l.startsWith('added '));
      assert.ok(added.length > 0 && added.length < N, `${added.length} of ${N} added before the signal`);
      const summary = lines.find((l) => / added, \d+ updated, \d+ unchanged, \d+ failed/.test(l));
      assert.ok(summary?.startsWith(`${added.length} added,`), summary);
      assert.match(run.stdout, new RegExp(`^${word}: the documents above are committed; ${N - added.length} files not reached$`, 'm'));
      assert.match(run.stdout, /run the same command again to resume/);

      // Nothing half-written: the KB holds exactly the documents the lines name.
      const listed = quarry(tmp.data, ['docs', 'list', '--kb', 'k', '--limit', '10000']).json.documents;
      const said = new Set(added.map((l) => l.match(/\((\w+), /)[1]));
      assert.deepEqual(new Set(listed.map((d) => d.id)), said);

      const again = quarry(tmp.data, ['ingest', docs, '--kb', 'k']).json;
      assert.equal(again.unchanged, added.length);
      assert.equal(again.added, N - added.length);
      assert.equal(again.failed, 0);
      assert.equal(quarry(tmp.data, ['kb', 'describe', 'k']).json.documents, N);
    } finally {
      tmp.cleanup();
    }
  });
}

test('reindex: SIGINT while the embedding provider holds a call; the sweep stops, exits 130, and again finishes', async () => {
  const tmp = scratch('intr-reindex');
  let run;
  let calls = 0;
  const server = await listen(async (req, res) => {
    const { input } = JSON.parse(await body(req));
    calls += 1;
    if (calls === 2 && run) run.child.kill('SIGINT');  // mid-sweep: one batch done, one in hand
    const data = input.map((text, index) => ({
      object: 'embedding', index,
      embedding: Array.from({ length: 8 }, (_, d) => ((text.length * (d + 3)) % 17) / 17 + 0.01),
    }));
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ object: 'list', data, model: 'm' }));
  });
  try {
    const base = `http://127.0.0.1:${server.address().port}/v1`;
    quarry(tmp.data, ['kb', 'create', 'k', '--config', JSON.stringify({
      embedder: { provider: 'openai:m', settings: { base_url: base, dimensions: 8, allow_private: true, max_retries: 0, batch_size: 16 } },
    })]);
    const docs = path.join(tmp.dir, 'docs');
    fs.mkdirSync(docs);
    for (let i = 0; i < 200; i++)
      fs.writeFileSync(path.join(docs, `d${i}.md`), `# Doc ${i}\n\n${'river stone '.repeat(i % 9 + 1)}${i}\n`);
    quarry(tmp.data, ['ingest', docs, '--kb', 'k']);  // vectors pending: no --wait

    run = start(tmp.data, ['reindex', '--kb', 'k', '--workers', '1']);
    const { code } = await exitOf(run);
    assert.equal(code, 130, run.stdout + run.stderr);
    assert.match(run.stdout, /interrupted: the documents above are committed; run `quarry reindex` again to resume/);
    const mid = quarry(tmp.data, ['kb', 'describe', 'k']).json.vectors;
    assert.ok(mid.pending > 0, `work left after the signal: ${JSON.stringify(mid)}`);
    assert.ok(mid.ready > 0, `the batches before the signal are kept: ${JSON.stringify(mid)}`);
    assert.equal(mid.failed, 0);

    run = undefined;
    const again = (await quarryAsync(tmp.data, ['reindex', '--kb', 'k'])).reindex[0];
    assert.equal(again.cancelled, false);
    assert.equal(again.pending, 0);
    assert.equal(again.documents, mid.pending, 'only what was left is embedded');
    const done = quarry(tmp.data, ['kb', 'describe', 'k']).json.vectors;
    assert.equal(done.ready, 200);
  } finally {
    server.close();
    tmp.cleanup();
  }
});

test('pump run: SIGTERM while the app holds a batch; that batch is handed back whole, exit 143, again carries on', async () => {
  const tmp = scratch('intr-pump');
  let run;
  let gets = 0;
  const stored = new Map();  // id -> revision, as the app's own table would
  const ROWS = 300;
  const server = await listen(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    res.setHeader('content-type', 'application/json');
    if (req.method === 'GET') {
      gets += 1;
      if (gets === 2 && run) run.child.kill('SIGTERM');  // batch 1 handed back, batch 2 in hand
      const limit = Number(url.searchParams.get('limit'));
      const revision = url.searchParams.get('revision');
      const rows = [];
      for (let id = 1; id <= ROWS && rows.length < limit; id++)
        if (stored.get(id) !== revision) rows.push({ id, content: `ticket ${id}: the printer jams` });
      res.end(JSON.stringify(rows));
      return;
    }
    const slice = JSON.parse(await body(req));
    for (const d of slice.docs) {
      assert.equal(d.chunks.length, 1);
      stored.set(d.id, slice.revision);
    }
    res.end('{}');
  });
  try {
    const dir = path.join(tmp.dir, 'pump');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'tickets.json'), JSON.stringify({
      batch_size: 50,
      source: { type: 'http', url: `http://127.0.0.1:${server.address().port}/rows`, allow_private: true },
    }));
    quarry(tmp.data, ['pump', 'deploy', dir, '--embedder', 'hash:64']);

    run = start(tmp.data, ['pump', 'run', 'tickets']);
    const { code } = await exitOf(run);
    assert.equal(code, 143, run.stdout + run.stderr);
    assert.match(run.stdout, /^tickets: 100 documents \(100 chunks\) embedded in 2 batches/m);
    assert.match(run.stdout, /terminated: the batches above are handed back; run `quarry pump run tickets` again/);
    assert.equal(stored.size, 100, 'the batch in hand was handed back whole, and no more');

    run = undefined;
    const again = await quarryAsync(tmp.data, ['pump', 'run', 'tickets']);
    assert.equal(again.processed, ROWS - 100);
    assert.equal(again.drained, true);
    assert.equal(stored.size, ROWS);
  } finally {
    server.close();
    tmp.cleanup();
  }
});

// A free port on 127.0.0.1 (for a server started outside this process).
function freePort() {
  return new Promise((resolve) => {
    const s = http.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

test('kb migrate-store: SIGINT while Chroma holds the first page; nothing changes, exit 130, again moves it all', async () => {
  const tmp = scratch('intr-migrate');
  const chromaPort = await freePort();
  const script = path.join(repoRoot, 'tests/store/chroma/chroma_server.sh');
  const started = spawnSync('bash', [script, 'start', String(chromaPort)], { encoding: 'utf8', timeout: 90_000 });
  assert.equal(started.status, 0, `the real Chroma server: ${started.stdout}${started.stderr}`);
  let run;
  let upserts = 0;
  // Between quarry and the real Chroma: forwards every request, and sends the signal while the
  // first page's upsert is in hand.
  const proxy = await listen((req, res) => {
    if (req.method === 'POST' && req.url.endsWith('/upsert')) {
      upserts += 1;
      if (upserts === 1 && run) run.child.kill('SIGINT');
    }
    const up = http.request({ host: '127.0.0.1', port: chromaPort, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  try {
    quarry(tmp.data, ['kb', 'create', 'k', '--embedder', 'hash:64']);
    const docs = path.join(tmp.dir, 'docs');
    fs.mkdirSync(docs);
    for (let i = 0; i < 450; i++)  // three pages of 200 documents
      fs.writeFileSync(path.join(docs, `d${i}.md`), `# Doc ${i}\n\nlava and ash ${i}\n`);
    quarry(tmp.data, ['ingest', docs, '--kb', 'k', '--wait']);
    const before = quarry(tmp.data, ['kb', 'describe', 'k']).json;
    const settings = JSON.stringify({ url: `http://127.0.0.1:${proxy.address().port}`, allow_private: true, max_retries: 0 });

    run = start(tmp.data, ['kb', 'migrate-store', 'k', '--to', 'chroma', '--settings', settings]);
    const { code } = await exitOf(run);
    assert.equal(code, 130, run.stdout + run.stderr);
    assert.match(run.stdout, /^interrupted: stopped before the switch after copying \d+ vectors; nothing changed: 'k' still uses embedded \(run the same command again/m);
    const mid = quarry(tmp.data, ['kb', 'describe', 'k']).json;
    assert.equal(mid.config.store.id, 'embedded');
    assert.equal(mid.vectors.ready, 450);
    assert.equal(mid.vectors.stored, before.vectors.stored);
    const hits = quarry(tmp.data, ['search', 'lava and ash 7', '--kb', 'k', '--mode', 'vector']).json.hits;
    assert.ok(hits.length > 0, 'vector search still answers from the embedded store');

    run = undefined;
    const moved = await quarryAsync(tmp.data, ['kb', 'migrate-store', 'k', '--to', 'chroma', '--settings', settings]);
    assert.equal(moved.documents, 450);
    const after = (await quarryAsync(tmp.data, ['kb', 'describe', 'k']));
    assert.equal(after.config.store.id, 'chroma');
    assert.equal(after.vectors.ready, 450, JSON.stringify(after.vectors));
    // migrate-store counted Chroma's vectors before it switched: the stopped copy left none.
    assert.equal(moved.chunks, before.chunks);
  } finally {
    proxy.close();
    spawnSync('bash', [script, 'stop', String(chromaPort)], { timeout: 30_000 });
    tmp.cleanup();
  }
});
