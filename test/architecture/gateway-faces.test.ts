import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { importGraphOf } from './import-graph';

/**
 * Issue 40 "Done means": the gateway's faces (REST routes, MCP tools, agent
 * tools) are thin adapters over `actions/`. Held over the gateway's production
 * sources (tests and test support left out):
 * - no bus call in `routes/` or `mcp/tools/`: the actions make them;
 * - no `asRest…` helper: REST errors are mapped once, by `http/rest-errors.ts`;
 * - no role literal deciding access in a face: an op's role lives on the op
 *   (packages/contracts/src/ops.ts), a gateway-local route's in
 *   `actions/route-roles.ts`, and the action's `requireOpRole` is the check.
 * Each failure names the file and line.
 */

const SRC = join(__dirname, '..', '..', 'apps', 'mcp-gateway', 'src');
/** The services a bus call names first (`bus.call('run', runOps, …)`). */
const SERVICES = new Set(['run', 'dag', 'wiki', 'agent']);

interface Source {
  /** Relative to `src`, `/`-separated. */
  readonly path: string;
  readonly file: ts.SourceFile;
}

const sources: readonly Source[] = importGraphOf(SRC).files.map((path) => ({
  path,
  file: ts.createSourceFile(path, readFileSync(join(SRC, path), 'utf8'), ts.ScriptTarget.Latest, true),
}));

function under(...folders: string[]): readonly Source[] {
  return sources.filter((source) => folders.some((folder) => source.path.startsWith(`${folder}/`)));
}

/** `src/<path>:<line>: <the node's text, first line>` for every node of `sources` that `match` picks. */
function findings(of: readonly Source[], match: (node: ts.Node) => boolean): string[] {
  const found: string[] = [];
  for (const { path, file } of of) {
    const visit = (node: ts.Node): void => {
      if (match(node)) {
        const line = file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
        found.push(`src/${path}:${line}: ${node.getText(file).split('\n')[0] ?? ''}`);
      }
      ts.forEachChild(node, visit);
    };
    visit(file);
  }
  return found;
}

function isStringLiteral(node: ts.Node | undefined): node is ts.StringLiteralLike {
  return node !== undefined && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node));
}

/** `x.call(…)` on something named `bus` (`bus`, `deps.bus`, `this.bus`), or any `.call('run' | 'dag' | 'wiki' | 'agent', …)`. */
function isBusCall(node: ts.Node): boolean {
  if (!ts.isCallExpression(node) || !ts.isPropertyAccessExpression(node.expression)) return false;
  const { expression: receiver, name } = node.expression;
  if (name.text !== 'call') return false;
  const receiverName = ts.isPropertyAccessExpression(receiver)
    ? receiver.name.text
    : ts.isIdentifier(receiver)
      ? receiver.text
      : undefined;
  if (receiverName !== undefined && /bus$/i.test(receiverName)) return true;
  const first = node.arguments[0];
  return isStringLiteral(first) && SERVICES.has(first.text);
}

/** An identifier `asRest` or `asRest…` (`asRestError`): a local REST error remap. */
function isAsRest(node: ts.Node): boolean {
  return ts.isIdentifier(node) && /^asRest([A-Z_]|$)/.test(node.text);
}

/** `access: 'operator'` (any string literal): a route's role written by hand. */
function isAccessLiteral(node: ts.Node): boolean {
  if (!ts.isPropertyAssignment(node)) return false;
  const name = ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) ? node.name.text : undefined;
  return name === 'access' && isStringLiteral(node.initializer);
}

/** `roleAtLeast(x, 'developer')` (or `….roleAtLeast(…)`): an access decision on a role literal. */
function isRoleLiteralCheck(node: ts.Node): boolean {
  if (!ts.isCallExpression(node)) return false;
  const callee = node.expression;
  const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : '';
  return name === 'roleAtLeast' && node.arguments.some((argument) => isStringLiteral(argument));
}

describe('the gateway faces are thin (issue 40)', () => {
  it('finds the production sources it checks', () => {
    expect(under('routes').length).toBeGreaterThan(0);
    expect(under('mcp/tools').length).toBeGreaterThan(0);
    expect(under('agents').length).toBeGreaterThan(0);
  });

  it('no bus call in routes/ or mcp/tools/ (the actions call the bus)', () => {
    expect(findings(under('routes', 'mcp/tools'), isBusCall)).toEqual([]);
  });

  it('no asRest helper anywhere (http/rest-errors.ts maps every code)', () => {
    expect(findings(sources, isAsRest)).toEqual([]);
  });

  it('no route writes its role: no `access:` string literal in routes/ or http/', () => {
    expect(findings(under('routes', 'http'), isAccessLiteral)).toEqual([]);
  });

  it('no roleAtLeast on a role literal in routes/, mcp/tools/ or agents/ (requireOpRole is the check)', () => {
    expect(findings(under('routes', 'mcp/tools', 'agents'), isRoleLiteralCheck)).toEqual([]);
  });
});

describe('the face checks themselves', () => {
  const parse = (text: string): readonly Source[] => [
    { path: 'routes/demo.ts', file: ts.createSourceFile('demo.ts', text, ts.ScriptTarget.Latest, true) },
  ];

  it('name the file and line of a bus call, an asRest, an access literal and a roleAtLeast literal', () => {
    const demo = parse(
      [
        '// bus.call( in a comment is not a call',
        "const a = await deps.bus.call('run', runOps, 'run.list', {}, { principal });",
        "const b = await client.call('wiki', wikiOps, 'wiki.get', {}, { principal });",
        'const c = asRestError(err);',
        "const d = { access: 'operator', action: 'run.list' };",
        "const e = roleAtLeast(principal.role, 'developer');",
        "const f = roleAtLeast(principal.role, requiredRoleOf('dag.write'));",
        'const g = tool.call(args, ctx);',
      ].join('\n'),
    );
    expect(findings(demo, isBusCall)).toEqual([
      "src/routes/demo.ts:2: deps.bus.call('run', runOps, 'run.list', {}, { principal })",
      "src/routes/demo.ts:3: client.call('wiki', wikiOps, 'wiki.get', {}, { principal })",
    ]);
    expect(findings(demo, isAsRest)).toEqual(['src/routes/demo.ts:4: asRestError']);
    expect(findings(demo, isAccessLiteral)).toEqual(["src/routes/demo.ts:5: access: 'operator'"]);
    expect(findings(demo, isRoleLiteralCheck)).toEqual([
      "src/routes/demo.ts:6: roleAtLeast(principal.role, 'developer')",
    ]);
  });
});
