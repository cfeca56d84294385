// The `js` blocks of README.md (docs/clients.md's are run by ctest docs.clients_examples), each run as a script against a real server
// whose empty KB `notes` the test creates, with QUARRY_URL set (no token: loopback). Blocks run
// in order, each a file in a scratch folder inside the package, so that `import 'quarry-client'`
// resolves through the package's own "exports" (and @langchain/core from its node_modules).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { QuarryClient } from '../src/index.js';
import { scratch, startServer } from '../test-lib/server.mjs';

const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const blocks = ['README.md'].flatMap((file) =>
  [...fs.readFileSync(path.join(pkg, file), 'utf8').matchAll(/```js\n([\s\S]*?)```/g)]
    .map((m, i) => ({ name: `${file} block ${i + 1}`, code: m[1] })));

describe('documentation examples', () => {
  let tmp;
  let server;
  let runDir;
  before(async () => {
    tmp = scratch('docs');
    server = await startServer(tmp.data);
    await new QuarryClient({ baseUrl: server.url, token: null }).createKb('notes');
    runDir = fs.mkdtempSync(path.join(pkg, '.doc-run-'));
  });
  after(async () => {
    await server?.stop();
    tmp?.cleanup();
    if (runDir) fs.rmSync(runDir, { recursive: true, force: true });
  });

  test('there are examples to run', () => assert.ok(blocks.length >= 2, `only ${blocks.length} js blocks`));

  for (const [i, block] of blocks.entries()) {
    test(block.name, () => {
      const file = path.join(runDir, `block-${i}.mjs`);
      fs.writeFileSync(file, block.code);
      const env = { ...process.env, QUARRY_URL: server.url };
      delete env.QUARRY_TOKEN;
      const r = spawnSync(process.execPath, [file], { env, encoding: 'utf8', timeout: 60_000 });
      assert.equal(r.status, 0, `${block.name} failed:\n${r.stderr}${r.stdout}`);
    });
  }
});
