/**
 * The README's snippets are what the tests run (issue "The first hour", item 1): every JSON
 * snippet parses, and the MCP Inspector command is the one the Inspector smoke test runs
 * (test/e2e/protocol-inspector.e2e.test.ts), with the Inspector's version pinned.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { INSPECTOR_NPX_ARGS, INSPECTOR_PACKAGE } from '../e2e/inspector-cli';
import { codeBlocks } from './readme-blocks';

const README = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
const blocks = codeBlocks(README);

test('every JSON snippet of the README parses', () => {
  const json = blocks.filter((b) => b.lang === 'json');
  expect(json.length).toBeGreaterThanOrEqual(2);
  for (const block of json) expect(() => JSON.parse(block.text) as unknown).not.toThrow();
});

test("the README's Inspector command is the pinned one the Inspector smoke test runs", () => {
  const commands = blocks
    .filter((b) => b.lang === 'sh')
    .map((b) => b.text.replace(/\\\n\s*/g, ''))
    .filter((text) => text.includes('mcp-inspector'));
  expect(commands).toHaveLength(1);
  const command = commands[0] ?? '';
  expect(command).toContain(INSPECTOR_PACKAGE);
  expect(command.startsWith(`npx ${INSPECTOR_NPX_ARGS.join(' ')} http://127.0.0.1:8080/mcp`)).toBe(true);
  expect(command).toContain('--transport http');
  // The version is a pinned one: an unpinned name resolves to whatever npx finds under Node 20.
  expect(INSPECTOR_PACKAGE).toMatch(/^@modelcontextprotocol\/inspector@\d+\.\d+\.\d+$/);
});
