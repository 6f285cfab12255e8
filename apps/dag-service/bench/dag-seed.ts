import type { DagCatalog } from '../src/dags/dag.catalog';

/**
 * Realistic DAG YAMLs for the search benchmark: 15–40 lines each, a
 * description from a small vocabulary, labels (team, env, workspace — 10
 * workspaces), a schedule on 60 % of them (from 40 distinct expressions),
 * 2–6 steps with shell commands, and one token unique to each DAG
 * (`batch-b<i>`), so searches of every selectivity exist.
 */

const WORDS = [
  'nightly',
  'report',
  'sync',
  'export',
  'import',
  'cleanup',
  'archive',
  'billing',
  'ledger',
  'metrics',
  'customer',
  'orders',
  'inventory',
  'warehouse',
  'refresh',
  'snapshot',
  'rollup',
  'audit',
  'digest',
  'reconcile',
];
const COMMANDS = [
  'echo start',
  'python3 etl.py --table {w}',
  'psql -c "VACUUM {w}"',
  'curl -fsS https://api.example.com/{w}',
  'rsync -a /data/{w}/ /backup/{w}/',
  'gzip -9 /tmp/{w}.csv',
  'echo done {w}',
  'aws s3 cp /tmp/{w}.parquet s3://lake/{w}/',
];
const TEAMS = ['data', 'ops', 'finance', 'web'];

/** A deterministic pseudo-random generator (mulberry32), so every run seeds the same DAGs. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(items: readonly T[], next: () => number): T {
  const item = items[Math.floor(next() * items.length)];
  if (item === undefined) throw new Error('pick from an empty list');
  return item;
}

/** The YAML of DAG number `i`. */
export function benchDagYaml(i: number): string {
  const next = random(i + 1);
  const word = (): string => pick(WORDS, next);
  const lines = [`description: "${word()} ${word()} ${word()} for ${pick(TEAMS, next)}"`];
  lines.push(`labels: [team=${pick(TEAMS, next)}, env=${next() < 0.5 ? 'prod' : 'dev'}, workspace=ws-${i % 10}]`);
  if (next() < 0.6) lines.push(`schedule: "${Math.floor(next() * 4) * 15} ${Math.floor(next() * 10)} * * *"`);
  lines.push('env:', `  - BATCH_ID: batch-b${i}`, `  - TARGET: ${word()}`, 'steps:');
  const steps = 2 + Math.floor(next() * 5);
  const stepNames: string[] = [];
  for (let s = 0; s < steps; s += 1) {
    const stepName = `${word()}-${s}`;
    lines.push(`  - name: ${stepName}`, `    run: ${JSON.stringify(pick(COMMANDS, next).replace(/\{w\}/g, word()))}`);
    const previous = stepNames[s - 1];
    if (previous !== undefined) lines.push(`    depends: [${previous}]`);
    if (next() < 0.3) lines.push('    retry_policy:', '      limit: 3', '      interval_sec: 30');
    stepNames.push(stepName);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Stores `count` DAGs named `dag-00000`… through `catalog.upsert`, 16 at a time.
 *
 * @throws Error when a seeded YAML does not validate (a bug of this file).
 */
export async function seedDags(catalog: DagCatalog, count: number): Promise<void> {
  let nextIndex = 0;
  const worker = async (): Promise<void> => {
    for (let i = nextIndex++; i < count; i = nextIndex++) {
      const name = `dag-${String(i).padStart(5, '0')}${i % 7 === 0 ? '-report' : ''}`;
      const reply = await catalog.upsert({ name, spec: benchDagYaml(i) }, Date.now() + 60_000);
      if (!reply.applied) throw new Error(`seed DAG ${name} is invalid: ${reply.errors.join('; ')}`);
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
}
