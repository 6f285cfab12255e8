import { requiredRoleOf, roleAtLeast, type OpName, type Principal, type Role } from '@dagu-mcp/contracts';
import type { OAuthScope } from '../../oauth/scopes';
import { APPLY_OP_OF_TYPE } from './change/change-types';

/** One thing a tool can do: the op it makes, the role that op needs, the OAuth scope that gates it. */
export interface ToolAction {
  readonly op: OpName;
  /** From the op's catalog entry (dagu-model §9), never written here. */
  readonly role: Role;
  readonly scope: OAuthScope;
}

const action = (op: OpName, scope: OAuthScope, role: Role = requiredRoleOf(op)): ToolAction => ({ op, role, scope });

/** The gateway's own tools. */
export type GatewayToolName = 'dagu_read' | 'dagu_change' | 'dagu_execute';

/**
 * What each of the gateway's tools does, as the ops its actions make:
 * `dagu_read` reads (021 targets); `dagu_change` previews with reads and validation and
 * applies with the op of its change type (022b, {@link APPLY_OP_OF_TYPE}); `dagu_execute`
 * starts (an inline start is authoring: `run.start`'s `roleFor`), enqueues, retries, stops,
 * and answers checkpoints while it waits (036). Roles come from the op catalogs, scopes from
 * what `oauth/scopes.ts` `scopesNeededBy` asks of the call.
 */
export const TOOL_ACTIONS: Readonly<Record<GatewayToolName, readonly ToolAction[]>> = {
  dagu_read: (
    [
      'dag.list',
      'dag.get',
      'dag.spec',
      'dag.search',
      'profile.ofDag',
      'wiki.list',
      'wiki.get',
      'wiki.search',
      'run.list',
      'run.get',
      'run.logs',
      'run.stepLog',
      'run.foreachItems',
      'run.foreachItem',
      'run.workbook',
    ] as const
  ).map((op) => action(op, 'dagu:read')),
  dagu_change: [
    ...(['dag.validate', 'dag.get', 'wiki.check'] as const).map((op) => action(op, 'dagu:read')),
    ...[...new Set(Object.values(APPLY_OP_OF_TYPE))].map((op) => action(op, 'dagu:change')),
  ],
  dagu_execute: [
    action('run.start', 'dagu:execute'),
    action('run.start', 'dagu:execute', requiredRoleOf('run.start', { inline: true })),
    ...(['run.retry', 'run.stop', 'run.humanTask', 'run.approval'] as const).map((op) => action(op, 'dagu:execute')),
  ],
};

/**
 * True when `principal` may do `toolAction`: its role reaches the op's, and an OAuth token
 * (a principal with `scopes`) holds the action's scope. The role's cap by the scopes of
 * The scope check is per action: a token may hold `dagu:execute` without `dagu:change`.
 */
export function mayDo(principal: Principal, toolAction: Pick<ToolAction, 'role' | 'scope'>): boolean {
  return (
    roleAtLeast(principal.role, toolAction.role) &&
    (principal.scopes === undefined || principal.scopes.includes(toolAction.scope))
  );
}

/**
 * Whether `tools/list` offers gateway tool `name` to `principal`, for every credential
 *: when at least one of its actions is open to it ({@link mayDo}). A
 * viewer keeps `dagu_read` and `dagu_change` (preview) and loses `dagu_execute`. A tool
 * left out may still be called; its action answers `unauthorized` (dagu-model §10).
 * Names that are not the gateway's own tools are offered.
 */
export function offersTool(principal: Principal, name: string): boolean {
  const actions = isGatewayTool(name) ? TOOL_ACTIONS[name] : undefined;
  return actions === undefined || actions.some((a) => mayDo(principal, a));
}

function isGatewayTool(name: string): name is GatewayToolName {
  return Object.prototype.hasOwnProperty.call(TOOL_ACTIONS, name);
}
