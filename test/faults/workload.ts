/**
 * The mixed workload of a fault scenario and its invariants afterwards
 * (issue 18): reads (MCP and REST), DAG applies with unique names, wiki page
 * writes and run starts; then "no mutation lost or doubled" and "no run
 * failed because of the fault", checked over REST against what each caller
 * was told.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { RunStatus } from '@dagu-mcp/contracts';
import { callRest, callTool, type LoadOp, type Outcome } from './load';

/** A DAG that finishes in about `seconds` s. */
export function sleepDag(seconds: number): string {
  return `steps:\n  - name: nap\n    run: sleep ${seconds}\n  - name: done\n    depends: nap\n    run: echo done\n`;
}

/** The workload of one scenario; DAG and page names start with `ns`. */
export interface Workload {
  readonly ns: string;
  /** The DAG the starts run (applied by {@link prepare}). */
  readonly runDag: string;
  readonly ops: readonly LoadOp[];
  /** Applies the run DAG (before the fault). */
  prepare(client: Client): Promise<void>;
}

/** Builds the workload of namespace `ns` against `baseUrl` (REST) with runs of `runSeconds`. */
export function createWorkload(baseUrl: string, ns: string, runSeconds = 2): Workload {
  const runDag = `${ns}-run`;
  const read: LoadOp = (client) =>
    callTool(client, 'read', 'dagu_read', { target: 'dags' }, (r) => r.structuredContent !== undefined);
  const apply: LoadOp = (client, seq) => {
    const name = `${ns}-d${seq}`;
    return callTool(
      client,
      'apply',
      'dagu_change',
      { mode: 'apply', name, spec: sleepDag(1) },
      (r) => r.structuredContent?.applied === true,
      name,
    );
  };
  const restRead: LoadOp = () => callRest(baseUrl, 'rest-read', '/dags', {}, (s) => s === 200);
  const wikiPut: LoadOp = (_client, seq) => {
    const page = `${ns}-p${seq}`;
    return callRest(
      baseUrl,
      'wiki-put',
      `/wiki/default/pages/${page}`,
      { method: 'PUT', body: { content: `# ${page}\n` } },
      (s) => s === 200 || s === 201,
      page,
    );
  };
  const start: LoadOp = async (client) => {
    const outcome = await callTool(
      client,
      'start',
      'dagu_execute',
      { action: 'start', name: runDag },
      (r) => typeof r.structuredContent?.dagRunId === 'string',
    );
    return outcome;
  };
  return {
    ns,
    runDag,
    ops: [read, apply, restRead, wikiPut, start],
    async prepare(client) {
      const applied = await client.callTool({
        name: 'dagu_change',
        arguments: { mode: 'apply', name: runDag, spec: sleepDag(runSeconds) },
      });
      if (applied.isError === true) throw new Error(`prepare: ${JSON.stringify(applied.structuredContent)}`);
    },
  };
}

/** GETs `<baseUrl>/api/v1<path>` and parses JSON; throws on a non-2xx answer. */
export async function restJson(baseUrl: string, path: string): Promise<Record<string, unknown>> {
  const res = await fetch(`${baseUrl}/api/v1${path}`, { signal: AbortSignal.timeout(15_000) });
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

/**
 * Mutations answered `ok` that are not stored (lost). Applies are upserts and
 * page writes replace, so a doubled apply or write cannot be seen; doubled
 * runs are {@link checkRuns}'s.
 */
export async function lostMutations(baseUrl: string, outcomes: readonly Outcome[]): Promise<string[]> {
  const lost: string[] = [];
  for (const o of outcomes) {
    if (o.kind !== 'ok' || o.target === undefined) continue;
    const path = o.op === 'apply' ? `/dags/${o.target}` : o.op === 'wiki-put' ? `/wiki/default/pages/${o.target}` : '';
    if (path === '') continue;
    const res = await fetch(`${baseUrl}/api/v1${path}`, { signal: AbortSignal.timeout(15_000) });
    if (res.status !== 200) lost.push(`${o.op} ${o.target}: ${res.status}`);
  }
  return lost;
}

/** The runs of `dagName` once none is running or queued (waits up to `timeoutMs`). */
export async function settledRuns(
  baseUrl: string,
  dagName: string,
  timeoutMs: number,
): Promise<Array<{ dagRunId: string; status: number }>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const body = await restJson(baseUrl, `/dag-runs?name=${encodeURIComponent(dagName)}&limit=500`);
    const items = (body.items as Array<{ dagRunId: string; status: number }> | undefined) ?? [];
    const open: number[] = [RunStatus.running, RunStatus.queued, RunStatus.notStarted];
    if (items.every((r) => !open.includes(r.status))) return items;
    if (Date.now() > until)
      throw new Error(`runs of ${dagName} still open after ${timeoutMs} ms: ${JSON.stringify(items.slice(0, 5))}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The run invariants: every start answered `ok` has its run, no more runs
 * exist than starts were attempted (none doubled), and none failed.
 */
export function checkRuns(
  outcomes: readonly Outcome[],
  runs: ReadonlyArray<{ dagRunId: string; status: number }>,
): { missing: number; doubled: number; failed: string[] } {
  const starts = outcomes.filter((o) => o.op === 'start');
  const ok = starts.filter((o) => o.kind === 'ok').length;
  return {
    missing: Math.max(0, ok - runs.length),
    doubled: Math.max(0, runs.length - starts.length),
    failed: runs.filter((r) => r.status !== RunStatus.succeeded).map((r) => `${r.dagRunId}:${r.status}`),
  };
}
