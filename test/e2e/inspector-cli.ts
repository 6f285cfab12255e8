/**
 * The MCP Inspector CLI as the README tells people to run it: the pinned package and the
 * `npx` arguments before the server URL. The Inspector smoke test runs exactly this, and
 * the docs test checks that the README's command is this one (issue "The first hour",
 * item 1): an unpinned `@modelcontextprotocol/inspector` resolves, under the outer Node 20,
 * to an old Inspector that has no `--transport`.
 */
export const INSPECTOR_PACKAGE = '@modelcontextprotocol/inspector@2.12.0';

/** `npx` arguments up to (not including) the server URL: Node 22 and the pinned Inspector, CLI mode. */
export const INSPECTOR_NPX_ARGS: readonly string[] = [
  '-y',
  '-p',
  'node@22',
  '-p',
  INSPECTOR_PACKAGE,
  '--',
  'mcp-inspector',
  '--cli',
];
