import { MUTATION_LOG_REQUEST_INDEX_SQL, MUTATION_LOG_SQL, type Migration } from '@dagu-mcp/runtime';
import { ACTIVE_RUNS_SQL } from './status-sql';

/**
 * run-service schema migrations, applied in id order on start by `migrate`
 * (runtime) inside the service's own schema.
 *
 * `001_create_runs`:
 *
 * - `runs` — one row per DAG-run (docs/architecture.md "Data"): identity
 *   (`dag_name`, `dag_run_id`, unique together), the current attempt
 *   (`attempt_no`, `attempt_id`), `status` (dagu-model §1), the run-level
 *   `error` (timeout, init failure, replica stopped), `params` (the effective
 *   params string), `resolved_params` (the merged params; once
 *   `params_evaluated`, the values the first attempt computed, which retries reuse), `labels`, `queue`, the spec snapshot
 *   (`spec` YAML as run, `normalized` root DAG model), timestamps
 *   (`created_at`, `queued_at`, `started_at`, `finished_at`), ownership
 *   (`owner` replica, `heartbeat_at`), `stop_requested_at` (a stop asked on
 *   another replica), `request_id` (the bus job that created it, so a
 *   re-delivered `run.start` is answered idempotently) and the id of its
 *   scheduler log stream.
 * - `run_attempts` — history of attempts (021: each retry records a new attempt).
 * - `run_steps` — one row per node (step or lifecycle handler) per attempt,
 *   `seq` = execution order (steps in topological order, then handlers).
 *   A retry from a step copies the kept nodes' rows into the new attempt.
 * - `log_streams` — one row per log stream (a step's stdout or stderr in an
 *   attempt, a run's scheduler log) with the exact line count: the counter row
 *   the readers take `totalLines` from.
 * - `log_chunks` — the lines of a stream in consecutive chunks of at most
 *   1000 lines (and about 256 KiB): `first_line` (1-based), `line_count`, and
 *   the lines joined with `\n` (a line never contains `\n`). Any line range is
 *   one range scan of the primary key (`stream_id`, `first_line`) over at most
 *   range/chunk + 2 rows (dagu-model §6). One row per line was measured 12x
 *   slower to write (README "Logs"). No foreign key: inserts stay cheap.
 */
