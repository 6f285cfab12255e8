import type { Migration } from '@dagu-mcp/runtime';

/** Gateway schema migrations: users, API keys, settings, audit events. Applied in id order on start. */
export const GATEWAY_MIGRATIONS: readonly Migration[] = [
  {
    id: '001_auth',
    sql: `
      CREATE TABLE users (
        id uuid PRIMARY KEY,
        username text NOT NULL UNIQUE,
        role text NOT NULL,
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE api_keys (
        id uuid PRIMARY KEY,
        prefix text NOT NULL UNIQUE,
        key_hash text NOT NULL,
        name text NOT NULL,
        role text NOT NULL,
        surfaces text[] NOT NULL,
        expires_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        created_by text NOT NULL,
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      -- Instance-wide settings, e.g. the generated login-token secret shared by all replicas.
      CREATE TABLE settings (key text PRIMARY KEY, value text NOT NULL);
    `,
  },
  {
    id: '002_audit',
    sql: `
      CREATE TABLE audit_events (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL,
        category text NOT NULL,
        action text NOT NULL,
        actor text NOT NULL,
        principal_id text NOT NULL,
        credential_type text NOT NULL,
        target text,
        outcome text NOT NULL,
        duration_ms double precision,
        request_id text,
        details jsonb
      );
      CREATE INDEX audit_events_at ON audit_events (at DESC, id DESC);
      CREATE INDEX audit_events_action ON audit_events (action, at DESC);
    `,
  },
  {
    // Login tokens carry the token_version they were issued under; a password
    // reset bumps it, which ends every older token (docs/security.md "Role boundaries").
    id: '003_user_token_version',
    sql: `ALTER TABLE users ADD COLUMN token_version integer NOT NULL DEFAULT 0;`,
  },
  {
    // Rows drained from the services' mutation outboxes carry their origin (service, outbox row id):
    // the unique index makes the at-least-once drain insert each once (docs/decisions.md
    // "Attribution and mutation outcomes").
    id: '004_audit_outbox_source',
    sql: `
      ALTER TABLE audit_events ADD COLUMN source text, ADD COLUMN source_id text;
      CREATE UNIQUE INDEX audit_events_source ON audit_events (source, source_id) WHERE source IS NOT NULL;
    `,
  },
  {
    // Built-in OAuth authorization server (docs/decisions.md "Built-in OAuth 2.1 authorization server"): registered clients
    // (a confidential client's secret encrypted with the secret box), grants (one per user and client:
    // the remembered consent and the authorizations page), refresh tokens stored as SHA-256 hashes in
    // rotation families, and the JWT signing keys (private key encrypted with the secret box).
    id: '005_oauth',
    sql: `
      CREATE TABLE oauth_clients (
        client_id text PRIMARY KEY,
        metadata jsonb NOT NULL,
        secret_enc text,
        source text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE oauth_grants (
        id uuid PRIMARY KEY,
        user_id uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
        client_id text NOT NULL,
        client_name text NOT NULL,
        scope text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      CREATE UNIQUE INDEX oauth_grants_live ON oauth_grants (user_id, client_id) WHERE revoked_at IS NULL;
      CREATE TABLE oauth_refresh_tokens (
        token_hash text PRIMARY KEY,
        family_id uuid NOT NULL,
        grant_id uuid NOT NULL REFERENCES oauth_grants (id) ON DELETE CASCADE,
        client_id text NOT NULL,
        user_id uuid NOT NULL,
        scope text NOT NULL,
        resource text NOT NULL,
        expires_at timestamptz NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        rotated_at timestamptz,
        revoked_at timestamptz
      );
      CREATE INDEX oauth_refresh_tokens_family ON oauth_refresh_tokens (family_id);
      CREATE INDEX oauth_refresh_tokens_grant ON oauth_refresh_tokens (grant_id);
      CREATE TABLE oauth_signing_keys (
        kid text PRIMARY KEY,
        alg text NOT NULL,
        public_jwk jsonb NOT NULL,
        private_enc text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        retired_at timestamptz
      );
    `,
  },
  {
    // Keys of published agents: like API keys, stored as a SHA-256 hash plus a
    // lookup prefix, each bound to one agent by the id agent-service gave it (a deleted and
    // re-created agent of the same slug does not inherit the old keys).
    id: '006_agent_keys',
    sql: `
      CREATE TABLE agent_keys (
        id uuid PRIMARY KEY,
        prefix text NOT NULL UNIQUE,
        key_hash text NOT NULL,
        agent_id text NOT NULL,
        workspace text NOT NULL,
        agent_slug text NOT NULL,
        name text NOT NULL,
        expires_at timestamptz,
        created_by text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz,
        revoked_at timestamptz
      );
      CREATE INDEX agent_keys_agent ON agent_keys (workspace, agent_slug) WHERE revoked_at IS NULL;
    `,
  },
  {
    // One row per tools/call on an agent endpoint: what GET …/agents/{agent}/usage
    // counts. Written in batches off the call path (usage/usage-recorder.ts); the agent by the id
    // agent-service gave it, so a re-created agent of the same slug starts from zero.
    id: '009_agent_tool_calls',
    sql: `
      CREATE TABLE agent_tool_calls (
        id bigserial PRIMARY KEY,
        at timestamptz NOT NULL,
        agent_id text NOT NULL,
        workspace text NOT NULL,
        agent_slug text NOT NULL,
        tool text NOT NULL,
        kind text NOT NULL,
        duration_ms integer NOT NULL CHECK (duration_ms >= 0),
        is_error boolean NOT NULL,
        error_code text
      );
      CREATE INDEX agent_tool_calls_agent_at ON agent_tool_calls (agent_id, at);
    `,
  },
  {
    // The person an agent acted for beside the agent (audit rows and usage rows carry
    // `onBehalfOf`), and the resources a remembered consent covers (an agent's consent page names
    // the agent, so consent given for /mcp does not skip it; older grants cover none and ask once).
    id: '010_on_behalf_of',
    sql: `
      ALTER TABLE audit_events ADD COLUMN on_behalf_of jsonb;
      ALTER TABLE agent_tool_calls ADD COLUMN on_behalf_of jsonb;
      ALTER TABLE oauth_grants ADD COLUMN resources text[] NOT NULL DEFAULT '{}';
    `,
  },
];
