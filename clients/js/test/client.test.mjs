// QuarryClient against a real `quarry serve` on 127.0.0.1: every group of routes, the error
// classes the server's real answers become, tokens and scopes, and paging with the iterators.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import {
  AlreadyExistsError, ConflictError, ForbiddenError, InvalidArgumentError, ModeUnavailableError,
  NotFoundError, QuarryClient, UnauthorizedError,
} from '../src/index.js';
import { scratch, startServer, waitFor } from '../test-lib/server.mjs';

const KB = 'notes';
const PAGED = 'paged';

const INSTALL = '# Installing\n\nRun the installer, then restart the service.\n\n## Upgrades\n\nUpgrades keep your settings.\n';
const FAQ = '# FAQ\n\n## Does Quarry run offline?\n\nYes. Everything stays on your disk.\n';

describe('QuarryClient against a real server', () => {
  let tmp;
  let server;
  let client;

  before(async () => {
    tmp = scratch('client');
    server = await startServer(tmp.data);
    // No token: on loopback the server treats the caller as its local admin.
    client = new QuarryClient({ baseUrl: server.url, token: null });
  });
  after(async () => {
    await server?.stop();
    tmp?.cleanup();
  });

  test('server routes: health, openapi, status, me, plugins, metrics', async () => {
    const health = await client.getHealth();
    assert.equal(health.status, 'ok');
    const spec = await client.getOpenApi();
    assert.match(spec.openapi, /^3\.1/);
    const me = await client.getMe();
    assert.deepEqual([me.scope, me.anonymous, me.can.write], ['admin', true, true]);
    const plugins = await client.listPlugins();
    assert.ok(plugins.providers.some((p) => p.id === 'static'));
    assert.ok(Array.isArray((await client.getStatus()).kbs));
    assert.match(await client.getMetrics(), /^# (HELP|TYPE) quarry_/m);
  });

  test('KBs: create with an embedder, get, list, dry-run and real PATCH, status', async () => {
    const kb = await client.createKb(KB, {
      description: 'Team notes',
      config: { embedder: { provider: 'static:glove-100d' } },
    });
    assert.equal(kb.name, KB);
    assert.ok(kb.config.modes.includes('vector'));
    assert.deepEqual((await client.listKbs()).kbs.map((k) => k.name), [KB]);
    assert.equal((await client.getKb(KB)).description, 'Team notes');

    const plan = await client.updateKb(KB, { 'chunking.max_tokens': 384 }, { dryRun: true });
    assert.equal(plan.dry_run, true);
    assert.equal(plan.config.chunking.max_tokens, 384);
    assert.notEqual((await client.getKb(KB)).config.chunking.max_tokens, 384, 'a dry run wrote');
    const changed = await client.updateKb(KB, { description: 'Team notes and FAQs' });
    assert.equal(changed.description, 'Team notes and FAQs');
    assert.equal((await client.getKbStatus(KB)).kb, KB);
  });

  test('documents: several files in one multipart upload, JSON bodies, a failed item', async () => {
    const dir = path.join(tmp.dir, 'upload');
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'install.md'), INSTALL);
    const report = await client.addDocuments(KB, [
      path.join(dir, 'install.md'),
      { name: 'people.csv', content: 'name,role\nAda,engineer\nGrace,admiral\n' },
      new File([new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])], 'logo.png'),
    ], { metadata: { lang: 'en', topic: 'setup' } });
    assert.deepEqual([report.added, report.failed], [2, 1]);
    assert.equal(report.items.find((i) => i.path === 'logo.png').error.code, 'unsupported_format');

    const faq = await client.addDocument(KB, 'faq.md', FAQ, { metadata: { lang: 'en', topic: 'faq' } });
    assert.equal(faq.added, 1);
    const bytes = await client.addDocument(KB, 'hallo.txt', new TextEncoder().encode('Hallo Welt, das ist ein Test.\n'),
      { metadata: { lang: 'de' } });
    assert.equal(bytes.added, 1);

    // The same name with changed bytes is a conflict unless replace is set.
    const changed = INSTALL.replace('the installer', 'the new installer');
    await assert.rejects(client.addDocuments(KB, [{ name: 'install.md', content: changed }]), ConflictError);
    const replaced = await client.addDocuments(KB, [{ name: 'install.md', content: changed }],
      { metadata: { lang: 'en', topic: 'setup' }, replace: true });
    assert.equal(replaced.updated, 1);
  });

  test('documents: list with a filter, get, Markdown, chunks, edit, reconvert', async () => {
    const page = await client.listDocuments(KB, { filter: { topic: 'faq' } });
    assert.deepEqual(page.documents.map((d) => d.filename), ['faq.md']);
    assert.equal(page.next_cursor, null);
    const id = page.documents[0].id;

    const full = await client.getDocument(KB, id);
    assert.match(full.markdown, /run offline/);
    assert.equal('markdown' in await client.getDocument(KB, id, { markdown: false }), false);
    assert.match(await client.getDocumentMarkdown(KB, id), /stays on your disk/);
    const { chunks } = await client.listDocumentChunks(KB, id);
    assert.ok(chunks.length > 0 && Array.isArray(chunks[0].heading_path) && typeof chunks[0].text === 'string');

    const edited = await client.editDocument(KB, id, '# FAQ\n\nYes. Nothing leaves your machine.\n');
    assert.equal(edited.id, id);
    assert.match(await client.getDocumentMarkdown(KB, id), /Nothing leaves/);
    await client.reconvertDocument(KB, id);
    assert.match(await client.getDocumentMarkdown(KB, id), /stays on your disk/);
  });

  test('search in every mode, with a metadata filter', async () => {
    await waitFor(async () => (await client.getKbStatus(KB)).index_status.vector === 'ready', 'vectors');
    const filter = { lang: 'en', topic: { $in: ['setup', 'faq'] } };
    for (const mode of ['keyword', 'vector', 'hybrid', 'auto']) {
      const r = await client.search(KB, 'installer restart', { mode, topK: 5, filter });
      assert.equal(r.mode, mode === 'auto' ? 'hybrid' : mode, `mode ${mode}`);
      assert.ok(r.hits.length > 0, `no hits in mode ${mode}`);
      for (const hit of r.hits) {
        assert.ok(hit.score >= 0 && hit.score <= 1);
        assert.ok(['setup', 'faq'].includes(hit.metadata.topic), `mode ${mode} ignored the filter`);
      }
    }
    const grepMode = await client.search(KB, 'restart', { mode: 'grep', filter });
    assert.equal(grepMode.mode, 'grep');
    assert.equal(grepMode.hits[0].filename, 'install.md');
    assert.deepEqual((await client.search(KB, 'installer', { mode: 'keyword', filter: { lang: 'fr' } })).hits, []);
  });

  test('grep: matches with context, a bad pattern is InvalidArgumentError', async () => {
    const r = await client.grep(KB, 'restart|upgrade', { ignoreCase: true, context: 1, maxMatches: 10 });
    assert.equal(r.truncated, false);
    const m = r.matches.find((x) => x.filename === 'install.md');
    assert.ok(m && m.before.length === 1 && m.after.length === 1);
    const err = await client.grep(KB, '(unclosed').catch((e) => e);
    assert.ok(err instanceof InvalidArgumentError);
    assert.deepEqual([err.status, err.code], [400, 'invalid_argument']);
  });

  test('paging: iterDocuments walks every page; a forged cursor is rejected', async () => {
    await client.createKb(PAGED);
    const files = Array.from({ length: 23 }, (_, i) => ({ name: `doc-${String(i).padStart(2, '0')}.md`, content: `# Doc ${i}\n\nBody ${i}.\n` }));
    const report = await client.addDocuments(PAGED, files, { metadata: { batch: 1 } });
    assert.equal(report.added, 23);

    const first = await client.listDocuments(PAGED, { limit: 5 });
    assert.equal(first.documents.length, 5);
    assert.equal(typeof first.next_cursor, 'string');
    const seen = [];
    for await (const doc of client.iterDocuments(PAGED, { pageSize: 5 })) seen.push(doc.filename);
    assert.deepEqual(seen.sort(), files.map((f) => f.name));
    const filtered = [];
    for await (const doc of client.iterDocuments(PAGED, { pageSize: 2, filter: { batch: 2 } })) filtered.push(doc);
    assert.deepEqual(filtered, []);

    const err = await client.listDocuments(PAGED, { cursor: 'not-a-cursor' }).catch((e) => e);
    assert.ok(err instanceof InvalidArgumentError);
    assert.equal(err.details.field, 'cursor');
  });

  test('reindex: a sweep starts (202) and reports its progress', async () => {
    const started = await client.startReindex(KB);
    assert.equal(started.kb, KB);
    const state = await client.getReindex(KB);
    assert.equal(typeof state.running, 'boolean');
    assert.ok(state.progress === null || state.progress.total >= state.progress.done);
    const last = await waitFor(async () => {
      const s = await client.getReindex(KB);
      return !s.running && s.last ? s.last : null;
    }, 'the sweep to finish');
    assert.equal(last.kb, KB);
  });

  test('activity: entries page back with iterActivity', async () => {
    const page = await client.listActivity({ kb: PAGED, limit: 3 });
    assert.equal(page.entries.length, 3);
    assert.ok(page.entries.every((e) => e.kb === PAGED && e.surface === 'rest'));
    const all = [];
    for await (const entry of client.iterActivity({ kb: PAGED, pageSize: 4 })) all.push(entry.id);
    assert.ok(all.length >= 24, `only ${all.length} entries`); // the KB and its 23 documents
    assert.deepEqual(all, [...all].sort((a, b) => b - a), 'entries are not newest first');
  });

  test('errors: the server’s answers become their classes', async () => {
    const missing = await client.getKb('nope').catch((e) => e);
    assert.ok(missing instanceof NotFoundError);
    assert.deepEqual([missing.status, missing.code, missing.details.kb], [404, 'not_found', 'nope']);
    assert.match(missing.message, /not found/);
    await assert.rejects(client.createKb(KB), AlreadyExistsError);
    await assert.rejects(client.createKb('other', { config: { chunking: { colour: 'blue' } } }), InvalidArgumentError);
    await assert.rejects(client.getDocument(KB, '01ARZ3NDEKTSV4RRFFQ69G5FAV'), NotFoundError);
    await assert.rejects(client.search(PAGED, 'x', { mode: 'vector' }), ModeUnavailableError);
    await assert.rejects(client.deleteDocumentsWhere(KB, {}), InvalidArgumentError);
  });

  test('tokens: a read token cannot write, a bad one is refused, a revoked one stops working', async () => {
    const created = await client.createToken('reader', { scope: 'read', kbs: [KB] });
    assert.match(created.secret, /^qry_/);
    const reader = new QuarryClient({ baseUrl: server.url, token: created.secret });
    assert.ok((await reader.search(KB, 'installer', { mode: 'keyword' })).hits.length > 0);
    const denied = await reader.addDocument(KB, 'x.md', '# x\n\nx\n').catch((e) => e);
    assert.ok(denied instanceof ForbiddenError, `got ${denied}`);
    assert.equal(denied.status, 403);
    await assert.rejects(reader.getKb('nope'), ForbiddenError); // out of its KBs, existing or not
    assert.deepEqual((await reader.listKbs()).kbs.map((k) => k.name), [KB]);

    const bad = new QuarryClient({ baseUrl: server.url, token: 'qry_wrong' });
    const unauthorized = await bad.listKbs().catch((e) => e);
    assert.ok(unauthorized instanceof UnauthorizedError);
    assert.equal(unauthorized.status, 401);

    const listed = await client.listTokens();
    assert.ok(listed.tokens.some((t) => t.id === created.token.id && t.scope === 'read'));
    assert.deepEqual(await client.revokeToken(created.token.id), { revoked: created.token.id });
    await assert.rejects(reader.listKbs(), UnauthorizedError);
  });

  test('QUARRY_URL and QUARRY_TOKEN are the defaults of baseUrl and token', async () => {
    const { token, secret } = await client.createToken('env', { scope: 'write' });
    const saved = { url: process.env.QUARRY_URL, token: process.env.QUARRY_TOKEN };
    process.env.QUARRY_URL = `${server.url}/`;
    process.env.QUARRY_TOKEN = secret;
    try {
      const fromEnv = new QuarryClient();
      assert.equal(fromEnv.baseUrl, server.url);
      const me = await fromEnv.getMe();
      assert.deepEqual([me.token_id, me.scope], [token.id, 'write']);
    } finally {
      for (const [k, v] of [['QUARRY_URL', saved.url], ['QUARRY_TOKEN', saved.token]]) {
        if (v === undefined) delete process.env[k]; else process.env[k] = v;
      }
    }
  });

  test('secrets: store, list by name, delete', async () => {
    assert.deepEqual(await client.putSecret('JS_CLIENT_KEY', 'sk-not-real'), { name: 'JS_CLIENT_KEY', stored: true });
    const { secrets } = await client.listSecrets();
    assert.ok(secrets.includes('JS_CLIENT_KEY'));
    assert.equal(JSON.stringify(secrets).includes('sk-not-real'), false);
    assert.deepEqual(await client.deleteSecret('JS_CLIENT_KEY'), { deleted: 'JS_CLIENT_KEY' });
    await assert.rejects(client.deleteSecret('JS_CLIENT_KEY'), NotFoundError);
  });

  test('pump: the use-case list, an event, and the error of an unknown use case', async () => {
    const list = await client.listPumpUseCases();
    assert.deepEqual(list.use_cases, []);
    assert.equal(typeof list.spend.used, 'number');
    assert.deepEqual(await client.postEvent('note.created'), { event: 'note.created', triggered: [] });
    const run = await client.runPumpUseCase('nope').catch((e) => e);
    assert.ok(run instanceof NotFoundError);
    assert.equal(run.details.use_case, 'nope');
    await assert.rejects(client.embedPumpText('nope', 'vectors in sync'), NotFoundError);
  });

  test('deleting: one document, documents by filter, the KB', async () => {
    const [doc] = (await client.listDocuments(KB, { filter: { topic: 'faq' } })).documents;
    assert.deepEqual(await client.deleteDocument(KB, doc.id), { deleted: doc.id });
    const many = await client.deleteDocumentsWhere(KB, { lang: 'de' });
    assert.equal(many.deleted.length, 1);
    assert.deepEqual(await client.deleteKb(PAGED), { deleted: PAGED });
    await assert.rejects(client.getKb(PAGED), NotFoundError);
  });
});
