// The tool sequence both transports must pass: initialize, tools/list, then every tool with
// assertions on what it did (not only that it answered), the error cases, and resources. The
// caller connects the client to a data dir holding an empty KB created with `--embedder
// hash:64`, and gets back the ids and write counts for its own checks (the audit log).
import assert from 'node:assert/strict';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { call, ok, toolError } from './mcp_client.mjs';
import { sleep } from './env.mjs';

export const ALL_TOOLS = [
  'list_knowledge_bases', 'search', 'grep', 'read_document', 'list_documents', 'index_status',
  'add_document', 'edit_document', 'delete_document',
];
export const WRITE_TOOLS = ['add_document', 'edit_document', 'delete_document'];

const ALPHA = [
  '# Instruments',
  '',
  'The xylophone sits beside the piano in the hall.',
  '',
  '## Animals',
  '',
  'A quokka smiles at visitors on Rottnest Island.',
  'The next line mentions wombats and burrows.',
  '',
].join('\n');
const BETA = '# Beta\n\nThe narwhal swims in arctic water near an island.\n';
const GAMMA = 'Gamma notes: the pangolin rolls into a tight ball when frightened.\n';

export function checkHandshake(conn) {
  const v = conn.protocolVersion();
  assert.ok(v && v >= '2025-06-18', `negotiated protocol version ${v} is 2025-06-18 or newer`);
  const info = conn.client.getServerVersion();
  assert.equal(info.name, 'quarry');
  assert.equal(info.version, '0.1.0');
  assert.match(conn.client.getInstructions() ?? '', /list_knowledge_bases/);
  const caps = conn.client.getServerCapabilities();
  assert.ok(caps.tools && caps.resources, 'tools and resources capabilities');
}

export async function checkToolList(client, expected = ALL_TOOLS) {
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(), [...expected].sort());
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', `${t.name} inputSchema`);
    assert.equal(t.outputSchema?.type, 'object', `${t.name} outputSchema`);
    assert.ok(t.description.length > 20, `${t.name} has a description`);
    assert.equal(t.annotations.readOnlyHint, !WRITE_TOOLS.includes(t.name));
  }
  return tools;
}

async function search(client, kb, query, extra = {}) {
  return ok(client, 'search', { kb, query, mode: 'keyword', ...extra });
}

// Polls index_status until the KB's vectors are ready (the in-process indexer builds them).
async function waitVectorsReady(client, kb, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let s;
  while (Date.now() < deadline) {
    s = await ok(client, 'index_status', { kb });
    if (s.index_status.vector === 'ready') return s;
    await sleep(200);
  }
  assert.fail(`vectors of ${kb} not ready after ${timeoutMs} ms: ${JSON.stringify(s)}`);
}

