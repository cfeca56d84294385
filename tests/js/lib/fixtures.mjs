// Documents the web UI's tests upload: a minimal PDF 1.4 (one Tj per line, computed xref), a
// DOCX zipped by Debian's `zip`, and a slow embedding server (Ollama's /api/embed) that makes a
// blue-green build last long enough to watch.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const pdfString = (s) => `(${s.replace(/[()\\]/g, (c) => `\\${c}`)})`;

export function makePdf(pages, title = '') {
  const objs = [];
  const kids = pages.map((_, i) => `${4 + 2 * i} 0 R`).join(' ');
  objs.push('<< /Type /Catalog /Pages 2 0 R >>');
  objs.push(`<< /Type /Pages /Kids [${kids}] /Count ${pages.length} >>`);
  objs.push('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  pages.forEach((text, i) => {
    objs.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + 2 * i} 0 R >>`);
    let y = 720;
    const content = text.split('\n').map((l) => { const s = `BT /F1 12 Tf 72 ${y} Td ${pdfString(l)} Tj ET\n`; y -= 18; return s; }).join('');
    objs.push(`<< /Length ${content.length} >>\nstream\n${content}endstream`);
  });
  objs.push(`<< /Title ${pdfString(title)} /Producer (quarry tests) >>`);
  let out = '%PDF-1.4\n%\xE2\xE3\xCF\xD3\n';
  const offsets = [];
  objs.forEach((o, i) => { offsets.push(Buffer.byteLength(out, 'latin1')); out += `${i + 1} 0 obj\n${o}\nendobj\n`; });
  const xref = Buffer.byteLength(out, 'latin1');
  out += `xref\n0 ${objs.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objs.length + 1} /Root 1 0 R${title ? ` /Info ${objs.length} 0 R` : ''} >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"';
const para = (text, style) => `<w:p>${style ? `<w:pPr><w:pStyle w:val="${style}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${text}</w:t></w:r></w:p>`;

// A .docx at `file` whose body is [[style|null, text], ...].
export function writeDocx(file, paragraphs) {
  const dir = fs.mkdtempSync(`${file}.parts-`);
  const put = (name, text) => { fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true }); fs.writeFileSync(path.join(dir, name), text); };
  put('[Content_Types].xml', '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>');
  put('_rels/.rels', '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>');
  put('word/document.xml', `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:document ${W}><w:body>${paragraphs.map(([s, t]) => para(t, s)).join('')}</w:body></w:document>`);
  const r = spawnSync('zip', ['-q', '-r', '-X', path.resolve(file), '[Content_Types].xml', '_rels', 'word'], { cwd: dir, encoding: 'utf8' });
  fs.rmSync(dir, { recursive: true, force: true });
  if (r.status !== 0) throw new Error(`zip failed (is Debian's zip installed? scripts/setup does): ${r.stderr}`);
}

// An Ollama-style embedding server on 127.0.0.1 that waits `delayMs` per request and answers
// deterministic vectors of `dims` (from the text's characters). It runs in a child process, so
// a test blocked in spawnSync (the CLI's `ingest --wait`) does not stall it.
// Returns {url, close()}.
const EMBEDDER = `
const http = require('node:http');
const [delayMs, dims] = process.argv.slice(1).map(Number);
const server = http.createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    const input = JSON.parse(body || '{}').input || [];
    const embeddings = (Array.isArray(input) ? input : [input]).map((t) => {
      const v = new Array(dims).fill(0.01);
      for (let i = 0; i < t.length; i++) v[(t.charCodeAt(i) * 31 + i) % dims] += 1;
      return v;
    });
    setTimeout(() => { res.setHeader('Content-Type', 'application/json'); res.end(JSON.stringify({ embeddings })); }, delayMs);
  });
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;

export async function slowEmbedder({ delayMs = 150, dims = 16 } = {}) {
  const proc = spawn(process.execPath, ['-e', EMBEDDER, String(delayMs), String(dims)], { stdio: ['ignore', 'pipe', 'inherit'] });
  process.once('exit', () => proc.kill('SIGKILL'));
  const port = await new Promise((resolve, reject) => {
    proc.stdout.once('data', (d) => resolve(Number(String(d).trim())));
    proc.once('exit', (code) => reject(new Error(`the test embedder exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, close: async () => { proc.kill('SIGTERM'); } };
}
