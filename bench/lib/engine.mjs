/**
 * The engine scenarios' pieces (S8 throughput, S9 step overhead, S10 mixed load): the DAGs they
 * run and the timeline of a set of DAG-runs read from run-service's own rows.
 *
 * Times come from the rows the engine writes (`runs.created_at` → `runs.finished_at`,
 * `run_steps.started_at`/`finished_at`), so the bench's own polling interval never adds to a
 * figure: the poll only decides when to read them.
 */
import pg from 'pg';

/** DAG-run status ints that end a run (dagu-model §1): failed, aborted, succeeded, partially succeeded, rejected. */
const TERMINAL_STATUS_SQL = '(2, 3, 4, 6, 8)';

/**
 * The DAGs S8–S10 run. `bench-true` is one `true` step, not queued behind itself
 * (`max_active_runs: -1`), so N runs started at once measure the engine rather than a
 * one-at-a-time DAG queue; `bench-chain` is a `type: chain` of `chainSteps` `true` steps;
 * `bench-foreach` one foreach step over `foreachItems` items, 16 at a time.
 *
 * @returns `[{name, spec}]` for `applyDags`
 */
export function engineDags({ chainSteps, foreachItems }) {
  const chain = Array.from({ length: chainSteps }, (_, i) => `  - name: s${i + 1}\n    run: "true"\n`).join('');
  const items = Array.from({ length: foreachItems }, (_, i) => `i${i + 1}`).join(', ');
  return [
    { name: 'bench-true', spec: 'max_active_runs: -1\nsteps:\n  - name: ok\n    run: "true"\n' },
    { name: 'bench-chain', spec: `type: chain\nsteps:\n${chain}` },
    {
      name: 'bench-foreach',
      spec: [
        'steps:',
        '  - id: loop',
        '    foreach:',
        `      items: [${items}]`,
        '      as: item',
        '      max_concurrent: 16',
        '      steps:',
        '        - id: work',
        '          run: "true"',
        '',
      ].join('\n'),
    },
  ];
}

/** The `dagu_execute start` call (no wait) S8–S10 send. */
export const startCall = (name) => ({
  method: 'tools/call',
  params: { name: 'dagu_execute', arguments: { action: 'start', name } },
});

/**
 * Waits until every run in `dagRunIds` (of `dagName`) is terminal, polling run-service's rows
 * every `pollMs`, then reads their timeline.
 *
 * @param databaseUrl  the bench database
 * @param schema       run-service's schema of the bench stack
 * @returns `{finished, succeeded, spanMs, acceptSpanMs, byStatus}`: `spanMs` is first
 *          `created_at` → last `finished_at` (ms); `acceptSpanMs` first → last `created_at`
 * @throws Error when not all are terminal within `timeoutMs`
 */
export async function drainRuns(databaseUrl, schema, dagName, dagRunIds, { pollMs = 25, timeoutMs = 600_000 } = {}) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const { rows } = await client.query(
        `SELECT count(*)::int AS done FROM "${schema}".runs
          WHERE dag_name = $1 AND dag_run_id = ANY($2) AND status IN ${TERMINAL_STATUS_SQL}`,
        [dagName, dagRunIds],
      );
      if (rows[0].done >= dagRunIds.length) break;
      if (Date.now() > until)
        throw new Error(`${rows[0].done}/${dagRunIds.length} runs of ${dagName} finished after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, pollMs));
    }
    const { rows } = await client.query(
      `SELECT count(*)::int AS finished,
              count(*) FILTER (WHERE status = 4)::int AS succeeded,
              extract(epoch FROM max(finished_at) - min(created_at)) * 1000 AS span_ms,
              extract(epoch FROM max(created_at) - min(created_at)) * 1000 AS accept_span_ms,
              json_object_agg(status, n) AS by_status
         FROM (SELECT status, finished_at, created_at, count(*) OVER (PARTITION BY status) AS n
                 FROM "${schema}".runs WHERE dag_name = $1 AND dag_run_id = ANY($2)) r`,
      [dagName, dagRunIds],
    );
    const r = rows[0];
    return {
      finished: r.finished,
      succeeded: r.succeeded,
      spanMs: Number(r.span_ms),
      acceptSpanMs: Number(r.accept_span_ms),
      byStatus: r.by_status,
    };
  } finally {
    await client.end();
  }
}

/**
 * The step timeline of one run: how many steps ran and the time from the run's creation to its
 * end, and from its first step's start to its last step's end (the engine's own per-step cost).
 *
 * @returns `{steps, runMs, stepsSpanMs, status}` (ms)
 */
export async function runTimeline(databaseUrl, schema, dagName, dagRunId) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT r.status,
              extract(epoch FROM r.finished_at - r.created_at) * 1000 AS run_ms,
              (SELECT count(*)::int FROM "${schema}".run_steps s WHERE s.run_pk = r.pk) AS steps,
              (SELECT extract(epoch FROM max(s.finished_at) - min(s.started_at)) * 1000
                 FROM "${schema}".run_steps s WHERE s.run_pk = r.pk) AS steps_span_ms
         FROM "${schema}".runs r WHERE r.dag_name = $1 AND r.dag_run_id = $2`,
      [dagName, dagRunId],
    );
    const r = rows[0];
    if (r === undefined) throw new Error(`no run ${dagName}/${dagRunId}`);
    return { status: r.status, runMs: Number(r.run_ms), steps: r.steps, stepsSpanMs: Number(r.steps_span_ms) };
  } finally {
    await client.end();
  }
}
