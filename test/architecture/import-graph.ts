import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as ts from 'typescript';
import type { AppLayers } from './app-layers';

/**
 * The import graph of an app's sources (`apps/<app>/src`, production files:
 * `*.test.ts` and `*.test-support.ts` are left out — a test may wire whatever
 * it tests) and the
 * layer rules of docs/architecture.md "Layout": every
 * relative import (`import`, `import type`, `export … from`, dynamic
 * `import()`, `require()`) is resolved to a file and mapped to its unit — the
 * longest declared folder or top file of `app-layers.ts` that contains it.
 */

/** One resolved import between two files of the app (paths relative to `src`, `/`-separated). */
export interface ImportEdge {
  from: string;
  to: string;
}

/** A rule broken by the app's imports. */
export interface LayerViolation {
  kind: 'upward' | 'peer' | 'undeclared';
  message: string;
}

/** What {@link analyzeApp} found. */
export interface AppReport {
  app: string;
  files: string[];
  edges: ImportEdge[];
  /** Distinct unit → unit arrows of files in different units, by direction. */
  arrows: { down: Array<[string, string]>; up: Array<[string, string]>; peer: Array<[string, string]> };
  /** Groups of files that import each other in a circle (each strongly connected component of 2+ files, or a file importing itself). */
  cycles: string[][];
  violations: LayerViolation[];
}

function toPosix(path: string): string {
  return path.split(sep).join('/');
}

/** A production source: `.ts`, not a unit test (`x.test.ts`), not test support (`x.test-support.ts`), not a declaration file. */
function isProductionSource(name: string): boolean {
  return (
    name.endsWith('.ts') && !name.endsWith('.test.ts') && !name.endsWith('.test-support.ts') && !name.endsWith('.d.ts')
  );
}

function listSources(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) listSources(path, out);
    else if (isProductionSource(entry.name)) out.push(path);
  }
  return out;
}

function isFile(path: string): boolean {
  return existsSync(path) && statSync(path).isFile();
}

/** The file a relative specifier names: `x` → `x.ts` / `x/index.ts`; `x.js` → `x.ts` (ESM-style specifiers). */
function resolveSpecifier(fromFile: string, specifier: string): string | undefined {
  const base = resolve(dirname(fromFile), specifier);
  const stem = base.replace(/\.(js|mjs|cjs)$/, '');
  for (const candidate of [base, `${stem}.ts`, join(stem, 'index.ts')])
    if (candidate.endsWith('.ts') && isFile(candidate)) return candidate;
  return undefined;
}

/** Relative specifiers imported by one file (static, type-only, re-exports, dynamic, require). */
export function relativeImportsOf(source: string): string[] {
  const info = ts.preProcessFile(source, true, true);
  return info.importedFiles
    .map((file) => file.fileName)
    .filter((name) => name.startsWith('./') || name.startsWith('../'));
}

/** The unit of `file` (relative to src): the longest declared unit that is the file itself or a folder containing it. */
export function unitOf(file: string, units: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const unit of units) {
    if ((file === unit || file.startsWith(`${unit}/`)) && (best === undefined || unit.length > best.length))
      best = unit;
  }
  return best;
}

/** Strongly connected components with more than one file, or a self-import (Tarjan). */
export function findCycles(files: readonly string[], edges: readonly ImportEdge[]): string[][] {
  const next = new Map<string, string[]>(files.map((file) => [file, []]));
  for (const edge of edges) next.get(edge.from)?.push(edge.to);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let counter = 0;
  const visit = (file: string): void => {
    index.set(file, counter);
    low.set(file, counter);
    counter++;
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(file, Math.min(low.get(file) ?? 0, low.get(to) ?? 0));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file) ?? 0, index.get(to) ?? 0));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (;;) {
      const top = stack.pop();
      if (top === undefined) break;
      onStack.delete(top);
      component.push(top);
      if (top === file) break;
    }
    if (component.length > 1 || (next.get(file) ?? []).includes(file)) cycles.push(component.sort());
  };
  for (const file of files) if (!index.has(file)) visit(file);
  return cycles.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

/**
 * The production files of `srcDir` (tests and test support left out) and the relative imports
 * between them, as paths relative to `srcDir`. Imports that leave `srcDir`, or name a file that
 * is not TypeScript (e.g. package.json), are not part of the graph.
 */
export function importGraphOf(srcDir: string): { files: string[]; edges: ImportEdge[] } {
  const absolute = listSources(srcDir).sort();
  const files = absolute.map((file) => toPosix(relative(srcDir, file)));
  const edges: ImportEdge[] = [];
  for (const file of absolute) {
    for (const specifier of relativeImportsOf(readFileSync(file, 'utf8'))) {
      const target = resolveSpecifier(file, specifier);
      if (target === undefined) continue;
      const to = toPosix(relative(srcDir, target));
      if (to.startsWith('../')) continue;
      edges.push({ from: toPosix(relative(srcDir, file)), to });
    }
  }
  return { files, edges };
}

/** The file cycles of any source folder (a package's `src`), as {@link findCycles} gives them. */
export function cyclesOf(srcDir: string): string[][] {
  const { files, edges } = importGraphOf(srcDir);
  return findCycles(files, edges);
}

