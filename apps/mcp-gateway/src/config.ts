import { join } from 'node:path';
import { z } from 'zod';
import { WIKI_PAGE_HARD_MAX_BYTES, WIKI_PAGE_MAX_BYTES } from '@dagu-mcp/contracts';
import { ConfigError, env, parseConfig } from '@dagu-mcp/runtime';

/**
 * Gateway settings, parsed once at start from the environment (CONTRIBUTING §8).
 *
 * | Variable | Meaning | Default |
 * | --- | --- | --- |
 * | `HOST` | bind address of the public port | `127.0.0.1` (loopback until authentication lands) |
 * | `PORT` | public port: `/mcp`, `/api/v1`, `/healthz`, `/readyz` | `8080` |
 * | `BASE_PATH` | optional mount path, e.g. `/dagu`; MCP is then also at `<BASE_PATH>/mcp` (spec 020) | empty |
 * | `REDIS_URL` | bus Redis | `redis://127.0.0.1:6379` |
 * | `DATABASE_URL` | PostgreSQL | `postgres://postgres@127.0.0.1:5432/postgres` |
 * | `DATABASE_ADMIN_URL` | privileged PostgreSQL connection used at start only: creates the role named by `DATABASE_URL` (with its password), migrates the schema and grants that role rights on it alone (docs/security.md); unset: the `DATABASE_URL` connection migrates (local stack, tests) | — |
 * | `DATABASE_READ_URL` | a streaming replica of `DATABASE_URL` that serves the audit listing (`GET /api/v1/audit`) while it is at most `DB_READ_MAX_LAG_MS` behind, else the primary does (docs/deployment.md "Read replica"); unset: none | — |
 * | `DB_READ_MAX_LAG_MS` | how stale a replica read may be, ms: past it reads go to the primary | `2000` |
 * | `DB_READ_CHECK_MS` | how long one measure of the replica's lag is trusted, ms | `250` |
 * | `DB_SCHEMA` | the gateway's own schema | `gateway` |
 * | `DB_PREPARED_STATEMENTS` | distinct parameterized SQL texts run as named statements, planned once per connection (docs/decisions.md "Statements planned once per connection"); `0` for none, as behind a pooler in transaction mode without prepared-statement support | `256` |
 * | `BUS_PREFIX` | BullMQ key prefix | `dagu` |
 * | `DEPENDENCY_WAIT_MS` | how long the start waits for PostgreSQL and Redis to answer, ms, retrying with backoff (250 ms doubling to 5 s); the public port opens once both answered; `0`: one attempt | `60000` |
 * | `BUS_TIMEOUT_MS` | default deadline of a bus call, ms | `10000` |
 * | `BUS_HANDOFF` | insert bus jobs with the hand-off script, which hands a request straight to an idle service slot; `false` adds every job with BullMQ's own `Queue.add` (no private BullMQ keys written, see packages/bus/src/handoff/README.md) | `true` |
 * | `SESSION_IDLE_TTL_MS` | an MCP session idle this long is closed, ms | `1800000` (30 min) |
 * | `SESSION_CACHE_MS` | how long a replica reuses a session record it loaded before asking Redis again (a session ended or changed on any replica is dropped from every replica's cache within one Redis pub/sub hop, see docs/mcp-transport.md), ms; `0` turns it off; at most a quarter of `SESSION_IDLE_TTL_MS` | `1000` |
 * | `BODY_LIMIT_BYTES` | largest accepted request body, bytes | `4194304` (4 MiB) |
 * | `BODY_PARSE_THREAD_MIN_BYTES` | JSON request bodies (MCP and REST) of this size or more are parsed on a thread beside the event loop, so one client's megabyte bodies do not hold other callers' requests, bytes | `65536` (64 KiB) |
 * | `HTTP_HEADERS_TIMEOUT_MS` | a client that has not sent a request's whole header block this long after it began is disconnected (slow-header sockets), ms; at most `HTTP_REQUEST_TIMEOUT_MS` (a larger value is cut to it); checked every second | `10000` |
 * | `HTTP_REQUEST_TIMEOUT_MS` | a client that has not sent a whole request (headers and body) this long after it began is disconnected (slow bodies); the answer, an SSE stream included, is not limited by it, ms | `60000` |
 * | `WIKI_PAGE_MAX_BYTES` | largest wiki page body accepted by `PUT /api/v1/wiki/…` (larger: 413), bytes, at most 16 MiB | `1048576` (1 MiB) |
 * | `SSE_KEEPALIVE_MS` | SSE keep-alive comment interval on MCP streams, ms, at most 30000 (spec 020) | `15000` |
 * | `SSE_RETRY_MS` | reconnection delay announced to MCP clients with SSE priming events, ms | `2000` |
 * | `SSE_EVENT_RETENTION_MS` | how long MCP SSE events stay in Redis for `Last-Event-ID` resumption, ms | `300000` (5 min) |
 * | `SSE_EVENT_MAX` | about how many events are kept per MCP SSE stream | `1000` |
 * | `MCP_REPLICA_LEASE_MS` | lifetime of a replica's liveness key in Redis, renewed every third of it; a replica resuming an SSE stream whose owner's key lapsed answers the request `resource_unavailable`, outcome unknown, ms | `3000` |
 * | `MCP_CLIENT_REQUEST_TIMEOUT_MS` | how long a server→client request (sampling, elicitation) waits for the client, ms | `300000` (5 min) |
 * | `MCP_BATCH_MAX_MESSAGES` | most messages in one JSON-RPC batch (protocol 2025-03-26); more is 400 `-32600` | `100` |
 * | `MCP_SESSION_RECORD_MAX_BYTES` | most bytes of a session's `clientInfo` and `capabilities` as JSON; more refuses `initialize` (`-32602`) | `16384` (16 KiB) |
 * | `MCP_SUBSCRIPTIONS_MAX` | most resource subscriptions one MCP session holds; more is refused (`-32600`, field `uri`) | `100` |
 * | `MCP_SESSIONS_PER_PRINCIPAL_MAX` | most live MCP sessions of one principal; one more `initialize` is 429 (`-32000`) | `5000` |
 * | `ALLOWED_ORIGINS` | comma-separated origins allowed to call `/mcp`, and to change things on `/api/v1`, from a browser (`Origin` header) | empty: the gateway's own origin |
 * | `ALLOWED_HOSTS` | comma-separated extra `Host` names accepted on `/mcp`; checked only when `HOST` is loopback or this is set | empty |
 * | `AGENT_CATALOG_REFRESH_MS` | how often every gateway replica rebuilds the catalogs of the published agents it serves (changes made through the REST API reach every replica at once, this catches the rest: a DAG's params changed, a missed notification), ms | `30000` |
 * | `AGENT_USAGE_RETENTION_DAYS` | how long the calls of agent endpoints are kept for the usage route (older ones are deleted by an hourly sweep on every replica), days | `93` |
 * | `MCP_EXTENSIONS` | comma-separated MCP extension services always served without an admin switch, like enabled ones: tools and prompts namespaced `<name>.<tool>`, minimum role and input schema enforced (docs/extending.md) | empty |
 * | `MCP_TEST_FIXTURE_EXTENSIONS` | comma-separated protocol **test fixtures** served exactly as announced — names not namespaced, calls relayed without role or schema checks (the MCP conformance suite's fixed `test_*` names); never for a real service | empty |
 * | `MCP_EXTENSION_CALL_TIMEOUT_MS` | deadline of one call to an extension service (tool call, resource read, prompt); past it an admin-enabled extension's tool call is `resource_unavailable` naming the extension, ms | `30000` |
 * | `LOG_LEVEL` | pino level | `info` |
 * | `LOG_PRETTY` | `true`: human-readable lines (one per event); `false`: JSON lines; `auto`: human-readable only when stdout is a terminal (no ANSI codes in a redirected log) | `auto` |
 * | `METRICS_HOST` / `METRICS_PORT` | ops port serving only Prometheus `/metrics` (never on the public port) | `127.0.0.1` / `9464` (containers set `0.0.0.0`) |
 * | `AUTH_MODE` | `builtin` (users, login tokens, API keys), `basic` (one user), `none` (loopback only) | `builtin` |
 * | `ADMIN_USERNAME` / `ADMIN_PASSWORD` | first admin of `builtin` (password generated and printed once if unset) | `admin` / — |
 * | `BASIC_USERNAME` / `BASIC_PASSWORD` | the one user of `basic` (required in that mode) | — |
 * | `TOKEN_SECRET` | HS256 secret of login tokens, ≥ 32 chars (generated once and kept in PostgreSQL if unset) | — |
 * | `DAGU_ENCRYPTION_KEY` | key ring encrypting secrets kept in PostgreSQL (the login-token secret): `id:base64key[,id:base64key…]`, first key encrypts, all decrypt (rotation), or one bare base64 32-byte key; required unless `HOST` is loopback, where a development key is generated in the temp directory (docs/security.md) | — |
 * | `TOKEN_TTL_SECONDS` | login token lifetime, s | `43200` (12 h) |
 * | `BROWSER_SESSION_TTL_MS` | browser session (sign-in page cookie) lifetime, ms | `43200000` (12 h) |
 * | `TRUST_PROXY` | how many proxy hops in front of the gateway append to `X-Forwarded-For` (the client address is read that many hops from the right); `false` ignores the header. `true` is refused: it would let a client pick its own address | `false` |
 * | `LOGIN_MAX_FAILURES_PER_USER` / `LOGIN_MAX_FAILURES_PER_ADDRESS` | failed passwords allowed per window for one username from one address (then that pair gets 429; past this many from everywhere the username is only slowed, 250 ms doubling up to 8 s, never locked) / failed credentials from one address (then that address gets 429) | `10` / `50` |
 * | `LOGIN_FAILURE_WINDOW_SECONDS` | rate-limit window, s | `900` |
 * | `AUDIT_UNAUTHENTICATED_PER_MINUTE` | audit rows of unauthenticated requests per minute and replica; the rest are counted in one `audit.unauthenticated.suppressed` row | `600` |
 * | `AUDIT_UNAUTHENTICATED_RETENTION_DAYS` | days the audit rows of unauthenticated requests are kept (swept hourly) | `7` |
 * | `AUDIT_BUFFER_MAX_EVENTS` | audit events a replica holds in memory while PostgreSQL takes no writes (retried, in order, when it is back); past it new events are dropped, counted in `dagu_audit_events_dropped_total` and in one `audit.buffer.dropped` row | `50000` |
 * | `SERVER_REGISTRY_NAME` | the deployment's MCP Registry name, `<reverse-DNS namespace>/<server>`, in its server card (`/.well-known/mcp/server-card.json`) and `server.json` (`/.well-known/mcp/server.json`); set it to a namespace you control before publishing | `local.dagu-mcp/gateway` |
 * | `PUBLIC_URL` | the gateway's external origin plus `BASE_PATH` as clients see it, e.g. `https://ops.example.com/dagu`: the OAuth issuer, and the base of each MCP endpoint's resource URL; unset: a loopback stack uses `http://HOST:PORT/BASE_PATH`, any other leaves OAuth off and says why | — |
 * | `OAUTH` | serve the built-in OAuth 2.1 authorization server for MCP clients (only with `AUTH_MODE=builtin`) | `true` |
 * | `OAUTH_ACCESS_TOKEN_TTL_SECONDS` | lifetime of OAuth access tokens (JWTs), s | `3600` (1 h) |
 * | `OAUTH_REFRESH_TOKEN_TTL_SECONDS` | lifetime of a refresh-token family from its first token, s | `2592000` (30 days) |
 * | `OAUTH_REFRESH_GRACE_SECONDS` | how long a just-rotated refresh token may be presented again (a lost response) before reuse revokes its family, s | `30` |
 * | `OAUTH_REVOCATION_CHECK_MS` | how long a replica trusts that an access token's authorization is not revoked before asking Redis again: the bound on revocation across replicas, ms | `5000` |
 * | `OAUTH_SIGNING_KEY_ROTATION_DAYS` | age at which the access-token signing key is replaced (the old one keeps verifying until its tokens expire), days | `30` |
 * | `OAUTH_CIMD_ALLOWED_HOSTS` | comma-separated hosts (`*.example.com` wildcards, CIDR ranges) whose Client ID Metadata Documents are fetched; empty: any public host | empty |
 * | `OAUTH_CIMD_ALLOW_PRIVATE` | also fetch metadata documents from loopback and private addresses (tests only: it opens the SSRF guard) | `false` |
 * | `OTEL_EXPORTER_OTLP_ENDPOINT` | OTLP/HTTP collector base URL that traces are exported to (`/v1/traces` appended); unset: traces are not exported, but trace context still flows to the services | — |
 * | `OTEL_SERVICE_NAME` | `service.name` of the exported spans | `mcp-gateway` |
 * | `WEB_DIST_DIR` | directory of the built web console (`index.html`, `console/`), served at `/` and under `BASE_PATH`; when it holds no `index.html`, `/` answers a small HTML index instead | empty: `apps/web/dist` of the checkout (the image sets `/app/web`) |
 * | `EVENTS_KEEPALIVE_MS` | keep-alive comment interval on `GET /api/v1/events` streams, ms | `15000` |
 *
 * Every secret may come from `<NAME>_FILE`.
 */
