import { RunStatus, StepStatus } from '@dagu-mcp/contracts';
import { withTransaction, type Pool } from '@dagu-mcp/runtime';
import { parseRunRow, RUN_COLUMNS, type RunRecord } from './run-rows';
import { z } from 'zod';
import { parseRows, type Queryable } from './run-rows';
import { ACTIVE_RUNS_SQL, LIVE_STEPS_SQL, OPEN_STEPS_SQL, OWNED_RUNS_SQL } from './status-sql';

const AnyQueuedRowSchema = z.object({ queued: z.boolean() });

/**
 * Which replica owns which run (docs/architecture.md "the run engine's running
 * processes are owned by one replica"): heartbeats, stop requests across
 * replicas, the queue claim, and forced ends.
 */

const BeatRowSchema = z.object({ pk: z.coerce.number().int(), stop_requested_at: z.date().nullable() });
const ActiveRowSchema = z.object({
  queue: z.string(),
  dag_name: z.string(),
  n: z.number().int(),
  parked: z.number().int(),
});
const QueuedRowSchema = z.object({
  pk: z.coerce.number().int(),
  dag_name: z.string(),
  dag_run_id: z.string(),
  queue: z.string(),
  max_active_runs: z.number().int(),
});

/** What a heartbeat learned about the runs of this replica. */
export interface HeartbeatReport {
  /** Owned, active runs a stop was requested for (on another replica). */
  stopRequested: number[];
  /** Runs no longer active or owned here (ended by another replica): their processes must go. */
  lost: number[];
}

/**
 * Stamps `heartbeat_at` of the runs this replica runs and reports the ones a
 * stop was requested for and the ones it lost.
 */
export async function heartbeat(db: Queryable, owner: string, pks: readonly number[]): Promise<HeartbeatReport> {
  if (pks.length === 0) return { stopRequested: [], lost: [] };
  const result = await db.query(
    `UPDATE runs SET heartbeat_at = now() WHERE pk = ANY($1::bigint[]) AND owner = $2 AND status IN ${OWNED_RUNS_SQL}
     RETURNING pk, stop_requested_at`,
    [pks, owner],
  );
  const rows = parseRows(BeatRowSchema, result);
  const alive = new Set(rows.map((row) => row.pk));
  return {
    stopRequested: rows.filter((row) => row.stop_requested_at !== null).map((row) => row.pk),
    lost: pks.filter((pk) => !alive.has(pk)),
  };
}

/** Records a stop request for the owner to act on. */
export async function requestStop(db: Queryable, pk: number): Promise<void> {
  await db.query(`UPDATE runs SET stop_requested_at = now() WHERE pk = $1 AND status IN ${ACTIVE_RUNS_SQL}`, [pk]);
}

/**
 * Fails (or aborts) an active run that its engine cannot finish itself (the
 * owning replica stopped, or its heartbeat is stale): the run and its
 * unfinished steps of the current attempt end with `status`/`error`.
 *
 * @returns the updated run, or `undefined` when it was no longer active.
 */
export async function forceEndRun(
  db: Queryable,
  pk: number,
  status: number,
  error: string,
): Promise<RunRecord | undefined> {
  const result = await db.query(
    `UPDATE runs SET status = $2, error = $3, finished_at = now() WHERE pk = $1 AND status IN ${ACTIVE_RUNS_SQL} RETURNING ${RUN_COLUMNS}`,
    [pk, status, error],
  );
  const row = result.rows[0];
  if (row === undefined) return undefined;
  const run = parseRunRow(row);
  await db.query(
    `UPDATE run_steps SET status = CASE WHEN status IN ${LIVE_STEPS_SQL} THEN $3::smallint ELSE ${StepStatus.aborted}::smallint END,
       error = CASE WHEN status IN ${LIVE_STEPS_SQL} THEN $4 ELSE error END, finished_at = now()
     WHERE run_pk = $1 AND attempt_no = $2 AND status IN ${OPEN_STEPS_SQL}`,
    [pk, run.attempt_no, status === RunStatus.aborted ? StepStatus.aborted : StepStatus.failed, error],
  );
  await db.query('UPDATE run_attempts SET status = $3, finished_at = now() WHERE run_pk = $1 AND attempt_no = $2', [
    pk,
    run.attempt_no,
    status,
  ]);
  return run;
}

