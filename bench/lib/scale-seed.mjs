/**
 * Seeds run-service's schema with ended runs in set-based SQL (`generate_series`, one statement
 * per table), for the scale bench (issue 47). Each run is what a one-step run leaves behind: the
 * `runs` row (its spec and normalized model), one `run_attempts` row, one `run_steps` row, three
 * log streams (scheduler, stdout, stderr) and two log chunks (the scheduler's lines, the step's
 * stdout). Runs are spread over `dags` DAG names round-robin (so one DAG's runs are scattered
 * through the table, as interleaved runs of many DAGs are), created over the last 7 days (inside
 * the default retention), newest pk = newest run. Statuses, all ended (the engine leaves them
 * alone): 85 % succeeded, 10 % failed, 3 % aborted, 2 % partially succeeded, and 0.1 % rejected
 * (a rare status, for the filtered page that must not walk the table).
 */

/** The DAG name of round-robin slot `i` (0-based). */
export function scaleDagName(i) {
  return `scale-dag-${String(i).padStart(5, '0')}`;
}

/**
 * Inserts `runs` runs over `dags` DAGs into `schema` (empty run tables) and resets the
 * sequences; then VACUUM ANALYZE. Resolves with the seconds each table took.
 */
export async function seedRuns(client, schema, { runs, dags }) {
  const timings = {};
  const timed = async (name, sql) => {
    const t0 = performance.now();
    await client.query(sql);
    timings[name] = Math.round(performance.now() - t0) / 1000;
  };
  await client.query(`SET search_path = "${schema}"`);
  await client.query('SET synchronous_commit = off');
  // Streams 3r-2 (scheduler), 3r-1 (stdout), 3r (stderr) belong to run r.
  await timed(
    'log_streams',
    `INSERT INTO log_streams (id, total_lines, total_bytes)
     SELECT g, CASE g % 3 WHEN 1 THEN 2 WHEN 2 THEN 1 ELSE 0 END, CASE g % 3 WHEN 1 THEN 60 WHEN 2 THEN 17 ELSE 0 END
     FROM generate_series(1, ${runs * 3}) g`,
  );
  await timed(
    'log_chunks',
    `INSERT INTO log_chunks (stream_id, first_line, line_count, text)
     SELECT 3 * r - 2, 1, 2, 'run started (attempt 1)' || chr(10) || 'run finished: succeeded' FROM generate_series(1, ${runs}) r
     UNION ALL
     SELECT 3 * r - 1, 1, 1, 'hello from main' FROM generate_series(1, ${runs}) r`,
  );
  await timed(
    'runs',
    `INSERT INTO runs (pk, dag_name, dag_run_id, attempt_no, attempt_id, status, params, labels, queue,
                       spec, normalized, created_at, queued_at, started_at, finished_at, scheduler_log)
     SELECT r, d.name, 'run_' || lpad(r::text, 10, '0'), 1, 'att_' || lpad(r::text, 10, '0'),
            CASE WHEN r % 1000 = 999 THEN 8 WHEN p.c < 85 THEN 4 WHEN p.c < 95 THEN 2 WHEN p.c < 98 THEN 3 ELSE 6 END,
            '', '{}', d.name,
            'steps:' || chr(10) || '  - name: main' || chr(10) || '    command: echo hello from ' || d.name || chr(10),
            jsonb_build_object('name', d.name, 'type', 'chain',
              'steps', jsonb_build_array(jsonb_build_object('name', 'main', 'command', 'echo hello from ' || d.name))),
            t.at, t.at, t.at + interval '50 ms', t.at + interval '1 s', 3 * r - 2
     FROM generate_series(1, ${runs}) r
     CROSS JOIN LATERAL (SELECT 'scale-dag-' || lpad(((r - 1) % ${dags})::text, 5, '0') AS name) d
     CROSS JOIN LATERAL (SELECT now() - interval '7 days' * (1 - r::float8 / ${runs}) AS at) t
     -- The status percentile: varies along each DAG's runs too (r alone would fix one status per DAG).
     CROSS JOIN LATERAL (SELECT ((r - 1) / ${dags} * 37 + r) % 100 AS c) p`,
  );
  await timed(
    'run_attempts',
    `INSERT INTO run_attempts (run_pk, attempt_no, attempt_id, status, created_at, finished_at)
     SELECT pk, 1, attempt_id, status, created_at, finished_at FROM runs`,
  );
  await timed(
    'run_steps',
    `INSERT INTO run_steps (run_pk, attempt_no, seq, name, status, started_at, finished_at, exit_code,
                            stdout_log, stderr_log)
     SELECT pk, 1, 0, 'main', CASE status WHEN 4 THEN 4 WHEN 6 THEN 4 WHEN 2 THEN 2 ELSE 3 END,
            started_at, finished_at, CASE status WHEN 2 THEN 1 ELSE 0 END, 3 * pk - 1, 3 * pk
     FROM runs`,
  );
  await client.query(`SELECT setval('runs_pk_seq', ${runs}), setval('log_streams_id_seq', ${runs * 3})`);
  await timed('vacuum_analyze', 'VACUUM ANALYZE');
  // What migration 010 costs on a table this size (the same build, timed).
  await timed('reindex_runs_status_pk', 'REINDEX INDEX runs_status_pk_idx');
  return timings;
}

/** Bytes of `schema`'s run tables (heap, TOAST and indexes) and of the whole database. */
export async function runStoreBytes(client, schema) {
  const { rows } = await client.query(
    `SELECT sum(pg_total_relation_size(c.oid))::bigint AS schema_bytes, pg_database_size(current_database()) AS db_bytes
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind = 'r'`,
    [schema],
  );
  return { schemaBytes: Number(rows[0].schema_bytes), databaseBytes: Number(rows[0].db_bytes) };
}

/**
 * The SQL of `run.list` by one status (as run-list.repository.ts sends it), timed with EXPLAIN
 * ANALYZE with migration 010's index and, in a transaction rolled back, without it.
 * Resolves with `{status, withIndexMs, withoutIndexMs}` (execution times, ms).
 */
export async function statusIndexEffect(client, schema, status) {
  const sql =
    'EXPLAIN (ANALYZE, FORMAT JSON) SELECT pk, dag_name, dag_run_id, attempt_id, status, labels, queued_at, ' +
    `started_at, finished_at FROM runs WHERE root_pk IS NULL AND status = ANY('{${status}}'::smallint[]) ` +
    'ORDER BY pk DESC LIMIT 101';
  const timeOf = async () => (await client.query(sql)).rows[0]['QUERY PLAN'][0]['Execution Time'];
  await client.query(`SET search_path = "${schema}"`);
  await timeOf(); // warm
  const withIndexMs = await timeOf();
  await client.query('BEGIN');
  try {
    await client.query('DROP INDEX runs_status_pk_idx');
    await timeOf();
    return { status, withIndexMs, withoutIndexMs: await timeOf() };
  } finally {
    await client.query('ROLLBACK');
  }
}
