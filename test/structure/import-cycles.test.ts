import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * No file-level import cycles (type-only imports included) inside the apps
 * and packages listed here: a cycle makes load order matter and hides which
 * module owns a type. run-service joins the list once its re-layering lands.
 */
const ROOT = resolve(__dirname, '../..');
const CHECKED = ['apps/mcp-gateway/src', 'apps/dag-service/src', 'apps/wiki-service/src', 'packages/runtime/src', 'packages/search/src', 'packages/contracts/src'];
const RELATIVE_IMPORT = /(?:import|export)[^'"]*?from\s+['"](\.[^'"]+)['"]/g;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

/** The files `file` imports by relative path, resolved to `.ts` or `index.ts`. */
function importsOf(file: string, known: ReadonlySet<string>): string[] {
  const found: string[] = [];
  for (const match of readFileSync(file, 'utf8').matchAll(RELATIVE_IMPORT)) {
    const base = resolve(dirname(file), match[1] ?? '');
    const target = [`${base}.ts`, join(base, 'index.ts')].find((candidate) => known.has(candidate));
    if (target !== undefined) found.push(target);
  }
  return found;
}

/** One cycle reachable from each file that is on one, as relative paths. */
function findCycles(files: readonly string[]): string[][] {
  const known = new Set(files);
  const graph = new Map(files.map((file) => [file, importsOf(file, known)]));
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[][] = [];
  const visit = (file: string, path: string[]): void => {
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), file, next].map((f) => relative(ROOT, f)));
      else if (state.get(next) === undefined) visit(next, [...path, file]);
    }
    state.set(file, 'done');
  };
  for (const file of files) if (state.get(file) === undefined) visit(file, []);
  return cycles;
}

describe('import cycles', () => {
  it.each(CHECKED)('none between the files of %s', (dir) => {
    expect(findCycles(sourceFiles(join(ROOT, dir)))).toEqual([]);
  });
});
