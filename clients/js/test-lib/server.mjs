// The client tests' real server and scratch folders: the plumbing of the MCP and UI tests
// (tests/js/lib/env.mjs, node built-ins only), kept out of test/ where `node --test` would run
// it as a test file. The binary is QUARRY_BINARY (ctest passes the build's), else build/quarry.
import { scratch, sleep, startServe } from '../../../tests/js/lib/env.mjs';

export { scratch };

/**
 * `quarry serve` on 127.0.0.1 with a free port, waited for. `globalArgs` go before `serve` (such
 * as --lock-timeout), `serveArgs` after it. Returns {url, port, stop()}; stop() ends it by PID.
 */
export function startServer(data, { globalArgs = [], serveArgs = [], timeoutMs = 30_000 } = {}) {
  return startServe(data, serveArgs, { globalArgs, timeoutMs });
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
