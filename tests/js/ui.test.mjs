// The web UI end to end: Debian's Chromium, driven by playwright-core (pinned in
// package-lock.json; it downloads no browser), against a real `quarry serve` on 127.0.0.1.
// Each test asserts what the page shows. Screenshots of the main pages (1440 px, light and
// dark) land in $QUARRY_UI_SHOTS (default: the scratch dir), from where docs/ui/ is refreshed.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { quarry, scratch, startServe, sleep } from './lib/env.mjs';
import { makePdf, slowEmbedder, writeDocx } from './lib/fixtures.mjs';

const CHROMIUM = process.env.QUARRY_CHROMIUM || '/usr/bin/chromium';
if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run scripts/setup (it installs Debian's chromium)`);

const tmp = scratch('ui');
const shots = process.env.QUARRY_UI_SHOTS || path.join(tmp.dir, 'shots');
fs.mkdirSync(shots, { recursive: true });
const files = path.join(tmp.dir, 'files');
fs.mkdirSync(files, { recursive: true });

let browser;
let server;
let embedder;

// Every response the page receives, to check its headers.
const seen = [];
async function newPage(opts = {}) {
  const ctx = await browser.newContext({ viewport: { width: 1440, height: 900 }, ...opts });
  const page = await ctx.newPage();
  page.dialogs = [];
  page.errors = [];
  page.on('dialog', (d) => { page.dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('pageerror', (e) => page.errors.push(e.message));
  page.on('response', (r) => seen.push({ url: r.url(), status: r.status(), headers: r.headers() }));
  return page;
}

const text = (page, sel) => page.locator(sel).innerText();

before(async () => {
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  embedder = await slowEmbedder({ delayMs: 120, dims: 16 });
  server = await startServe(tmp.data);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await embedder?.close();
  tmp.cleanup();
});

describe('the web UI', () => {
  test('serves the page with a strict CSP, and --no-ui turns it off', async () => {
    const res = await fetch(`${server.url}/`);
    assert.equal(res.status, 200);
    const csp = res.headers.get('content-security-policy');
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(res.headers.get('referrer-policy'), 'no-referrer');
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
    const html = await res.text();
    assert.doesNotMatch(html, /<script>[^<]/, 'no inline script');
    assert.doesNotMatch(html, /https?:\/\/(?!127\.0\.0\.1)/, 'nothing fetched from elsewhere');
    const etag = res.headers.get('etag');
    assert.equal((await fetch(`${server.url}/`, { headers: { 'If-None-Match': etag } })).status, 304);
    assert.equal((await fetch(`${server.url}/ui/nope.js`)).status, 404);

    const off = scratch('ui-off');
    const s2 = await startServe(off.data, ['--no-ui']);
    try {
      const r = await fetch(`${s2.url}/`);
      assert.equal(r.status, 404);
      assert.match((await r.json()).error.message, /--no-ui/);
      assert.equal((await fetch(`${s2.url}/api/v1/health`)).status, 200);
    } finally {
      await s2.stop();
      off.cleanup();
    }
  });

  test('creates a KB through the form; a refused name shows the field error', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/`);
    await page.getByText('No knowledge bases yet.').waitFor();
    await page.screenshot({ path: path.join(shots, 'empty.png') });
    await page.getByRole('button', { name: 'New knowledge base' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Bad Name');
    await page.getByRole('button', { name: 'Create' }).click();
    const err = page.locator('.field[data-for="name"] .field-error');
    await err.filter({ hasText: 'invalid knowledge base name' }).waitFor();
    assert.equal(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'), 'true');

    await page.getByLabel('Name', { exact: true }).fill('handbook');
    await page.getByLabel('Description').fill('The team handbook');
    await page.getByLabel('Provider').selectOption('hash');
    await page.locator('#f-model').fill('64');
    await page.getByRole('button', { name: 'Create' }).click();
    await page.waitForURL(/#\/kb\/handbook$/);
    assert.equal(await text(page, 'h1'), 'handbook');
    await page.getByText('No documents yet: drop files above to add them.').waitFor();
    const kb = quarry(tmp.data, ['kb', 'describe', 'handbook']).json;
    assert.equal(kb.config.embedder.provider, 'hash:64');
    // Left at their defaults, the segmentation and weighting settings are what a new KB gets.
    assert.equal(kb.config.chunking.segmenter, 'icu');
    assert.equal(kb.config.keyword.segmenter, 'icu');
    assert.equal(kb.config.hybrid.weighting, 'adaptive');
    assert.equal(kb.description, 'The team handbook');
    assert.deepEqual(page.errors, []);
  });

  test('the settings form saves a change that needs no rebuild, and shows a refused value at its field', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/kb/handbook/settings`);
    await page.getByLabel('RRF k').fill('30');
    await page.getByLabel('Weighting').selectOption('fixed');
    await page.getByLabel('Subject keys').fill('team');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(/#\/kb\/handbook$/);
    const cfg = quarry(tmp.data, ['kb', 'describe', 'handbook']).json.config;
    assert.equal(cfg.hybrid.rrf_k, 30);
    assert.equal(cfg.hybrid.weighting, 'fixed');
    assert.deepEqual(cfg.subjects.keys, ['team']);
    await page.goto(`${server.url}/#/kb/handbook/settings`);
    await page.getByLabel('Subject keys').fill('');
    await page.getByLabel('Max tokens per chunk').fill('5');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('.field[data-for="chunking.max_tokens"] .field-error').filter({ hasText: 'between 16 and 8191' }).waitFor();
    assert.equal(quarry(tmp.data, ['kb', 'describe', 'handbook']).json.config.chunking.max_tokens, undefined);
    await page.getByLabel('Max tokens per chunk').fill('');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(/#\/kb\/handbook$/);
    assert.deepEqual(quarry(tmp.data, ['kb', 'describe', 'handbook']).json.config.subjects.keys, []);
  });

  test('uploads Markdown, PDF, DOCX and an unsupported file at once: three ingested, one error row', async () => {
    const md = path.join(files, 'guide.md');
    const sections = Array.from({ length: 40 }, (_, i) => `## Section ${i}\n\n${'Filler words about the handbook and its policies. '.repeat(12)}\n`);
    sections[33] = '## Vacation policy\n\nEvery employee gets thirty days of vacation; ask your manager for the quokka form.\n';
    fs.writeFileSync(md, `# Employee guide\n\n${sections.join('\n')}`);
    const pdf = path.join(files, 'expenses.pdf');
    fs.writeFileSync(pdf, makePdf(['Expense reports', 'Receipts must be filed within ninety days of purchase.'], 'Expense reports'));
    const docx = path.join(files, 'onboarding.docx');
    writeDocx(docx, [['Heading1', 'Onboarding'], [null, 'New hires receive a laptop and a welcome pangolin sticker.']]);
    const bad = path.join(files, 'archive.exe');
    fs.writeFileSync(bad, Buffer.from([0x4d, 0x5a, 0x90, 0x00, 0x03, 0x00, 0x00, 0x00, 0xff, 0xff]));

    const page = await newPage();
    await page.goto(`${server.url}/#/kb/handbook`);
    await page.locator('#dropzone').waitFor();
    await page.setInputFiles('#file-picker', [md, pdf, docx, bad]);
    await page.waitForFunction(() => document.querySelectorAll('.uploads li.ok, .uploads li.err').length === 4);
    const rows = await page.locator('.uploads li').evaluateAll((ls) => ls.map((l) => ({ file: l.dataset.file, cls: l.className, text: l.innerText })));
    const byFile = Object.fromEntries(rows.map((r) => [r.file, r]));
    for (const f of ['guide.md', 'expenses.pdf', 'onboarding.docx']) {
      assert.match(byFile[f].cls, /\bok\b/, `${f}: ${byFile[f].text}`);
      assert.match(byFile[f].text, /ingested/);
    }
    assert.match(byFile['archive.exe'].cls, /\berr\b/);
    assert.match(byFile['archive.exe'].text, /unsupported_format/);
    await page.locator('table.docs tbody tr').nth(2).waitFor();
    assert.equal(await page.locator('table.docs tbody tr').count(), 3);
    // Badges turn ready without a reload once the background indexer has embedded them.
    await page.waitForFunction(() => [...document.querySelectorAll('table.docs .status-cell')].every((c) => c.innerText.trim() === 'ready'), null, { timeout: 30_000 });
    await page.screenshot({ path: path.join(shots, 'documents.png') });
  });

  test('searches in every mode and shows a known hit with its highlight', async () => {
    const page = await newPage();
    for (const mode of ['keyword', 'vector', 'hybrid', 'auto']) {
      // The test KB embeds with `hash` (token hashing): a vector query needs the section's words.
      const q = mode === 'vector' ? 'employee vacation days manager quokka form' : 'quokka';
      await page.goto(`${server.url}/#/kb/handbook/search?q=${encodeURIComponent(q)}&mode=${mode}`);
      const hit = page.locator('#results .hit').filter({ hasText: 'Vacation policy' }).first();
      await hit.waitFor();
      if (mode !== 'vector') assert.equal(await hit.locator('mark').first().innerText(), 'quokka', mode);
      assert.match(await hit.innerText(), /Employee guide › Vacation policy/);
      assert.match(await text(page, '#results .summary'), /keyword\s*ready/);
    }
    // Hybrid shows the fused list and each mode's own list side by side.
    await page.goto(`${server.url}/#/kb/handbook/search?q=quokka&mode=hybrid`);
    await page.locator('#results .columns').waitFor();
    assert.deepEqual(await page.locator('#results .columns h3').allTextContents(), ['Fused', 'keyword', 'vector']);
    await page.screenshot({ path: path.join(shots, 'search-hybrid.png') });

    // grep, with its flags; typing searches (debounced) and Enter searches at once.
    await page.goto(`${server.url}/#/kb/handbook/search?mode=grep`);
    await page.getByLabel('Ignore case').check();
    await page.locator('#q').fill('PANGOLIN');
    await page.locator('#q').press('Enter');
    const g = page.locator('#results .hit.grep').first();
    await g.waitFor();
    assert.equal((await g.locator('mark').innerText()).toLowerCase(), 'pangolin');
    assert.match(page.url(), /q=PANGOLIN&mode=grep&i=1/);

    // The URL holds the search: a bookmark brings it back.
    await page.goto(`${server.url}/#/kb/handbook/search?q=ninety&mode=keyword&top_k=3`);
    await page.locator('#results .hit').first().waitFor();
    assert.equal(await page.locator('#q').inputValue(), 'ninety');
    assert.equal(await page.locator('#mode').inputValue(), 'keyword');
    assert.match(await text(page, '#results'), /Expense reports/);
  });

  test('a KB without an embedder shows vector and hybrid disabled with the reason', async () => {
    quarry(tmp.data, ['kb', 'create', 'plain']);
    const page = await newPage();
    await page.goto(`${server.url}/#/kb/plain/search`);
    const vector = page.locator('#mode option[value=vector]');
    await vector.waitFor({ state: 'attached' });
    assert.equal(await vector.isDisabled(), true);
    assert.match(await vector.innerText(), /needs an embedder/);
    assert.equal(await page.locator('#mode option[value=keyword]').isDisabled(), false);
  });

  test('opening a hit lands on its heading in the viewer', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/kb/handbook/search?q=quokka&mode=keyword`);
    await page.locator('#results .hit a.hit-title').first().click();
    await page.waitForURL(/\/doc\/.*chunk=/);
    const heading = page.locator('#doc-content h2', { hasText: 'Vacation policy' });
    await heading.waitFor();
    await sleep(300);
    const box = await heading.boundingBox();
    assert.ok(box && box.y >= 0 && box.y < 900, `heading in view (y=${box && box.y})`);
    assert.equal(await page.locator('#doc-content > h2.target').innerText(), 'Vacation policy');
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Vacation policy');
    // The outline lists the headings and moves focus to them; the toggle draws the boundaries
    // (one marker per chunk the API lists).
    assert.ok((await page.locator('.outline li').count()) >= 40);
    assert.equal(await page.locator('.chunk-mark').first().isVisible(), false);
    await page.getByLabel('Show chunk boundaries').check();
    assert.equal(await page.locator('.chunk-mark').first().isVisible(), true);
    await page.locator('#doc-content > h2.target').scrollIntoViewIfNeeded();
    await page.screenshot({ path: path.join(shots, 'viewer.png') });
    await page.locator('.outline a', { hasText: 'Section 2' }).first().click();
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Section 2');
    const docId = /\/doc\/([^?]+)/.exec(page.url())[1];
    const listed = await (await fetch(`${server.url}/api/v1/kbs/handbook/documents/${docId}/chunks`)).json();
    assert.equal(await page.locator('.chunk-mark').count(), listed.chunks.length);
  });

  test('editing a document re-indexes it and search finds the new word', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/kb/handbook/search?q=pangolin&mode=keyword`);
    await page.locator('#results .hit a.hit-title').first().click();
    await page.getByRole('button', { name: 'Edit' }).click();
    const area = page.locator('#edit-md');
    await area.fill(`${await area.inputValue()}\n\nThe okapi parking rule applies on Fridays.\n`);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('#doc-content').getByText('The okapi parking rule').waitFor();
    await page.goto(`${server.url}/#/kb/handbook/search?q=okapi&mode=keyword`);
    await page.locator('#results .hit').filter({ hasText: 'okapi' }).first().waitFor();
  });

  test('a hostile document is shown as text: no script runs, links are neutralised', async () => {
    const evil = path.join(files, 'evil.md');
    fs.writeFileSync(evil, [
      '# Payload test',
      '',
      'marmot <script>window.__pwned = "script"; alert(1)</script>',
      '',
      '<img src=x onerror="window.__pwned = \'img\'; alert(2)">',
      '',
      '[click me](javascript:window.__pwned=\'link\') and [tab](java\tscript:alert(3)) and [data](data:text/html,<script>alert(4)</script>)',
      '',
      '[<img src=x onerror=window.__pwned=\'mdlink\'>](https://example.org/) marmot',
      '',
      '<a href="javascript:alert(5)">raw anchor</a> <svg onload="window.__pwned=\'svg\'"></svg>',
      '',
      '[back](/\\evil.example/) [up](#payload-test)',
      '',
      '## Toasts',
      '',
      `# slow${' '.repeat(20000)}heading`,
      '',
      '['.repeat(40000),
      '',
    ].join('\n'));
    quarry(tmp.data, ['ingest', evil, '--kb', 'handbook']);
    const page = await newPage();
    await page.goto(`${server.url}/#/kb/handbook/search?q=marmot&mode=keyword`);
    await page.locator('#results .hit').first().waitFor();
    // Snippets are text with highlight ranges: the payload shows, nothing of it is markup.
    assert.match(await text(page, '#results'), /<script>window.__pwned/);
    assert.equal(await page.locator('#results script, #results img, #results svg').count(), 0);
    await page.locator('#results .hit a.hit-title').first().click();
    await page.locator('#doc-content h1', { hasText: 'Payload test' }).waitFor();
    // Click every link and neutralised span the document produced.
    for (const l of await page.locator('#doc-content a, #doc-content .md-neutralised').all()) await l.click({ modifiers: ['Alt'] }).catch(() => {});
    await sleep(300);
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.deepEqual(page.dialogs, []);
    assert.equal(await page.locator('#doc-content script, #doc-content img, #doc-content svg, #doc-content iframe').count(), 0);
    assert.equal(await page.locator('#doc-content a[href^="javascript" i], #doc-content a[href^="data" i]').count(), 0);
    assert.match(await text(page, '#doc-content'), /<script>window.__pwned/);
    assert.equal(await page.locator('#doc-content a[href*="evil.example"]').count(), 0);
    // A document's headings never take the page's ids (#toasts, #main, #q).
    assert.equal(await page.evaluate(() => document.getElementById('toasts').parentElement === document.body), true);
    // Every page and asset came with the policy.
    const ours = seen.filter((r) => r.url.startsWith(server.url) && r.status === 200);
    assert.ok(ours.length > 5);
    for (const r of ours) assert.ok(r.headers['content-security-policy'], `CSP on ${r.url}`);
  });

  test('the audit log shows the page\'s writes as surface ui', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/activity`);
    await page.locator('table tbody tr').first().waitFor();
    const surfaces = await page.locator('td .surface').allInnerTexts();
    assert.ok(surfaces.includes('ui'), surfaces.join(','));
    assert.ok(surfaces.includes('cli'), surfaces.join(','));
    const rows = await page.locator('table tbody tr').allInnerTexts();
    assert.ok(rows.some((r) => /ui\s+kb\.create\s+handbook/.test(r)), rows.slice(0, 5).join('\n'));
  });

  test('changing the embedder shows the blue-green build live until cut-over', async () => {
    const settings = { base_url: embedder.url, api: 'ollama', allow_private: true, dimensions: 16, batch_size: 2 };
    quarry(tmp.data, ['kb', 'create', 'live', '--config', JSON.stringify({ embedder: { provider: 'openai:fake-a', settings } })]);
    const docs = path.join(files, 'live');
    fs.mkdirSync(docs);
    for (let i = 0; i < 30; i++) fs.writeFileSync(path.join(docs, `n${i}.md`), `# Note ${i}\n\nSome words of note number ${i}.\n`);
    quarry(tmp.data, ['ingest', docs, '--kb', 'live', '--wait']);
    const before = quarry(tmp.data, ['kb', 'describe', 'live']).json.vectors.serving_revision;

    const page = await newPage();
    await page.goto(`${server.url}/#/kb/live/settings`);
    await page.locator('#f-model').fill('fake-b');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const dlg = page.locator('dialog');
    await dlg.waitFor();
    assert.match(await dlg.innerText(), /re-embeds 30 chunks/);
    await page.screenshot({ path: path.join(shots, 'rebuild-dialog.png') });
    await dlg.getByRole('button', { name: 'Save and rebuild' }).click();
    await page.waitForURL(/#\/kb\/live$/);
    // Watch the panel: a progress bar with done/total, then the new revision serving.
    const log = [];
    const deadline = Date.now() + 60_000;
    let after = before;
    while (Date.now() < deadline) {
      const t = await page.locator('#build').innerText().catch(() => '');
      log.push(t);
      const m = /Serving revision (\S+)/.exec(t);
      if (m && m[1] !== before && !/Building/.test(t)) { after = m[1]; break; }
      await sleep(100);
    }
    assert.ok(log.some((t) => /Building revision \S+: ?\s*\d+ \/ 30 \(\d+%\)/.test(t)), log.slice(0, 10).join('\n---\n'));
    assert.notEqual(after, before, log.slice(-3).join('\n---\n'));
    assert.equal(quarry(tmp.data, ['kb', 'describe', 'live']).json.vectors.serving_revision, after);
  });

  test('deleting a document and a KB asks first; deleting a KB asks for its name', async () => {
    const page = await newPage();
    await page.goto(`${server.url}/#/kb/handbook`);
    const row = page.locator('table.docs tbody tr', { hasText: 'expenses.pdf' });
    await row.waitFor();
    // Reconvert from a browser (a POST with Origin) goes through.
    await row.getByRole('button', { name: 'Reconvert expenses.pdf' }).click();
    await page.locator('.toast', { hasText: 'Reconverted 1 document' }).waitFor();
    const n = await page.locator('table.docs tbody tr').count();
    await row.getByRole('button', { name: 'Delete' }).click();
    await page.locator('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.waitForFunction((k) => document.querySelectorAll('table.docs tbody tr').length === k, n - 1);

    await page.getByRole('button', { name: 'Delete…' }).click();
    const dlg = page.locator('dialog');
    // Esc closes a dialog and changes nothing.
    await page.keyboard.press('Escape');
    await dlg.waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Delete…' }).click();
    const confirm = dlg.getByRole('button', { name: 'Delete' });
    assert.equal(await confirm.isDisabled(), true);
    await dlg.getByLabel(/to confirm/).fill('handboo');
    assert.equal(await confirm.isDisabled(), true);
    await dlg.getByLabel(/to confirm/).fill('handbook');
    await confirm.click();
    await page.waitForURL(/#\/$/);
    await page.locator('table.grid').waitFor();
    assert.equal(await page.locator('table.grid a', { hasText: /^handbook$/ }).count(), 0);
    const kbs = quarry(tmp.data, ['kb', 'list']).json;
    assert.ok(!JSON.stringify(kbs).includes('"handbook"'));
  });

  test('every control has a label and is reachable with the keyboard', async () => {
    const page = await newPage();
    for (const hash of ['#/new', '#/kb/live', '#/kb/live/search?q=note&mode=grep', '#/kb/live/settings', '#/activity']) {
      await page.goto(`${server.url}/${hash}`);
      await page.locator('main h1, main h2').first().waitFor();
      await sleep(300);
      const unlabelled = await page.evaluate(() => [...document.querySelectorAll('main input, main select, main textarea, main button')]
        .filter((c) => !(c.labels && c.labels.length) && !c.getAttribute('aria-label') && !c.getAttribute('aria-labelledby') && !(c.tagName === 'BUTTON' && c.innerText.trim()))
        .map((c) => c.outerHTML.slice(0, 80)));
      assert.deepEqual(unlabelled, [], hash);
    }
    // Tab from the top reaches the search box of a search page, and focus is drawn.
    await page.goto(`${server.url}/#/kb/live/search`);
    await page.locator('#q').waitFor();
    await page.evaluate(() => document.activeElement.blur());
    let reached = false;
    for (let i = 0; i < 40 && !reached; i++) {
      await page.keyboard.press('Tab');
      reached = await page.evaluate(() => document.activeElement && document.activeElement.id === 'q');
    }
    assert.ok(reached, 'Tab reaches the query box');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert.notEqual(outline, 'none');
  });

  test('is readable at 390 px and in dark mode', async () => {
    const phone = await newPage({ viewport: { width: 390, height: 844 } });
    for (const hash of ['#/', '#/kb/live', '#/kb/live/search?q=note&mode=keyword']) {
      await phone.goto(`${server.url}/${hash}`);
      await phone.locator('main h1').first().waitFor();
      await sleep(200);
      const overflow = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `${hash} scrolls sideways by ${overflow}px at 390 px`);
    }
    await phone.screenshot({ path: path.join(shots, 'search-390.png') });
    await phone.goto(`${server.url}/#/kb/live`);
    await phone.locator('table.docs tbody a').first().click();
    await phone.locator('#doc-content h1').waitFor();
    const sideways = await phone.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(sideways <= 1, `the viewer scrolls sideways by ${sideways}px at 390 px`);
    for (const scheme of ['light', 'dark']) {
      const p = await newPage({ colorScheme: scheme });
      await p.goto(`${server.url}/#/`);
      await p.locator('table.grid').waitFor();
      const bg = await p.evaluate(() => getComputedStyle(document.body).backgroundColor);
      if (scheme === 'dark') assert.notEqual(bg, 'rgb(255, 255, 255)');
      else assert.equal(bg, 'rgb(255, 255, 255)');
      await p.screenshot({ path: path.join(shots, `kbs-${scheme}.png`) });
      await p.goto(`${server.url}/#/kb/live/search?q=note&mode=hybrid`);
      await p.locator('#results .hit').first().waitFor();
      await p.screenshot({ path: path.join(shots, `search-${scheme}.png`) });
    }
  });
});

describe('sign-in on a --require-token server', () => {
  let s;
  const t = scratch('ui-auth');
  before(async () => {
    quarry(t.data, ['kb', 'create', 'secretkb', '--embedder', 'hash:32']);
    s = await startServe(t.data, ['--require-token']);
  });
  after(async () => { await s?.stop(); t.cleanup(); });

  test('a wrong token shows the server\'s message; the right one signs in', async () => {
    const admin = quarry(t.data, ['token', 'create', '--name', 'ui-admin', '--scope', 'admin']).json.secret;
    const page = await newPage();
    await page.goto(`${s.url}/#/kb/secretkb`);
    await page.getByLabel('Access token').waitFor();
    await page.screenshot({ path: path.join(shots, 'signin.png') });
    await page.getByLabel('Access token').fill('qry_wrongwrongwrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('#signin-error .notice').waitFor();
    assert.match(await text(page, '#signin-error'), /token/i);
    await page.getByLabel('Access token').fill(admin);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('h1', { hasText: 'secretkb' }).waitFor();
    assert.equal(await page.evaluate(() => sessionStorage.getItem('quarry.token')), admin);
    assert.equal(await page.evaluate(() => localStorage.length), 0);
    // A revoked token brings sign-in back with the server's message.
    const listed = quarry(t.data, ['token', 'list']).json;
    const id = listed.tokens.find((x) => x.name === 'ui-admin').id;
    quarry(t.data, ['token', 'revoke', id]);
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Access token').waitFor();
    assert.match(await text(page, '#signin-error'), /revoked|unknown|token/i);
  });

  test('an admin token limited to one KB reads that KB\'s activity', async () => {
    const limited = quarry(t.data, ['token', 'create', '--name', 'ui-kb-admin', '--scope', 'admin', '--kb', 'secretkb']).json.secret;
    const page = await newPage();
    await page.goto(`${s.url}/#/activity`);
    await page.getByLabel('Access token').fill(limited);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByLabel('Knowledge base').waitFor();
    assert.equal(await page.getByLabel('Knowledge base').inputValue(), 'secretkb');
    await page.locator('table tbody tr').first().waitFor();
    assert.equal(await page.locator('.notice.error').count(), 0);
    assert.match(await text(page, 'table tbody'), /kb\.create/);
  });

  test('a read token sees write and admin controls disabled, with the reason', async () => {
    const read = quarry(t.data, ['token', 'create', '--name', 'ui-read', '--scope', 'read']).json.secret;
    const page = await newPage();
    await page.goto(`${s.url}/#/`);
    await page.getByLabel('Access token').fill(read);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const create = page.getByRole('button', { name: 'New knowledge base' });
    await create.waitFor();
    assert.equal(await create.isDisabled(), true);
    assert.match(await create.getAttribute('title'), /admin scope/);
    await page.goto(`${s.url}/#/kb/secretkb`);
    await page.locator('#dropzone').waitFor();
    assert.equal(await page.locator('#file-picker').isDisabled(), true);
    assert.match(await text(page, '#dropzone'), /needs a token with write scope/);
    assert.equal(await page.getByRole('button', { name: 'Delete…' }).isDisabled(), true);
    await page.goto(`${s.url}/#/activity`);
    await page.getByText(/needs a token with admin scope/).waitFor();
    await page.screenshot({ path: path.join(shots, 'read-token.png') });
  });
});
