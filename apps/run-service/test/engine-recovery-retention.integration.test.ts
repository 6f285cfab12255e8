import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DaguError } from '@dagu-mcp/contracts';
import { RecoverySweeper } from '../src/recovery/recovery-sweeper';
import { RetentionSweeper } from '../src/retention/retention-sweeper';
import { readStepLog } from '../src/read/run-logs';
import { createRunTestEnv, stepOf, type RunTestEnv } from '../test-fixtures/run-test-env';

/**
 * Recovery (a running run whose replica stopped heartbeating is failed with
 * the reason) and retention (runs past hist_retention_days deleted with their
 * children, logs and per-run working directories) against the real PostgreSQL.
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
      const id = await env.start('orphan', 'steps:\n  - name: work\n    run: sleep 30\n', {
        enqueue: true,
        dagRunId: `orphan-${attempt}`,
      });
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
    expect(detail).toMatchObject({
      status: 2,
      error: expect.stringMatching(/^run-service replica ghost-replica stopped responding \(no heartbeat for \d+s\)/),
    });
    expect(stepOf(detail, 'work').status).toBe(3);
    expect(env.publisher.events.some((e) => e.dagRunId === orphan && e.status === 2)).toBe(true);
    expect((await env.detail('live', live)).status).toBe(1);
    expect(await sweeper.sweep()).toEqual([]);
  });

  it('fails a run waiting on a child (status 7, still owned) whose replica died; leaves parked runs (no owner) alone', async () => {
    const queued = async (dag: string, prefix: string): Promise<string> => {
      for (let attempt = 1; attempt <= 10; attempt++) {
        const id = await env.start(dag, 'steps:\n  - name: work\n    run: sleep 30\n', {
          enqueue: true,
          dagRunId: `${prefix}-${attempt}`,
        });
        const owner = dag === 'parent-waiting' ? 'ghost-replica' : null;
        const taken = await env.pool.query(
          "UPDATE runs SET status = 7, owner = $2, started_at = now(), heartbeat_at = now() - interval '1 minute' WHERE dag_run_id = $1 AND status = 5",
          [id, owner],
        );
        if (taken.rowCount === 1) return id;
      }
      throw new Error(`no queued run of ${dag} could be taken`);
    };
    const parent = await queued('parent-waiting', 'parent');
    const parked = await queued('parked', 'parked');
    const sweeper = new RecoverySweeper(env.deps, (pk) => env.engine.runsHere(pk));
    expect(await sweeper.sweep()).toHaveLength(1);
    expect(await env.detail('parent-waiting', parent)).toMatchObject({
      status: 2,
      error: expect.stringMatching(/^run-service replica ghost-replica stopped responding/),
    });
    expect((await env.detail('parked', parked)).status).toBe(7);
  });
});

describe('retention', () => {
  it('deletes runs past their retention (DAG value, else the default) with children, logs and work dirs; keeps the rest', async () => {
    const short = await env.start(
      'ret-short',
      'hist_retention_days: 1\nsteps:\n  - name: a\n    action: dag.run\n    with: {dag: kid}\n---\nname: kid\nsteps:\n  - run: echo kid\n',
    );
    const dflt = await env.start('ret-default', 'steps:\n  - name: a\n    run: echo kept\n');
    await env.waitForEnd('ret-short', short);
    await env.waitForEnd('ret-default', dflt);
    await env.pool.query("UPDATE runs SET finished_at = now() - interval '2 days'");
    const streams = await env.pool.query('SELECT count(*)::int AS n FROM log_streams');
    const kidId = String(
      (await env.pool.query("SELECT dag_run_id FROM runs WHERE dag_name = 'kid'")).rows[0]?.dag_run_id,
    );
    const dirOf = (dag: string, id: string): string => join(env.config.workDir, dag, id);
    expect([
      existsSync(dirOf('ret-short', short)),
      existsSync(dirOf('kid', kidId)),
      existsSync(dirOf('ret-default', dflt)),
    ]).toEqual([true, true, true]);
    const sweeper = new RetentionSweeper({
      pool: env.pool,
      logger: env.deps.logger,
      defaultDays: 30,
      sweepMs: 60_000,
      workDir: env.config.workDir,
    });
    expect(await sweeper.sweep()).toBe(1);
    expect([
      existsSync(dirOf('ret-short', short)),
      existsSync(dirOf('kid', kidId)),
      existsSync(dirOf('ret-default', dflt)),
    ]).toEqual([false, false, true]);
    expect(await notFound(env.detail('ret-short', short))).toBe(true);
    const kids = await env.pool.query("SELECT count(*)::int AS n FROM runs WHERE dag_name = 'kid'");
    expect(kids.rows[0]).toEqual({ n: 0 });
    const after = await env.pool.query('SELECT count(*)::int AS n FROM log_streams');
    expect(Number((after.rows[0] as { n: number }).n)).toBeLessThan(Number((streams.rows[0] as { n: number }).n));
    expect((await readStepLog(env.pool, { dagName: 'ret-default', dagRunId: dflt, stepName: 'a' })).stdoutContent).toBe(
      'kept',
    );
    const aged = new RetentionSweeper({
      pool: env.pool,
      logger: env.deps.logger,
      defaultDays: 1,
      sweepMs: 60_000,
      workDir: env.config.workDir,
    });
    expect(await aged.sweep()).toBeGreaterThanOrEqual(1);
    expect(await notFound(env.detail('ret-default', dflt))).toBe(true);
    expect(existsSync(dirOf('ret-default', dflt))).toBe(false);
  });
});
