import { MUTATION_LOG_REQUEST_INDEX_SQL, MUTATION_LOG_SQL, type Migration } from '@dagu-mcp/runtime';

/**
 * dag-service schema migrations, applied in id order on start by `migrate`
 * (runtime), inside the service's own schema (search path `<schema>, public`).
 *
 * `001_create_dags` — one row per stored DAG (docs/architecture.md "Data"):
 *
 * | Column | Meaning |
 * | --- | --- |
 * | `name` | DAG name (dagu-model §2), `COLLATE "C"` so `ORDER BY name` and the keyset cursor of `dag_search` follow plain code-unit order, the same order JavaScript compares names in |
 * | `spec` | the YAML exactly as given to `dagu_change` apply (spec 022: never trimmed or normalized) |
 * | `normalized` | the normalized root DAG model of `@dagu-mcp/dag-spec` at write time |
 * | `suspended` | scheduling suspended; kept across updates (no op sets it yet) |
 * | `labels` | the DAG's labels/tags, in declaration order |
 * | `workspace` | the value of the first `workspace=<name>` label, else NULL (dagu-model §10) |
 * | `schedule` | 5-field cron expressions (optional `CRON_TZ=` prefix) |
 * | `description` | the DAG's description, NULL when none |
 * | `version` | 1 on create, +1 on every apply |
 * | `created_at` / `updated_at` | timestamps of the first and of the latest apply |
 *
 * Search (spec 021 `dag_search`) is a case-insensitive substring match,
 * `spec ILIKE '%term%'`, backed by a pg_trgm GIN index (pg_trgm folds case, so
 * the same index serves ILIKE). The extension lives in `public` and is shared
 * by every schema of the database; services migrating different schemas at
 * the same moment would race on `CREATE EXTENSION` (a unique-key violation in
 * `pg_extension`), so a database-wide advisory lock serializes that statement.
 */
export const DAG_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_create_dags',
    sql: `
SELECT pg_advisory_xact_lock(hashtext('dagu-mcp:create-extension:pg_trgm'));
CREATE EXTENSION IF NOT EXISTS pg_trgm WITH SCHEMA public;

CREATE TABLE dags (
  name        text COLLATE "C" PRIMARY KEY,
  spec        text        NOT NULL,
  normalized  jsonb       NOT NULL,
  suspended   boolean     NOT NULL DEFAULT false,
  labels      text[]      NOT NULL DEFAULT '{}',
  workspace   text        NULL,
  schedule    text[]      NOT NULL DEFAULT '{}',
  description text        NULL,
  version     integer     NOT NULL DEFAULT 1 CHECK (version > 0),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);

-- dag_search: spec ILIKE '%term%' (pg_trgm folds case, one index serves ILIKE).
CREATE INDEX dags_spec_trgm_idx ON dags USING gin (spec gin_trgm_ops);
-- dags ?name=: name ILIKE '%part%'.
CREATE INDEX dags_name_trgm_idx ON dags USING gin (name gin_trgm_ops);
-- dags ?labels=a,b: labels @> ARRAY['a','b'].
CREATE INDEX dags_labels_idx ON dags USING gin (labels);
-- dag_search with a workspace: workspace = $1 AND name > $cursor ORDER BY name.
CREATE INDEX dags_workspace_name_idx ON dags (workspace, name) WHERE workspace IS NOT NULL;
`,
  },
  {
    // The mutation record: audit outbox, outcome and idempotency record (docs/decisions.md "Attribution and mutation outcomes").
    id: '002_mutation_log',
    sql: MUTATION_LOG_SQL,
  },
  {
    // Finds a change by the gateway request that sent it (mutation.outcome by request id).
    id: '003_mutation_log_request',
    sql: MUTATION_LOG_REQUEST_INDEX_SQL,
  },
];
