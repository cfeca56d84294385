// A small Markdown renderer that builds DOM nodes and never parses HTML: every piece of a
// document's text reaches the page through textContent, so raw HTML in a document shows as
// text and cannot run. Links keep only http(s), mailto and same-page or relative targets;
// anything else (javascript:, data:, vbscript:, ...) is shown as plain text. Images are not
// fetched: they show as their alt text and address. Covers what Quarry's converters write
// (ATX headings, paragraphs, lists, fenced code, block quotes, pipe tables, rules) and the usual
// inline marks (code, strong, emphasis, strike, links, autolinks).

const h = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

// The one place a document's address becomes an href: the browser's own URL parser decides the
// scheme (so "java\tscript:", "JaVaScRiPt:" and friends are seen as what they are), and only
// http(s) and mailto pass. A same-page #anchor stays as it is.
export function safeHref(raw) {
  const href = String(raw || '').trim();
  if (href.startsWith('#')) return href;
  // "//host", "\\host", "/\host": another host by the page's scheme, spelled to look local.
  if (/^[\\/]{2}/.test(href.replace(/[\u0000-\u0020\u007f]+/g, ''))) return null;
  let u;
  try { u = new URL(href, location.href); } catch { return null; }
  return ['http:', 'https:', 'mailto:'].includes(u.protocol) ? u.href : null;
}

function link(text, href, title) {
  const safe = safeHref(href);
  if (safe === null) {
    const s = h('span', 'md-neutralised', text);
    s.title = `link removed: ${String(href).slice(0, 80)}`;
    return s;
  }
  const a = h('a', null, text);
  a.href = safe;
  if (title) a.title = title;
  if (safe.startsWith('#')) {
    // A link inside the document moves within it; the page's own #/ routes stay untouched.
    a.addEventListener('click', (ev) => {
      ev.preventDefault();
      let id = safe.slice(1);
      try { id = decodeURIComponent(id); } catch { /* as written */ }
      const to = a.closest('article')?.querySelector(`#${CSS.escape(`md-${id}`)}`);
      if (to) { to.scrollIntoView({ block: 'start' }); to.focus({ preventScroll: true }); }
    });
  } else {
    a.target = '_blank';
    a.rel = 'noopener noreferrer nofollow';
  }
  return a;
}

// Finds the closing bracket of a [link text] that starts at `i` (nesting allowed), looking at
// most 1,000 characters ahead so that a line of unclosed brackets stays linear.
function closeBracket(s, i) {
  let depth = 0;
  for (let j = i; j < s.length && j < i + 1000; j++) {
    if (s[j] === '\\') { j++; continue; }
    if (s[j] === '[') depth++;
    else if (s[j] === ']' && --depth === 0) return j;
  }
  return -1;
}

