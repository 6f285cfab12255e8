/**
 * The official MCP conformance suite against the real gateway: two replicas
 * behind a plain round-robin proxy, the test-only conformance fixture serving
 * the suite's test_* tools, test:// resources and test_* prompts over the bus
 * (issue "MCP protocol completeness and horizontal scale": every server
 * scenario passes, sampling and elicitation included; baseline in
 * test/conformance/expected-failures.yml).
 *
 * The suite needs Node 22, fetched with npx like the suite itself
 * (`scripts/conformance.sh` runs this file alone).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startStack, type Stack } from './stack';

const SUITE = '@modelcontextprotocol/conformance@0.1.16';
const BASELINE = join(__dirname, '..', 'conformance', 'expected-failures.yml');
let stack: Stack;

beforeAll(async () => {
  stack = await startStack(
    { SSE_KEEPALIVE_MS: '2000', SSE_RETRY_MS: '500' },
    { gatewayReplicas: 2, conformanceFixture: true },
  );
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

/** Runs the suite; resolves with its exit code and output. */
function runSuite(url: string, outputDir: string): Promise<{ code: number | null; output: string }> {
  const args = [
    '-y',
    '-p',
    'node@22',
    '-p',
    SUITE,
    '--',
    'conformance',
    'server',
    '--url',
    url,
    '--suite',
    'all',
    '--expected-failures',
    BASELINE,
    '-o',
    outputDir,
  ];
  return new Promise((resolve) => {
    const child = spawn('npx', args, {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('exit', (code) => resolve({ code, output }));
  });
}

test('every server scenario of the conformance suite passes against two replicas behind round-robin', async () => {
  const outputDir = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  const { code, output } = await runSuite(stack.mcpUrl, outputDir);
  const summary = output.slice(output.lastIndexOf('=== SUMMARY ==='));
  writeFileSync(join(outputDir, 'output.txt'), output);
  process.stdout.write(`conformance results (${outputDir}):\n${summary}\n`);
  const scenarios = summary.split('\n').filter((line) => /^[✓✗] /.test(line));
  expect(scenarios.length).toBeGreaterThanOrEqual(32);
  expect(scenarios.filter((line) => line.startsWith('✗'))).toEqual([]);
  expect(code).toBe(0);
  // Both replicas served requests of the suite's sessions.
  expect(new Set(stack.proxy?.routed.map((r) => r.split(' ')[1])).size).toBe(2);
}, 600_000);
