import { MUTATION_LOG_REQUEST_INDEX_SQL, MUTATION_LOG_SQL, type Migration } from '@dagu-mcp/runtime';

/**
 * agent-service schema migrations (append-only), applied in id order on start
 * inside the service's own schema.
 *
 * `001_create_agents`: one row per agent.
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
 *
 * `003_create_upstreams`: one row per upstream of a workspace —
 * `base_url`, `allow_hosts` (JSON array), `credential` (the whole credential
 * as a SecretBox ciphertext bound to the purpose `agent.upstream:<ws>/<name>`;
 * never plain text), `credential_type` (shown by reads), `default_headers`,
 * `timeout_ms`, `version` (+1 per replace).
 *
 * `004_create_operations`: `operations` (one row per operation:
 * name, texts) and `operation_versions` (`spec` JSON; `state` `draft` or
 * `published`; a published row is never updated again). "Latest published" is
 * the highest published version.
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
  {
    id: '003_create_upstreams',
    sql: `
CREATE TABLE upstreams (
  workspace       text COLLATE "C" NOT NULL,
  name            text COLLATE "C" NOT NULL,
  base_url        text NOT NULL,
  allow_hosts     jsonb NOT NULL DEFAULT '[]',
  credential_type text CHECK (credential_type IN ('bearer', 'header', 'query', 'basic')),
  credential_name text,
  credential      text CHECK (credential IS NULL OR credential LIKE 'dsec1.%'),
  default_headers jsonb NOT NULL DEFAULT '{}',
  timeout_ms      integer NOT NULL CHECK (timeout_ms > 0),
  version         integer NOT NULL DEFAULT 1,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  created_by      text NOT NULL,
  updated_by      text NOT NULL,
  PRIMARY KEY (workspace, name),
  CHECK ((credential IS NULL) = (credential_type IS NULL))
);
`,
  },
  {
    id: '004_create_operations',
    sql: `
CREATE TABLE operations (
  id          uuid PRIMARY KEY,
  workspace   text COLLATE "C" NOT NULL,
  name        text COLLATE "C" NOT NULL,
  title       text NOT NULL DEFAULT '',
  description text NOT NULL DEFAULT '',
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now(),
  created_by  text NOT NULL,
  updated_by  text NOT NULL,
  UNIQUE (workspace, name)
);
CREATE TABLE operation_versions (
  operation_id uuid NOT NULL REFERENCES operations (id) ON DELETE CASCADE,
  version      integer NOT NULL CHECK (version > 0),
  state        text NOT NULL CHECK (state IN ('draft', 'published')),
  spec         jsonb NOT NULL,
  upstream     text COLLATE "C" NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  created_by   text NOT NULL,
  published_at timestamptz,
  published_by text,
  PRIMARY KEY (operation_id, version)
);
CREATE INDEX operation_versions_upstream ON operation_versions (upstream);
`,
  },
  {
    // Finds a change by the gateway request that sent it (mutation.outcome by request id).
    id: '005_mutation_log_request',
    sql: MUTATION_LOG_REQUEST_INDEX_SQL,
  },
  {
    // Who may sign in to an agent with OAuth, and with whose authority;
    // existing agents become own_role.
    id: '006_agent_sign_in',
    sql: `ALTER TABLE agents ADD COLUMN sign_in jsonb NOT NULL DEFAULT '{"mode":"own_role"}'::jsonb;`,
  },
];
