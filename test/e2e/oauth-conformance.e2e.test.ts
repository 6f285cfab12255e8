/**
 * The MCP conformance package's authorization-server checks
 * (`@modelcontextprotocol/conformance@0.2.0-alpha.12 authorization`, issue 23
 * "Tests") against the built stack's OAuth server: the metadata scenario, and
 * the authorization-code grant, whose browser step (sign-in, consent) this test
 * plays over HTTP before handing the redirect to the suite's callback listener.
 * The suite needs Node 22, fetched with npx as the server suite is.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startStack, type Stack } from './stack';
import { PretendBrowser, walkAuthorization } from './oauth-http';

const SUITE = '@modelcontextprotocol/conformance@0.2.0-alpha.12';
const ADMIN = { username: 'admin', password: 'admin-password-123' };
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({ AUTH_MODE: 'builtin', ADMIN_USERNAME: ADMIN.username, ADMIN_PASSWORD: ADMIN.password });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

test('the conformance authorization scenarios pass against the built-in server', async () => {
  const port = await freePort();
  const registered = await fetch(`${stack.baseUrl}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'conformance', redirect_uris: [`http://127.0.0.1:${port}/callback`] }),
  });
  const clientId = String(((await registered.json()) as { client_id: string }).client_id);
  const outputDir = mkdtempSync(join(tmpdir(), 'oauth-conformance-'));
  const args = ['-y', '-p', 'node@22', '-p', SUITE, '--', 'conformance', 'authorization'];
  args.push(
    '--url',
    stack.baseUrl,
    '--client-id',
    clientId,
    '--resource',
    stack.mcpUrl,
    '-p',
    String(port),
    '-o',
    outputDir,
  );
  const child = spawn('npx', args, {
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let walked: Promise<void> | undefined;
  const onData = (d: Buffer): void => {
    output += d.toString();
    const url = /(http:\/\/127\.0\.0\.1:\d+\/oauth\/authorize\?\S+)/.exec(output)?.[1];
    if (url !== undefined && walked === undefined) {
      walked = (async () => {
        const { redirect } = await walkAuthorization(new PretendBrowser(stack.baseUrl), url, ADMIN);
        await fetch(redirect.href); // deliver the code to the suite's callback listener
      })();
    }
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  await walked;
  process.stdout.write(`authorization conformance (${outputDir}):\n${output.slice(output.indexOf('==='))}\n`);
  expect(walked).toBeDefined();
  expect(output).not.toMatch(/FAIL(URE|ED)?\b/);
  expect(code).toBe(0);
}, 300_000);