export async function runToolSequence(client, { kb = 'notes' } = {}) {
  // list_knowledge_bases
  const kbs = await ok(client, 'list_knowledge_bases');
  assert.ok(kbs.knowledge_bases.some((k) => k.name === kb), `${kb} is listed`);

  // add_document: three documents, then the identity rules (unchanged, conflict, replace).
  const alpha = await ok(client, 'add_document',
    { kb, filename: 'alpha.md', content: ALPHA, metadata: { topic: 'music' } });
  assert.equal(alpha.status, 'added');
  assert.match(alpha.doc_id, /^[0-9A-HJKMNP-TV-Z]{26}$/);
  assert.ok(alpha.chunks >= 1);
  const beta = await ok(client, 'add_document',
    { kb, filename: 'beta.md', content: BETA, metadata: { topic: 'sea' } });
  const gamma = await ok(client, 'add_document', { kb, filename: 'gamma.txt', content: GAMMA });
  const again = await ok(client, 'add_document',
    { kb, filename: 'alpha.md', content: ALPHA, metadata: { topic: 'music' } });
  assert.equal(again.status, 'unchanged');
  assert.equal(again.doc_id, alpha.doc_id);
  const conflict = await toolError(client, 'add_document',
    { kb, filename: 'gamma.txt', content: GAMMA + 'More.\n' }, 'conflict');
  assert.match(conflict.message, new RegExp(gamma.doc_id));
  const replaced = await ok(client, 'add_document',
    { kb, filename: 'gamma.txt', content: GAMMA + 'Armadillos too.\n', replace: true });
  assert.equal(replaced.status, 'updated');
  assert.equal(replaced.doc_id, gamma.doc_id);

  // search: the right document, with the text fallback naming it; a metadata filter.
  const found = await search(client, kb, 'xylophone');
  assert.equal(found.hits.length, 1);
  const hit = found.hits[0];
  assert.equal(hit.doc_id, alpha.doc_id);
  assert.equal(hit.kb, kb);
  assert.match(hit.snippet, /\*\*xylophone\*\*/);
  const island = await search(client, kb, 'island');
  assert.deepEqual(island.hits.map((h) => h.doc_id).sort(), [alpha.doc_id, beta.doc_id].sort());
  const sea = await search(client, kb, 'island', { filter: { topic: 'sea' } });
  assert.deepEqual(sea.hits.map((h) => h.doc_id), [beta.doc_id]);
  const topOne = await search(client, kb, 'island', { top_k: 1 });
  assert.equal(topOne.hits.length, 1);
  const text = (await call(client, 'search', { kb, query: 'xylophone', mode: 'keyword' })).content[0].text;
  assert.ok(text.includes(alpha.doc_id) && text.includes('alpha.md'), text);

  // grep finds the line; read_document by lines returns exactly those lines of the file.
  const g = await ok(client, 'grep', { kb, pattern: 'quok+a', after_context: 1 });
  assert.equal(g.matches.length, 1);
  const m = g.matches[0];
  assert.equal(m.doc_id, alpha.doc_id);
  assert.equal(m.text, 'A quokka smiles at visitors on Rottnest Island.');
  const lines = await ok(client, 'read_document',
    { kb, doc_id: alpha.doc_id, start_line: m.line, end_line: m.line + 1 });
  assert.equal(lines.content, `${m.text}\n${m.after[0].text}`);
  assert.equal(lines.start_line, m.line);
  assert.equal(lines.end_line, m.line + 1);
  const literal = await ok(client, 'grep', { kb, pattern: 'WOMBATS', literal: true, ignore_case: true });
  assert.deepEqual(literal.matches.map((x) => x.line), [m.line + 1]);

  // read_document: whole body (no front matter), and a search hit's byte range.
  const whole = await ok(client, 'read_document', { kb, doc_id: alpha.doc_id });
  assert.ok(whole.content.startsWith('# Instruments'), whole.content);
  assert.ok(whole.content.includes(m.text));
  assert.ok(whole.start_line > 1, 'the body starts after the front matter');
  assert.equal(whole.end_line, whole.total_lines);
  const range = await ok(client, 'read_document',
    { kb, doc_id: alpha.doc_id, offset: hit.offset, length: hit.length });
  assert.equal(range.length, hit.length);
  assert.equal(range.content, whole.content.slice(hit.offset - whole.offset).slice(0, hit.length));
  assert.match(range.content, /xylophone/);
  await toolError(client, 'read_document', { kb, doc_id: alpha.doc_id, start_line: 999 },
    'invalid_argument');
  await toolError(client, 'read_document',
    { kb, doc_id: alpha.doc_id, start_line: 1, offset: 0 }, 'invalid_argument');

  // list_documents pages with a cursor.
  const p1 = await ok(client, 'list_documents', { kb, limit: 2 });
  assert.equal(p1.documents.length, 2);
  assert.equal(typeof p1.next_cursor, 'string');
  assert.ok(p1.documents.every((d) => !('markdown_path' in d) && !('raw_path' in d)));
  const p2 = await ok(client, 'list_documents', { kb, limit: 2, cursor: p1.next_cursor });
  assert.equal(p2.documents.length, 1);
  assert.equal(p2.next_cursor, null);
  const listed = [...p1.documents, ...p2.documents].map((d) => d.id).sort();
  assert.deepEqual(listed, [alpha.doc_id, beta.doc_id, gamma.doc_id].sort());
  const music = await ok(client, 'list_documents', { kb, filter: { topic: 'music' } });
  assert.deepEqual(music.documents.map((d) => d.id), [alpha.doc_id]);

  // index_status: the KB's and one document's; vectors follow in the background.
  const st = await ok(client, 'index_status', { kb });
  assert.equal(st.kb, kb);
  assert.equal(st.index_status.keyword, 'ready');
  assert.equal(st.documents, 3);
  const ds = await ok(client, 'index_status', { kb, doc_id: beta.doc_id });
  assert.equal(ds.doc_id, beta.doc_id);
  assert.equal(ds.index_status.keyword, 'ready');
  const ready = await waitVectorsReady(client, kb);
  assert.equal(ready.vectors.ready, 3);
  const vec = await ok(client, 'search', { kb, query: 'pangolin rolls into a tight ball', mode: 'vector' });
  assert.equal(vec.mode, 'vector');
  assert.equal(vec.hits[0].doc_id, gamma.doc_id);
  const hybrid = await ok(client, 'search', { kb, query: 'narwhal', mode: 'hybrid' });
  assert.deepEqual(hybrid.degraded, []);
  assert.equal(hybrid.hits[0].doc_id, beta.doc_id);

  // edit_document changes what search finds.
  const edited = await ok(client, 'edit_document',
    { kb, doc_id: alpha.doc_id, content: ALPHA.replace('xylophone', 'marimba') });
  assert.equal(edited.id, alpha.doc_id);
  assert.ok(!('markdown_path' in edited));
  assert.equal((await search(client, kb, 'marimba')).hits[0].doc_id, alpha.doc_id);
  assert.equal((await search(client, kb, 'xylophone')).hits.length, 0);

  // delete_document removes it everywhere.
  const del = await ok(client, 'delete_document', { kb, doc_id: beta.doc_id });
  assert.deepEqual(del, { kb, doc_id: beta.doc_id, deleted: true });
  assert.equal((await search(client, kb, 'narwhal')).hits.length, 0);
  await toolError(client, 'read_document', { kb, doc_id: beta.doc_id }, 'not_found');
  assert.equal((await ok(client, 'list_documents', { kb })).documents.length, 2);

  // Errors: stable codes as tool errors; protocol errors for what is not a tool call.
  const nf = await toolError(client, 'search', { kb: 'nope', query: 'x' }, 'not_found');
  assert.match(nf.message, /nope/);
  await toolError(client, 'search', { kb, query: 'x', colour: 'red' }, 'invalid_argument');
  await toolError(client, 'search', { kb, query: 'x', top_k: 0 }, 'invalid_argument');
  await toolError(client, 'search', { kb }, 'invalid_argument');
  await toolError(client, 'grep', { kb, pattern: '(' }, 'invalid_argument');
  await assert.rejects(call(client, 'no_such_tool', {}),
    (e) => e instanceof McpError && e.code === -32602);

  // Resources: the documents as quarry://<kb>/<doc-id>.
  const res = await client.listResources();
  const uris = res.resources.map((r) => r.uri);
  assert.ok(uris.includes(`quarry://${kb}/${alpha.doc_id}`), JSON.stringify(uris));
  assert.ok(!uris.includes(`quarry://${kb}/${beta.doc_id}`));
  assert.ok(res.resources.every((r) => r.mimeType === 'text/markdown'));
  const read = await client.readResource({ uri: `quarry://${kb}/${alpha.doc_id}` });
  assert.equal(read.contents[0].mimeType, 'text/markdown');
  assert.match(read.contents[0].text, /marimba/);
  await assert.rejects(client.readResource({ uri: `quarry://${kb}/${beta.doc_id}` }),
    (e) => e instanceof McpError && e.code === -32002 && e.data?.code === 'not_found');
  const templates = await client.listResourceTemplates();
  assert.equal(templates.resourceTemplates[0].uriTemplate, 'quarry://{kb}/{doc_id}');

  return {
    ids: { alpha: alpha.doc_id, beta: beta.doc_id, gamma: gamma.doc_id },
    writes: { 'document.add': 3, 'document.update': 1, 'document.edit': 1, 'document.delete': 1 },
  };
}