/** Builds the graph of `apps/<app>/src` and checks it against `layers`. */
export function analyzeApp(repoRoot: string, app: string, layers: AppLayers): AppReport {
  const { files, edges } = importGraphOf(join(repoRoot, 'apps', app, 'src'));
  const violations: LayerViolation[] = [];
  const floorOf = new Map<string, number>();
  layers.floors.forEach((floor, level) => floor.forEach((unit) => floorOf.set(unit, level)));
  const units = [...floorOf.keys()];
  for (const file of files) {
    if (unitOf(file, units) === undefined)
      violations.push({
        kind: 'undeclared',
        message: `${app}: src/${file} is in no declared layer (add its folder to test/architecture/app-layers.ts)`,
      });
  }
  const allowedPeers = new Set((layers.peerImports ?? []).map(([from, to]) => `${from}\u0000${to}`));
  const arrows = {
    down: new Map<string, [string, string]>(),
    up: new Map<string, [string, string]>(),
    peer: new Map<string, [string, string]>(),
  };
  for (const edge of edges) {
    const fromUnit = unitOf(edge.from, units);
    const toUnit = unitOf(edge.to, units);
    if (fromUnit === undefined || toUnit === undefined || fromUnit === toUnit) continue;
    const fromFloor = floorOf.get(fromUnit) ?? 0;
    const toFloor = floorOf.get(toUnit) ?? 0;
    const key = `${fromUnit}\u0000${toUnit}`;
    if (toFloor < fromFloor) {
      arrows.down.set(key, [fromUnit, toUnit]);
    } else if (toFloor > fromFloor) {
      arrows.up.set(key, [fromUnit, toUnit]);
      violations.push({
        kind: 'upward',
        message: `${app}: src/${edge.from} (${fromUnit}, floor ${fromFloor}) imports src/${edge.to} (${toUnit}, floor ${toFloor}) above it`,
      });
    } else {
      arrows.peer.set(key, [fromUnit, toUnit]);
      if (!allowedPeers.has(key)) {
        violations.push({
          kind: 'peer',
          message: `${app}: src/${edge.from} (${fromUnit}) imports src/${edge.to} (${toUnit}), a peer on floor ${fromFloor} it is not declared to use`,
        });
      }
    }
  }
  return {
    app,
    files,
    edges,
    arrows: { down: [...arrows.down.values()], up: [...arrows.up.values()], peer: [...arrows.peer.values()] },
    cycles: findCycles(files, edges),
    violations,
  };
}

/** One line per app: units, cross-unit arrows down / up / between peers, cycles. */
export function summaryLine(report: AppReport, layers: AppLayers): string {
  const units = layers.floors.reduce((n, floor) => n + floor.length, 0);
  const { down, up, peer } = report.arrows;
  return (
    `${report.app}: ${report.files.length} files, ${units} units on ${layers.floors.length} floors; ` +
    `${down.length + up.length + peer.length} cross-unit import arrows: ${down.length} down, ${up.length} up, ${peer.length} between peers; ` +
    `${report.cycles.length} file cycle${report.cycles.length === 1 ? '' : 's'}${report.cycles.length > 0 ? ` (${report.cycles.map((c) => c.join(' <-> ')).join('; ')})` : ''}`
  );
}

/**
 * The folders split into nested units (the gateway's `mcp/`): top-level folders of `src` that
 * hold two or more declared units. Their inner arrows are part of {@link summaryLine}'s counts;
 * {@link nestedSummaryLines} shows them apart.
 */
export function nestedFolders(layers: AppLayers): string[] {
  const count = new Map<string, number>();
  for (const unit of layers.floors.flat()) {
    const slash = unit.indexOf('/');
    if (slash > 0) count.set(unit.slice(0, slash), (count.get(unit.slice(0, slash)) ?? 0) + 1);
  }
  return [...count]
    .filter(([, n]) => n >= 2)
    .map(([folder]) => folder)
    .sort();
}

/** Per nested folder: its files, inner units and floors, the arrows between its units, its file cycles. */
export function nestedSummaryLines(report: AppReport, layers: AppLayers): string[] {
  return nestedFolders(layers).map((folder) => {
    const inside = (path: string): boolean => path.startsWith(`${folder}/`);
    const units = layers.floors.flat().filter(inside);
    const floors = layers.floors.filter((floor) => floor.some(inside));
    const between = ([from, to]: [string, string]): boolean => inside(from) && inside(to);
    const down = report.arrows.down.filter(between).length;
    const up = report.arrows.up.filter(between).length;
    const peer = report.arrows.peer.filter(between).length;
    const cycles = report.cycles.filter((cycle) => cycle.some(inside)).length;
    return (
      `  ${folder}/: ${report.files.filter(inside).length} files, ${units.length} units on ${floors.length} floors ` +
      `(lowest: ${floors[0]?.filter(inside).join(', ') ?? '-'}); ` +
      `${down + up + peer} inner import arrows: ${down} down, ${up} up, ${peer} between peers; ` +
      `${cycles} file cycle${cycles === 1 ? '' : 's'}`
    );
  });
}

/** The declared floors, top first, one line each (for `import-layers.mjs --verbose`). */
export function floorLines(layers: AppLayers): string[] {
  return layers.floors.map((floor, level) => `  floor ${level}: ${floor.join(', ')}`).reverse();
}