export const GatewayConfigSchema = z.object({
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: env.port(8080),
  BASE_PATH: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be empty or a path like /dagu (no trailing slash)')
    .default(''),
  REDIS_URL: env.redisUrl,
  DATABASE_URL: env.databaseUrl,
  DATABASE_ADMIN_URL: env.adminDatabaseUrl,
  DATABASE_READ_URL: env.readDatabaseUrl,
  DB_READ_MAX_LAG_MS: env.millis(2000),
  DB_READ_CHECK_MS: env.millis(250),
  DB_SCHEMA: env.schemaName('gateway'),
  DB_PREPARED_STATEMENTS: env.preparedStatements,
  BUS_PREFIX: env.busPrefix,
  DEPENDENCY_WAIT_MS: env.dependencyWaitMs,
  BUS_TIMEOUT_MS: env.millis(10_000),
  BUS_HANDOFF: env.flag(true),
  SESSION_IDLE_TTL_MS: env.millis(30 * 60_000),
  SESSION_CACHE_MS: z.coerce.number().int().min(0).default(1000),
  AGENT_CATALOG_REFRESH_MS: z.coerce.number().int().min(100).default(30_000),
  AGENT_USAGE_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(93),
  BODY_LIMIT_BYTES: env.count(4 * 1024 * 1024),
  BODY_PARSE_THREAD_MIN_BYTES: env.count(64 * 1024),
  HTTP_HEADERS_TIMEOUT_MS: z.coerce.number().int().min(100).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).default(60_000),
  WIKI_PAGE_MAX_BYTES: env.count(WIKI_PAGE_MAX_BYTES).pipe(z.number().max(WIKI_PAGE_HARD_MAX_BYTES)),
  SSE_KEEPALIVE_MS: z.coerce.number().int().min(100).max(30_000, 'must be at most 30000 (spec 020)').default(15_000),
  SSE_RETRY_MS: env.millis(2_000),
  SSE_EVENT_RETENTION_MS: env.millis(5 * 60_000),
  SSE_EVENT_MAX: env.count(1000),
  MCP_REPLICA_LEASE_MS: z.coerce.number().int().min(300).default(3_000),
  MCP_CLIENT_REQUEST_TIMEOUT_MS: env.millis(5 * 60_000),
  MCP_BATCH_MAX_MESSAGES: env.count(100),
  MCP_SESSION_RECORD_MAX_BYTES: env.count(16 * 1024),
  MCP_SUBSCRIPTIONS_MAX: env.count(100),
  MCP_SESSIONS_PER_PRINCIPAL_MAX: env.count(5000),
  ALLOWED_ORIGINS: commaList(/^https?:\/\/[^\s/,]+$/, 'must be origins like https://app.example.com, comma-separated'),
  ALLOWED_HOSTS: commaList(/^[A-Za-z0-9.:[\]-]+$/, 'must be host names, comma-separated'),
  MCP_EXTENSION_CALL_TIMEOUT_MS: env.millis(30_000),
  MCP_EXTENSIONS: commaList(
    /^[a-z][a-z0-9-]{0,39}$/,
    'must be extension names (a lowercase letter, then a-z, 0-9 or -; at most 40), comma-separated',
  ),
  MCP_TEST_FIXTURE_EXTENSIONS: commaList(
    /^[a-z][a-z0-9-]{0,39}$/,
    'must be extension names (a lowercase letter, then a-z, 0-9 or -; at most 40), comma-separated',
  ),
  LOG_LEVEL: env.logLevel,
  LOG_PRETTY: env.logPretty,
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
  METRICS_PORT: env.port(9464),
  AUTH_MODE: z.enum(['builtin', 'basic', 'none']).default('builtin'),
  ADMIN_USERNAME: z.string().min(1).default('admin'),
  ADMIN_PASSWORD: z.string().min(8, 'must be at least 8 characters').optional(),
  BASIC_USERNAME: z.string().min(1).optional(),
  BASIC_PASSWORD: z.string().min(1).optional(),
  TOKEN_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
  DAGU_ENCRYPTION_KEY: z.string().min(1).optional(),
  TOKEN_TTL_SECONDS: env.count(12 * 3600),
  BROWSER_SESSION_TTL_MS: env.count(12 * 3600 * 1000),
  TRUST_PROXY: z
    .string()
    .regex(
      /^(false|\d+)$/,
      'must be false or a hop count (true would trust every X-Forwarded-For entry, which a client can write)',
    )
    .default('false')
    .transform((v) => (v === 'false' ? false : Number(v))),
  LOGIN_MAX_FAILURES_PER_USER: env.count(10),
  LOGIN_MAX_FAILURES_PER_ADDRESS: env.count(50),
  LOGIN_FAILURE_WINDOW_SECONDS: env.count(900),
  AUDIT_UNAUTHENTICATED_PER_MINUTE: env.count(600),
  AUDIT_UNAUTHENTICATED_RETENTION_DAYS: env.count(7),
  AUDIT_BUFFER_MAX_EVENTS: env.count(50_000),
  SERVER_REGISTRY_NAME: z
    .string()
    .regex(/^[a-zA-Z0-9.-]+\/[a-zA-Z0-9._-]+$/, 'must be <reverse-DNS namespace>/<server name>')
    .default('local.dagu-mcp/gateway'),
  PUBLIC_URL: z
    .string()
    .url()
    .refine((v) => /^https?:\/\/[^/?#]+(\/[^?#]*)?$/.test(v), 'must be an http(s) URL without query or fragment')
    .optional(),
  OAUTH: env.flag(true),
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: env.count(3600),
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: env.count(30 * 24 * 3600),
  OAUTH_REFRESH_GRACE_SECONDS: z.coerce.number().int().min(0).default(30),
  OAUTH_REVOCATION_CHECK_MS: z.coerce.number().int().min(0).max(60_000).default(5000),
  OAUTH_SIGNING_KEY_ROTATION_DAYS: env.count(30),
  OAUTH_CIMD_ALLOWED_HOSTS: commaList(
    /^[A-Za-z0-9.*:/[\]-]+$/,
    'must be host names, *.wildcards or CIDR ranges, comma-separated',
  ),
  OAUTH_CIMD_ALLOW_PRIVATE: env.flag(false),
  OTEL_EXPORTER_OTLP_ENDPOINT: env.otlpEndpoint,
  OTEL_SERVICE_NAME: env.otelServiceName,
  // Empty: the checkout's apps/web/dist, resolved by webDistDir() (the default must not name a machine's path).
  WEB_DIST_DIR: z.string().default(''),
  EVENTS_KEEPALIVE_MS: z.coerce.number().int().min(100).max(60_000).default(15_000),
});
export type GatewayConfig = z.output<typeof GatewayConfigSchema>;

/** A comma-separated list variable (empty by default) whose items each match `item`. */
function commaList(item: RegExp, message: string) {
  return z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    )
    .refine((items) => items.every((i) => item.test(i)), message);
}

