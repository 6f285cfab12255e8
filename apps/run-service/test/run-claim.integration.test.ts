import { parseDagSpec } from '@dagu-mcp/dag-spec';
import { withTransaction, type Pool } from '@dagu-mcp/runtime';
import { z } from 'zod';
import { nodesOfDag } from '../src/core/dag-nodes';
import { claimQueuedRuns, hasQueuedRuns } from '../src/store/run-ownership.repository';
import { finishAttempt, insertRun, type NewRun } from '../src/store/run.repository';
import { migratedTestPool } from '../test-fixtures/run-test-env';

/**
 * The queue claim's timestamps against real PostgreSQL: a run admitted
 * because another run of its DAG ended (max_active_runs 1) starts after that
 * end, even when the claim's transaction began before the end was written —
 * as it does when it waits for the queue lock.
 */
let pool: Pool;

let drop: () => Promise<void>;

beforeAll(async () => {
  ({ pool, drop } = await migratedTestPool('claim'));
});
afterAll(() => drop());

function newRun(dagRunId: string, status: 1 | 5): NewRun {
  const parsed = parseDagSpec('steps: [{name: s, run: "true"}]\n', { name: 'one-at-a-time' });
  if (parsed.dag === undefined) throw new Error(parsed.errors.join('; '));
  return {
    dagName: 'one-at-a-time',
    dagRunId,
    attemptId: `${dagRunId}-a1`,
    status,
    params: '',
    mergedParams: [],
    labels: [],
    queue: 'default',
    maxActiveRuns: 1,
    inline: true,
    spec: 'steps: [{name: s, run: "true"}]\n',
    normalized: parsed.dag,
    nodes: nodesOfDag(parsed.dag).all,
    requestId: `req-${dagRunId}`,
    ...(status === 1 ? { owner: 'replica-a' } : {}),
  };
}

const TimesSchema = z.object({
  dag_run_id: z.string(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
});

it('a run admitted by the end of the one before it starts after that end', async () => {
  // The dispatcher's pre-check: nothing queued yet, then the queued run is seen (and, once claimed, gone).
  expect(await hasQueuedRuns(pool)).toBe(false);
  const { pk: first } = await insertRun(pool, newRun('first', 1));
  await insertRun(pool, newRun('second', 5));
  const claimed = await withTransaction(pool, async (client) => {
    expect(await hasQueuedRuns(pool)).toBe(true);
    // The claim's transaction begins; the running run ends 50 ms later; only then is the claim made.
    await client.query('SELECT 1');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const finished = await finishAttempt(
      pool,
      { pk: first, attemptNo: 1 },
      { status: 4, params: '', resolvedParams: [], paramsEvaluated: true },
    );
    expect(finished).toBeInstanceOf(Date);
    return claimQueuedRuns(client, 'replica-b', { limitOf: () => 10 });
  });
  expect(claimed.map((run) => run.dagRunId)).toEqual(['second']);
  expect(await hasQueuedRuns(pool)).toBe(false);
  const rows = (await pool.query('SELECT dag_run_id, started_at, finished_at FROM runs ORDER BY pk')).rows.map((row) =>
    TimesSchema.parse(row),
  );
  const [a, b] = rows;
  expect(a?.finished_at).toBeInstanceOf(Date);
  expect(b?.started_at).toBeInstanceOf(Date);
  expect(b?.started_at?.getTime() ?? 0).toBeGreaterThanOrEqual(a?.finished_at?.getTime() ?? Number.POSITIVE_INFINITY);
});
