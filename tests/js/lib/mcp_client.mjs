// Connecting the official MCP TypeScript SDK client to quarry over either transport, and small
// assertions on tool results shared by the tests.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { quarryBin } from './env.mjs';

// The SDK tells the transport the negotiated version through setProtocolVersion (the stdio
// transport has none); wrapping it records what initialize settled on.
function recordVersion(transport) {
  const box = { version: undefined };
  const original = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    box.version = v;
    original?.(v);
  };
  return box;
}

async function connect(transport, name) {
  const box = recordVersion(transport);
  const client = new Client({ name, version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: 30_000 });
  return { client, transport, protocolVersion: () => box.version };
}

// `quarry --data-dir DATA mcp ARGS...` over stdio. close() ends stdin and returns the server's
// exit code (the SDK kills it after 2 s; a clean server has exited by then).
export async function connectStdio(data, args = [], name = 'quarry-test-stdio') {
  const transport = new StdioClientTransport({
    command: quarryBin,
    args: ['--data-dir', data, 'mcp', ...args],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (d) => { stderr += d; });
  const c = await connect(transport, name);
  const proc = transport._process;
  return {
    ...c,
    stderr: () => stderr,
    async close() {
      await c.client.close();
      if (proc.exitCode === null && proc.signalCode === null)
        await new Promise((resolve) => proc.once('exit', resolve));
      return { code: proc.exitCode, signal: proc.signalCode };
    },
  };
}

// Streamable HTTP at URL/mcp, with a bearer token when given.
export async function connectHttp(url, token, name = 'quarry-test-http') {
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit });
  const c = await connect(transport, name);
  return {
    ...c,
    async close() {
      await transport.terminateSession().catch(() => {});
      await c.client.close();
    },
  };
}

export async function call(client, name, args = {}) {
  return client.callTool({ name, arguments: args }, undefined, { timeout: 60_000 });
}

// A successful result: returns its structured content after checking the text fallback.
export async function ok(client, name, args = {}) {
  const r = await call(client, name, args);
  assert.ok(!r.isError, `${name} ${JSON.stringify(args)} failed: ${r.content?.[0]?.text}`);
  assert.equal(typeof r.structuredContent, 'object', `${name} has structured content`);
  assert.equal(r.content[0].type, 'text');
  assert.ok(r.content[0].text.length > 0, `${name} has a text fallback`);
  return r.structuredContent;
}

// A tool error with this stable code (text "error[code]: ..." and structured {error}).
export async function toolError(client, name, args, code) {
  const r = await call(client, name, args);
  assert.equal(r.isError, true, `${name} ${JSON.stringify(args)} should fail with ${code}`);
  assert.equal(r.structuredContent?.error?.code, code, JSON.stringify(r.structuredContent));
  assert.match(r.content[0].text, new RegExp(`^error\\[${code}\\]: `));
  assert.ok(r.structuredContent.error.message.length > 0);
  return r.structuredContent.error;
}
