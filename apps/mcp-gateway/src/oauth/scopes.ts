import { roleAtLeast, type Role } from '@dagu-mcp/contracts';

/**
 * The scopes an OAuth client may hold: each names a family
 * of MCP tools and the lowest role that may use it (dagu-model §9).
 */
export const OAUTH_SCOPES = ['dagu:read', 'dagu:change', 'dagu:execute'] as const;
export type OAuthScope = (typeof OAUTH_SCOPES)[number];

/** What each scope lets a client do, in the words of the consent page. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<OAuthScope, string>> = {
  'dagu:read': 'read DAGs, runs, logs and wiki pages',
  'dagu:change': 'create, edit and delete DAGs and wiki pages',
  'dagu:execute': 'start, stop and retry DAG runs',
};

/**
 * The lowest role that may hold each scope: `change` is the developer's tool, `execute` the
 * operator's. Each is the lowest role of the scope's tool actions (mcp/tools/tool-access.ts,
 * whose test holds them equal): so a role that may hold a scope can do something with it (a
 * step-up to it is never futile), and a role below can do nothing it gates.
 */
export const SCOPE_MIN_ROLE: Readonly<Record<OAuthScope, Role>> = {
  'dagu:read': 'viewer',
  'dagu:change': 'developer',
  'dagu:execute': 'operator',
};

/** True for one of {@link OAUTH_SCOPES}. */
export function isOAuthScope(value: string): value is OAuthScope {
  return (OAUTH_SCOPES as readonly string[]).includes(value);
}

/**
 * Parses a requested `scope` list (already split on spaces). Empty or absent
 * means all three. Unknown scopes are dropped, duplicates
 * removed, order made canonical.
 *
 * @returns the known scopes asked for; empty when only unknown ones were
 */
export function requestedScopes(scopes: readonly string[] | undefined): OAuthScope[] {
  const asked = (scopes ?? []).filter((s) => s !== '');
  if (asked.length === 0) return [...OAUTH_SCOPES];
  return OAUTH_SCOPES.filter((s) => asked.includes(s));
}

/** The scopes of `scopes` that a user of `role` may hold now (the role cap of docs/decisions.md "Built-in OAuth 2.1 authorization server"). */
export function capScopes(scopes: readonly OAuthScope[], role: Role): OAuthScope[] {
  return scopes.filter((s) => roleAtLeast(role, SCOPE_MIN_ROLE[s]));
}

/** A scope list as the space-separated string of the wire. */
export function scopeString(scopes: readonly string[]): string {
  return scopes.join(' ');
}

/** A stored or wire scope string as known scopes. */
export function parseScope(scope: string | undefined): OAuthScope[] {
  return (scope ?? '').split(' ').filter(isOAuthScope);
}

/**
 * The scope an MCP JSON-RPC message needs: `tools/call` of
 * `dagu_execute` needs `dagu:execute`; of `dagu_change`, `dagu:change` in mode `apply`
 * and `dagu:read` in preview, which only reads (a viewer keeps the
 * preview); reading resources and every other tool need `dagu:read`; everything else
 * (listing, discovery, completion, notifications) needs no particular scope. A batch
 * needs every scope its messages need.
 */
export function scopesNeededBy(body: unknown): OAuthScope[] {
  const messages = Array.isArray(body) ? body : [body];
  const needed = new Set<OAuthScope>();
  for (const message of messages) {
    const scope = scopeOfMessage(message);
    if (scope !== undefined) needed.add(scope);
  }
  return OAUTH_SCOPES.filter((s) => needed.has(s));
}

function scopeOfMessage(message: unknown): OAuthScope | undefined {
  if (typeof message !== 'object' || message === null) return undefined;
  const method = 'method' in message ? message.method : undefined;
  const params = 'params' in message && typeof message.params === 'object' ? message.params : undefined;
  if (method === 'tools/call') {
    const name = params !== null && params !== undefined && 'name' in params ? params.name : undefined;
    if (name === 'dagu_change') return changeModeOf(params) === 'apply' ? 'dagu:change' : 'dagu:read';
    if (name === 'dagu_execute') return 'dagu:execute';
    return 'dagu:read';
  }
  if (method === 'resources/read' || method === 'resources/subscribe') return 'dagu:read';
  return undefined;
}

/**
 * The highest role a token's scopes leave room for ("capped by the
 * scopes"): `dagu:change` and `dagu:execute` → no cap (`admin`); `dagu:execute` → `operator`;
 * anything else → `viewer`, the reading floor every grant carries. A role above `operator`
 * needs both, since every developer action set includes starting runs.
 */
export function scopeCeiling(scopes: readonly string[]): Role {
  if (scopes.includes('dagu:execute')) return scopes.includes('dagu:change') ? 'admin' : 'operator';
  return 'viewer';
}

/**
 * `apply` when a `dagu_change` call's `mode` is `apply` as the tool reads it (a string,
 * trimmed: tools/tool-input.ts); anything else is a preview or an input error, neither of
 * which writes.
 */
function changeModeOf(params: object | null | undefined): 'apply' | 'other' {
  const args = params !== null && params !== undefined && 'arguments' in params ? params.arguments : undefined;
  const mode = typeof args === 'object' && args !== null && 'mode' in args ? args.mode : undefined;
  return typeof mode === 'string' && mode.trim() === 'apply' ? 'apply' : 'other';
}
