// The client against the documents it implements: every operationId of docs/openapi.json has
// a method (and the table names no operation that is gone), and every error code of
// docs/errors.md has a class.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import * as quarry from '../src/index.js';

const docs = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../docs');
const openapi = JSON.parse(fs.readFileSync(path.join(docs, 'openapi.json'), 'utf8'));
const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options'];
const operationIds = Object.values(openapi.paths)
  .flatMap((item) => METHODS.filter((m) => item[m]).map((m) => item[m].operationId));

test('every operationId of docs/openapi.json has a client method', () => {
  assert.ok(operationIds.length >= 36, `only ${operationIds.length} operations read`);
  const missing = operationIds.filter((id) => !Object.hasOwn(quarry.OPERATIONS, id));
  assert.deepEqual(missing, [], `operations without an entry in OPERATIONS: ${missing.join(', ')}`);
  const unbound = operationIds.filter((id) => typeof quarry.QuarryClient.prototype[quarry.OPERATIONS[id]] !== 'function');
  assert.deepEqual(unbound, [], `OPERATIONS entries naming no QuarryClient method: ${unbound.join(', ')}`);
});

test('OPERATIONS names no operation that docs/openapi.json lacks', () => {
  const stale = Object.keys(quarry.OPERATIONS).filter((id) => !operationIds.includes(id));
  assert.deepEqual(stale, [], `OPERATIONS entries with no operation: ${stale.join(', ')}`);
});

test("every code of docs/errors.md's summary table has its own error class", () => {
  const md = fs.readFileSync(path.join(docs, 'errors.md'), 'utf8');
  const summary = md.slice(md.indexOf('## Summary'), md.indexOf('\n## ', md.indexOf('## Summary') + 1));
  const codes = [...summary.matchAll(/^\| \[`([a-z_]+)`\]/gm)].map((m) => m[1]);
  assert.ok(codes.length >= 26, `only ${codes.length} codes read from errors.md`);
  for (const code of codes) {
    const Cls = quarry.ERROR_CLASSES[code];
    assert.ok(Cls, `no error class for code ${code}`);
    assert.notEqual(Cls, quarry.QuarryError, `${code} maps to the base class`);
    const e = quarry.errorFromEnvelope({ code, message: 'm', status: 400 });
    assert.ok(e instanceof Cls && e instanceof quarry.QuarryError && e instanceof Error);
    assert.equal(e.code, code);
    assert.equal(quarry[Cls.name], Cls, `${Cls.name} is not exported`);
  }
  // The OpenAPI ErrorCode enum names the same codes.
  const enumCodes = openapi.components.schemas.ErrorCode.enum;
  assert.deepEqual(enumCodes.filter((c) => !codes.includes(c)), [], 'ErrorCode codes missing from errors.md');
});

test('an unknown code becomes the base class with its code kept', () => {
  const e = quarry.errorFromEnvelope({ code: 'brand_new', message: 'later server', status: 418, details: { a: 'b' } });
  assert.equal(e.constructor, quarry.QuarryError);
  assert.deepEqual([e.code, e.status, e.details.a, e.message], ['brand_new', 418, 'b', 'later server']);
});
