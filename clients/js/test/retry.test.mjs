// Retries, timeouts and aborts. The `503 busy` path runs against a real server: holding the
// data directory's writer lock (flock, as another writer would) makes its writes answer 503 busy
// with Retry-After after --lock-timeout. The server has no way to be made to answer 429, nor to
// refuse a read, so those paths use a tiny scripted node:http server in this file.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { BusyError, QuarryClient, QuarryError, RateLimitedError, TimeoutError } from '../src/index.js';
import { scratch, startServer } from '../test-lib/server.mjs';

/** Takes DATA/write.lock like another writer would; resolves to release(). */
async function holdWriterLock(data) {
  const proc = spawn('flock', ['-x', path.join(data, 'write.lock'), 'sh', '-c', 'echo locked; exec cat'],
    { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise((resolve, reject) => {
    proc.stdout.once('data', resolve);
    proc.once('error', reject);
  });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  return async () => { proc.stdin.end(); await exited; };
}

describe('503 busy from a real server whose writer lock is held', () => {
  let tmp;
  let server;
  before(async () => {
    tmp = scratch('retry');
    server = await startServer(tmp.data, { globalArgs: ['--lock-timeout', '200'] });
  });
  after(async () => {
    await server?.stop();
    tmp?.cleanup();
  });

  test('without retries the call fails with BusyError and its Retry-After', async () => {
    const client = new QuarryClient({ baseUrl: server.url, token: null, maxRetries: 0 });
    const release = await holdWriterLock(tmp.data);
    try {
      const err = await client.createKb('locked').catch((e) => e);
      assert.ok(err instanceof BusyError, `got ${err}`);
      assert.deepEqual([err.status, err.code, err.retryAfterMs], [503, 'busy', 1000]);
    } finally {
      await release();
    }
    await assert.rejects(client.getKb('locked'), { code: 'not_found' });
  });

  test('a write refused busy is retried, and succeeds once the writer is gone', async () => {
    const release = await holdWriterLock(tmp.data);
    const statuses = [];
    // The fetch wrapper releases the lock when the first 503 arrives, so the retry finds it free.
    const fetchAndRelease = async (url, init) => {
      const res = await fetch(url, init);
      statuses.push(res.status);
      if (res.status === 503) await release();
      return res;
    };
    const client = new QuarryClient({ baseUrl: server.url, token: null, fetch: fetchAndRelease });
    const kb = await client.createKb('after-busy');
    assert.equal(kb.name, 'after-busy');
    assert.deepEqual(statuses, [503, 201]);
  });

  test('timeoutMs ends a call that keeps being refused, as TimeoutError with status 0', async () => {
    const release = await holdWriterLock(tmp.data);
    try {
      const client = new QuarryClient({ baseUrl: server.url, token: null, maxRetries: 100 });
      const err = await client.createKb('never', { timeoutMs: 150 }).catch((e) => e);
      assert.ok(err instanceof TimeoutError, `got ${err}`);
      assert.deepEqual([err.code, err.status], ['timeout', 0]);
    } finally {
      await release();
    }
  });

  test("a caller's signal aborts the call, retries and waits included", async () => {
    const release = await holdWriterLock(tmp.data);
    try {
      const client = new QuarryClient({ baseUrl: server.url, token: null, maxRetries: 100, timeoutMs: 0 });
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      await assert.rejects(client.createKb('aborted', { signal: controller.signal }), { name: 'AbortError' });
      await assert.rejects(client.getHealth({ signal: AbortSignal.abort() }), { name: 'AbortError' });
    } finally {
      await release();
    }
  });
});

describe('429 and other answers from a scripted server', () => {
  let server;
  let url;
  let script = [];
  const seen = [];
  before(async () => {
    // Answers each request with the next scripted [status, headers, body]; 200 {} when empty.
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        seen.push(`${req.method} ${req.url}`);
        const [status, headers, body] = script.shift() ?? [200, {}, '{}'];
        res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      });
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${server.address().port}`;
  });
  after(() => new Promise((resolve) => server.close(resolve)));

  const envelope = (code) => ({ error: { code, message: code, details: {} } });
  const run = async (steps, call) => {
    script = [...steps];
    seen.length = 0;
    const client = new QuarryClient({ baseUrl: url, token: null, retryBaseMs: 1 });
    const result = await call(client).catch((e) => e);
    return { result, requests: seen.length };
  };

  test('a search (idempotent) is retried through 429 and a bare 503', async () => {
    const { result, requests } = await run([
      [429, { 'Retry-After': '0' }, envelope('rate_limited')],
      [503, { 'Content-Type': 'text/plain' }, 'overloaded'],
      [200, {}, { kb: 'k', mode: 'keyword', hits: [] }],
    ], (c) => c.search('k', 'q', { mode: 'keyword' }));
    assert.deepEqual(result.hits, []);
    assert.equal(requests, 3);
  });

  test('Retry-After as an HTTP date is honoured', async () => {
    const { result, requests } = await run([
      [503, { 'Retry-After': new Date(Date.now() - 1000).toUTCString() }, envelope('busy')],
    ], (c) => c.getHealth());
    assert.deepEqual([result, requests], [{}, 2]);
  });

  test('an upload answered 429 is not repeated: the server may have acted on it', async () => {
    const { result, requests } = await run([[429, { 'Retry-After': '1' }, envelope('rate_limited')]],
      (c) => c.addDocument('k', 'a.md', '# a\n'));
    assert.ok(result instanceof RateLimitedError);
    assert.deepEqual([result.status, result.retryAfterMs, requests], [429, 1000, 1]);
  });

  test('retries stop after maxRetries, and a Retry-After past retryMaxMs is not waited for', async () => {
    const busy = [503, { 'Retry-After': '0' }, envelope('busy')];
    const capped = await run([busy, busy, busy, busy], (c) => c.listKbs({ maxRetries: 2 }));
    assert.ok(capped.result instanceof BusyError);
    assert.equal(capped.requests, 3);
    const far = await run([[503, { 'Retry-After': '3600' }, envelope('busy')]], (c) => c.listKbs());
    assert.ok(far.result instanceof BusyError);
    assert.equal(far.requests, 1);
  });

  test('an answer without an error envelope is a QuarryError with code http_error', async () => {
    const { result } = await run([[502, { 'Content-Type': 'text/html' }, '<h1>Bad Gateway</h1>']], (c) => c.getHealth());
    assert.equal(result.constructor, QuarryError);
    assert.deepEqual([result.code, result.status], ['http_error', 502]);
    assert.match(result.message, /Bad Gateway/);
  });
});
