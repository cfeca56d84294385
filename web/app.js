// Quarry's web page (docs/ui.md): knowledge bases, documents, a viewer and search, over the
// public REST API only (api.js). Views are plain functions that build DOM nodes; the URL hash
// holds where you are (#/kb/NAME/search?q=...&mode=...), so any view can be bookmarked.
import { api, upload, ApiError, token, setToken, kbPath } from './api.js';
import { render } from './markdown.js';

const main = document.getElementById('main');
const state = { me: null, plugins: undefined };

// ---------------------------------------------------------------------------------------------
// DOM helpers

function el(tag, attrs = {}, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') e.className = v;
    else if (k === 'text') e.textContent = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(e.dataset, v);
    else if (v === true) e.setAttribute(k, '');
    else e.setAttribute(k, v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined && kid !== false) e.append(kid);
  return e;
}

const fmtBytes = (n) => {
  if (n === undefined || n === null) return '';
  if (n < 1024) return `${n} B`;
  const u = ['KB', 'MB', 'GB', 'TB'];
  let i = -1;
  do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
  return `${n.toFixed(n < 10 ? 1 : 0)} ${u[i]}`;
};
const fmtTime = (iso) => (iso ? new Date(iso).toLocaleString() : '');
const fmtNum = (n) => (typeof n === 'number' ? n.toLocaleString() : '');
const enc = encodeURIComponent;

function toast(text, kind = 'ok') {
  const t = el('div', { class: `toast ${kind}`, text });
  document.getElementById('toasts').append(t);
  setTimeout(() => t.remove(), kind === 'error' ? 8000 : 4000);
}

// "code: message" for any error: an ApiError's stable code, else `internal`.
const errCode = (e) => (e instanceof ApiError ? e.code : 'internal');
const errText = (e) => `${errCode(e)}: ${(e && e.message) || String(e)}`;

function errorBox(e) {
  return el('div', { class: 'notice error', role: 'alert' },
    el('strong', { text: errCode(e) }), ' ', (e && e.message) || String(e));
}

// A status badge: ready / pending / stale / failed (SPEC §1's statuses, as a reader says them).
function badge(status, title) {
  const word = { ready: 'ready', building: 'pending', not_built: 'pending', stale: 'stale', failed: 'failed' }[status] || status;
  return el('span', { class: `badge b-${word}`, title: title || status, text: word });
}

// Why a control is disabled, said on it rather than after a click.
function needs(scope) {
  const can = state.me && state.me.can;
  if (!can || can[scope]) return null;
  return `needs a token with ${scope} scope (you have ${state.me.scope})`;
}
function guarded(node, scope) {
  const why = needs(scope);
  if (why) { node.disabled = true; node.title = why; node.classList.add('denied'); }
  return node;
}

// A modal dialog (Esc closes it, focus stays inside). Resolves to true when confirmed.
function dialog({ title, body, confirm = 'OK', danger = false, requireText }) {
  return new Promise((resolve) => {
    const input = requireText ? el('input', { id: 'dlg-confirm', autocomplete: 'off', spellcheck: 'false' }) : null;
    const ok = el('button', { class: danger ? 'danger' : 'primary', type: 'submit', text: confirm, disabled: !!requireText });
    const d = el('dialog', { 'aria-labelledby': 'dlg-title' },
      el('form', { method: 'dialog' },
        el('h2', { id: 'dlg-title', text: title }),
        typeof body === 'string' ? el('p', { text: body }) : body,
        input && el('label', { for: 'dlg-confirm' }, 'Type ', el('code', { text: requireText }), ' to confirm'),
        input,
        el('div', { class: 'actions' },
          el('button', { type: 'button', text: 'Cancel', onclick: () => d.close('cancel') }), ok)));
    if (input) input.addEventListener('input', () => { ok.disabled = input.value !== requireText; });
    d.addEventListener('close', () => { d.remove(); resolve(d.returnValue === 'ok'); });
    ok.value = 'ok';
    document.body.append(d);
    d.showModal();
    (input || ok).focus();
  });
}

// ---------------------------------------------------------------------------------------------
// Routing: #/path?query. Each view gets a fresh context whose cleanups (timers, aborts) run when
// the route changes.

let view = { alive: false, cleanups: [] };
function newView() {
  view.alive = false;
  for (const c of view.cleanups) c();
  view = { alive: true, cleanups: [] };
  return view;
}