/**
 * Whether any run is queued (status 5), on any replica: one read of the
 * active-runs index, without the claim's advisory lock or transaction.
 *
 * The dispatcher asks this first: most of its passes follow a run
 * that ended with nothing queued. Skipping the claim then is safe: a run
 * enqueued before this read is seen by it; one enqueued after it is claimed
 * by the pass its own enqueue pokes on its replica, which runs after this
 * replica's ended run was committed and so sees the slot it freed.
 */
export async function hasQueuedRuns(db: Queryable): Promise<boolean> {
  const result = await db.query(`SELECT EXISTS (SELECT 1 FROM runs WHERE status = ${RunStatus.queued}) AS queued`);
  return parseRows(AnyQueuedRowSchema, result)[0]?.queued === true;
}

/** A queued run the dispatcher may start. */
export interface ClaimedRun {
  pk: number;
  dagName: string;
  dagRunId: string;
}

/**
 * Claims queued runs for `owner` (dagu-model §1 queued → running), oldest
 * first (by `queued_at`, else `created_at`: a run handed back on shutdown,
 * `engine/hand-back.ts`, keeps its place from when it was created).
 *
 * - Runs handed back on shutdown (`handed_back`) were already admitted: they
 *   are claimed regardless of queue concurrency and `max_active_runs` (a
 *   handed-back run must not wait behind another run of its DAG, which may
 *   be parked at a checkpoint for days), row-locked `FOR UPDATE SKIP LOCKED`.
 *   Claimed, they count as active like any run.
 * - Other queued runs are claimed while their queue has fewer active runs
 *   than its limit and their DAG fewer than its `max_active_runs`, counted
 *   over every replica (handed-back runs claimed in this call included).
 *   A run parked at a checkpoint (waiting, no owner: nothing executes it)
 *   holds no queue slot, but still counts against its DAG's
 *   `max_active_runs` (one unanswered approval per slot
 *   stalled a whole queue; a pipeline waiting for approval must not start a
 *   second copy of itself). A run waiting on a child's checkpoint keeps its
 *   owner (its `dag.run` step executes) and its slot. A decided checkpoint
 *   resumes without the queue (`runs/checkpoint-resume.ts`), so a parked
 *   run never waits for a slot again.
 *
 * A transaction-level advisory lock serializes claims of all replicas; call
 * inside a transaction.
 *
 * The claimed run executes its current attempt: the first one, or the new
 * attempt a hand-back wrote.
 *
 * @returns the claimed runs, now `running` and owned by `owner`
 */
export async function claimQueuedRuns(
  db: Queryable,
  owner: string,
  queues: { limitOf(queue: string): number },
  max = 50,
): Promise<ClaimedRun[]> {
  await db.query("SELECT pg_advisory_xact_lock(hashtext('dagu-run-queue'))");
  const handedBack = await db.query(
    `SELECT pk, dag_name, dag_run_id, queue, max_active_runs FROM runs WHERE status = ${RunStatus.queued} AND handed_back
     ORDER BY COALESCE(queued_at, created_at), pk LIMIT $1 FOR UPDATE SKIP LOCKED`,
    [max],
  );
  const picked = await markClaimed(
    db,
    owner,
    parseRows(QueuedRowSchema, handedBack).map((row) => ({
      pk: row.pk,
      dagName: row.dag_name,
      dagRunId: row.dag_run_id,
    })),
  );
  if (picked.length >= max) return picked;
  const queued = await db.query(
    `SELECT pk, dag_name, dag_run_id, queue, max_active_runs FROM runs WHERE status = ${RunStatus.queued} AND NOT handed_back ORDER BY COALESCE(queued_at, created_at), pk LIMIT $1`,
    [max * 4],
  );
  if (queued.rows.length === 0) return picked;
  // Counted after the handed-back runs became running: they hold their slots.
  const active = await db.query(
    `SELECT queue, dag_name, count(*)::int AS n, count(*) FILTER (WHERE status = ${RunStatus.waiting} AND owner IS NULL)::int AS parked
     FROM runs WHERE status IN ${OWNED_RUNS_SQL} GROUP BY queue, dag_name`,
  );
  const perQueue = new Map<string, number>();
  const perDag = new Map<string, number>();
  for (const row of parseRows(ActiveRowSchema, active)) {
    perQueue.set(row.queue, (perQueue.get(row.queue) ?? 0) + row.n - row.parked);
    perDag.set(row.dag_name, (perDag.get(row.dag_name) ?? 0) + row.n);
  }
  const admitted: ClaimedRun[] = [];
  for (const row of parseRows(QueuedRowSchema, queued)) {
    if (picked.length + admitted.length >= max) break;
    const inQueue = perQueue.get(row.queue) ?? 0;
    const ofDag = perDag.get(row.dag_name) ?? 0;
    if (inQueue >= queues.limitOf(row.queue) || ofDag >= Math.max(1, row.max_active_runs)) continue;
    perQueue.set(row.queue, inQueue + 1);
    perDag.set(row.dag_name, ofDag + 1);
    admitted.push({ pk: row.pk, dagName: row.dag_name, dagRunId: row.dag_run_id });
  }
  return [...picked, ...(await markClaimed(db, owner, admitted))];
}

