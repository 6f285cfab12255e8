/**
 * What the answers given during an outage promised, checked afterwards
 * against the stores (issue 44, docs/reliability.md "What each answer
 * promises"): `resource_unavailable` without an outcome (or `not_applied`)
 * means not applied; `outcome: "unknown"` is resolved by its request id through
 * `GET /api/v1/mutations/{requestId}` (`mutation.outcome`) and must then agree
 * with the store; and the audit trail holds an event for every call that
 * reached the gateway's tools and every change that was applied.
 */
import { formatDaguUri } from '@dagu-mcp/contracts';
import { Pool } from 'pg';
import type { Outcome } from './load';

/** The mutations of the workload whose fate is checked: DAG applies, wiki page writes, run starts. */
const MUTATIONS = new Set(['apply', 'wiki-put', 'start']);

/** A mutation answer and what it turned out to be. */
export interface Fate {
  readonly outcome: Outcome;
  /** What the answer said (`ok`: applied; `unavailable` without an outcome: not applied). */
  readonly said: 'applied' | 'not_applied' | 'unknown';
  /** What the store or `mutation.outcome` says. */
  readonly truth: 'applied' | 'not_applied';
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as Record<string, unknown> };
}

/** Asks `mutation.outcome` by request id until a service answers (each must, once the outage is over). */
async function resolve(baseUrl: string, requestId: string): Promise<'applied' | 'not_applied'> {
  const until = Date.now() + 30_000;
  for (;;) {
    const { status, body } = await getJson(`${baseUrl}/api/v1/mutations/${encodeURIComponent(requestId)}`);
    if (status === 200 && (body.outcome === 'applied' || body.outcome === 'not_applied')) return body.outcome;
    if (status !== 503 || Date.now() > until)
      throw new Error(`mutation.outcome of ${requestId}: ${status} ${JSON.stringify(body)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Whether the DAG or wiki page a mutation named is stored. */
async function stored(baseUrl: string, o: Outcome): Promise<boolean> {
  const path = o.op === 'apply' ? `/dags/${o.target}` : `/wiki/default/pages/${o.target}`;
  const res = await fetch(`${baseUrl}/api/v1${path}`, { signal: AbortSignal.timeout(15_000) });
  await res.arrayBuffer();
  if (res.status !== 200 && res.status !== 404) throw new Error(`GET ${path}: ${res.status}`);
  return res.status === 200;
}

/**
 * The fate of every mutation answer: unknown ones resolved by request id, the
 * others read from the store (starts have no name of their own: their truth is
 * what the answer said, and {@link lies} counts runs against it).
 *
 * @returns the fates and every broken promise found on the way (an unknown answer without a request id).
 */
export async function fatesOf(
  baseUrl: string,
  outcomes: readonly Outcome[],
): Promise<{ fates: Fate[]; broken: string[] }> {
  const fates: Fate[] = [];
  const broken: string[] = [];
  for (const o of outcomes) {
    if (!MUTATIONS.has(o.op) || (o.kind !== 'ok' && o.kind !== 'unavailable')) continue;
    const said =
      o.kind === 'ok' || o.outcome === 'applied' ? 'applied' : o.outcome === 'unknown' ? 'unknown' : 'not_applied';
    let truth: 'applied' | 'not_applied';
    if (said === 'unknown') {
      if (o.requestId === undefined) {
        broken.push(`${o.op} ${o.target ?? ''}: outcome unknown without details.requestId`);
        continue;
      }
      truth = await resolve(baseUrl, o.requestId);
      if (o.target !== undefined && (await stored(baseUrl, o)) !== (truth === 'applied'))
        broken.push(`${o.op} ${o.target}: mutation.outcome says ${truth}, the store disagrees`);
    } else if (o.target !== undefined) {
      truth = (await stored(baseUrl, o)) ? 'applied' : 'not_applied';
    } else truth = said;
    fates.push({ outcome: o, said, truth });
  }
  return { fates, broken };
}

/**
 * Answers that were not true: "not applied" (`resource_unavailable` without an
 * outcome, or `not_applied`) for a change that is stored, "applied" for one that
 * is not; and, for starts, more runs than starts answered or resolved applied.
 */
export function lies(fates: readonly Fate[], runCount: number): string[] {
  const out = fates
    .filter((f) => f.said !== 'unknown' && f.said !== f.truth)
    .map(
      (f) =>
        `${f.outcome.op} ${f.outcome.target ?? ''} answered ${f.said} (${f.outcome.kind}` +
        `${f.outcome.dependency !== undefined ? `, ${f.outcome.dependency}` : ''}) but is ${f.truth}`,
    );
  const applied = fates.filter((f) => f.outcome.op === 'start' && f.truth === 'applied').length;
  if (runCount !== applied) out.push(`${runCount} runs exist, but ${applied} starts were answered or resolved applied`);
  return out;
}

/** An audit row as the check reads it. */
interface AuditRow {
  action: string;
  target: string | null;
}

/**
 * Events missing from the gateway's audit trail (waits up to 30 s for the
 * drains and the buffered writes): every applied DAG, page and run has its
 * service row; every `received` tool call of the workload has its end
 * (`succeeded`/`failed`/`denied`); every apply answered by the tool (all of
 * them when `allReachedTools`, as during a PostgreSQL outage with Redis up)
 * has both; and with `allReachedTools` every start call has its `received`.
 */
export async function missingAuditEvents(
  databaseUrl: string,
  schema: string,
  options: {
    ns: string;
    runDag: string;
    fates: readonly Fate[];
    runIds: readonly string[];
    outcomes: readonly Outcome[];
    allReachedTools: boolean;
  },
): Promise<string[]> {
  const pool = new Pool({ connectionString: databaseUrl, max: 1 });
  try {
    const until = Date.now() + 30_000;
    for (;;) {
      const { rows } = await pool.query<AuditRow>(
        `SELECT action, target FROM "${schema}".audit_events WHERE target LIKE $1 OR target LIKE $2 OR target LIKE $3`,
        [`%${options.ns}-%`, `%:${options.runDag}`, `dagu://runs/${options.runDag}/%`],
      );
      const missing = findMissing(rows, options);
      if (missing.length === 0 || Date.now() > until) return missing;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  } finally {
    await pool.end();
  }
}