// Inline marks into `parent`.
export function inline(parent, s) {
  let buf = '';
  const flush = () => { if (buf) { parent.append(document.createTextNode(buf)); buf = ''; } };
  for (let i = 0; i < s.length;) {
    const c = s[i];
    if (c === '\\' && i + 1 < s.length && /[\\`*_{}\[\]()#+\-.!|~<>]/.test(s[i + 1])) {
      buf += s[i + 1]; i += 2; continue;
    }
    if (c === '`') {
      let n = 0; while (s[i + n] === '`') n++;
      const fence = '`'.repeat(n);
      const end = s.indexOf(fence, i + n);
      if (end > 0) {
        flush(); parent.append(h('code', null, s.slice(i + n, end).replace(/^ (.*) $/, '$1'))); i = end + n; continue;
      }
      buf += fence; i += n; continue;
    }
    if ((c === '*' || c === '_' || c === '~') && s[i + 1] === c) {
      const end = s.indexOf(c + c, i + 2);
      if (end > i + 2) {
        flush();
        const e = h(c === '~' ? 'del' : 'strong');
        inline(e, s.slice(i + 2, end));
        parent.append(e); i = end + 2; continue;
      }
    }
    if ((c === '*' || c === '_') && s[i + 1] && s[i + 1] !== ' ' && s[i + 1] !== c) {
      const end = s.indexOf(c, i + 1);
      const wordy = c === '_' && ((i > 0 && /\w/.test(s[i - 1])) || (end > 0 && /\w/.test(s[end + 1] || '')));
      if (end > i + 1 && s[end - 1] !== ' ' && !wordy) {
        flush(); const e = h('em'); inline(e, s.slice(i + 1, end)); parent.append(e); i = end + 1; continue;
      }
    }
    if (c === '!' && s[i + 1] === '[') {
      const close = closeBracket(s, i + 1);
      const m = close > 0 && /^\(([^()\s]*)(?:\s+"([^"]*)")?\)/.exec(s.slice(close + 1));
      if (m) {
        flush();
        const alt = s.slice(i + 2, close);
        const safe = safeHref(m[1]);
        const e = h('span', 'md-image', `[image: ${alt || 'untitled'}]`);
        if (safe) e.title = m[1];
        parent.append(e); i = close + 1 + m[0].length; continue;
      }
    }
    if (c === '[') {
      const close = closeBracket(s, i);
      const m = close > 0 && /^\(([^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+"([^"]*)")?\)/.exec(s.slice(close + 1));
      if (m) {
        flush();
        const a = link('', m[1], m[2]);
        inline(a, s.slice(i + 1, close));
        parent.append(a); i = close + 1 + m[0].length; continue;
      }
    }
    if (c === '<') {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(s.slice(i));
      if (m) { flush(); parent.append(link(m[1], m[1])); i += m[0].length; continue; }
    }
    buf += c; i++;
  }
  flush();
}

const isBlank = (l) => /^\s*$/.test(l);
const fenceRe = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)/;
// No nested quantifiers over the same characters (a hostile line of spaces must stay linear).
const headingRe = /^ {0,3}(#{1,6})(?:[ \t]+(.*))?$/;
// "## Title ##" -> "Title": the closing run of '#' and the spaces around it, by hand.
function headingText(t) {
  let end = t.length;
  while (end > 0 && (t[end - 1] === ' ' || t[end - 1] === '\t')) end--;
  let k = end;
  while (k > 0 && t[k - 1] === '#') k--;
  if (k < end && (k === 0 || t[k - 1] === ' ' || t[k - 1] === '\t')) end = k;
  while (end > 0 && (t[end - 1] === ' ' || t[end - 1] === '\t')) end--;
  return t.slice(0, end);
}
const hardBreak = (l) => l.endsWith('  ') || l.endsWith('\\');
const withoutBreak = (l) => (l.endsWith('\\') ? l.slice(0, -1) : l.trimEnd());
const ruleRe = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const listRe = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const quoteRe = /^ {0,3}>\s?(.*)$/;
const tableSepRe = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

const cells = (l) => {
  let t = l.trim();
  if (t.startsWith('|')) t = t.slice(1);
  if (t.endsWith('|') && !t.endsWith('\\|')) t = t.slice(0, -1);
  return t.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
};

// A heading's id: "md-" and its words, so a document's "## Main" never takes an id of the page's.
export function slug(text, used) {
  const base = `md-${text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-|-$/g, '') || 'section'}`;
  let s = base; let n = 1;
  while (used.has(s)) s = `${base}-${++n}`;
  used.add(s);
  return s;
}

// Renders `text` into a fragment. `ctx` ({used, headings}) collects the heading ids and the
// outline. Each top-level block gets data-at: the UTF-16 offset in `text` where it starts, so a
// caller can put markers (chunk starts) between blocks.
export function render(text, ctx = { used: new Set(), headings: [] }, top = true) {
  const frag = document.createDocumentFragment();
  const raw = String(text).split('\n');
  const starts = [];
  for (let k = 0, at = 0; k < raw.length; k++) { starts.push(at); at += raw[k].length + 1; }
  const lines = raw.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  let i = 0;
  let para = [];
  let paraLine = 0;
  let blockLine = 0;
  const add = (e, line = blockLine) => {
    if (top) e.dataset.at = String(starts[line]);
    frag.append(e);
  };
  const endPara = () => {
    if (!para.length) return;
    const p = h('p');
    para.forEach((l, k) => {
      if (k) p.append(hardBreak(para[k - 1]) ? h('br') : document.createTextNode(' '));
      inline(p, withoutBreak(l).trim());
    });
    add(p, paraLine);
    para = [];
  };
  while (i < lines.length) {
    const l = lines[i];
    let m;
    blockLine = i;
    if (isBlank(l)) { endPara(); i++; continue; }
    if ((m = fenceRe.exec(l))) {
      endPara();
      const fence = m[1];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence)) body.push(lines[i++]);
      i++;
      const pre = h('pre');
      const code = h('code', null, body.join('\n'));
      if (m[2]) code.dataset.lang = m[2];
      pre.append(code);
      add(pre);
      continue;
    }
    if ((m = headingRe.exec(l))) {
      endPara();
      const level = m[1].length;
      const e = h(`h${level}`);
      inline(e, headingText(m[2] || ''));
      e.id = slug(e.textContent, ctx.used);
      e.tabIndex = -1;  // the outline and a search hit move focus here
      ctx.headings.push({ level, text: e.textContent, id: e.id });
      add(e); i++; continue;
    }
    if (ruleRe.test(l) && !para.length) { add(h('hr')); i++; continue; }
    if (quoteRe.test(l)) {
      endPara();
      const body = [];
      while (i < lines.length && (m = quoteRe.exec(lines[i]))) { body.push(m[1]); i++; }
      const q = h('blockquote');
      q.append(render(body.join('\n'), ctx, false));
      add(q);
      continue;
    }
    if (l.includes('|') && i + 1 < lines.length && tableSepRe.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      endPara();
      const wrap = h('div', 'md-table');
      const table = h('table');
      const head = h('thead'); const tr = h('tr');
      for (const c of cells(l)) { const th = h('th'); inline(th, c); tr.append(th); }
      head.append(tr); table.append(head);
      const body = h('tbody');
      i += 2;
      while (i < lines.length && !isBlank(lines[i]) && lines[i].includes('|')) {
        const row = h('tr');
        for (const c of cells(lines[i])) { const td = h('td'); inline(td, c); row.append(td); }
        body.append(row); i++;
      }
      table.append(body); wrap.append(table); add(wrap);
      continue;
    }
    if ((m = listRe.exec(l)) && (!para.length || m[1].length === 0)) {
      endPara();
      const indent = m[1].length;
      const ordered = /\d/.test(m[2]);
      const list = h(ordered ? 'ol' : 'ul');
      if (ordered && parseInt(m[2], 10) !== 1) list.start = parseInt(m[2], 10);
      while (i < lines.length) {
        const lm = listRe.exec(lines[i]);
        if (!lm || lm[1].length !== indent) break;
        const item = [lm[3]];
        i++;
        while (i < lines.length && !isBlank(lines[i])) {
          const nm = listRe.exec(lines[i]);
          if (nm && nm[1].length <= indent) break;
          item.push(lines[i].startsWith(' '.repeat(indent + 2)) ? lines[i].slice(indent + 2) : lines[i].trimStart());
          i++;
        }
        if (i < lines.length && isBlank(lines[i]) && i + 1 < lines.length) {
          const nm = listRe.exec(lines[i + 1]);
          if (nm && nm[1].length === indent) i++;
        }
        const li = h('li');
        const task = /^\[([ xX])\]\s+(.*)$/.exec(item[0]);
        if (task) {
          const box = h('input'); box.type = 'checkbox'; box.disabled = true; box.checked = task[1] !== ' ';
          li.append(box, document.createTextNode(' '));
          item[0] = task[2];
        }
        if (item.length === 1) inline(li, item[0]);
        else li.append(render(item.join('\n'), ctx, false));
        list.append(li);
      }
      add(list);
      continue;
    }
    if (!para.length) paraLine = i;
    para.push(l); i++;
  }
  endPara();
  return frag;
}
