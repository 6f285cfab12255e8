import type { OpDefinition } from './bus';
import { DaguError } from './errors';
import { OP_CATALOGS } from './ops';
import { roleAtLeast, type Principal, type Role } from './principal';

/**
 * Who may call each op (dagu-model §9), read from the one place it is written:
 * the `role` (and `roleFor`) of each op in the catalogs of `ops.ts`. The
 * gateway's actions check it before a bus call, its REST routes declare it
 * through the op they serve, and services check it again for every mutation,
 * whoever sent the request (the gateway, or a service's own system principal),
 * rather than trusting that the caller checked (docs/security.md).
 */

type Catalogs = typeof OP_CATALOGS;
type AllOps = Catalogs['dag'] & Catalogs['run'] & Catalogs['wiki'] & Catalogs['agent'];

/** The name of an op of any product catalog (`run.start`, `wiki.put`, …; `ping` is every service's). */
export type OpName = Extract<keyof AllOps, string>;

/** The request an op's `roleFor` reads (its parsed request). */
type RequestOf<K extends OpName> = AllOps[K] extends { roleFor(request: infer R): Role } ? R : never;

const OP_DEFINITIONS: ReadonlyMap<string, OpDefinition> = new Map(
  Object.values(OP_CATALOGS).flatMap((catalog): Array<[string, OpDefinition]> => Object.entries(catalog)),
);

/**
 * The role an op needs: its catalog `role`, or what its `roleFor` answers for
 * `request` when the op has one and a request is given.
 * @throws Error when `op` is in no catalog (a programming fault, never input)
 */
export function requiredRoleOf<K extends OpName>(op: K, request?: RequestOf<K>): Role {
  const definition = OP_DEFINITIONS.get(op);
  const role = declaredRole(op, definition);
  if (request !== undefined && definition?.roleFor !== undefined) return definition.roleFor(request);
  return role;
}

/** @throws Error when the op is unknown or declares no role (a programming fault, never input) */
function declaredRole(op: string, definition: OpDefinition | undefined): Role {
  if (definition?.role === undefined) throw new Error(`No op ${op} with a role in the catalogs.`);
  return definition.role;
}

/**
 * Refuses a caller below the role `op` needs (dagu-model §9; {@link requiredRoleOf}).
 * @throws DaguError `unauthorized` naming the op, the role needed and the caller's role
 */
export function requireOpRole<K extends OpName>(principal: Principal, op: K, request?: RequestOf<K>): void {
  const required = requiredRoleOf(op, request);
  if (!roleAtLeast(principal.role, required)) {
    throw new DaguError(
      'unauthorized',
      `${op} needs the ${required} role or higher (dagu-model §9); ${principal.subject} is ${principal.role}.`,
    );
  }
}

type MutationOpName = { [K in OpName]: AllOps[K]['mutation'] extends true ? K : never }[OpName];

function rolesWhere(keep: (op: OpDefinition) => boolean): Record<string, Role> {
  return Object.fromEntries(
    [...OP_DEFINITIONS].filter(([, op]) => keep(op)).map(([name, op]) => [name, declaredRole(name, op)]),
  );
}

/**
 * The role each mutation needs, derived from the catalogs (never written here):
 * every op with `mutation: true`, and `run.start.inline` — `run.start`'s
 * `roleFor` for an inline start (authoring, dagu-model §9).
 */
export const MUTATION_ROLES: Readonly<Record<string, Role>> = Object.freeze({
  ...rolesWhere((op) => op.mutation),
  'run.start.inline': requiredRoleOf('run.start', { inline: true }),
});

/** A mutation {@link MUTATION_ROLES} names: an op with `mutation: true`, or `run.start.inline`. */
export type MutationName = MutationOpName | 'run.start.inline';

/**
 * Services' re-check of a mutation (dagu-model §9), by its name in {@link MUTATION_ROLES}
 * (`run.start.inline` for an inline start).
 * @throws DaguError `unauthorized` unless `principal` has the role `mutation` needs, or a higher one
 */
export function requireMutationRole(principal: Principal, mutation: MutationName): void {
  if (mutation === 'run.start.inline') requireOpRole(principal, 'run.start', { inline: true });
  else requireOpRole(principal, mutation);
}

/**
 * The ops that are not mutations yet need more than every role's read access
 * (dagu-model §9 gives reads to every role), derived from the catalogs: a
 * workbook read opens any file run-service can read, the same trust as DAG
 * authoring (`workbook.md` "Which files"); profile values and agents' settings
 * are shown to the roles that manage them; a REST tool's call acts on another
 * system, as a run does.
 */
export const READ_ROLES: Readonly<Record<string, Role>> = Object.freeze(
  rolesWhere((op) => !op.mutation && op.role !== 'viewer'),
);

/**
 * run-service's re-check of a workbook read, with a message that says why it is guarded.
 * @throws DaguError `unauthorized` unless `principal` has the role `run.workbook` needs, or a higher one
 */
export function requireReadRole(principal: Principal, read: 'run.workbook'): void {
  const required = requiredRoleOf(read);
  if (!roleAtLeast(principal.role, required)) {
    throw new DaguError(
      'unauthorized',
      `Reading a workbook opens files where steps run and needs the ${required} role or higher; ${principal.subject} is ${principal.role}.`,
    );
  }
}
