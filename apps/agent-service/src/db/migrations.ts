import { MUTATION_LOG_SQL, type Migration } from '@dagu-mcp/runtime';

/**
 * agent-service schema migrations (append-only), applied in id order on start
 * inside the service's own schema.
 *
 * `001_create_agents` (issue 24): one row per agent.
 *
 * | Column | Meaning |
 * | --- | --- |
 * | `id` | uuid given at creation; agent keys (gateway) are bound to it |
 * | `workspace`, `slug` | the agent's address `/mcp/v1/{workspace}/{slug}`, unique |
 * | `title`, `description` | shown in the catalog and the endpoint's instructions |
 * | `state` | `draft`, `published` or `disabled`; only `published` is served |
 * | `tools` | the catalog: a JSON array of stored bindings (`StoredBinding` in contracts), at most 100 |
 * | `version` | 1 on create, +1 on every change of the row (catalog refresh notifications) |
 * | `created_*`, `updated_*` | timestamps and principal subjects |
 *
 * The catalog lives in the agent's row: it is read and replaced whole, is
 * small (≤ 100 bindings), and one row keeps agent and catalog consistent.
 */
export const AGENT_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_create_agents',
    sql: `
CREATE TABLE agents (
  id          uuid PRIMARY KEY,
  workspace   text COLLATE "C" NOT NULL,
  slug        text COLLATE "C" NOT NULL,
  title       text NOT NULL,
  description text NOT NULL DEFAULT '',
  state       text NOT NULL CHECK (state IN ('draft', 'published', 'disabled')),
  tools       jsonb NOT NULL DEFAULT '[]',
  version     integer NOT NULL DEFAULT 1 CHECK (version > 0),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  created_by  text NOT NULL,
  updated_by  text NOT NULL,
  UNIQUE (workspace, slug)
);
`,
  },
  {
    // The mutation record: audit outbox, outcome and idempotency record (docs/decisions.md "Attribution and mutation outcomes").
    id: '002_mutation_log',
    sql: MUTATION_LOG_SQL,
  },
];
