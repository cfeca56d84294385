// ctest's entry point: `node tests/js/run.mjs NAME --quarry BIN --tmp DIR` runs NAME.test.mjs,
// after checking that scripts/setup installed the pinned npm packages (a missing SDK would
// otherwise surface as an obscure module-resolution error).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const name = process.argv[2];
const file = path.join(here, `${name}.test.mjs`);
if (!name || !fs.existsSync(file)) {
  console.error(`usage: node run.mjs NAME [--quarry BIN] [--tmp DIR] (no ${file})`);
  process.exit(2);
}
if (!fs.existsSync(path.join(here, 'node_modules/@modelcontextprotocol/sdk/package.json'))) {
  console.error('tests/js/node_modules is missing: run scripts/setup (it runs `npm ci` in tests/js)');
  process.exit(1);
}
await import(pathToFileURL(file).href);