/**
 * Makes the queued runs `running` (current attempt too), owned by `owner`.
 * @returns the runs it claimed: one whose status changed since it was read
 * (stopped, or taken by anything outside the queue lock) is left out.
 */
async function markClaimed(db: Queryable, owner: string, runs: readonly ClaimedRun[]): Promise<ClaimedRun[]> {
  if (runs.length === 0) return [];
  // clock_timestamp(), not now(): now() is when the claim's transaction began,
  // before it waited for the queue lock and saw the run that freed the slot
  // end — a run admitted by that end would otherwise start before it.
  const updated = await db.query(
    `UPDATE runs SET status = ${RunStatus.running}, started_at = clock_timestamp(), owner = $2, heartbeat_at = clock_timestamp(), handed_back = false WHERE pk = ANY($1::bigint[]) AND status = ${RunStatus.queued} RETURNING pk`,
    [runs.map((run) => run.pk), owner],
  );
  const claimed = new Set(parseRows(ClaimedPkSchema, updated).map((row) => row.pk));
  const pks = [...claimed];
  if (pks.length > 0)
    await db.query(
      `UPDATE run_attempts a SET status = ${RunStatus.running} FROM runs r WHERE r.pk = ANY($1::bigint[]) AND a.run_pk = r.pk AND a.attempt_no = r.attempt_no`,
      [pks],
    );
  return runs.filter((run) => claimed.has(run.pk));
}

const ClaimedPkSchema = z.object({ pk: z.coerce.number().int() });

const OrphanRowSchema = z.object({
  pk: z.coerce.number().int(),
  owner: z.string().nullable(),
  age_s: z.coerce.number(),
});

/** A run whose owner stopped stamping heartbeats: its owner and how long ago, in seconds, it was last stamped. */
export interface OrphanedRun {
  pk: number;
  owner: string | null;
  ageSeconds: number;
}

/**
 * Fails the runs whose owner's heartbeat is older than `staleMs` (recovery
 * sweep): running runs, and runs waiting on a child's checkpoint that still
 * have an owner (a parked run has none). At most `limit` rows per call,
 * claimed `FOR UPDATE SKIP LOCKED` in one transaction, so two sweeping
 * replicas never take the same run.
 *
 * Nothing is failed within `graceMs` of PostgreSQL's own start
 * (`pg_postmaster_start_time()`): after a database restart every replica's
 * heartbeats are stale together, and live replicas need a moment to stamp
 * them again.
 *
 * @param skip    true for runs that execute on the calling replica (never failed)
 * @param errorOf the run-level `error` of a failed orphan
 * @param graceMs see above (ms); default 0
 * @returns the runs it ended (status failed)
 */
export async function failOrphanedRuns(
  pool: Pool,
  staleMs: number,
  limit: number,
  skip: (pk: number) => boolean,
  errorOf: (orphan: OrphanedRun) => string,
  graceMs = 0,
): Promise<RunRecord[]> {
  return withTransaction(pool, async (client) => {
    const result = await client.query(
      `SELECT pk, owner, EXTRACT(EPOCH FROM now() - COALESCE(heartbeat_at, started_at, created_at))::float8 AS age_s FROM runs
       WHERE (status = ${RunStatus.running} OR (status = ${RunStatus.waiting} AND owner IS NOT NULL))
         AND COALESCE(heartbeat_at, started_at, created_at) < now() - ($1::int * interval '1 millisecond')
         AND pg_postmaster_start_time() < now() - ($3::int * interval '1 millisecond')
       ORDER BY pk LIMIT $2 FOR UPDATE SKIP LOCKED`,
      [staleMs, limit, graceMs],
    );
    const out: RunRecord[] = [];
    for (const row of parseRows(OrphanRowSchema, result)) {
      if (skip(row.pk)) continue;
      const run = await forceEndRun(
        client,
        row.pk,
        RunStatus.failed,
        errorOf({ pk: row.pk, owner: row.owner, ageSeconds: row.age_s }),
      );
      if (run !== undefined) out.push(run);
    }
    return out;
  });
}