export const RUN_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_create_runs',
    sql: `
CREATE TABLE log_streams (
  id          bigserial PRIMARY KEY,
  total_lines integer NOT NULL DEFAULT 0,
  total_bytes bigint  NOT NULL DEFAULT 0
);

CREATE TABLE log_chunks (
  stream_id  bigint  NOT NULL,
  first_line integer NOT NULL,
  line_count integer NOT NULL CHECK (line_count BETWEEN 1 AND 1000),
  text       text    NOT NULL,
  PRIMARY KEY (stream_id, first_line)
);

CREATE TABLE runs (
  pk                bigserial PRIMARY KEY,
  dag_name          text COLLATE "C" NOT NULL,
  dag_run_id        text COLLATE "C" NOT NULL,
  attempt_no        integer     NOT NULL DEFAULT 1,
  attempt_id        text        NOT NULL,
  status            smallint    NOT NULL,
  error             text        NULL,
  params            text        NOT NULL DEFAULT '',
  resolved_params   jsonb       NOT NULL DEFAULT '[]',
  params_evaluated  boolean     NOT NULL DEFAULT false,
  labels            text[]      NOT NULL DEFAULT '{}',
  queue             text        NOT NULL,
  max_active_runs   integer     NOT NULL DEFAULT 1,
  inline            boolean     NOT NULL DEFAULT false,
  spec              text        NOT NULL,
  normalized        jsonb       NOT NULL,
  request_id        text        NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  queued_at         timestamptz NULL,
  started_at        timestamptz NULL,
  finished_at       timestamptz NULL,
  owner             text        NULL,
  heartbeat_at      timestamptz NULL,
  stop_requested_at timestamptz NULL,
  scheduler_log     bigint      NOT NULL REFERENCES log_streams (id),
  UNIQUE (dag_name, dag_run_id)
);
-- run.list / run.latest: newest first (pk order = creation order), with or without a name.
CREATE INDEX runs_name_pk_idx ON runs (dag_name, pk DESC);
-- queue dispatch and singleton checks look only at active runs.
CREATE INDEX runs_active_idx ON runs (status, queue, created_at) WHERE status IN ${ACTIVE_RUNS_SQL};
CREATE INDEX runs_labels_idx ON runs USING gin (labels);

CREATE TABLE run_attempts (
  run_pk      bigint      NOT NULL REFERENCES runs (pk) ON DELETE CASCADE,
  attempt_no  integer     NOT NULL,
  attempt_id  text        NOT NULL,
  retry_step  text        NULL,
  include_downstream boolean NOT NULL DEFAULT false,
  status      smallint    NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  finished_at timestamptz NULL,
  PRIMARY KEY (run_pk, attempt_no)
);

CREATE TABLE run_steps (
  run_pk          bigint      NOT NULL REFERENCES runs (pk) ON DELETE CASCADE,
  attempt_no      integer     NOT NULL,
  seq             integer     NOT NULL,
  name            text        NOT NULL,
  step_id         text        NULL,
  handler         text        NULL,
  status          smallint    NOT NULL DEFAULT 0,
  error           text        NULL,
  started_at      timestamptz NULL,
  finished_at     timestamptz NULL,
  retry_count     integer     NOT NULL DEFAULT 0,
  exit_code       integer     NULL,
  allowed_failure boolean     NOT NULL DEFAULT false,
  outputs         jsonb       NOT NULL DEFAULT '{}',
  stdout_log      bigint      NOT NULL,
  stderr_log      bigint      NOT NULL,
  PRIMARY KEY (run_pk, attempt_no, seq)
);
`,
  },
  {
    // Checkpoints (human.task, approval): the open checkpoint of a waiting
    // step (resolved prompt, form / input, required, then the accepted
    // decision) and the run's "accepted input waits for its resume" flag.
    id: '002_engine_checkpoints',
    sql: `
ALTER TABLE run_steps ADD COLUMN checkpoint jsonb NULL;
ALTER TABLE runs ADD COLUMN resume_pending boolean NOT NULL DEFAULT false;
`,
  },
  {
    // Composition (dag.run / dag.enqueue): a child run points at its root run
    // (addressing dagu://runs/{root}/{rootId}/sub/{childId}), its parent run
    // and the parent step that started it. Root runs have NULLs.
    id: '003_engine_composition',
    sql: `
ALTER TABLE runs ADD COLUMN root_pk bigint NULL REFERENCES runs (pk) ON DELETE CASCADE;
ALTER TABLE runs ADD COLUMN parent_pk bigint NULL;
ALTER TABLE runs ADD COLUMN parent_step text NULL;
CREATE INDEX runs_root_idx ON runs (root_pk, dag_run_id) WHERE root_pk IS NOT NULL;
CREATE INDEX runs_parent_idx ON runs (parent_pk) WHERE parent_pk IS NOT NULL;
`,
  },
  {
    // Foreach: one row per item (of a top-level foreach step or, with
    // \`parent\` = the body step's foreachParent, of a nested one) and one row
    // per body step of an item, with its own log streams. \`path\` is the
    // item address of 021 (\`3\`, or \`<foreachParent>.3\`).
    id: '004_engine_foreach',
    sql: `
CREATE TABLE foreach_items (
  run_pk      bigint      NOT NULL REFERENCES runs (pk) ON DELETE CASCADE,
  attempt_no  integer     NOT NULL,
  step_name   text        NOT NULL,
  path        text        NOT NULL,
  parent      text        NOT NULL DEFAULT '',
  idx         integer     NOT NULL,
  key         text        NOT NULL,
  status      smallint    NOT NULL DEFAULT 0,
  error       text        NULL,
  started_at  timestamptz NULL,
  finished_at timestamptz NULL,
  PRIMARY KEY (run_pk, attempt_no, step_name, path)
);
CREATE INDEX foreach_items_parent_idx ON foreach_items (run_pk, attempt_no, step_name, parent, idx);

CREATE TABLE foreach_item_steps (
  run_pk         bigint      NOT NULL REFERENCES runs (pk) ON DELETE CASCADE,
  attempt_no     integer     NOT NULL,
  step_name      text        NOT NULL,
  path           text        NOT NULL,
  seq            integer     NOT NULL,
  name           text        NOT NULL,
  step_id        text        NULL,
  status         smallint    NOT NULL DEFAULT 0,
  error          text        NULL,
  started_at     timestamptz NULL,
  finished_at    timestamptz NULL,
  exit_code      integer     NULL,
  outputs        jsonb       NOT NULL DEFAULT '{}',
  foreach_parent text        NULL,
  stdout_log     bigint      NOT NULL,
  stderr_log     bigint      NOT NULL,
  PRIMARY KEY (run_pk, attempt_no, step_name, path, seq)
);
`,
  },
  {
    // Foreach collect: the values an item's \`collect\` expressions took
    // (name → text), set when the item's body succeeded.
    id: '005_engine_foreach_collect',
    sql: `
ALTER TABLE foreach_items ADD COLUMN collected jsonb NULL;
`,
  },
  {
    // Hand-back on shutdown (engine/hand-back.ts): a run handed back to the
    // queue was already admitted; the claim takes it regardless of queue
    // concurrency and \`max_active_runs\`, and clears the flag.
    id: '006_run_handed_back',
    sql: `
ALTER TABLE runs ADD COLUMN handed_back boolean NOT NULL DEFAULT false;
`,
  },
  {
    // Who started a run (dagu-model §5 \`startedBy\`), and the mutation record: audit
    // outbox, outcome and idempotency record (docs/decisions.md "Attribution and mutation outcomes").
    id: '007_started_by_mutation_log',
    sql: `
ALTER TABLE runs ADD COLUMN started_by jsonb;
${MUTATION_LOG_SQL}`,
  },
  {
    // Runtime profiles (Dagu spec 022b): per-workspace sets of environment variables (a secret's
    // value is a SecretBox ciphertext), each workspace's default, each DAG's own default, and the
    // profile a run ran with.
    id: '008_runtime_profiles',
    sql: `
CREATE TABLE profiles (
  workspace  text COLLATE "C" NOT NULL,
  name       text COLLATE "C" NOT NULL,
  env        jsonb       NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (workspace, name)
);
CREATE TABLE workspace_settings (
  workspace       text COLLATE "C" PRIMARY KEY,
  default_profile text NULL
);
CREATE TABLE dag_profiles (
  dag_name   text COLLATE "C" PRIMARY KEY,
  profile    text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
ALTER TABLE runs ADD COLUMN profile text NULL;
`,
  },
  {
    // Finds a change by the gateway request that sent it (mutation.outcome by request id).
    id: '009_mutation_log_request',
    sql: MUTATION_LOG_REQUEST_INDEX_SQL,
  },
  {
    // run.list filtered by status, newest first: without it a rare status (rejected,
    // aborted) walks the primary key back through every newer run to fill a page — the whole
    // table when none match. One status is one ordered range of this index. Built in the
    // migration's transaction (writes to runs wait for it: ~1 s per million runs on the bench
    // machine, BENCHMARKS.md "Scale"); a large deployment may build it first with
    // CREATE INDEX CONCURRENTLY under this name, which IF NOT EXISTS then keeps.
    id: '010_runs_status_pk',
    sql: 'CREATE INDEX IF NOT EXISTS runs_status_pk_idx ON runs (status, pk DESC) WHERE root_pk IS NULL;',
  },
];
