// Shared plumbing of the MCP end-to-end tests: where the quarry binary and the scratch
// directory are (command-line flags from ctest, else environment, else the default build), the
// real CLI run as a subprocess, a real `quarry serve` on 127.0.0.1, and the SQLite catalog
// read with the sqlite3 CLI.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(here, '../../..');

function flag(name) {
  const i = process.argv.indexOf(name);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : undefined;
}

export const quarryBin = path.resolve(flag('--quarry') ?? process.env.QUARRY_BIN
  ?? process.env.QUARRY_BINARY ?? path.join(repoRoot, 'build/quarry'));
const tmpBase = flag('--tmp') ?? process.env.QUARRY_TEST_TMP ?? os.tmpdir();

// A fresh scratch directory, removed by cleanup() unless QUARRY_KEEP_TMP is set.
export function scratch(tag) {
  fs.mkdirSync(tmpBase, { recursive: true });
  const dir = fs.mkdtempSync(path.join(tmpBase, `quarry-${tag}-`));
  return {
    dir,
    data: path.join(dir, 'data'),
    cleanup() {
      if (!process.env.QUARRY_KEEP_TMP) fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Runs `quarry --data-dir DATA [--json] ARGS...`; throws with its stderr on a non-zero exit
// unless `allowFail`. Returns {status, stdout, stderr, json}.
export function quarry(data, args, { json = true, allowFail = false, input } = {}) {
  const full = ['--data-dir', data, ...(json ? ['--json'] : []), ...args];
  const r = spawnSync(quarryBin, full, { encoding: 'utf8', input, timeout: 60_000, maxBuffer: 1 << 28 });
  if (r.error) throw r.error;
  const out = { status: r.status, stdout: r.stdout, stderr: r.stderr, json: undefined };
  if (json) {
    try { out.json = JSON.parse(r.stdout); } catch { /* not JSON */ }
  }
  if (r.status !== 0 && !allowFail)
    throw new Error(`quarry ${full.join(' ')} exited ${r.status}:\n${r.stderr}${r.stdout}`);
  return out;
}

// `sqlite3 DB SQL` -> stdout lines.
export function sqlite(db, sql) {
  const r = spawnSync('sqlite3', [db, sql], { encoding: 'utf8', timeout: 60_000 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`sqlite3 ${db} failed: ${r.stderr}`);
  return r.stdout.trim().split('\n').filter((l) => l.length > 0);
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Starts `quarry serve --port 0 --port-file F` on the data dir and waits for the port. `extra`
// goes after `serve`, `globalArgs` before it (such as --lock-timeout).
// Returns {port, url, proc, stderr(), stop()}; stop() kills it by PID (SIGTERM, then SIGKILL).
export async function startServe(data, extra = [], { timeoutMs = 30_000, globalArgs = [] } = {}) {
  const portFile = path.join(path.dirname(data), `port-${process.pid}-${Date.now()}`);
  const proc = spawn(quarryBin,
    ['--data-dir', data, ...globalArgs, 'serve', '--port', '0', '--port-file', portFile, ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  // Never leave a server behind, even when the test process dies on an uncaught error.
  const reap = () => { try { proc.kill('SIGKILL'); } catch { /* gone */ } };
  process.once('exit', reap);
  let log = '';
  proc.stdout.on('data', (d) => { log += d; });
  proc.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((resolve) => proc.once('exit', (code, sig) => resolve({ code, sig })));
  const stop = async () => {
    process.removeListener('exit', reap);
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGTERM');
    const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(t);
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`quarry serve exited ${proc.exitCode}:\n${log}`);
    const text = fs.existsSync(portFile) ? fs.readFileSync(portFile, 'utf8').trim() : '';
    if (/^\d+$/.test(text)) {
      const port = Number(text);
      return { port, url: `http://127.0.0.1:${port}`, proc, stderr: () => log, stop };
    }
    await sleep(50);
  }
  await stop();
  throw new Error(`quarry serve did not write ${portFile} within ${timeoutMs} ms:\n${log}`);
}
