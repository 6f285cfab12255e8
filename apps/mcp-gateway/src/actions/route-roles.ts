import { requiredRoleOf, type OpName, type Role } from '@dagu-mcp/contracts';

/** Who may call a REST route: a role (and every role above it, dagu-model §9), or `public` (no credential). */
export type RouteAccess = Role | 'public';

/**
 * The one table of the gateway's own REST routes: the routes that serve no bus
 * op (sign-in, users, API keys, agent keys, audit, extensions, health, the
 * OpenAPI document, sessions, usage, run events) and the role each needs
 * (dagu-model §9). A route that serves a bus op names the op instead, and its
 * role is the op's `role` in the contracts' catalogs: no other role table
 * exists in the gateway (CONTRIBUTING "How to add a route").
 */
export const LOCAL_ROUTE_ROLES = {
  'meta.openapi': 'public',
  'meta.health': 'public',
  'auth.login': 'public',
  'auth.logout': 'viewer',
  'auth.me': 'viewer',
  'session.list': 'viewer',
  'users.list': 'admin',
  'users.create': 'admin',
  'users.get': 'admin',
  'users.update': 'admin',
  'users.delete': 'admin',
  'apiKeys.create': 'admin',
  'apiKeys.list': 'admin',
  'apiKeys.revoke': 'admin',
  'audit.list': 'admin',
  'extensions.list': 'admin',
  'extensions.update': 'admin',
  /** The run events stream (`GET /events`): the same reads as `run.get`, as they happen. */
  'events.stream': 'viewer',
  /** An agent's keys live in the gateway (they authenticate there), managed like the agent itself. */
  'agentKeys.list': 'manager',
  'agentKeys.create': 'manager',
  'agentKeys.revoke': 'manager',
  /** An agent's calls, counted by the gateway, shown to those who manage the agent. */
  'usage.agent': 'manager',
  /** What became of the caller's own change with an unknown outcome: the services match the principal. */
  'mutations.outcome': 'viewer',
} as const satisfies Record<string, RouteAccess>;

/** A gateway-local route of {@link LOCAL_ROUTE_ROLES}. */
export type LocalRouteName = keyof typeof LOCAL_ROUTE_ROLES;

/** What a REST route does, which fixes who may call it: a bus op of the catalogs, or a gateway-local route. */
export type RouteAction = OpName | LocalRouteName;

/**
 * Who may call a route that does `action`: the local table's entry, else the
 * op's catalog `role` (for an op whose role depends on its request, the lowest
 * it can be; the action checks the request's own role again).
 * @throws Error when `action` is neither (a programming fault, found by the route tests)
 */
export function accessOf(action: RouteAction): RouteAccess {
  return isLocalRoute(action) ? LOCAL_ROUTE_ROLES[action] : requiredRoleOf(action);
}

function isLocalRoute(action: RouteAction): action is LocalRouteName {
  return Object.hasOwn(LOCAL_ROUTE_ROLES, action);
}
