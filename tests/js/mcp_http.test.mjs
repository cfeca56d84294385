// MCP over streamable HTTP at /mcp of a real `quarry serve`, driven by the official SDK client
// (StreamableHTTPClientTransport): the shared tool sequence, the transport's HTTP rules
// (sessions, 202, 405, Origin, MCP-Protocol-Version, batches) and bearer tokens (401 without,
// a read token can search but not write). Run by ctest as
//   node tests/js/mcp_http.test.mjs --quarry BUILD/quarry --tmp DIR
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { quarry, scratch, sqlite, startServe } from './lib/env.mjs';
import { connectHttp, ok, toolError } from './lib/mcp_client.mjs';
import { checkHandshake, checkToolList, runToolSequence } from './lib/tool_sequence.mjs';

const tmp = scratch('mcp-http');
quarry(tmp.data, ['kb', 'create', 'notes', '--embedder', 'hash:64']);
const servers = [];
after(async () => {
  for (const s of servers) await s.stop();
  tmp.cleanup();
});

async function serve(extra = []) {
  const s = await startServe(tmp.data, extra);
  servers.push(s);
  return s;
}

// A raw POST to /mcp (what the SDK does not let us get wrong on purpose).
async function post(url, body, headers = {}) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? JSON.parse(text) : undefined };
}

const initialize = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

describe('streamable HTTP without tokens (loopback)', () => {
  let server;
  before(async () => { server = await serve(); });

  test('initialize, tools/list and every tool through the SDK client', async () => {
    const conn = await connectHttp(server.url);
    let result;
    try {
      checkHandshake(conn);
      assert.match(conn.transport.sessionId ?? '', /^[0-9a-f]{32}$/, 'a session id was issued');
      await checkToolList(conn.client);
      result = await runToolSequence(conn.client, { kb: 'notes' });
    } catch (e) {
      e.message += `\n--- quarry serve log ---\n${server.stderr()}`;
      throw e;
    } finally {
      await conn.close();
    }
    const rows = sqlite(path.join(tmp.data, 'catalog.db'),
      "SELECT action, count(*) FROM audit WHERE surface = 'mcp' AND action LIKE 'document.%' GROUP BY action");
    const counts = Object.fromEntries(rows.map((r) => r.split('|')).map(([a, n]) => [a, Number(n)]));
    assert.deepEqual(counts, result.writes);
  });

  test('sessions: issued on initialize, ended by DELETE, then unknown (404)', async () => {
    const init = await post(server.url, initialize);
    assert.equal(init.status, 200);
    assert.equal(init.json.result.protocolVersion, '2025-06-18');
    const sid = init.headers.get('mcp-session-id');
    assert.ok(sid);
    const h = { 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' };
    const note = await post(server.url, { jsonrpc: '2.0', method: 'notifications/initialized' }, h);
    assert.equal(note.status, 202);
    assert.equal(note.text, '');
    const ping = await post(server.url, { jsonrpc: '2.0', id: 2, method: 'ping' }, h);
    assert.deepEqual(ping.json, { jsonrpc: '2.0', id: 2, result: {} });
    const del = await fetch(`${server.url}/mcp`, { method: 'DELETE', headers: h });
    assert.ok(del.status === 200 || del.status === 204, `DELETE answered ${del.status}`);
    const gone = await post(server.url, { jsonrpc: '2.0', id: 3, method: 'ping' }, h);
    assert.equal(gone.status, 404);
    const stateless = await post(server.url, { jsonrpc: '2.0', id: 4, method: 'ping' });
    assert.equal(stateless.status, 200, 'a request without a session id is served');
  });

  test('transport rules: GET 405, Origin, protocol version, batches, bad JSON', async () => {
    const get = await fetch(`${server.url}/mcp`, { headers: { accept: 'text/event-stream' } });
    assert.equal(get.status, 405);
    const evil = await post(server.url, initialize, { origin: 'http://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal(evil.json.error.data.code, 'forbidden');
    const local = await post(server.url, initialize, { origin: 'http://localhost:5173' });
    assert.equal(local.status, 200);
    const version = await post(server.url, { jsonrpc: '2.0', id: 1, method: 'ping' },
      { 'mcp-protocol-version': '1999-01-01' });
    assert.equal(version.status, 400);
    const batch = await post(server.url, [
      { jsonrpc: '2.0', id: 'a', method: 'ping' },
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      { jsonrpc: '2.0', id: 'b', method: 'tools/call', params: { name: 'list_knowledge_bases', arguments: {} } },
    ]);
    assert.equal(batch.status, 200);
    assert.deepEqual(batch.json.map((r) => r.id), ['a', 'b']);
    assert.equal(batch.json[1].result.isError, false);
    const bad = await post(server.url, '{"jsonrpc": "2.0", "id": 1, ');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.error.code, -32700);
    const unknown = await post(server.url, { jsonrpc: '2.0', id: 9, method: 'nope/nope' });
    assert.equal(unknown.json.error.code, -32601);
  });
});

describe('streamable HTTP with --require-token', () => {
  let server;
  let read;
  let write;
  before(async () => {
    read = quarry(tmp.data, ['token', 'create', '--name', 'reader', '--scope', 'read']).json;
    write = quarry(tmp.data, ['token', 'create', '--name', 'writer', '--scope', 'write']).json;
    assert.match(read.secret, /^qry_/);
    server = await serve(['--require-token']);
  });

  test('no token: HTTP 401, and the SDK client cannot connect', async () => {
    const raw = await post(server.url, initialize);
    assert.equal(raw.status, 401);
    assert.equal(raw.json?.error?.code, 'unauthorized');
    await assert.rejects(connectHttp(server.url),
      (e) => e instanceof StreamableHTTPError && e.code === 401);
    const wrong = await post(server.url, initialize, { authorization: 'Bearer qry_not_a_token' });
    assert.equal(wrong.status, 401);
  });

  test('a read token searches but cannot write (forbidden); a write token writes', async () => {
    const reader = await connectHttp(server.url, read.secret);
    try {
      await checkToolList(reader.client);
      const found = await ok(reader.client, 'search', { kb: 'notes', query: 'marimba', mode: 'keyword' });
      assert.equal(found.hits.length, 1);
      const err = await toolError(reader.client, 'add_document',
        { kb: 'notes', filename: 'r.md', content: 'read tokens cannot write' }, 'forbidden');
      assert.match(err.message, /scope write/);
      // Forbidden comes before the lookup: the same answer whether or not the document exists.
      await toolError(reader.client, 'delete_document', { kb: 'notes', doc_id: 'nope' }, 'forbidden');
    } finally {
      await reader.close();
    }
    const writer = await connectHttp(server.url, write.secret);
    let added;
    try {
      added = await ok(writer.client, 'add_document',
        { kb: 'notes', filename: 'w.md', content: '# W\n\nwritten with a write token: okapi\n' });
      assert.equal(added.status, 'added');
    } finally {
      await writer.close();
    }
    const who = sqlite(path.join(tmp.data, 'catalog.db'),
      `SELECT actor, surface FROM audit WHERE target = '${added.doc_id}' AND action = 'document.add'`);
    assert.deepEqual(who, [`token:${write.token?.id ?? write.id}|mcp`]);
  });
});
