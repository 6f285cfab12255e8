import { DaguError } from './errors';
import { roleAtLeast, type Principal, type Role } from './principal';

/**
 * The role each mutation of a service needs (dagu-model §9): services check
 * it again for every mutation, whoever sent the request (the gateway, or a
 * service's own system principal), rather than trusting that the caller
 * checked (docs/security.md).
 */
export const MUTATION_ROLES = {
  'dag.upsert': 'developer',
  'dag.delete': 'developer',
  'dag.setSuspended': 'developer',
  'dag.rename': 'developer',
  /** Starting a run of YAML the caller supplies is authoring (`inline: true`). */
  'run.start.inline': 'developer',
  'run.start': 'operator',
  'run.retry': 'operator',
  'run.stop': 'operator',
  'run.humanTask': 'operator',
  'run.approval': 'operator',
  'wiki.put': 'developer',
  'wiki.delete': 'developer',
  'wiki.rename': 'developer',
  /** Runtime profiles (Dagu spec 022b): values are managed by manager and up; a DAG's choice by developer. */
  'profile.put': 'manager',
  'profile.delete': 'manager',
  'profile.setDefault': 'manager',
  'profile.assign': 'developer',
  /** Published agents are managed by `manager` and up (issue 24 item 1). */
  'agent.create': 'manager',
  'agent.update': 'manager',
  'agent.delete': 'manager',
  'agent.setTools': 'manager',
  /** Upstreams and REST operations (issue 25) are managed by `manager` and up, like the agents they serve. */
  'upstream.put': 'manager',
  'upstream.delete': 'manager',
  'operation.create': 'manager',
  'operation.update': 'manager',
  'operation.delete': 'manager',
  'operation.newVersion': 'manager',
  'operation.publish': 'manager',
  'operation.import': 'manager',
  /** A REST tool's call acts on another system, as a run does: the binding's author must still be an operator. */
  'operation.call': 'operator',
} as const satisfies Record<string, Role>;

/** A mutation {@link MUTATION_ROLES} names. */
export type MutationName = keyof typeof MUTATION_ROLES;

/**
 * @throws DaguError `unauthorized` unless `principal` has the role `mutation` needs, or a higher one
 */
export function requireMutationRole(principal: Principal, mutation: MutationName): void {
  const required = MUTATION_ROLES[mutation];
  if (!roleAtLeast(principal.role, required)) {
    throw new DaguError(
      'unauthorized',
      `${mutation} needs the ${required} role or higher (dagu-model §9); ${principal.subject} is ${principal.role}.`,
    );
  }
}

/**
 * The reads that need more than every role's read access (dagu-model §9 gives
 * reads to every role): a workbook read opens any file run-service can read,
 * the same trust as DAG authoring (`workbook.md` "Which files"). Checked by the
 * gateway and again by the service.
 */
export const READ_ROLES = { 'run.workbook': 'developer' } as const satisfies Record<string, Role>;

/**
 * @throws DaguError `unauthorized` unless `principal` has the role `read` needs, or a higher one
 */
export function requireReadRole(principal: Principal, read: keyof typeof READ_ROLES): void {
  const required = READ_ROLES[read];
  if (!roleAtLeast(principal.role, required)) {
    throw new DaguError(
      'unauthorized',
      `Reading a workbook opens files where steps run and needs the ${required} role or higher; ${principal.subject} is ${principal.role}.`,
    );
  }
}
