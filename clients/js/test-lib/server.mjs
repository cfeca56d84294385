// The tests' real server (kept out of test/, where `node --test` would run it as a test file):
// `quarry --data-dir DIR serve --port 0 --port-file F` on 127.0.0.1, in
// the style of tests/js/lib/env.mjs. The binary is QUARRY_BINARY (ctest passes the build's),
// else the repository's build/quarry, else `quarry` on the PATH.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export const quarryBinary = process.env.QUARRY_BINARY
  ?? (fs.existsSync(path.join(repoRoot, 'build/quarry')) ? path.join(repoRoot, 'build/quarry') : 'quarry');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** A fresh scratch directory; QUARRY_KEEP_TMP keeps it after the test. */
export function scratch(tag) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `quarry-js-${tag}-`));
  return {
    dir,
    data: path.join(dir, 'data'),
    cleanup() { if (!process.env.QUARRY_KEEP_TMP) fs.rmSync(dir, { recursive: true, force: true }); },
  };
}

/** Runs the CLI on a data directory (`quarry --data-dir DATA --json ARGS`); returns its JSON. */
export function quarry(data, args) {
  const r = spawnSync(quarryBinary, ['--data-dir', data, '--json', ...args],
    { encoding: 'utf8', timeout: 120_000, maxBuffer: 1 << 28 });
  if (r.error) throw r.error;
  if (r.status !== 0) throw new Error(`quarry ${args.join(' ')} exited ${r.status}:\n${r.stderr}${r.stdout}`);
  return r.stdout.trim() ? JSON.parse(r.stdout) : null;
}

/**
 * Starts `quarry serve` on 127.0.0.1 with a free port and waits until it listens.
 * `globalArgs` go before `serve` (such as --lock-timeout), `serveArgs` after it.
 * Returns {url, port, stop()}; stop() ends the server by its PID (SIGTERM, then SIGKILL).
 */
export async function startServer(data, { globalArgs = [], serveArgs = [], timeoutMs = 30_000 } = {}) {
  fs.mkdirSync(path.dirname(data), { recursive: true });
  const portFile = path.join(path.dirname(data), `port-${process.pid}-${Date.now()}`);
  const proc = spawn(quarryBinary,
    ['--data-dir', data, ...globalArgs, 'serve', '--host', '127.0.0.1', '--port', '0', '--port-file', portFile, ...serveArgs],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  const reap = () => { try { proc.kill('SIGKILL'); } catch { /* gone */ } };
  process.once('exit', reap);
  let log = '';
  proc.stdout.on('data', (d) => { log += d; });
  proc.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
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
      return { port, url: `http://127.0.0.1:${port}`, stop, log: () => log };
    }
    await sleep(50);
  }
  await stop();
  throw new Error(`quarry serve did not write ${portFile} within ${timeoutMs} ms:\n${log}`);
}

/** Polls `check()` until it returns a truthy value (or throws after `timeoutMs`). */
export async function waitFor(check, what, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}
