/**
 * The console's bundle budget (issue 26 "How it is built"; docs/web-console.md "Bundle budget"):
 * everything the first page load fetches — the files `apps/web/dist/index.html` refers to,
 * gzipped as a server would send them — stays under {@link FIRST_LOAD_BUDGET_BYTES}. Measures
 * the real build (`npm test` builds first), so a heavy new dependency fails here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

/** 150 kB gzipped for the first load (the ceiling is 300 kB; the console is far below it). */
const FIRST_LOAD_BUDGET_BYTES = 150 * 1024;
const DIST = join(__dirname, '..', '..', 'apps', 'web', 'dist');

/** The files `index.html` loads: module scripts, module preloads and stylesheets. */
function firstLoadFiles(html: string): string[] {
  return [...html.matchAll(/<(?:script|link)\b[^>]*(?:src|href)="([^"]+)"/g)]
    .map((m) => m[1] ?? '')
    .filter((path) => path.startsWith('/console/'));
}

test('the first load of the console is under the gzipped budget', () => {
  const index = join(DIST, 'index.html');
  if (!existsSync(index)) throw new Error(`${index} is missing: build the console first (bash scripts/build.sh)`);
  const html = readFileSync(index, 'utf8');
  const files = firstLoadFiles(html);
  expect(files.some((f) => f.endsWith('.js'))).toBe(true);
  expect(files.some((f) => f.endsWith('.css'))).toBe(true);
  const sizes = files.map((file) => ({ file, gzipped: gzipSync(readFileSync(join(DIST, file))).length }));
  const total = gzipSync(html).length + sizes.reduce((sum, s) => sum + s.gzipped, 0);
  expect({ total, withinBudget: total < FIRST_LOAD_BUDGET_BYTES }).toEqual({ total, withinBudget: true });
});

test('the page loads nothing inline (its CSP allows only its own files)', () => {
  const html = readFileSync(join(DIST, 'index.html'), 'utf8');
  expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
  expect(html).not.toMatch(/<style\b/);
  expect(html).not.toMatch(/\sstyle="/);
});
