import { parseDagSpec } from '@dagu-mcp/dag-spec';
import {
  isIdempotencyViolation,
  mutationOutcomeOf,
  mutationRecordInsert,
  type MutationAuthor,
  type Pool,
} from '@dagu-mcp/runtime';
import { nodesOfDag } from '../src/core/dag-nodes';
import { readStreamTotals } from '../src/store/log-reader';
import { findRunByPk, insertRun, loadSteps, type NewRun } from '../src/store/run.repository';
import { migratedTestPool } from '../test-fixtures/run-test-env';

/**
 * `insertRun` writes a run, its attempt, its log streams and its step rows in
 * one statement and hands back what it wrote; the engine plans a fresh run
 * from that instead of reading it back (issue 28). These tests hold it to
 * "exactly what a read returns", against real PostgreSQL.
 */
let pool: Pool;
let drop: () => Promise<void>;

beforeAll(async () => {
  ({ pool, drop } = await migratedTestPool('insert'));
});
afterAll(() => drop());

const SPEC = [
  'handler_on:',
  '  exit:',
  '    run: "true"',
  'steps:',
  '  - name: first',
  '    id: one',
  '    run: "true"',
  '  - name: second',
  '    depends: [first]',
  '    run: "true"',
  '',
].join('\n');

function newRun(dagRunId: string, extra: Partial<NewRun> = {}): NewRun {
  const parsed = parseDagSpec(SPEC, { name: 'inserted' });
  if (parsed.dag === undefined) throw new Error(parsed.errors.join('; '));
  return {
    dagName: 'inserted',
    dagRunId,
    attemptId: `${dagRunId}-a1`,
    status: 1,
    params: 'A=1',
    mergedParams: [{ name: 'A', value: '1', fromDefault: false }],
    labels: ['team=x'],
    queue: 'default',
    maxActiveRuns: 1,
    inline: true,
    spec: SPEC,
    normalized: parsed.dag,
    nodes: nodesOfDag(parsed.dag).all,
    requestId: `req-${dagRunId}`,
    owner: 'replica-a',
    startedBy: { kind: 'user', name: 'ann' },
    ...extra,
  };
}

it('hands back the run and step rows exactly as a read after the commit returns them', async () => {
  const inserted = await insertRun(pool, newRun('r1', { profile: 'staging' }));
  expect(inserted.run).toEqual(await findRunByPk(pool, inserted.pk));
  expect(inserted.steps).toEqual(await loadSteps(pool, inserted.pk, 1));
  expect(inserted.run.profile).toBe('staging');
  // Two steps and the exit handler, each with its own two streams, and the scheduler log: all distinct and stored empty.
  expect(inserted.steps.map((step) => step.name)).toEqual(['first', 'second', 'onExit']);
  const streams = [inserted.run.scheduler_log, ...inserted.steps.flatMap((step) => [step.stdout_log, step.stderr_log])];
  expect(new Set(streams).size).toBe(7);
  const totals = await readStreamTotals(pool, streams);
  expect([...totals.values()]).toEqual([0, 0, 0, 0, 0, 0, 0]);
  expect(inserted.steps[0]?.step_id).toBe('one');
  expect(inserted.steps[2]?.handler).toBe('exit');
});

it('a queued run comes back queued, unowned and without a profile', async () => {
  const inserted = await insertRun(pool, newRun('r2', { status: 5, owner: undefined }));
  expect(inserted.run).toEqual(await findRunByPk(pool, inserted.pk));
  expect(inserted.run).toMatchObject({ status: 5, owner: null, started_at: null, profile: null });
  expect(inserted.run.queued_at).toBeInstanceOf(Date);
});

it('a taken run id writes nothing: no stream, no attempt, no step is left behind', async () => {
  const count = async (table: string): Promise<number> =>
    Number((await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0].n);
  const before = await Promise.all(['log_streams', 'run_attempts', 'run_steps', 'runs'].map(count));
  await expect(insertRun(pool, newRun('r1'))).rejects.toMatchObject({ code: '23505' });
  expect(await Promise.all(['log_streams', 'run_attempts', 'run_steps', 'runs'].map(count))).toEqual(before);
});

const TABLES = ['log_streams', 'run_attempts', 'run_steps', 'runs', 'mutation_log'];
const countAll = (): Promise<number[]> =>
  Promise.all(TABLES.map(async (t) => Number((await pool.query(`SELECT count(*)::int AS n FROM ${t}`)).rows[0].n)));

function author(jobId: string, idempotencyKey?: string): MutationAuthor {
  return {
    jobId,
    requestId: `rq-${jobId}`,
    principal: {
      subject: 'ann',
      id: 'user:ann',
      credentialType: 'api_key',
      role: 'operator',
    },
    ...(idempotencyKey !== undefined ? { idempotencyKey, payloadHash: 'h1' } : {}),
  };
}

const recordOf = (a: MutationAuthor, reply: unknown) => (firstParam: number) =>
  mutationRecordInsert(
    a,
    { action: 'run.started', target: 'dagu://x', details: { inline: true } },
    reply,
    firstParam,
    'r',
  );

it('writes the mutation record and its reply in the same statement', async () => {
  const reply = { dagName: 'inserted', dagRunId: 'r3', status: 1 };
  const inserted = await insertRun(pool, newRun('r3'), {
    deadline: Date.now() + 60_000,
    record: recordOf(author('job-r3'), reply),
  });
  expect(inserted?.run.dag_run_id).toBe('r3');
  const { rows } = await pool.query(
    'SELECT action, actor, principal_id, target, details, result, request_id FROM mutation_log WHERE job_id = $1',
    ['job-r3'],
  );
  expect(rows).toEqual([
    {
      action: 'run.started',
      actor: 'ann',
      principal_id: 'user:ann',
      target: 'dagu://x',
      details: { inline: true },
      result: reply,
      request_id: 'rq-job-r3',
    },
  ]);
  // What the gateway reads after a caller's deadline passed (mutation.outcome): applied, with the reply.
  expect(await mutationOutcomeOf(pool, 'job-r3', 'user:ann')).toEqual({
    applied: true,
    result: reply,
    requestId: 'rq-job-r3',
  });
});

it("a deadline already passed by PostgreSQL's clock writes nothing, record included", async () => {
  const before = await countAll();
  const result = await insertRun(pool, newRun('r4'), {
    deadline: Date.now() - 1,
    record: recordOf(author('job-r4'), {}),
  });
  expect(result).toBeUndefined();
  expect(await countAll()).toEqual(before);
  expect(await mutationOutcomeOf(pool, 'job-r4', 'user:ann')).toEqual({ applied: false });
});

it('an idempotency key held by another job of the same principal rolls the whole statement back', async () => {
  await insertRun(pool, newRun('r5'), { record: recordOf(author('job-r5', 'key-1'), {}) });
  const before = await countAll();
  const second = insertRun(pool, newRun('r6'), { record: recordOf(author('job-r6', 'key-1'), {}) });
  const error: unknown = await second.catch((e: unknown) => e);
  expect(isIdempotencyViolation(error)).toBe(true);
  expect(await countAll()).toEqual(before);
});
