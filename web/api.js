// The page's only way to the server: the public REST API under /api/v1 (docs/rest.md), with the
// tab's bearer token when it has one and `X-Quarry-Client: ui`, so the audit log says a write
// came from this page (surface `ui`).
const BASE = '/api/v1';
const TOKEN_KEY = 'quarry.token';

export class ApiError extends Error {
  constructor(status, code, message, details = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details || {};
  }
}

export const token = () => sessionStorage.getItem(TOKEN_KEY) || '';
export const setToken = (t) => (t ? sessionStorage.setItem(TOKEN_KEY, t) : sessionStorage.removeItem(TOKEN_KEY));

function headers(extra = {}) {
  const h = { 'X-Quarry-Client': 'ui', ...extra };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

export function url(path, query) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query || {})) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return BASE + path + (s ? `?${s}` : '');
}

// A 401 anywhere sends the page back to sign-in with the server's message.
function unauthorized(e) {
  window.dispatchEvent(new CustomEvent('quarry:unauthorized', { detail: e.message }));
}

async function errorOf(res) {
  let body = null;
  try { body = await res.json(); } catch { /* not JSON */ }
  const err = body && body.error;
  const e = err
    ? new ApiError(res.status, err.code, err.message, err.details)
    : new ApiError(res.status, 'internal', `the server answered ${res.status} ${res.statusText}`);
  if (res.status === 401) unauthorized(e);
  return e;
}

// JSON in, JSON out. `text: true` returns the body as text (Markdown).
export async function api(method, path, { body, query, signal, text = false } = {}) {
  const init = { method, headers: headers(), signal };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(url(path, query), init);
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'io_error', `cannot reach the server (${e.message}); is quarry serve running?`);
  }
  if (!res.ok) throw await errorOf(res);
  return text ? res.text() : res.json();
}

// One file as multipart/form-data, with upload progress (fetch has none): resolves to the
// ingest report, rejects with an ApiError.
export function upload(kb, file, { replace = false, metadata, onProgress } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', url(`/kbs/${encodeURIComponent(kb)}/documents`));
    for (const [k, v] of Object.entries(headers())) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (ev) => ev.lengthComputable && onProgress && onProgress(ev.loaded / ev.total);
    xhr.onerror = () => reject(new ApiError(0, 'io_error', 'the upload did not reach the server'));
    xhr.onload = () => {
      let body = null;
      try { body = JSON.parse(xhr.responseText); } catch { /* not JSON */ }
      if (xhr.status >= 200 && xhr.status < 300 && body) return resolve(body);
      const err = body && body.error;
      const e = err ? new ApiError(xhr.status, err.code, err.message, err.details)
        : new ApiError(xhr.status, 'internal', `the server answered ${xhr.status}`);
      if (xhr.status === 401) unauthorized(e);
      reject(e);
    };
    const form = new FormData();
    form.append('file', file, file.name);
    if (replace) form.append('replace', 'true');
    if (metadata) form.append('metadata', metadata);
    xhr.send(form);
  });
}

export const kbPath = (kb, rest = '') => `/kbs/${encodeURIComponent(kb)}${rest}`;