/**
 * The directory the web console is served from: `WEB_DIST_DIR`, or (unset) the checkout's
 * `apps/web/dist` next to this app (`dist/config.js` → `../../web/dist`). Only the console's
 * built files are read: no app imports another.
 */
export function webDistDir(config: GatewayConfig): string {
  return config.WEB_DIST_DIR !== '' ? config.WEB_DIST_DIR : join(__dirname, '..', '..', 'web', 'dist');
}

/** Parses the gateway config; throws `ConfigError` with every bad variable. */
export function loadGatewayConfig(source: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const config = parseConfig(GatewayConfigSchema, source);
  if (config.AUTH_MODE === 'none' && !isLoopback(config.HOST)) {
    throw new ConfigError(
      `Invalid configuration: AUTH_MODE=none is only allowed when HOST is a loopback address (got ${config.HOST}); ` +
        'anyone who can reach the port would act as admin. Use AUTH_MODE=builtin or basic, or bind 127.0.0.1.',
    );
  }
  if (config.AUTH_MODE === 'basic' && (config.BASIC_USERNAME === undefined || config.BASIC_PASSWORD === undefined)) {
    throw new ConfigError(
      'Invalid configuration: AUTH_MODE=basic needs BASIC_USERNAME and BASIC_PASSWORD (or BASIC_PASSWORD_FILE).',
    );
  }
  return config;
}

/** True for 127.0.0.0/8, ::1 and `localhost`. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}
