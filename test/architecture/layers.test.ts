import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { APP_LAYERS } from './app-layers';
import { analyzeApp, cyclesOf, findCycles } from './import-graph';

/**
 * CONTRIBUTING "Layers": inside an app, folders form floors (pure core, stores
 * with all SQL, orchestration, reads, handlers on top); nothing imports upward
 * and no files import each other in a circle. Every app's production sources
 * are held against its declaration in `app-layers.ts`, and every package's
 * against cycles. Counts per app: `node scripts/import-layers.mjs`.
 */

const ROOT = join(__dirname, '..', '..');
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
