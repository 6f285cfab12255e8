/**
 * The bench's DAGs: realistic YAMLs (the generator of
 * apps/dag-service/bench/dag-seed.ts: 15–40 lines, description, labels with
 * 10 workspaces, a schedule on 60 %, 2–6 steps, one token `batch-b<i>` unique
 * to each DAG), stored through the stack's own front door (`dagu_change`
 * apply over MCP), so the rows are exactly what the service writes.
 */
import { call, keepAliveAgent } from './mcp-http.mjs';

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

/** mulberry32: every run seeds the same DAGs. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Name of DAG number `i`: `dag-00042`, every 7th with a `-report` suffix. */
export function dagName(i) {
  return `dag-${String(i).padStart(5, '0')}${i % 7 === 0 ? '-report' : ''}`;
}

/** The YAML of DAG number `i`. */
export function dagYaml(i) {
  const next = random(i + 1);
  const pick = (items) => items[Math.floor(next() * items.length)];
  const word = () => pick(WORDS);
  const lines = [`description: "${word()} ${word()} ${word()} for ${pick(TEAMS)}"`];
  lines.push(`labels: [team=${pick(TEAMS)}, env=${next() < 0.5 ? 'prod' : 'dev'}, workspace=ws-${i % 10}]`);
  if (next() < 0.6) lines.push(`schedule: "${Math.floor(next() * 4) * 15} ${Math.floor(next() * 10)} * * *"`);
  lines.push('env:', `  - BATCH_ID: batch-b${i}`, `  - TARGET: ${word()}`, 'steps:');
  const steps = 2 + Math.floor(next() * 5);
  const names = [];
  for (let s = 0; s < steps; s += 1) {
    const stepName = `${word()}-${s}`;
    lines.push(`  - name: ${stepName}`, `    run: ${JSON.stringify(pick(COMMANDS).replace(/\{w\}/g, word()))}`);
    if (s > 0) lines.push(`    depends: [${names[s - 1]}]`);
    if (next() < 0.3) lines.push('    retry_policy:', '      limit: 3', '      interval_sec: 30');
    names.push(stepName);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Applies `dagu_change` for each `{name, spec}` in `dags`, `concurrency` at a
 * time, in one session.
 *
 * @throws Error when a DAG is not applied
 */
export async function applyDags(url, session, token, dags, concurrency = 16) {
  const agent = keepAliveAgent(concurrency);
  let next = 0;
  let id = 1000;
  const worker = async () => {
    for (let i = next++; i < dags.length; i = next++) {
      const { name, spec } = dags[i];
      const result = await call(
        url,
        session,
        'tools/call',
        { name: 'dagu_change', arguments: { mode: 'apply', name, spec } },
        { token, agent, id: id++, timeoutMs: 60_000 },
      );
      if (result.isError === true || result.structuredContent?.applied !== true) {
        throw new Error(
          `dagu_change ${name} was not applied: ${JSON.stringify(result.structuredContent ?? result).slice(0, 500)}`,
        );
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
}

/** Stores bench DAGs `from`…`to-1` (`dag-00000`…) through `dagu_change`. */
export async function seedDags(url, session, token, from, to, concurrency = 16) {
  const dags = Array.from({ length: Math.max(0, to - from) }, (_, k) => ({
    name: dagName(from + k),
    spec: dagYaml(from + k),
  }));
  await applyDags(url, session, token, dags, concurrency);
}

/**
 * Fills DAGs `templates`…`count-1` by copying rows the service wrote for DAGs
 * `0…templates-1` (`seedDags` first): DAG `i` is a copy of template
 * `i % templates` with its own name and its own `batch-b<i>` token in the
 * spec and in the normalized model, every other column as the service
 * derived it. One INSERT … SELECT per 2,000 rows, then ANALYZE. Only the
 * table name and the `name`/`spec`/`normalized` columns are assumed.
 */
export async function cloneDags(databaseUrl, schema, count, templates) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const table = `"${schema}".dags`;
    for (let from = templates; from < count; from += 2000) {
      const names = [];
      const sources = [];
      const sourceTokens = [];
      const tokens = [];
      for (let i = from; i < Math.min(count, from + 2000); i += 1) {
        names.push(dagName(i));
        sources.push(dagName(i % templates));
        sourceTokens.push(String(i % templates));
        tokens.push(String(i));
      }
      await client.query(
        `INSERT INTO ${table}
         SELECT (jsonb_populate_record(NULL::${table}, to_jsonb(d) || jsonb_build_object(
           'name', v.name,
           'spec', replace(d.spec, 'batch-b' || v.source_token || E'\\n', 'batch-b' || v.token || E'\\n'),
           'normalized', replace(d.normalized::text, 'batch-b' || v.source_token || '"', 'batch-b' || v.token || '"')::jsonb))).*
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS v(name, source, source_token, token)
         JOIN ${table} d ON d.name = v.source`,
        [names, sources, sourceTokens, tokens],
      );
    }
    const { rows } = await client.query(`SELECT count(*)::int AS n FROM ${table}`);
    // As autovacuum would have by then: statistics and the visibility map (index-only scans).
    await client.query(`VACUUM ANALYZE ${table}`);
    return rows[0].n;
  } finally {
    await client.end();
  }
}
