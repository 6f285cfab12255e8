import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APP_LAYERS } from './app-layers';
import {
  analyzeApp,
  cyclesOf,
  findCycles,
  importGraphOf,
  nestedFolders,
  nestedSummaryLines,
  unitOf,
} from './import-graph';

/**
 * CONTRIBUTING "Layers": inside an app, folders form floors (pure core, stores
 * with all SQL, orchestration, reads, handlers on top); nothing imports upward
 * and no files import each other in a circle. Every app's production sources
 * are held against its declaration in `app-layers.ts`, and every package's
 * against cycles. Counts per app: `node scripts/import-layers.mjs`.
 */

const ROOT = join(__dirname, '..', '..');
/** A statement sent to PostgreSQL, or the driver itself. */
const SQL_USE = /\.query\(|from 'pg'/;
const apps = readdirSync(join(ROOT, 'apps'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

describe('import layers of apps/*/src', () => {
  it('every app declares its layers', () => {
    expect(apps.filter((app) => APP_LAYERS[app] === undefined)).toEqual([]);
  });

  describe.each(apps)('%s', (app) => {
    const layers = APP_LAYERS[app];
    const report = layers === undefined ? undefined : analyzeApp(ROOT, app, layers);

    it('every folder and top-level file is declared', () => {
      expect(report?.violations.filter((v) => v.kind === 'undeclared').map((v) => v.message)).toEqual([]);
    });

    it('nothing imports a higher floor, or an undeclared peer', () => {
      expect(report?.violations.filter((v) => v.kind !== 'undeclared').map((v) => v.message)).toEqual([]);
    });

    it('no files import each other in a circle', () => {
      expect(report?.cycles.map((cycle) => cycle.join(' <-> '))).toEqual([]);
    });

    it('SQL runs only in its declared units', () => {
      const sqlUnits = layers?.sqlUnits;
      if (sqlUnits === undefined) return;
      const units = layers?.floors.flat() ?? [];
      const srcDir = join(ROOT, 'apps', app, 'src');
      const outside = importGraphOf(srcDir).files.filter((file) => {
        const unit = unitOf(file, units);
        return (
          (unit === undefined || !sqlUnits.includes(unit)) && SQL_USE.test(readFileSync(join(srcDir, file), 'utf8'))
        );
      });
      expect(outside).toEqual([]);
    });
  });
});

// Issue 40 item 4: mcp/ is no longer one unchecked unit; its floors start with the transport.
describe('the gateway', () => {
  const layers = APP_LAYERS['mcp-gateway'];

  it('declares floors inside mcp/, the transport alone on the lowest', () => {
    expect(layers === undefined ? [] : nestedFolders(layers)).toContain('mcp');
    const inner = (layers?.floors ?? []).filter((floor) => floor.some((unit) => unit.startsWith('mcp/')));
    expect(inner[0]).toEqual(['mcp/transport']);
    expect(layers?.floors.flat()).not.toContain('mcp');
  });

  it('keeps wiring just under the entry points and actions just above the stores', () => {
    const floors = (layers?.floors ?? []).map((floor) => [...floor]);
    const level = (unit: string): number => floors.findIndex((floor) => floor.includes(unit));
    expect(level('wiring')).toBe(level('app.ts') - 1);
    expect(level('actions')).toBe(level('db') + 1);
    expect(level('actions')).toBeLessThan(level('auth'));
  });
});

const packages = readdirSync(join(ROOT, 'packages'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

// Packages have no floors of their own (each is one layer of the house), but a cycle between
// their files makes load order matter and hides which module owns a type.
describe.each(packages)('packages/%s/src', (pkg) => {
  it('no files import each other in a circle', () => {
    expect(cyclesOf(join(ROOT, 'packages', pkg, 'src')).map((cycle) => cycle.join(' <-> '))).toEqual([]);
  });
});

describe('the import graph checker', () => {
  it('reports an import from a lower floor to a higher one, and one between peers', () => {
    const root = mkdtempSync(join(tmpdir(), 'layers-'));
    try {
      const src = join(root, 'apps', 'demo', 'src');
      for (const dir of ['low', 'high', 'side']) mkdirSync(join(src, dir), { recursive: true });
      writeFileSync(join(src, 'low', 'a.ts'), "import { b } from '../high/b';\nexport const a = b;\n");
      writeFileSync(join(src, 'high', 'b.ts'), "import { c } from '../side/c';\nexport const b = c;\n");
      writeFileSync(join(src, 'side', 'c.ts'), 'export const c = 1;\n');
      const report = analyzeApp(root, 'demo', { floors: [['low'], ['high', 'side']] });
      expect(report.violations.map((v) => v.kind).sort()).toEqual(['peer', 'upward']);
      expect(report.arrows.up).toEqual([['low', 'high']]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('holds nested units to their own floors: an upward import inside a folder is caught', () => {
    const root = mkdtempSync(join(tmpdir(), 'layers-'));
    try {
      const src = join(root, 'apps', 'demo', 'src');
      for (const dir of ['x/low', 'x/high', 'top']) mkdirSync(join(src, dir), { recursive: true });
      writeFileSync(join(src, 'x', 'low', 'a.ts'), "import { b } from '../high/b';\nexport const a = b;\n");
      writeFileSync(join(src, 'x', 'high', 'b.ts'), 'export const b = 1;\n');
      writeFileSync(join(src, 'x', 'glue.ts'), "import { a } from './low/a';\nexport const glue = a;\n");
      writeFileSync(join(src, 'top', 'c.ts'), "import { glue } from '../x/glue';\nexport const c = glue;\n");
      const layers = { floors: [['x/low'], ['x/high'], ['x/glue.ts'], ['top']] };
      const report = analyzeApp(root, 'demo', layers);
      expect(report.violations.map((v) => v.kind)).toEqual(['upward']);
      expect(report.violations[0]?.message).toContain(
        'src/x/low/a.ts (x/low, floor 0) imports src/x/high/b.ts (x/high, floor 1)',
      );
      expect(report.arrows.up).toEqual([['x/low', 'x/high']]);
      expect(nestedSummaryLines(report, layers)).toEqual([
        '  x/: 3 files, 3 units on 3 floors (lowest: x/low); 2 inner import arrows: 1 down, 1 up, 0 between peers; 0 file cycles',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('finds a cycle through several files and a self-import, and not a diamond', () => {
    const edges = [
      { from: 'a.ts', to: 'b.ts' },
      { from: 'b.ts', to: 'c.ts' },
      { from: 'c.ts', to: 'a.ts' },
      { from: 'd.ts', to: 'd.ts' },
      { from: 'e.ts', to: 'f.ts' },
      { from: 'e.ts', to: 'g.ts' },
      { from: 'f.ts', to: 'h.ts' },
      { from: 'g.ts', to: 'h.ts' },
    ];
    expect(findCycles(['a.ts', 'b.ts', 'c.ts', 'd.ts', 'e.ts', 'f.ts', 'g.ts', 'h.ts'], edges)).toEqual([
      ['a.ts', 'b.ts', 'c.ts'],
      ['d.ts'],
    ]);
  });
});