function parseHash() {
  const h = location.hash.replace(/^#/, '') || '/';
  const at = h.indexOf('?');
  const p = at < 0 ? h : h.slice(0, at);
  const decode = (x) => { try { return decodeURIComponent(x); } catch { return x; } };
  return { parts: p.split('/').filter(Boolean).map(decode), query: new URLSearchParams(at < 0 ? '' : h.slice(at + 1)) };
}
const go = (hash) => { location.hash = hash; };

function setNav(which) {
  for (const a of document.querySelectorAll('[data-nav]')) {
    if (a.dataset.nav === which) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const act = document.querySelector('[data-nav=activity]');
  if (act) {
    const why = needs('admin');
    act.classList.toggle('denied', !!why);
    if (why) act.setAttribute('aria-disabled', 'true'); else act.removeAttribute('aria-disabled');
    act.title = why || 'The audit log: every write, newest first';
  }
}

// After a view is drawn: its title in the tab, and focus on its heading (not lost on <body>).
function settle(v, first) {
  if (!v.alive) return;
  const h1 = main.querySelector('h1');
  document.title = h1 ? `${h1.textContent} · Quarry` : 'Quarry';
  if (first || !h1 || main.contains(document.activeElement)) return;
  h1.tabIndex = -1;
  h1.focus({ preventScroll: true });
}

let routed = false;
async function route() {
  // Only #/... is a route; another hash (an anchor) is left to the browser once a view shows.
  if (routed && location.hash && !location.hash.startsWith('#/')) return;
  const v = newView();
  const first = !routed;
  routed = true;
  const { parts, query } = parseHash();
  main.replaceChildren();
  try {
    await draw(v, parts, query);
  } finally {
    settle(v, first);
  }
}

async function draw(v, parts, query) {
  if (!state.me && parts[0] !== 'signin') return showSignin();
  try {
    if (parts[0] === 'signin') return showSignin();
    if (parts.length === 0) { setNav('kbs'); return await viewKbs(v); }
    if (parts[0] === 'new') { setNav('kbs'); return await viewKbForm(v, null); }
    if (parts[0] === 'activity') { setNav('activity'); return await viewActivity(v, query); }
    if (parts[0] === 'kb' && parts[1]) {
      setNav('kbs');
      const kb = parts[1];
      if (parts[2] === 'doc' && parts[3]) return await viewDocument(v, kb, parts[3], query);
      return await viewKb(v, kb, parts[2] || 'documents', query);
    }
    main.append(el('h1', { text: 'Not found' }), el('p', {}, 'No page here. ', el('a', { href: '#/', text: 'Go to the knowledge bases' })));
  } catch (e) {
    if (!v.alive) return;
    if (e instanceof ApiError && e.status === 401) return;  // sign-in is already showing
    main.append(errorBox(e));
  }
}

// ---------------------------------------------------------------------------------------------
// Identity and sign-in

function renderWho() {
  const who = document.getElementById('who');
  who.replaceChildren();
  if (!state.me) return;
  const me = state.me;
  who.append(el('span', { class: 'muted', text: me.anonymous ? 'local admin (no token)' : `${me.actor} · ${me.scope}` }));
  if (me.kbs && me.kbs.length) who.append(el('span', { class: 'muted', text: ` · ${me.kbs.join(', ')}` }));
  if (token()) who.append(el('button', { class: 'link', type: 'button', text: 'Sign out', onclick: () => { setToken(''); state.me = null; renderWho(); go('#/signin'); } }));
}

async function loadMe() {
  try {
    state.me = await api('GET', '/me');
    return null;
  } catch (e) {
    state.me = null;
    return e;
  }
}

let signinMessage = '';
let afterSignin = '#/';
function showSignin(message) {
  newView();
  setNav('');
  if (message !== undefined) signinMessage = message;
  const input = el('input', { id: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, placeholder: 'qry_…', 'aria-describedby': 'token-help' });
  const err = el('div', { id: 'signin-error', role: 'alert' });
  if (signinMessage) err.append(el('div', { class: 'notice error', text: signinMessage }));
  const form = el('form', { class: 'card narrow', onsubmit: async (ev) => {
    ev.preventDefault();
    const t = input.value.trim();
    if (!/^[\x21-\x7e]+$/.test(t)) {
      err.replaceChildren(el('div', { class: 'notice error', text: 'A token is one word of printable ASCII, like qry_… as `quarry token create` printed it.' }));
      input.select();
      return;
    }
    setToken(t);
    const e = await loadMe();
    if (e) {
      setToken('');
      err.replaceChildren(el('div', { class: 'notice error', text: e.message }));
      input.select();
      return;
    }
    signinMessage = '';
    renderWho();
    const to = afterSignin.startsWith('#/signin') ? '#/' : afterSignin;
    if (location.hash === to) route(); else go(to);
  } },
  el('h1', { text: 'Sign in' }),
  el('p', { id: 'token-help', class: 'muted' }, 'This server needs an access token. Create one with ', el('code', { text: 'quarry token create --name NAME --scope read|write|admin' }), '. It is kept for this tab only.'),
  el('label', { for: 'token', text: 'Access token' }), input, err,
  el('div', { class: 'actions' }, el('button', { class: 'primary', type: 'submit', text: 'Sign in' })));
  main.replaceChildren(form);
  input.focus();
}

window.addEventListener('quarry:unauthorized', (ev) => {
  state.me = null;
  renderWho();
  if (!location.hash.startsWith('#/signin')) afterSignin = location.hash || '#/';
  showSignin(ev.detail);
  if (!location.hash.startsWith('#/signin')) history.replaceState(null, '', '#/signin');
});

// ---------------------------------------------------------------------------------------------
// Knowledge bases

function kbRow(k) {
  const emb = k.config.embedder && k.config.embedder.provider;
  return el('tr', {},
    el('td', {}, el('a', { href: `#/kb/${enc(k.name)}`, text: k.name })),
    el('td', { class: 'desc', text: k.description || '' }),
    el('td', { class: 'num', text: fmtNum(k.documents) }),
    el('td', { class: 'num', text: fmtNum(k.chunks) }),
    el('td', {}, badge(k.index_status.keyword)),
    el('td', {}, emb ? badge(k.index_status.vector, k.vectors && k.vectors.unavailable ? k.vectors.unavailable.message : undefined) : el('span', { class: 'muted', text: 'none' })),
    el('td', { text: emb || '—' }),
    el('td', { text: (k.config.store && k.config.store.id) || '' }));
}

async function viewKbs(v) {
  const { kbs } = await api('GET', '/kbs');
  if (!v.alive) return;
  const create = guarded(el('button', { class: 'primary', type: 'button', text: 'New knowledge base', onclick: () => go('#/new') }), 'admin');
  main.append(el('div', { class: 'head' }, el('h1', { text: 'Knowledge bases' }), create));
  if (!kbs.length) {
    main.append(el('div', { class: 'empty' },
      el('p', { text: 'No knowledge bases yet.' }),
      needs('admin') ? el('p', { class: 'muted', text: 'Ask an admin to create one; your token may read and search.' })
        : el('p', {}, 'Create one, then drop files on it to make them searchable. ', el('a', { href: '#/new', text: 'Create a knowledge base' }))));
    return;
  }
  main.append(el('div', { class: 'table-wrap' }, el('table', { class: 'grid' },
    el('thead', {}, el('tr', {}, ...['Name', 'Description', 'Documents', 'Chunks', 'Keyword', 'Vectors', 'Embedder', 'Store'].map((t) => el('th', { scope: 'col', text: t })))),
    el('tbody', {}, kbs.map(kbRow)))));
}

// The plugins this build offers (GET /plugins), or null when the server predates the route.
async function plugins() {
  if (state.plugins !== undefined) return state.plugins;
  try { state.plugins = await api('GET', '/plugins'); } catch { state.plugins = null; }
  return state.plugins;
}

const MODES = ['grep', 'keyword', 'vector', 'hybrid', 'auto'];

// One labelled input whose server-side name is `field` (details.field of an error lands here).
function field(label, input, help) {
  const id = `f-${input.dataset.field.replace(/[^a-z0-9]/gi, '-')}`;
  input.id = id;
  const helpEl = help ? el('div', { class: 'help', id: `${id}-help`, text: help }) : null;
  if (helpEl) input.setAttribute('aria-describedby', `${id}-help ${id}-err`);
  else input.setAttribute('aria-describedby', `${id}-err`);
  return el('div', { class: 'field', dataset: { for: input.dataset.field } },
    el('label', { for: id, text: label }), input, helpEl, el('div', { class: 'field-error', id: `${id}-err`, role: 'alert' }));
}
const num = (name, value, attrs = {}) => el('input', { type: 'number', inputmode: 'numeric', dataset: { field: name }, value: value ?? '', ...attrs });
const text = (name, value, attrs = {}) => el('input', { type: 'text', dataset: { field: name }, value: value ?? '', ...attrs });
function select(name, options, value) {
  const s = el('select', { dataset: { field: name } });
  for (const o of options) {
    const [v, label] = Array.isArray(o) ? o : [o, o];
    s.append(el('option', { value: v, text: label, selected: v === value }));
  }
  return s;
}

function settingsInputs(prefix, schema, current) {
  if (!schema || !Array.isArray(schema.settings)) return [];
  return schema.settings.map((s) => {
    const name = `${prefix}.settings.${s.name}`;
    const cur = current && current[s.name] !== undefined ? current[s.name] : '';
    let input;
    if (Array.isArray(s.enum) && s.enum.length) input = select(name, [['', `default${s.default !== undefined && s.default !== null ? ` (${s.default})` : ''}`], ...s.enum], cur === '' ? '' : String(cur));
    else if (s.type === 'boolean') input = select(name, [['', `default${s.default !== undefined ? ` (${s.default})` : ''}`], ['true', 'true'], ['false', 'false']], cur === '' ? '' : String(cur));
    else if (s.type === 'integer' || s.type === 'number') input = num(name, cur, { placeholder: s.default !== undefined && s.default !== null ? String(s.default) : '' });
    else input = text(name, cur, { placeholder: s.default !== undefined && s.default !== null ? String(s.default) : '' });
    input.dataset.type = s.type;
    const f = field(`${s.name}${s.required ? ' (required)' : ''}`, input, s.description);
    if (s.type === 'secret-name') f.append(secretButton(input));
    return f;
  });
}

// Next to a setting that names a secret: store the secret's value (PUT /secrets/{name}; needs
// an admin token not limited to KBs). The value is never shown again.
function secretButton(nameInput) {
  const b = el('button', { type: 'button', class: 'link', text: 'Store this secret…', onclick: async () => {
    const secretName = nameInput.value || nameInput.placeholder;
    const value = el('input', { id: 'secret-value', type: 'password', autocomplete: 'off' });
    const body = el('div', {}, el('p', { class: 'muted', text: `The value is stored encrypted in the server's secret store under ${secretName}; it is never shown again.` }),
      el('label', { for: 'secret-value', text: 'Value' }), value);
    if (!secretName) { toast('Enter the secret\'s name first', 'error'); return; }
    const ok = await dialog({ title: `Store secret ${secretName}`, body, confirm: 'Store' });
    if (!ok) return;
    try {
      await api('PUT', `/secrets/${encodeURIComponent(secretName)}`, { body: { value: value.value } });
      toast(`Stored secret ${secretName}`);
    } catch (e) { toast(errText(e), 'error'); }
  } });
  const me = state.me;
  if (!me || !me.can.admin || (me.kbs && me.kbs.length)) {
    b.disabled = true;
    b.title = 'needs an admin token not limited to knowledge bases';
    b.classList.add('denied');
  }
  return b;
}

function showFieldError(form, e) {
  for (const x of form.querySelectorAll('.field-error')) x.textContent = '';
  for (const x of form.querySelectorAll('[aria-invalid]')) x.removeAttribute('aria-invalid');
  const f = e.details && e.details.field;
  // A provider or store names its own settings "settings.KEY": find it under either.
  const names = !f ? [] : f.startsWith('settings.') ? [`embedder.${f}`, `store.${f}`] : [f];
  const box = names.map((n) => form.querySelector(`.field[data-for="${CSS.escape(n)}"]`)).find(Boolean);
  if (box) {
    box.querySelector('.field-error').textContent = e.message;
    const input = box.querySelector('input,select,textarea');
    input.setAttribute('aria-invalid', 'true');
    input.focus();
    return true;
  }
  return false;
}

async function viewKbForm(v, kb, into = main) {
  const editing = !!kb;
  const cfg = editing ? kb.config : {};
  const pl = await plugins();
  if (!v.alive) return;
  const ch = cfg.chunking || {};
  const lim = cfg.limits || {};
  const hy = cfg.hybrid || {};
  const emb = cfg.embedder || { provider: '', settings: {} };
  const store = cfg.store || { id: 'embedded', settings: {} };
  const modesNow = cfg.modes || ['grep', 'keyword'];

  const name = text('name', editing ? kb.name : '', { required: true, pattern: '[a-z0-9][a-z0-9_-]{0,62}', autocomplete: 'off', spellcheck: 'false', disabled: editing });
  const desc = text('description', cfg.description || '');
  const modes = el('fieldset', { class: 'field checks', dataset: { for: 'modes' } }, el('legend', { text: 'Search modes offered' }),
    MODES.map((m) => el('label', {}, el('input', { type: 'checkbox', name: 'mode', value: m, checked: modesNow.includes(m) }), ` ${m}`)),
    el('div', { class: 'help', text: 'vector, hybrid and auto need an embedder.' }),
    el('div', { class: 'field-error', role: 'alert' }));
  const profile = select('chunking.profile', ['prose', 'code', 'none'], ch.profile || 'prose');
  const maxTok = num('chunking.max_tokens', ch.max_tokens, { min: 16, max: 8191, placeholder: String(ch.effective_max_tokens || 'default') });
  const overlap = num('chunking.overlap_tokens', ch.overlap_tokens, { min: 0, placeholder: String(ch.effective_overlap_tokens ?? 'default') });
  const chunkSeg = select('chunking.segmenter', [['icu', 'icu: between dictionary words'], ['none', 'none: between any characters']], ch.segmenter || 'icu');
  const kwCfg = cfg.keyword || {};
  const kwSeg = select('keyword.segmenter', [['icu', 'icu: dictionary words'], ['bigram', 'bigram: overlapping character pairs']], kwCfg.segmenter || 'icu');
  const kwDia = select('keyword.diacritics', [['fold', 'fold: café matches cafe'], ['keep', 'keep: accents count']], kwCfg.diacritics || 'fold');

  // Embedder: provider id and model ("static:glove-100d" is provider static, model glove-100d).
  const [pid, ...rest] = (emb.provider || '').split(':');
  const providers = pl ? pl.providers.map((p) => p.id) : ['static', 'bert', 'hash', 'openai'];
  const provider = select('embedder.provider', [['', 'none (keyword and grep only)'], ...providers], pid || '');
  const model = text('embedder.model', rest.join(':'), { placeholder: 'model, e.g. glove-100d', list: 'model-list' });
  const models = el('datalist', { id: 'model-list' });
  const provSettings = el('div', { class: 'sub' });
  const provHelp = el('div', { class: 'help' });
  const storeIds = pl ? pl.stores.map((s) => s.id) : ['embedded', 'memory', 'pgvector', 'chroma', 'qdrant'];
  const storeSel = select('store.id', storeIds, store.id || 'embedded');
  const storeSettings = el('div', { class: 'sub' });
  const drawSchemas = () => {
    const p = pl && pl.providers.find((x) => x.id === provider.value);
    provSettings.replaceChildren(...settingsInputs('embedder', p, provider.value === pid ? emb.settings : {}));
    models.replaceChildren(...((p && p.models) || []).map((m) => el('option', { value: m.name, text: `${m.name}${m.dimensions ? ` (${m.dimensions} dimensions)` : ''}` })));
    model.placeholder = p && p.models && p.models.length ? `model, e.g. ${p.models[0].name}` : 'model (see the provider\'s description)';
    provHelp.textContent = p && p.description ? p.description : '';
    const s = pl && pl.stores.find((x) => x.id === storeSel.value);
    storeSettings.replaceChildren(...settingsInputs('store', s, storeSel.value === store.id ? store.settings : {}));
    model.disabled = !provider.value;
  };
  provider.addEventListener('change', drawSchemas);
  storeSel.addEventListener('change', drawSchemas);
  drawSchemas();

  const fusion = select('hybrid.fusion', ['interpolation', 'rrf'], hy.fusion || 'interpolation');
  const weighting = select('hybrid.weighting', [['adaptive', 'adaptive: per query'], ['fixed', 'fixed: the ratio for every query']], hy.weighting || 'adaptive');
  const ratio = num('hybrid.semantic_ratio', hy.semantic_ratio, { min: 0, max: 1, step: 'any' });
  const rrfK = num('hybrid.rrf_k', hy.rrf_k, { min: 1, max: 10000 });
  const kwW = num('hybrid.keyword_weight', hy.keyword_weight, { min: 0, max: 100, step: 'any' });
  const vecW = num('hybrid.vector_weight', hy.vector_weight, { min: 0, max: 100, step: 'any' });
  const subj = cfg.subjects || { keys: [] };
  const subjects = text('subjects.keys', (subj.keys || []).join(', '), { placeholder: 'e.g. customer_id', spellcheck: 'false' });
  const embMode = select('store.embedding_mode', [['', 'default (auto)'], 'auto', 'platform', 'plugin'], store.embedding_mode || '');
  const revision = num('revision', cfg.revision, { min: 0 });
  const maxUp = num('limits.max_upload_bytes', lim.max_upload_bytes, { min: 1 });
  const maxChDoc = num('limits.max_chunks_per_document', lim.max_chunks_per_document, { min: 1 });
  const maxChCall = num('limits.max_chunks_per_call', lim.max_chunks_per_call, { min: 1 });
  const status = el('div', { role: 'status', class: 'form-status' });
  const save = el('button', { class: 'primary', type: 'submit', text: editing ? 'Save changes' : 'Create' });
  guarded(save, 'admin');

  // Dotted settings as `quarry kb set` takes them, for what the form changed. A blank field is
  // null: it resets a setting that has a default to fall back on (`reset`), and leaves any
  // other unchanged.
  const collect = () => {
    const out = {};
    const put = (key, value, before, reset = false) => {
      if (value === null && !reset) return;
      if (JSON.stringify(value) !== JSON.stringify(before ?? null)) out[key] = value;
    };
    const n = (i) => {
      if (i.validity && i.validity.badInput)
        throw new ApiError(400, 'invalid_argument', `${i.dataset.field}: enter a number`, { field: i.dataset.field });
      return i.value === '' ? null : Number(i.value);
    };
    const typed = (i) => (i.value === '' ? null : i.dataset.type === 'integer' || i.dataset.type === 'number' ? n(i) : i.dataset.type === 'boolean' ? i.value === 'true' : i.value);
    put('description', desc.value, cfg.description || '');
    const ms = [...modes.querySelectorAll('input:checked')].map((x) => x.value);
    put('modes', ms, modesNow);
    put('chunking.profile', profile.value, ch.profile || 'prose');
    put('chunking.max_tokens', n(maxTok), ch.max_tokens, true);
    put('chunking.overlap_tokens', n(overlap), ch.overlap_tokens, true);
    put('chunking.segmenter', chunkSeg.value, ch.segmenter || 'icu');
    put('keyword.segmenter', kwSeg.value, kwCfg.segmenter || 'icu');
    put('keyword.diacritics', kwDia.value, kwCfg.diacritics || 'fold');
    const prov = provider.value ? (model.value ? `${provider.value}:${model.value}` : provider.value) : '';
    put('embedder.provider', prov, emb.provider || '');
    for (const i of provSettings.querySelectorAll('[data-field]')) {
      const k = i.dataset.field.split('.').pop();
      put(i.dataset.field, typed(i), provider.value === pid && emb.settings ? emb.settings[k] : null, true);
    }
    put('store.id', storeSel.value, store.id || 'embedded');
    for (const i of storeSettings.querySelectorAll('[data-field]')) {
      const k = i.dataset.field.split('.').pop();
      put(i.dataset.field, typed(i), storeSel.value === store.id && store.settings ? store.settings[k] : null, true);
    }
    put('hybrid.fusion', fusion.value, hy.fusion || 'interpolation');
    put('hybrid.semantic_ratio', n(ratio), hy.semantic_ratio ?? null);
    put('hybrid.weighting', weighting.value, hy.weighting || 'adaptive');
    put('hybrid.rrf_k', n(rrfK), hy.rrf_k ?? null);
    put('hybrid.keyword_weight', n(kwW), hy.keyword_weight ?? null);
    put('hybrid.vector_weight', n(vecW), hy.vector_weight ?? null);
    put('subjects.keys', subjects.value.split(',').map((x) => x.trim()).filter(Boolean), subj.keys || []);
    put('store.embedding_mode', embMode.value || null, store.embedding_mode, true);
    put('revision', n(revision), cfg.revision ?? null);
    put('limits.max_upload_bytes', n(maxUp), lim.max_upload_bytes ?? null);
    put('limits.max_chunks_per_document', n(maxChDoc), lim.max_chunks_per_document ?? null);
    put('limits.max_chunks_per_call', n(maxChCall), lim.max_chunks_per_call ?? null);
    return out;
  };
  // A create sends a config object built from the same dotted keys.
  const toConfig = (dotted) => {
    const cfgOut = {};
    for (const [k, val] of Object.entries(dotted)) {
      if (val === null) continue;
      const path = k.split('.');
      let o = cfgOut;
      for (const p of path.slice(0, -1)) o = o[p] ??= {};
      o[path[path.length - 1]] = val;
    }
    if (cfgOut.embedder && !cfgOut.embedder.provider) delete cfgOut.embedder.provider;
    return cfgOut;
  };

  const form = el('form', { class: 'card', novalidate: true, onsubmit: async (ev) => {
    ev.preventDefault();
    status.replaceChildren();
    try {
      const changes = collect();
      if (!editing) {
        save.disabled = true;
        const made = await api('POST', '/kbs', { body: { name: name.value.trim(), config: toConfig(changes) } });
        toast(`Created ${made.name}`);
        go(`#/kb/${enc(made.name)}`);
        return;
      }
      if (!Object.keys(changes).length) { status.append(el('p', { class: 'muted', text: 'Nothing changed.' })); return; }
      const wire = {};
      // Each value as JSON text, which `kb set` reads as JSON ("null" resets, "\"42\"" stays text).
      for (const [k, val] of Object.entries(changes)) wire[k] = JSON.stringify(val);
      save.disabled = true;
      const plan = await api('PATCH', kbPath(kb.name), { query: { dry_run: 'true' }, body: { settings: wire } });
      const what = planSummary(plan);
      if (what.rebuild) {
        const ok = await dialog({ title: 'This change rebuilds the index', body: what.text, confirm: 'Save and rebuild' });
        if (!ok) { save.disabled = false; return; }
      }
      await api('PATCH', kbPath(kb.name), { body: { settings: wire } });
      toast(what.rebuild ? 'Saved; the new index builds while the old one answers' : 'Saved');
      go(`#/kb/${enc(kb.name)}`);
    } catch (e) {
      save.disabled = false;
      if (!(e instanceof ApiError) || !showFieldError(form, e)) status.replaceChildren(errorBox(e));
    }
  } },
  el('h2', { text: editing ? 'Settings' : 'New knowledge base' }),
  !editing && field('Name', name, 'Lower-case letters, digits, "-" and "_"; it names the KB in URLs and commands.'),
  field('Description', desc),
  modes,
  el('fieldset', {}, el('legend', { text: 'Chunking' }),
    field('Profile', profile, 'prose: split at headings and paragraphs; code: at definitions; none: one chunk per document.'),
    field('Max tokens per chunk', maxTok, 'Blank: the default (or the model\'s limit).'),
    field('Overlap tokens', overlap),
    field('Word segmentation', chunkSeg, 'Where a long section of Chinese, Japanese, Thai… text may be cut. Changing it cuts the documents again.')),
  el('fieldset', {}, el('legend', { text: 'Keyword index' }),
    field('Keyword segmenter', kwSeg, 'How text written without spaces becomes words. Changing either setting rebuilds the keyword index.'),
    field('Diacritics', kwDia)),
  el('fieldset', {}, el('legend', { text: 'Embedder' }),
    field('Provider', provider, 'Changing it re-embeds every chunk; the old vectors answer until the new ones are complete.'),
    provHelp,
    el('div', { class: 'field', dataset: { for: 'embedder.model' } }, el('label', { for: 'f-model', text: 'Model' }), Object.assign(model, { id: 'f-model' }), models, el('div', { class: 'field-error', role: 'alert' })),
    provSettings),
  el('fieldset', {}, el('legend', { text: 'Vector store' }), field('Store', storeSel), storeSettings,
    field('Who embeds', embMode, 'platform: Quarry embeds; plugin: the store embeds; auto: the store if it can.')),
  el('fieldset', {}, el('legend', { text: 'Hybrid search' }),
    field('Fusion', fusion), field('Semantic ratio (0–1)', ratio, 'The vector list\'s weight in interpolation fusion (adaptive: at most this).'),
    field('Weighting', weighting, 'adaptive: each query\'s vector weight follows how much the two lists agree and how much of the query the model knows.'),
    field('RRF k', rrfK, 'Rank constant of reciprocal rank fusion.'), field('Keyword weight', kwW), field('Vector weight', vecW)),
  el('fieldset', {}, el('legend', { text: 'Subjects' }),
    field('Subject keys', subjects, 'Metadata keys naming what a document is about (comma-separated); each document then has exactly one. Set them before adding documents.')),
  editing && el('fieldset', {}, el('legend', { text: 'Revision' }),
    field('Revision counter', revision, 'Raise it to re-embed every chunk with the same settings (blue-green).')),
  el('fieldset', {}, el('legend', { text: 'Limits' }),
    field('Largest upload (bytes)', maxUp), field('Chunks per document', maxChDoc), field('Chunks per call', maxChCall)),
  status,
  el('div', { class: 'actions' },
    el('a', { class: 'button', href: editing ? `#/kb/${enc(kb.name)}` : '#/', text: 'Cancel' }), save));
  into.append(form);
  if (!editing) name.focus();
}

// What a dry run (PATCH ?dry_run=true) says, in words: {rebuild, text}.
function planSummary(p) {
  const parts = [];
  if (p.re_embed) {
    const how = {
      blue_green: ' into a new revision (blue-green: the current vectors answer until it is complete)',
      replace: ', replacing the current vectors at once',
      first: ' for the first time',
    }[p.vectors] || '';
    parts.push(`re-embeds ${fmtNum(p.chunks_after ?? p.chunks)} chunks${how}`);
  }
  if (p.re_cut) parts.push(`re-cuts ${fmtNum(p.documents)} documents into new chunks${p.re_cut_at === 'cutover' ? ' when the new revision cuts over' : ''}`);
  if (p.vectors === 'drop') parts.push('drops the stored vectors');
  return { rebuild: parts.length > 0, text: parts.length ? `Saving ${parts.join(' and ')}.` : 'No rebuild needed.' };
}

// ---------------------------------------------------------------------------------------------
// One KB: header with live index status, then documents / search / settings.

// The index's live state: what serves, and while a blue-green build runs, its progress.
function buildPanel(box, kb, st) {
  const vec = st.vectors || {};
  const prog = st.reindex && st.reindex.progress;
  const building = vec.building_revision;
  const kids = [];
  if (!kb.config.embedder || !kb.config.embedder.provider) {
    kids.push(el('span', { class: 'muted', text: 'No embedder: keyword and grep search only. ' }));
    if (!needs('admin')) kids.push(el('a', { href: `#/kb/${enc(kb.name)}/settings`, text: 'Set one in Settings' }));
    box.replaceChildren(...kids);
    return;
  }
  if (vec.unavailable) kids.push(el('div', { class: 'notice error' }, el('strong', { text: vec.unavailable.code || 'unavailable' }), ' ', vec.unavailable.message || ''));
  kids.push(el('div', {}, 'Serving revision ', el('code', { text: vec.serving_revision || 'none yet' }),
    ` · ${fmtNum(vec.ready)} ready, ${fmtNum(vec.pending)} pending, ${fmtNum(vec.stale)} stale, ${fmtNum(vec.failed)} failed`));
  if (building || (prog && prog.total)) {
    const done = prog ? prog.done : 0;
    const total = prog ? prog.total : 0;
    const pct = total ? Math.floor((100 * done) / total) : 0;
    kids.push(el('div', { class: 'progress-line' },
      el('span', {}, building ? 'Building revision ' : 'Embedding ', building ? el('code', { text: building }) : null, ': '),
      el('progress', { max: total || 1, value: done, 'aria-label': 'Build progress' }),
      el('span', { class: 'prog-text', text: ` ${fmtNum(done)} / ${fmtNum(total)} (${pct}%) documents${prog && prog.rate ? ` · ${prog.rate.toFixed(1)} documents/s` : ''}${prog && prog.eta_s ? ` · about ${Math.ceil(prog.eta_s)} s left` : ''}` })));
  }
  if (vec.failures && vec.failures.length) {
    const f = vec.failures[0];
    kids.push(el('div', { class: 'notice error' }, el('strong', { text: f.code }), ` ${f.message}`));
  }
  box.replaceChildren(...kids);
}

function kbStats(dl, k, st) {
  const hasEmb = k.config.embedder && k.config.embedder.provider;
  dl.replaceChildren(
    el('div', {}, el('dt', { text: 'Documents' }), el('dd', { id: 'stat-docs', text: fmtNum(st.documents) })),
    el('div', {}, el('dt', { text: 'Chunks' }), el('dd', { text: fmtNum(st.chunks) })),
    el('div', {}, el('dt', { text: 'Source' }), el('dd', { text: fmtBytes(k.source_bytes) })),
    el('div', {}, el('dt', { text: 'Keyword' }), el('dd', {}, badge(st.index_status.keyword))),
    el('div', {}, el('dt', { text: 'Vectors' }), el('dd', {}, hasEmb ? badge(st.index_status.vector) : el('span', { class: 'muted', text: 'off' }))),
    el('div', {}, el('dt', { text: 'Embedder' }), el('dd', { text: hasEmb || '—' })),
    el('div', {}, el('dt', { text: 'Store' }), el('dd', { text: k.config.store.id })));
}

async function viewKb(v, name, tab, query) {
  const kb = await api('GET', kbPath(name));
  if (!v.alive) return;
  // Drawn once (focus on its buttons survives the polls); the counts and the build panel are
  // redrawn in place.
  const stats = el('dl', { class: 'stats' });
  const panel = el('div', { class: 'build', id: 'build', 'aria-live': 'polite' });
  const header = el('div', { class: 'kb-head' },
    el('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, el('a', { href: '#/', text: 'Knowledge bases' }), ' › '),
    el('div', { class: 'head' },
      el('h1', { text: kb.name }),
      guarded(el('button', { class: 'danger', type: 'button', text: 'Delete…', onclick: () => deleteKb(kb.name) }), 'admin')),
    kb.description ? el('p', { class: 'muted', text: kb.description }) : null,
    stats, panel);
  const redraw = (st) => { kbStats(stats, kb, st); buildPanel(panel, kb, st); };
  redraw({ ...kb, reindex: null });
  // Live status: once a second while anything builds or waits, every 5 s otherwise. One loop:
  // a refresh asked for while a poll is in flight waits for it.
  let timer = null;
  let inFlight = false;
  let again = false;
  let lastBuilding = kb.vectors && kb.vectors.building_revision;
  const poll = async () => {
    inFlight = true;
    let next = 5000;
    try {
      const st = await api('GET', kbPath(name, '/status'));
      if (!v.alive) return;
      const busy = !!(st.vectors.building_revision || (st.reindex && st.reindex.running) || st.vectors.pending > 0);
      if (lastBuilding && !st.vectors.building_revision) toast(`Cut over: revision ${st.vectors.serving_revision} now serves`);
      lastBuilding = st.vectors.building_revision;
      redraw(st);
      next = busy ? 1000 : 5000;
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return;
    } finally {
      inFlight = false;
      if (v.alive) timer = setTimeout(poll, again ? 0 : next);
      again = false;
    }
  };
  poll();
  v.cleanups.push(() => clearTimeout(timer));
  v.refreshStatus = () => {
    if (inFlight) { again = true; return; }
    clearTimeout(timer);
    poll();
  };

  const tabs = [['documents', 'Documents'], ['search', 'Search'], ['settings', 'Settings']];
  const tabBar = el('nav', { class: 'tabs', 'aria-label': 'Knowledge base' },
    tabs.map(([t, label]) => el('a', { href: `#/kb/${enc(name)}/${t}`, 'aria-current': t === tab ? 'page' : null, text: label })));
  const body = el('section', { class: 'tab-body' });
  main.append(header, tabBar, body);
  if (tab === 'search') return viewSearch(v, kb, body, query);
  if (tab === 'settings') return viewKbForm(v, kb, body);
  return viewDocuments(v, kb, body, query);
}

async function deleteKb(name) {
  const ok = await dialog({ title: `Delete ${name}?`, body: 'Every document, chunk and vector of this knowledge base is deleted. This cannot be undone.', confirm: 'Delete', danger: true, requireText: name });
  if (!ok) return;
  try {
    await api('DELETE', kbPath(name));
    toast(`Deleted ${name}`);
    go('#/');
  } catch (e) { toast(errText(e), 'error'); }
}

// ---------------------------------------------------------------------------------------------
// Documents: upload, a paged table, per-row and bulk actions.

function docStatus(d, kb) {
  const hasVec = kb.config.embedder && kb.config.embedder.provider;
  const s = d.index_status || {};
  if (d.vector_error) return el('span', {}, badge('failed', `${d.vector_error.code}: ${d.vector_error.message}`), el('div', { class: 'fail-text' }, el('code', { text: d.vector_error.code }), ` ${d.vector_error.message}`));
  if (s.keyword !== 'ready') return badge(s.keyword);
  if (!hasVec) return badge('ready');
  return badge(s.vector);
}

function viewDocuments(v, kb, body, query) {
  const name = kb.name;
  const canWrite = !needs('write');
  // Upload
  const picker = el('input', { type: 'file', multiple: true, id: 'file-picker', class: 'visually-hidden', tabindex: '-1', disabled: !canWrite });
  const replace = el('input', { type: 'checkbox', id: 'replace' });
  const queue = el('ul', { class: 'uploads', 'aria-live': 'polite' });
  const drop = el('div', { class: `dropzone${canWrite ? '' : ' denied'}`, id: 'dropzone', title: needs('write') || '' },
    el('p', {}, el('strong', { text: 'Drop files here' }), ' or ',
      guarded(el('button', { type: 'button', id: 'choose-files', text: 'choose files', onclick: () => picker.click() }), 'write'),
      el('label', { for: 'file-picker', class: 'visually-hidden', text: 'Files to upload' }), picker),
    el('p', { class: 'muted', text: canWrite ? 'Markdown, text, HTML, PDF, DOCX, code… Each file is ingested on its own; a bad one never stops the rest.' : needs('write') }),
    el('label', { class: 'inline' }, replace, ' Replace documents whose file changed'));
  const runUploads = async (files) => {
    if (!canWrite || !files.length) return;
    const jobs = [...files].map((f) => {
      const bar = el('progress', { max: 1, value: 0, 'aria-label': `Uploading ${f.name}` });
      const outcome = el('span', { class: 'outcome', text: 'waiting' });
      const li = el('li', { dataset: { file: f.name } }, el('span', { class: 'fname', text: f.name }), el('span', { class: 'muted', text: fmtBytes(f.size) }), bar, outcome);
      queue.append(li);
      return { f, bar, outcome, li };
    });
    let next = 0;
    const worker = async () => {
      while (next < jobs.length) {
        const j = jobs[next++];
        j.outcome.textContent = 'uploading';
        await doUpload(j);
      }
    };
    const doUpload = async (j, force = false) => {
      try {
        const rep = await upload(name, j.f, { replace: force || replace.checked, onProgress: (p) => { j.bar.value = p; } });
        const item = (rep.items && rep.items[0]) || {};
        j.bar.value = 1;
        if (item.status === 'failed' && item.error) throw new ApiError(422, item.error.code, item.error.message);
        const word = { added: 'ingested', updated: 'replaced', unchanged: 'unchanged' }[item.status] || item.status;
        j.li.className = `ok s-${word}`;
        j.outcome.replaceChildren(el('span', { class: 'badge b-ready', text: word }), item.chunks !== undefined ? ` ${item.chunks} chunks` : '');
      } catch (e) {
        j.li.className = 'err';
        j.outcome.replaceChildren(el('code', { text: e.code || 'error' }), ` ${e.message}`);
        if (e.code === 'conflict') j.outcome.append(' ', el('button', { type: 'button', class: 'link', text: 'Replace it', onclick: () => { j.li.className = ''; j.outcome.textContent = 'uploading'; doUpload(j, true).then(refresh); } }));
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    refresh();
    if (v.refreshStatus) v.refreshStatus();
  };
  picker.addEventListener('change', () => { runUploads(picker.files); picker.value = ''; });
  drop.addEventListener('dragover', (ev) => { ev.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (ev) => { ev.preventDefault(); drop.classList.remove('over'); runUploads(ev.dataTransfer.files); });

  // Table: one page at a time by the API's cursor. The selection is kept by id, so a refresh of
  // the status badges never drops it; the filter in use is the one last applied.
  const filter = el('input', { id: 'doc-filter', type: 'text', placeholder: '{"team": "search"}', value: query.get('filter') || '', spellcheck: 'false' });
  const filterErr = el('div', { class: 'field-error', role: 'alert' });
  const errSlot = el('div');
  const pageInfo = el('span', { class: 'muted' });
  const prev = el('button', { type: 'button', text: '← Previous', disabled: true });
  const nextB = el('button', { type: 'button', text: 'Next →', disabled: true });
  const bulkReconvert = guarded(el('button', { type: 'button', text: 'Reconvert selected', disabled: true }), 'write');
  const bulkDelete = guarded(el('button', { type: 'button', class: 'danger', text: 'Delete selected', disabled: true }), 'write');
  const all = el('input', { type: 'checkbox', 'aria-label': 'Select every document on this page' });
  const tbody = el('tbody');
  const table = el('table', { class: 'grid docs' },
    el('thead', {}, el('tr', {}, el('th', {}, all), ...['Name', 'Format', 'Size', 'Chunks', 'Status', 'Updated', ''].map((t) => el('th', { scope: 'col', text: t })))), tbody);
  const empty = el('div', { class: 'empty', hidden: true });
  const cursors = [null];
  let page = 0;
  let docs = [];
  let applied = filter.value.trim();
  const chosen = new Set();
  let loads = 0;
  const updateBulk = () => {
    const n = chosen.size;
    if (canWrite) { bulkReconvert.disabled = !n; bulkDelete.disabled = !n; }
    bulkReconvert.textContent = n ? `Reconvert ${n}` : 'Reconvert selected';
    bulkDelete.textContent = n ? `Delete ${n}` : 'Delete selected';
  };
  all.addEventListener('change', () => {
    for (const c of tbody.querySelectorAll('input[type=checkbox]')) {
      c.checked = all.checked;
      if (all.checked) chosen.add(c.value); else chosen.delete(c.value);
    }
    updateBulk();
  });
  const fetchPage = () => api('GET', kbPath(name, '/documents'), { query: { limit: 50, cursor: cursors[page], filter: applied } });
  // Draws the page asked for; an answer to an older request is dropped.
  const load = async () => {
    const my = ++loads;
    try {
      const res = await fetchPage();
      if (!v.alive || my !== loads) return;
      errSlot.replaceChildren();
      docs = res.documents;
      if (res.next_cursor) cursors[page + 1] = res.next_cursor; else cursors.length = page + 1;
      prev.disabled = page === 0;
      nextB.disabled = !res.next_cursor;
      const from = page * 50 + 1;
      pageInfo.textContent = docs.length ? `${fmtNum(from)}–${fmtNum(from + docs.length - 1)}${applied ? '' : ` of ${fmtNum(kb.documents)}`} · page ${page + 1}` : '';
      all.checked = false;
      tbody.replaceChildren(...docs.map((d) => docRow(d)));
      table.hidden = !docs.length;
      empty.hidden = !!docs.length;
      empty.replaceChildren(applied ? el('p', { text: 'No document matches this filter.' })
        : el('p', {}, canWrite ? 'No documents yet: drop files above to add them.' : 'No documents yet.'));
    } catch (e) {
      if (my !== loads || !v.alive) return;
      if (e instanceof ApiError && e.details && e.details.field === 'filter') filterErr.textContent = e.message;
      else errSlot.replaceChildren(errorBox(e));
    }
  };
  const refresh = () => load();
  const needsWatch = (d) => kb.config.embedder && kb.config.embedder.provider && d.index_status &&
    ['building', 'not_built', 'stale'].includes(d.index_status.vector) && !d.vector_error;
  // While a badge on this page can still change, its cell is refreshed in place every 2 s.
  let t = null;
  const watch = () => {
    clearTimeout(t);
    t = setTimeout(async () => {
      if (!v.alive || !docs.some(needsWatch)) { if (v.alive) watch(); return; }
      const my = loads;
      try {
        const res = await fetchPage();
        if (!v.alive || my !== loads) return;
        for (const d of res.documents) {
          const row = tbody.querySelector(`tr[data-id="${CSS.escape(d.id)}"]`);
          if (!row) continue;
          row.querySelector('.status-cell').replaceChildren(docStatus(d, kb));
          const i = docs.findIndex((x) => x.id === d.id);
          if (i >= 0) docs[i] = d;
        }
      } catch { /* the next tick tries again */ }
      if (v.alive) watch();
    }, 2000);
  };
  watch();
  v.cleanups.push(() => clearTimeout(t));
  const docRow = (d) => {
    const cb = el('input', { type: 'checkbox', value: d.id, checked: chosen.has(d.id), 'aria-label': `Select ${d.filename}`,
      onchange: () => { if (cb.checked) chosen.add(d.id); else chosen.delete(d.id); updateBulk(); } });
    return el('tr', { dataset: { id: d.id } },
      el('td', {}, cb),
      el('td', { class: 'name-cell' }, el('a', { href: `#/kb/${enc(name)}/doc/${enc(d.id)}`, text: d.title && d.title !== d.filename ? `${d.title}` : d.filename }),
        d.title && d.title !== d.filename ? el('div', { class: 'muted small', text: d.filename }) : null),
      el('td', { text: d.converter }),
      el('td', { class: 'num', text: fmtBytes(d.source_bytes) }),
      el('td', { class: 'num', text: fmtNum(d.chunk_count) }),
      el('td', { class: 'status-cell' }, docStatus(d, kb)),
      el('td', { class: 'small', text: fmtTime(d.updated_at) }),
      el('td', { class: 'row-actions' },
        guarded(el('button', { type: 'button', class: 'link', text: 'Reconvert', 'aria-label': `Reconvert ${d.filename}`, onclick: () => reconvert([d.id]) }), 'write'),
        guarded(el('button', { type: 'button', class: 'link danger', text: 'Delete', 'aria-label': `Delete ${d.filename}`, onclick: () => remove([d.id]) }), 'write')));
  };
  const nameOf = (id) => { const d = docs.find((x) => x.id === id); return d ? d.filename : id; };
  const reconvert = async (ids) => {
    let ok = 0;
    for (const id of ids) {
      try { await api('POST', kbPath(name, `/documents/${enc(id)}/reconvert`), { body: {} }); ok++; } catch (e) { toast(`${nameOf(id)}: ${errText(e)}`, 'error'); }
    }
    if (ok) toast(`Reconverted ${ok} document${ok === 1 ? '' : 's'}`);
    refresh();
    if (v.refreshStatus) v.refreshStatus();
  };
  const remove = async (ids) => {
    const ok = await dialog({ title: ids.length === 1 ? `Delete ${nameOf(ids[0])}?` : `Delete ${ids.length} documents?`, body: 'Their chunks and vectors are deleted too.', confirm: 'Delete', danger: true });
    if (!ok) return;
    let n = 0;
    for (const id of ids) {
      try { await api('DELETE', kbPath(name, `/documents/${enc(id)}`)); n++; chosen.delete(id); } catch (e) { toast(`${nameOf(id)}: ${errText(e)}`, 'error'); }
    }
    toast(`Deleted ${n} document${n === 1 ? '' : 's'}`);
    updateBulk();
    refresh();
    if (v.refreshStatus) v.refreshStatus();
  };
  bulkReconvert.addEventListener('click', () => reconvert([...chosen]));
  bulkDelete.addEventListener('click', () => remove([...chosen]));
  prev.addEventListener('click', () => { if (page > 0) { page--; load(); } });
  nextB.addEventListener('click', () => { if (cursors[page + 1]) { page++; load(); } });
  const filterForm = el('form', { class: 'filter-bar', onsubmit: (ev) => {
    ev.preventDefault();
    filterErr.textContent = '';
    const f = filter.value.trim();
    try { if (f) JSON.parse(f); } catch { filterErr.textContent = 'The filter must be JSON, like {"team": "search"}.'; return; }
    applied = f;
    cursors.length = 1; page = 0; chosen.clear(); updateBulk();
    load();
  } },
  el('label', { for: 'doc-filter', text: 'Metadata filter' }), filter, el('button', { type: 'submit', text: 'Apply' }), filterErr);
  body.append(drop, queue, filterForm,
    el('div', { class: 'bulk' }, bulkReconvert, bulkDelete, el('span', { class: 'spacer' }), pageInfo, prev, nextB),
    errSlot, el('div', { class: 'table-wrap' }, table), empty);
  return load();
}

// ---------------------------------------------------------------------------------------------
// Viewer

async function viewDocument(v, name, id, query) {
  const [kb, doc, md, chunks] = await Promise.all([
    api('GET', kbPath(name)),
    api('GET', kbPath(name, `/documents/${enc(id)}`), { query: { markdown: 'false' } }),
    api('GET', kbPath(name, `/documents/${enc(id)}/markdown`), { text: true }),
    api('GET', kbPath(name, `/documents/${enc(id)}/chunks`)),
  ]);
  if (!v.alive) return;
  const d = doc.document || doc;
  const target = query.get('chunk');
  const showBounds = el('input', { type: 'checkbox', id: 'show-chunks', checked: query.get('chunks') === '1' });
  const content = el('article', { class: 'markdown', id: 'doc-content' });
  const outline = el('nav', { class: 'outline', 'aria-label': 'Outline' });
  // The body in pieces, one per chunk start (chunks may overlap: each piece runs to the next
  // chunk's start), so a hit can land on its chunk and the boundaries can be drawn.
  // The whole body rendered once; then a marker before the block where each chunk starts (the
  // chunks search returns), so a hit lands on its chunk and the boundaries can be drawn.
  const ctx = { used: new Set(), headings: [] };
  content.append(render(md, ctx));
  const cs = (chunks.chunks || []).slice().sort((a, b) => a.body_offset - b.body_offset);
  const bytes = new TextEncoder().encode(md);
  const dec = new TextDecoder();
  const blocks = [...content.children];
  let atByte = 0;
  let atChar = 0;
  let b = 0;
  let landing = null;
  for (const c of cs) {
    // The chunk's byte offset into the body, in the UTF-16 units the blocks are marked in.
    if (c.body_offset > atByte) { atChar += dec.decode(bytes.subarray(atByte, c.body_offset)).length; atByte = c.body_offset; }
    while (b + 1 < blocks.length && Number(blocks[b + 1].dataset.at) <= atChar) b++;
    const block = blocks[b];
    if (!block) break;
    const mark = el('div', { class: 'chunk-mark', dataset: { chunkId: c.chunk_id }, 'aria-hidden': 'true',
      text: `chunk ${c.index} · ${c.token_count} tokens${c.heading_path && c.heading_path.length ? ` · ${c.heading_path.join(' › ')}` : ''}` });
    block.before(mark);
    if (c.chunk_id === target) { mark.classList.add('target'); block.classList.add('target'); landing = block; }
  }
  content.classList.toggle('bounds', showBounds.checked);
  showBounds.addEventListener('change', () => content.classList.toggle('bounds', showBounds.checked));
  const heading = (hid) => content.querySelector(`#${CSS.escape(hid)}`);
  if (ctx.headings.length) {
    outline.append(el('h2', { text: 'Outline' }), el('ul', {}, ctx.headings.map((hd) => el('li', { class: `lvl${hd.level}` },
      el('a', { href: `#/kb/${enc(name)}/doc/${enc(id)}`, text: hd.text, onclick: (ev) => { ev.preventDefault(); const t = heading(hd.id); t.scrollIntoView({ block: 'start' }); t.focus({ preventScroll: true }); } })))));
  }
  const rawLink = el('a', { class: 'button', href: URL.createObjectURL(new Blob([md], { type: 'text/plain;charset=utf-8' })), target: '_blank', rel: 'noopener', text: 'Raw Markdown' });
  v.cleanups.push(() => URL.revokeObjectURL(rawLink.href));
  const statusBox = el('span', { id: 'doc-status' }, docStatus(d, kb));
  const meta = el('dl', { class: 'meta' },
    ...[['File', d.filename], ['Format', d.converter], ['Size', fmtBytes(d.source_bytes)], ['Chunks', fmtNum(d.chunk_count)], ['Updated', fmtTime(d.updated_at)], ['Id', d.id]]
      .map(([k, val]) => el('div', {}, el('dt', { text: k }), el('dd', { text: val }))),
    el('div', {}, el('dt', { text: 'Status' }), el('dd', {}, statusBox)),
    Object.keys(d.metadata || {}).length ? el('div', {}, el('dt', { text: 'Metadata' }), el('dd', {}, el('pre', { class: 'small', text: JSON.stringify(d.metadata, null, 2) }))) : null);

  const editArea = el('textarea', { id: 'edit-md', rows: 24, spellcheck: 'false' });
  const editStatus = el('div', { role: 'status' });
  const editor = el('form', { class: 'editor', hidden: true, onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      await api('PUT', kbPath(name, `/documents/${enc(id)}`), { body: { markdown: editArea.value } });
      toast('Saved; re-indexing');
      const q = new URLSearchParams(query); q.delete('chunk');
      route();
    } catch (e) { editStatus.replaceChildren(errorBox(e)); }
  } },
  el('label', { for: 'edit-md', text: 'Markdown' }), editArea, editStatus,
  el('div', { class: 'actions' }, el('button', { type: 'button', text: 'Cancel', onclick: () => { editor.hidden = true; content.hidden = false; } }), el('button', { type: 'submit', class: 'primary', text: 'Save' })));
  const editBtn = guarded(el('button', { type: 'button', text: 'Edit', onclick: () => { editArea.value = md; editor.hidden = false; content.hidden = true; editArea.focus(); } }), 'write');

  main.append(
    el('nav', { class: 'crumbs', 'aria-label': 'Breadcrumb' }, el('a', { href: '#/', text: 'Knowledge bases' }), ' › ', el('a', { href: `#/kb/${enc(name)}`, text: name }), ' › '),
    el('div', { class: 'head' }, el('h1', { text: d.title || d.filename }),
      el('div', { class: 'actions' }, el('label', { class: 'inline' }, showBounds, ' Show chunk boundaries'), rawLink, editBtn)),
    el('div', { class: 'viewer' }, el('aside', {}, meta, outline), el('div', {}, editor, content)));
  if (landing) {
    requestAnimationFrame(() => {
      landing.scrollIntoView({ block: 'start' });
      if (/^H[1-6]$/.test(landing.tagName)) landing.focus({ preventScroll: true });
    });
  }
  // Live index status after an edit or upload: poll while not ready.
  let t = null;
  const tick = () => { t = setTimeout(async () => {
    try {
      const fresh = await api('GET', kbPath(name, `/documents/${enc(id)}`), { query: { markdown: 'false' } });
      const fd = fresh.document || fresh;
      statusBox.replaceChildren(docStatus(fd, kb));
      if (v.alive && (fd.index_status.vector === 'building' || fd.index_status.vector === 'not_built' || fd.index_status.vector === 'stale') && kb.config.embedder && kb.config.embedder.provider) tick();
    } catch { /* the next view will say */ }
  }, 1000); };
  tick();
  v.cleanups.push(() => clearTimeout(t));
}

// ---------------------------------------------------------------------------------------------
// Search

function highlighted(hit) {
  const span = el('span', { class: 'snippet' });
  const textOf = hit.snippet_text ?? hit.snippet ?? '';
  const ranges = hit.highlights || [];
  if (!ranges.length) { span.textContent = textOf; return span; }
  const cps = Array.from(textOf);  // ranges count code points
  let at = 0;
  for (const r of ranges) {
    const [s, e] = Array.isArray(r) ? r : [r.start, r.end];
    if (s > at) span.append(cps.slice(at, s).join(''));
    span.append(el('mark', { text: cps.slice(s, e).join('') }));
    at = e;
  }
  if (at < cps.length) span.append(cps.slice(at).join(''));
  return span;
}

function hitCard(kb, h) {
  const href = `#/kb/${enc(kb)}/doc/${enc(h.doc_id)}?chunk=${enc(h.chunk_id)}`;
  return el('li', { class: 'hit' },
    el('div', { class: 'hit-head' },
      el('a', { href, class: 'hit-title', text: h.title || h.filename }),
      el('span', { class: 'score', title: `raw score ${h.raw_score} (${h.metric})` }, `${h.score.toFixed(3)}`, el('span', { class: 'muted small', text: ` · ${h.metric} ${Number(h.raw_score).toFixed(3)}` }))),
    h.heading_path && h.heading_path.length ? el('div', { class: 'crumbs small', text: h.heading_path.join(' › ') }) : null,
    el('p', {}, highlighted(h)),
    el('div', { class: 'muted small', text: h.filename }));
}

function grepCard(kb, m) {
  const line = el('code', { class: 'gline' });
  const bytes = new TextEncoder().encode(m.text);
  const dec = new TextDecoder();
  let at = 0;
  for (const [s, e] of m.ranges || []) {
    line.append(dec.decode(bytes.subarray(at, s)), el('mark', { text: dec.decode(bytes.subarray(s, e)) }));
    at = e;
  }
  line.append(dec.decode(bytes.subarray(at)));
  const ctxLines = (ls) => ls.map((l) => el('div', { class: 'ctx' }, el('span', { class: 'ln', text: l.line }), el('code', { text: l.text })));
  return el('li', { class: 'hit grep' },
    el('div', { class: 'hit-head' }, el('a', { href: `#/kb/${enc(kb)}/doc/${enc(m.doc_id)}`, class: 'hit-title', text: `${m.filename}:${m.line}` })),
    el('div', { class: 'glines' }, ctxLines(m.before || []), el('div', { class: 'match' }, el('span', { class: 'ln', text: m.line }), line), ctxLines(m.after || [])));
}

function modeAvailability(kb) {
  const offered = kb.config.modes || [];
  const hasEmb = !!(kb.config.embedder && kb.config.embedder.provider);
  const unavailable = kb.vectors && kb.vectors.unavailable;
  const why = {};
  for (const m of MODES) {
    if ((m === 'vector' || m === 'hybrid') && !hasEmb) why[m] = 'needs an embedder (Settings › Embedder)';
    else if (!offered.includes(m)) why[m] = `this KB does not offer ${m} (Settings › Search modes)`;
    else if ((m === 'vector' || m === 'hybrid') && unavailable) why[m] = `vectors unavailable: ${unavailable.message || unavailable.code}`;
  }
  if (offered.includes('auto')) delete why.auto;
  return why;
}

function viewSearch(v, kb, body, query) {
  const name = kb.name;
  const why = modeAvailability(kb);
  const q = el('input', { type: 'search', id: 'q', value: query.get('q') || '', autocomplete: 'off', placeholder: 'Search this knowledge base', 'aria-describedby': 'search-hint' });
  // A bookmarked mode this KB cannot serve falls back to one it can.
  let wanted = query.get('mode') || 'auto';
  if (why[wanted]) wanted = why.auto ? 'keyword' : 'auto';
  const mode = el('select', { id: 'mode' }, MODES.map((m) => el('option', { value: m, disabled: !!why[m], selected: m === wanted, text: why[m] ? `${m} — ${why[m]}` : m })));
  const topk = el('input', { type: 'number', id: 'topk', min: 1, max: 1000, value: query.get('top_k') || '10' });
  const filter = el('textarea', { id: 'filter', rows: 2, spellcheck: 'false', placeholder: '{"team": "search"}' });
  filter.value = query.get('filter') || '';
  const icase = el('input', { type: 'checkbox', id: 'icase', checked: query.get('i') === '1' });
  const literal = el('input', { type: 'checkbox', id: 'literal', checked: query.get('F') === '1' });
  const context = el('input', { type: 'number', id: 'context', min: 0, max: 20, value: query.get('C') || '0' });
  const grepOpts = el('div', { class: 'grep-opts' },
    el('label', { class: 'inline' }, icase, ' Ignore case'), el('label', { class: 'inline' }, literal, ' Fixed string'),
    el('label', { for: 'context', text: 'Context lines' }), context);
  const results = el('div', { id: 'results' });
  const form = el('form', { class: 'search', role: 'search', onsubmit: (ev) => { ev.preventDefault(); clearTimeout(debounce); run(); } },
    el('div', { class: 'search-row' }, el('label', { for: 'q', class: 'visually-hidden', text: 'Query' }), q,
      el('label', { for: 'mode', class: 'visually-hidden', text: 'Mode' }), mode, el('button', { type: 'submit', class: 'primary', text: 'Search' })),
    el('div', { class: 'search-opts' },
      el('label', { for: 'topk', text: 'Top k' }), topk,
      el('details', { open: !!filter.value }, el('summary', { text: 'Metadata filter' }), el('label', { for: 'filter', class: 'visually-hidden', text: 'Metadata filter (JSON)' }), filter),
      grepOpts),
    el('div', { id: 'search-hint', class: 'muted small', text: 'Enter searches; results follow as you type.' }));
  const showGrep = () => { grepOpts.hidden = mode.value !== 'grep'; topk.disabled = mode.value === 'grep'; };
  showGrep();
  body.append(form, results);

  let ctl = null;
  let seq = 0;
  const saveUrl = () => {
    const p = new URLSearchParams();
    if (q.value) p.set('q', q.value);
    p.set('mode', mode.value);
    if (topk.value && topk.value !== '10') p.set('top_k', topk.value);
    if (filter.value.trim()) p.set('filter', filter.value.trim());
    if (mode.value === 'grep') { if (icase.checked) p.set('i', '1'); if (literal.checked) p.set('F', '1'); if (context.value !== '0') p.set('C', context.value); }
    history.replaceState(null, '', `#/kb/${enc(name)}/search?${p}`);
  };
  async function run() {
    saveUrl();
    if (ctl) ctl.abort();  // a stale answer is dropped, never drawn
    const text = q.value;
    if (!text.trim()) { results.replaceChildren(); return; }
    let f;
    try { f = filter.value.trim() ? JSON.parse(filter.value) : undefined; } catch { results.replaceChildren(el('div', { class: 'notice error', role: 'alert', text: 'The filter must be JSON, like {"team": "search"}.' })); return; }
    ctl = new AbortController();
    const my = ++seq;
    const m = mode.value;
    performance.mark(`quarry:search-start:${my}`);
    try {
      let res;
      if (m === 'grep') {
        res = await api('POST', kbPath(name, '/grep'), { signal: ctl.signal, body: { pattern: text, ignore_case: icase.checked, literal: literal.checked, context: Number(context.value) || 0, filter: f } });
      } else {
        res = await api('POST', kbPath(name, '/search'), { signal: ctl.signal, body: { query: text, mode: m, top_k: Number(topk.value) || 10, filter: f } });
      }
      if (my !== seq || !v.alive) return;
      performance.measure('quarry:search-answer', `quarry:search-start:${my}`);
      results.replaceChildren(m === 'grep' ? grepResults(res) : searchResults(res));
      void results.offsetHeight;  // laid out: what the benchmark (bench/ui.mjs) times ends here
      performance.measure('quarry:search', `quarry:search-start:${my}`);
      performance.clearMarks(`quarry:search-start:${my}`);
      results.dataset.seq = String(my);
    } catch (e) {
      if (e.name === 'AbortError' || my !== seq) return;
      results.replaceChildren(errorBox(e));
    }
  }
  const grepResults = (res) => el('div', {},
    el('p', { class: 'summary muted', role: 'status', text: `${res.matches.length} matching lines in ${res.files_matched} of ${res.files_searched} documents · ${res.took_ms.toFixed(1)} ms${res.truncated ? ' · truncated' : ''}` }),
    res.matches.length ? el('ol', { class: 'hits' }, res.matches.map((m) => grepCard(name, m))) : el('p', { class: 'empty', text: 'No line matches.' }));
  const searchResults = (res) => {
    const status = res.index_status || {};
    const head = el('p', { class: 'summary muted', role: 'status' }, `${res.hits.length} hits · answered by ${res.mode} · ${res.took_ms.toFixed(1)} ms · keyword `, badge(status.keyword), ' vectors ', badge(status.vector));
    const deg = (res.degraded || []).map((d) => el('div', { class: 'notice warn', role: 'status', text: d }));
    const list = (hits) => (hits.length ? el('ol', { class: 'hits' }, hits.map((h) => hitCard(name, h))) : el('p', { class: 'empty', text: 'No hits.' }));
    const per = res.per_mode || {};
    if (Object.keys(per).length) {
      return el('div', {}, head, deg, el('div', { class: 'columns' },
        el('section', { 'aria-label': 'Fused' }, el('h3', { text: 'Fused' }), list(res.hits)),
        ...Object.entries(per).map(([k, hits]) => el('section', { 'aria-label': k }, el('h3', { text: k }), list(hits)))));
    }
    return el('div', {}, head, deg, list(res.hits));
  };
  let debounce = null;
  q.addEventListener('input', () => { clearTimeout(debounce); debounce = setTimeout(run, 200); });
  for (const c of [mode, topk, icase, literal, context]) c.addEventListener('change', () => { showGrep(); run(); });
  v.cleanups.push(() => { clearTimeout(debounce); if (ctl) ctl.abort(); });
  q.focus();
  if (q.value) run();
}

// ---------------------------------------------------------------------------------------------
// Activity

async function viewActivity(v, query) {
  main.append(el('h1', { text: 'Activity' }));
  if (needs('admin')) { main.append(el('p', { class: 'notice', text: `The audit log ${needs('admin')}.` })); return; }
  // An admin token limited to some KBs reads only their entries, one KB at a time (?kb=).
  const limited = state.me.kbs && state.me.kbs.length ? state.me.kbs : null;
  const kbFilter = query.get('kb') || (limited ? limited[0] : '');
  const tbody = el('tbody');
  const more = el('button', { type: 'button', text: 'Older entries' });
  const slot = el('div');
  const empty = el('p', { class: 'empty', hidden: true, text: 'Nothing yet: writes (KBs created, documents added, tokens made) show here.' });
  const load = async (before) => {
    more.disabled = true;
    try {
      const page = await api('GET', '/activity', { query: { limit: 50, before, kb: kbFilter } });
      if (!v.alive) return;
      slot.replaceChildren();
      for (const e of page.entries) {
        tbody.append(el('tr', {},
          el('td', { class: 'small', text: fmtTime(e.at) }), el('td', { text: e.actor }), el('td', {}, el('span', { class: `surface s-${e.surface}`, text: e.surface })),
          el('td', {}, el('code', { text: e.action })), el('td', { text: e.kb || '' }), el('td', { class: 'small', text: e.target || '' }),
          el('td', { class: 'small details', text: e.details && Object.keys(e.details).length ? JSON.stringify(e.details) : '' })));
      }
      more.hidden = !page.next_before;
      more.onclick = () => load(page.next_before);
      empty.hidden = tbody.children.length > 0;
    } catch (e) {
      if (v.alive) slot.replaceChildren(errorBox(e));
    } finally {
      more.disabled = false;
    }
  };
  const picker = limited && el('select', { id: 'activity-kb', onchange: (ev) => go(`#/activity?kb=${enc(ev.target.value)}`) },
    limited.map((k) => el('option', { value: k, text: k, selected: k === kbFilter })));
  main.append(...[el('p', { class: 'muted', text: 'Every write, newest first, with the surface it came through (cli, rest, ui, mcp).' }),
    picker && el('div', { class: 'filter-bar' }, el('label', { for: 'activity-kb', text: 'Knowledge base' }), picker),
    slot,
    el('div', { class: 'table-wrap' }, el('table', { class: 'grid' },
      el('thead', {}, el('tr', {}, ...['When', 'Who', 'Surface', 'Action', 'KB', 'Target', 'Details'].map((t) => el('th', { scope: 'col', text: t })))), tbody)), empty, more].filter(Boolean));
  await load();
}

// ---------------------------------------------------------------------------------------------

async function boot() {
  const e = await loadMe();
  renderWho();
  window.addEventListener('hashchange', route);
  if (e && e.status !== 401) { main.replaceChildren(errorBox(e)); return; }
  // A 401 has already shown sign-in (and noted where to go after it).
  if (!e) await route();
  performance.mark('quarry:interactive');
}
document.querySelector('.skip')?.addEventListener('click', (ev) => { ev.preventDefault(); main.focus(); });
document.addEventListener('keydown', (ev) => {
  if (ev.key === '/' && !/INPUT|TEXTAREA|SELECT/.test(document.activeElement.tagName)) {
    const q = document.getElementById('q');
    if (q) { ev.preventDefault(); q.focus(); }
  }
});
boot();
