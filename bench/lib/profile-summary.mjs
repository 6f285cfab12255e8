/**
 * Summarizes a V8 .cpuprofile (as written by `node --cpu-prof`, which
 * `bench/run.mjs --profile` turns on for the gateway and dag-service): self
 * time by function and by package/file, and inclusive time of the functions
 * named on the command line.
 *
 *   node bench/lib/profile-summary.mjs <file.cpuprofile> [top=25] [fnName[@fileSubstring] …]
 *
 * e.g. `check@failure-limiter` is the limiter's `check`, not zod's.
 *
 * `PROFILE_WINDOWS="a-b,c-d"` (CLOCK_MONOTONIC µs, as `process.hrtime.bigint() / 1000n`
 * prints in any process of the machine) keeps only the samples inside those
 * windows: one burst's accept phase instead of the process's whole life.
 */
import { readFileSync } from 'node:fs';

const [file, topArg, ...names] = process.argv.slice(2);
const top = Number(topArg ?? 25);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
// PROFILE_WINDOWS="a-b,c-d": only samples inside these CLOCK_MONOTONIC µs windows count.
const windows = (process.env.PROFILE_WINDOWS ?? '')
  .split(',')
  .filter(Boolean)
  .map((w) => w.split('-').map(Number));
let at = profile.startTime;
for (let i = 0; i < profile.samples.length; i += 1) {
  const dt = profile.timeDeltas[i] ?? 0;
  at += dt;
  if (windows.length > 0 && !windows.some(([a, b]) => at >= a && at <= b)) continue;
  self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + dt);
}
const total = [...self.values()].reduce((a, b) => a + b, 0);
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

/** Where a frame's code lives: a package name, `node:<module>`, an app file, or a V8 marker. */
function placeOf(cf) {
  const url = cf.url ?? '';
  if (url === '') return `(${cf.functionName || 'native'})`;
  const pkg = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url;
  const app = /\/(apps|packages)\/([^/]+)\/dist\/(.*)$/.exec(url);
  return app ? `${app[2]}/${app[3]}` : url;
}

const fnSelf = new Map();
const placeSelf = new Map();
for (const [id, t] of self) {
  const cf = byId.get(id).callFrame;
  if (cf.functionName === '(idle)') continue;
  const key = `${cf.functionName || '(anonymous)'}  ${placeOf(cf)}:${cf.lineNumber + 1}`;
  fnSelf.set(key, (fnSelf.get(key) ?? 0) + t);
  placeSelf.set(placeOf(cf), (placeSelf.get(placeOf(cf)) ?? 0) + t);
}
// Shares are of the busy time (everything but `(idle)`).
const idle = [...self]
  .filter(([id]) => byId.get(id).callFrame.functionName === '(idle)')
  .reduce((a, [, t]) => a + t, 0);
const busy = total - idle;
const pct = (t) => `${((t / busy) * 100).toFixed(1).padStart(5)}%`;
const print = (title, map) => {
  console.log(`\n${title}`);
  for (const [k, t] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(t)}  ${k}`);
};
console.log(
  `${file}: ${(total / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s busy (shares below are of the busy time)`,
);
print('self time by package / file', placeSelf);
print('self time by function', fnSelf);
if (names.length > 0) {
  // Inclusive time: samples with the function anywhere on their stack (counted once per sample).
  const inclusive = new Map(names.map((n) => [n, 0]));
  const patterns = names.map((n) => ({ key: n, fn: n.split('@')[0], file: n.split('@')[1] }));
  for (const [id, t] of self) {
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const cf = byId.get(cur).callFrame;
      for (const p of patterns) {
        if (seen.has(p.key) || cf.functionName !== p.fn || (p.file !== undefined && !cf.url.includes(p.file))) continue;
        seen.add(p.key);
        inclusive.set(p.key, inclusive.get(p.key) + t);
      }
    }
  }
  print('inclusive time of named functions', inclusive);
}
