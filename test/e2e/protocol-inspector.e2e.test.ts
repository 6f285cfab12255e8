/**
 * Smoke test with a real third-party client: the MCP Inspector CLI
 * (@modelcontextprotocol/inspector, Node 22 via npx) over Streamable HTTP
 * against two gateway replicas behind a round-robin proxy — list tools, call
 * dagu_read, read a resource (spec 020 §Endpoint; issue "Conformance and real
 * clients in CI") — in the session era, and with `--protocol-era modern` in
 * the stateless 2026-07-28 revision (issue 22).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INSPECTOR_NPX_ARGS } from './inspector-cli';
import { startStack, type Stack } from './stack';

let stack: Stack;
let home: string;

beforeAll(async () => {
  stack = await startStack({}, { gatewayReplicas: 2 });
  home = mkdtempSync(join(tmpdir(), 'mcp-inspector-'));
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

/** Runs one Inspector CLI method and parses its JSON output. */
function inspect(args: readonly string[]): Promise<{ code: number | null; json: unknown; output: string }> {
  const argv = [...INSPECTOR_NPX_ARGS, stack.mcpUrl, '--transport', 'http', ...args];
  return new Promise((resolve) => {
    const child = spawn('npx', argv, {
      env: { ...process.env, HOME: home, MCP_CATALOG_PATH: join(home, 'mcp.json'), NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout.slice(stdout.indexOf('{')));
      } catch {
        json = undefined;
      }
      resolve({ code, json, output: `${stdout}\n${stderr}` });
    });
  });
}

test('Inspector CLI lists the tools, calls dagu_read and reads a dagu:// resource', async () => {
  const tools = await inspect(['--method', 'tools/list']);
  expect({ code: tools.code, output: tools.code === 0 ? '' : tools.output }).toEqual({ code: 0, output: '' });
  expect(JSON.stringify(tools.json)).toContain('dagu_read');
  expect(JSON.stringify(tools.json)).toContain('dagu_execute');

  const call = await inspect([
    '--method',
    'tools/call',
    '--tool-name',
    'dagu_read',
    '--tool-arg',
    'target=reference',
    'name=tools',
  ]);
  expect(call.code).toBe(0);
  expect(call.json).toMatchObject({ structuredContent: { target: 'reference', uri: 'dagu://reference/tools' } });

  const read = await inspect(['--method', 'resources/read', '--uri', 'dagu://reference/authoring']);
  expect(read.code).toBe(0);
  expect(read.json).toMatchObject({ contents: [{ uri: 'dagu://reference/authoring', mimeType: 'text/markdown' }] });
}, 300_000);

test('Inspector CLI in the stateless revision (--protocol-era modern): lists the tools and calls dagu_read without a session', async () => {
  const from = stack.proxy?.eras.length ?? 0;
  const modern = ['--protocol-era', 'modern'];
  const tools = await inspect([...modern, '--method', 'tools/list']);
  expect({ code: tools.code, output: tools.code === 0 ? '' : tools.output }).toEqual({ code: 0, output: '' });
  expect(JSON.stringify(tools.json)).toContain('dagu_execute');
  const call = await inspect([
    ...modern,
    '--method',
    'tools/call',
    '--tool-name',
    'dagu_read',
    '--tool-arg',
    'target=reference',
    'name=tools',
  ]);
  expect({ code: call.code, output: call.code === 0 ? '' : call.output }).toEqual({ code: 0, output: '' });
  expect(call.json).toMatchObject({ structuredContent: { target: 'reference', uri: 'dagu://reference/tools' } });
  // Every request the Inspector sent was of 2026-07-28 and none had a session.
  const eras = stack.proxy?.eras.slice(from) ?? [];
  expect(eras.length).toBeGreaterThanOrEqual(2);
  expect(eras.filter((e) => e.protocolVersion !== '2026-07-28' || e.sessionId !== undefined)).toEqual([]);
}, 300_000);