function findMissing(rows: readonly AuditRow[], options: Parameters<typeof missingAuditEvents>[2]): string[] {
  const count = (action: string, target: string): number =>
    rows.filter((r) => r.action === action && r.target === target).length;
  const ends = (target: string): number =>
    rows.filter((r) => r.target === target && /^mcp\.tool_call\.(succeeded|failed|denied)$/.test(r.action)).length;
  const missing: string[] = [];
  for (const f of options.fates) {
    if (f.truth !== 'applied' || f.outcome.target === undefined) continue;
    const { op, target } = f.outcome;
    if (op === 'apply' && count('dag.upserted', `dagu://dags/${target}/spec`) === 0)
      missing.push(`dag.upserted ${target}`);
    const page = formatDaguUri({ kind: 'wiki_page', workspace: 'default', path: target });
    if (op === 'wiki-put' && count('wiki.page.upserted', page) === 0) missing.push(`wiki.page.upserted ${target}`);
  }
  for (const id of options.runIds)
    if (count('run.started', `dagu://runs/${options.runDag}/${id}`) === 0) missing.push(`run.started ${id}`);
  const toolTargets = new Set(rows.filter((r) => r.action === 'mcp.tool_call.received').map((r) => r.target ?? ''));
  for (const target of toolTargets) {
    const received = count('mcp.tool_call.received', target);
    if (ends(target) < received)
      missing.push(`${received - ends(target)} end(s) of ${received} tool call(s) ${target}`);
  }
  for (const o of options.outcomes) {
    if (o.op !== 'apply' || o.target === undefined) continue;
    if (!options.allReachedTools && o.kind !== 'ok') continue;
    const target = `dagu_change:apply:${o.target}`;
    if (count('mcp.tool_call.received', target) === 0 || ends(target) === 0)
      missing.push(`tool call events of ${target}`);
  }
  if (options.allReachedTools) {
    const starts = options.outcomes.filter((o) => o.op === 'start').length;
    const received = count('mcp.tool_call.received', `dagu_execute:start:${options.runDag}`);
    if (received < starts) missing.push(`${starts - received} of ${starts} start calls have no received event`);
  }
  return missing;
}
