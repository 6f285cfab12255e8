import { DaguError } from '@dagu-mcp/contracts';
import { RecoverySweeper } from '../src/recovery/recovery-sweeper';
import { RetentionSweeper } from '../src/retention/retention-sweeper';
import { readStepLog } from '../src/runs/run-logs';
import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * Recovery (a running run whose replica stopped heartbeating is failed with
 * the reason) and retention (runs past hist_retention_days deleted with their
 * children and logs) against the real PostgreSQL.
 */
let env: RunTestEnv;

beforeAll(async () => {
  env = await createRunTestEnv('recovery');
});
afterAll(async () => {
  await env.close();
});

async function notFound(promise: Promise<unknown>): Promise<boolean> {
  try {
    await promise;
    return false;
  } catch (error) {
    return error instanceof DaguError && error.code === 'resource_not_found';
  }
}

describe('recovery', () => {
  it('fails a running run owned by a replica that stopped heartbeating; leaves live runs alone', async () => {
    // A queued run claimed by a "dead" replica: running, owned elsewhere, heartbeat long ago.
    // The local dispatcher may claim a queued run first (it polls every 200 ms); only a run
    // still queued when it is handed to the ghost counts, so try a fresh run id until one is.
    let orphan = '';
    for (let attempt = 1; attempt <= 10 && orphan === ''; attempt++) {
      const id = await env.start('orphan', 'steps:\n  - name: work\n    run: sleep 30\n', { enqueue: true, dagRunId: `orphan-${attempt}` });
      const taken = await env.pool.query(
        "UPDATE runs SET status = 1, owner = 'ghost-replica', started_at = now(), heartbeat_at = now() - interval '1 minute' WHERE dag_run_id = $1 AND status = 5",
        [id],
      );
      if (taken.rowCount === 1) orphan = id;
    }
    expect(orphan).not.toBe('');
    const live = await env.start('live', 'steps:\n  - name: work\n    run: sleep 2\n');
    const sweeper = new RecoverySweeper(env.deps, (pk) => env.engine.runsHere(pk));
    const failed = await sweeper.sweep();
    expect(failed).toHaveLength(1);
    const detail = await env.detail('orphan', orphan);
    expect(detail).toMatchObject({ status: 2, error: expect.stringMatching(/^run-service replica ghost-replica stopped responding \(no heartbeat for \d+s\)/) });
    expect(stepOf(detail, 'work').status).toBe(3);
    expect(env.publisher.events.some((e) => e.dagRunId === orphan && e.status === 2)).toBe(true);
    expect((await env.detail('live', live)).status).toBe(1);
    expect(await sweeper.sweep()).toEqual([]);
  });
});

describe('retention', () => {
  it('deletes runs past their retention (DAG value, else the default) with children and logs; keeps the rest', async () => {
    const short = await env.start('ret-short', 'hist_retention_days: 1\nsteps:\n  - name: a\n    action: dag.run\n    with: {dag: kid}\n---\nname: kid\nsteps:\n  - run: echo kid\n');
    const dflt = await env.start('ret-default', 'steps:\n  - name: a\n    run: echo kept\n');
    await env.waitForEnd('ret-short', short);
    await env.waitForEnd('ret-default', dflt);
    await env.pool.query("UPDATE runs SET finished_at = now() - interval '2 days'");
    const streams = await env.pool.query("SELECT count(*)::int AS n FROM log_streams");
    const sweeper = new RetentionSweeper({ pool: env.pool, logger: env.deps.logger, defaultDays: 30, sweepMs: 60_000 });
    expect(await sweeper.sweep()).toBe(1);
    expect(await notFound(env.detail('ret-short', short))).toBe(true);
    const kids = await env.pool.query("SELECT count(*)::int AS n FROM runs WHERE dag_name = 'kid'");
    expect(kids.rows[0]).toEqual({ n: 0 });
    const after = await env.pool.query("SELECT count(*)::int AS n FROM log_streams");
    expect(Number((after.rows[0] as { n: number }).n)).toBeLessThan(Number((streams.rows[0] as { n: number }).n));
    expect((await readStepLog(env.pool, { dagName: 'ret-default', dagRunId: dflt, stepName: 'a' })).stdoutContent).toBe('kept');
    const aged = new RetentionSweeper({ pool: env.pool, logger: env.deps.logger, defaultDays: 1, sweepMs: 60_000 });
    expect(await aged.sweep()).toBeGreaterThanOrEqual(1);
    expect(await notFound(env.detail('ret-default', dflt))).toBe(true);
  });
});
