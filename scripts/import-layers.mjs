// Prints, per app, the cross-unit import arrows of apps/<app>/src that run down, up and between
// peers, and the file cycles, by the layers declared in test/architecture/app-layers.ts
// (the rules themselves are checked by test/architecture/layers.test.ts).
// A folder split into nested units (the gateway's mcp/) gets a second line with its inner counts.
// Usage: node scripts/import-layers.mjs [app…] [--verbose]   (--verbose lists the floors, top first, and every violation)
import { createRequire } from 'node:module';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// Compiles the TypeScript declaration and checker on require, as Jest does.
require(join(root, 'packages/bus/test-fixtures/ts-register.js'));
const { APP_LAYERS } = require(join(root, 'test/architecture/app-layers.ts'));
const { analyzeApp, floorLines, nestedSummaryLines, summaryLine } = require(
  join(root, 'test/architecture/import-graph.ts'),
);

const args = process.argv.slice(2);
const verbose = args.includes('--verbose');
const wanted = args.filter((arg) => !arg.startsWith('--'));
const apps = readdirSync(join(root, 'apps'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && (wanted.length === 0 || wanted.includes(entry.name)))
  .map((entry) => entry.name)
  .sort();
let broken = 0;
for (const app of apps) {
  const layers = APP_LAYERS[app];
  if (layers === undefined) {
    console.log(`${app}: no layers declared in test/architecture/app-layers.ts`);
    broken++;
    continue;
  }
  const report = analyzeApp(root, app, layers);
  console.log(summaryLine(report, layers));
  for (const line of nestedSummaryLines(report, layers)) console.log(line);
  if (verbose) {
    for (const line of floorLines(layers)) console.log(line);
    for (const violation of report.violations) console.log(`  ${violation.kind}: ${violation.message}`);
  }
  broken += report.violations.length + report.cycles.length;
}
process.exitCode = broken > 0 ? 1 : 0;
