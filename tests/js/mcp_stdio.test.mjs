// `quarry mcp` over stdio, driven by the official MCP TypeScript SDK client: the shared tool
// sequence, the audit log of its writes, --read-only and --kb. Run by ctest as
//   node tests/js/mcp_stdio.test.mjs --quarry BUILD/quarry --tmp DIR
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, test } from 'node:test';
import { quarry, scratch, sqlite } from './lib/env.mjs';
import { call, connectStdio, ok, toolError } from './lib/mcp_client.mjs';
import { ALL_TOOLS, WRITE_TOOLS, checkHandshake, checkToolList, runToolSequence } from './lib/tool_sequence.mjs';

const tmp = scratch('mcp-stdio');
after(() => tmp.cleanup());
quarry(tmp.data, ['kb', 'create', 'notes', '--embedder', 'hash:64']);
quarry(tmp.data, ['kb', 'create', 'other']);

test('stdio: initialize, tools/list and every tool through the SDK client', async () => {
  const conn = await connectStdio(tmp.data);
  let result;
  try {
    checkHandshake(conn);
    await checkToolList(conn.client);
    result = await runToolSequence(conn.client, { kb: 'notes' });
  } catch (e) {
    e.message += `\n--- quarry mcp stderr ---\n${conn.stderr()}`;
    throw e;
  } finally {
    const exit = await conn.close();
    assert.deepEqual(exit, { code: 0, signal: null }, 'quarry mcp exits 0 when stdin closes');
  }

  // Every write is in the audit log, by surface mcp.
  const rows = sqlite(path.join(tmp.data, 'catalog.db'),
    "SELECT action, count(*) FROM audit WHERE surface = 'mcp' AND action LIKE 'document.%' GROUP BY action");
  const counts = Object.fromEntries(rows.map((r) => r.split('|')).map(([a, n]) => [a, Number(n)]));
  assert.deepEqual(counts, result.writes);
  const targets = sqlite(path.join(tmp.data, 'catalog.db'),
    "SELECT DISTINCT target FROM audit WHERE surface = 'mcp' AND action = 'document.delete'");
  assert.deepEqual(targets, [result.ids.beta]);
  // The CLI sees what MCP wrote.
  const docs = quarry(tmp.data, ['docs', 'list', '--kb', 'notes']).json;
  const ids = (docs.documents ?? docs).map((d) => d.id).sort();
  assert.deepEqual(ids, [result.ids.alpha, result.ids.gamma].sort());
});

test('stdio --read-only: no write tools, and calling one is a protocol error', async () => {
  const conn = await connectStdio(tmp.data, ['--read-only', '--no-indexer']);
  try {
    await checkToolList(conn.client, ALL_TOOLS.filter((t) => !WRITE_TOOLS.includes(t)));
    assert.match(conn.client.getInstructions(), /^(?!.*add_document)/s);
    await assert.rejects(call(conn.client, 'add_document',
      { kb: 'other', filename: 'x.md', content: 'x' }), /add_document/);
    const kbs = await ok(conn.client, 'list_knowledge_bases');
    assert.deepEqual(kbs.knowledge_bases.map((k) => k.name).sort(), ['notes', 'other']);
  } finally {
    assert.equal((await conn.close()).code, 0);
  }
  assert.equal(quarry(tmp.data, ['docs', 'list', '--kb', 'other']).json.documents.length, 0);
});

test('stdio --kb: one knowledge base, kb argument optional, others forbidden', async () => {
  const conn = await connectStdio(tmp.data, ['--kb', 'other', '--no-indexer']);
  try {
    const { tools } = await conn.client.listTools();
    const search = tools.find((t) => t.name === 'search');
    assert.equal(search.inputSchema.properties.kb.default, 'other');
    assert.ok(!search.inputSchema.required.includes('kb'));
    const kbs = await ok(conn.client, 'list_knowledge_bases');
    assert.deepEqual(kbs.knowledge_bases.map((k) => k.name), ['other']);
    const added = await ok(conn.client, 'add_document', { filename: 'o.md', content: '# O\n\nocelot\n' });
    assert.equal(added.kb, 'other');
    const hits = await ok(conn.client, 'search', { query: 'ocelot', mode: 'keyword' });
    assert.equal(hits.hits[0].doc_id, added.doc_id);
    await toolError(conn.client, 'search', { kb: 'notes', query: 'marimba' }, 'forbidden');
    const res = await conn.client.listResources();
    assert.deepEqual(res.resources.map((r) => r.uri), [`quarry://other/${added.doc_id}`]);
  } finally {
    assert.equal((await conn.close()).code, 0);
  }
});

test('stdio: a misspelt --kb fails at start with not_found on stderr', () => {
  const r = quarry(tmp.data, ['mcp', '--kb', 'nope'], { json: false, allowFail: true, input: '' });
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /not_found/);
  assert.equal(r.stdout, '');
});
