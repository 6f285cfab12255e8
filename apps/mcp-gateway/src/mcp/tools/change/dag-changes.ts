import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, dagOps, roleAtLeast, RunStatus, runOps, type Principal } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { ChangeRequest } from './change-input';
import { changeResult, dagSpecLink, roleWarnings } from './change-output';
import { workspaceOfLabels } from '../read/dag-read-backends';

/** Statuses that block a rename or delete (Dagu spec 022b §Preview and apply). */
const BLOCKING = [RunStatus.running, RunStatus.queued, RunStatus.waiting];

/**
 * @throws DaguError `conflict` naming the blocking run when DAG `name` has a
 *   run that is `running`, `queued` or `waiting` (022b: rename and delete only)
 */
async function requireNoActiveRun(bus: BusClient, name: string, principal: Principal): Promise<void> {
  const { items } = await bus.call('run', runOps, 'run.list', { name, status: BLOCKING, limit: 1 }, { principal });
  const run = items[0];
  if (run === undefined) return;
  throw new DaguError(
    'conflict',
    `DAG "${name}" has run ${run.dagRunId} that is ${run.statusLabel} (${run.uri}); stop it or wait for it to end, then try again.`,
    { details: { dagRunId: run.dagRunId, status: run.statusLabel, uri: run.uri } },
  );
}

/**
 * `rename_dag` (Dagu spec 022b): preview checks that the DAG exists, that
 * `newName` is free and that no run is active; apply checks the runs, then
 * dag-service renames the definition (schedule, labels and suspension go
 * with it) and records the rename, whose outbox row moves the run history in
 * run-service (docs/decisions.md, issue 19). Old URIs then answer
 * `resource_not_found`.
 *
 * @throws DaguError `resource_not_found` (the DAG), `conflict` (`newName`
 *   taken, or an active run), `unauthorized` (apply below developer)
 */
export async function runRenameDag(
  bus: BusClient,
  request: ChangeRequest,
  principal: Principal,
): Promise<CallToolResult> {
  const name = request.name ?? '';
  const newName = request.newName ?? '';
  const opts = { principal };
  if (request.mode === 'preview') {
    await bus.call('dag', dagOps, 'dag.get', { name }, opts);
    const taken = await bus.call('dag', dagOps, 'dag.get', { name: newName }, opts).then(
      () => true,
      (error: unknown) => {
        if (error instanceof DaguError && error.code === 'resource_not_found') return false;
        throw error;
      },
    );
    if (taken) {
      throw new DaguError('conflict', `DAG "${newName}" already exists; choose another newName.`, { field: 'newName' });
    }
    await requireNoActiveRun(bus, name, principal);
    return changeResult(request, {
      valid: true,
      applied: false,
      fields: { dagName: name, dagUri: request.dagUri, newName, newDagUri: request.newDagUri },
      warnings: roleWarnings(principal),
      links: [dagSpecLink(request.dagUri ?? '')],
    });
  }
  requireDeveloper(principal, 'Renaming a DAG');
  await requireNoActiveRun(bus, name, principal);
  await bus.call('dag', dagOps, 'dag.rename', { name, newName }, opts);
  return changeResult(request, {
    valid: true,
    applied: true,
    fields: { dagName: newName, dagUri: request.newDagUri, previousName: name, renamed: true },
    links: [dagSpecLink(request.newDagUri ?? '')],
  });
}

/**
 * `delete_dag` (Dagu spec 022b): the definition and its schedule go in one
 * dag-service transaction; its finished runs stay readable in run-service
 * until retention removes them. Preview checks that it exists and that no run
 * is active.
 *
 * @throws as {@link runRenameDag}
 */
export async function runDeleteDag(
  bus: BusClient,
  request: ChangeRequest,
  principal: Principal,
): Promise<CallToolResult> {
  const name = request.name ?? '';
  const fields = { dagName: name, dagUri: request.dagUri };
  if (request.mode === 'preview') {
    await bus.call('dag', dagOps, 'dag.get', { name }, { principal });
    await requireNoActiveRun(bus, name, principal);
    return changeResult(request, {
      valid: true,
      applied: false,
      fields,
      warnings: roleWarnings(principal),
      links: [dagSpecLink(request.dagUri ?? '')],
    });
  }
  requireDeveloper(principal, 'Deleting a DAG');
  await requireNoActiveRun(bus, name, principal);
  await bus.call('dag', dagOps, 'dag.delete', { name }, { principal });
  return changeResult(request, { valid: true, applied: true, fields: { ...fields, deleted: true } });
}

/** @throws DaguError `unauthorized` below developer (022b: every type needs developer to apply) */
export function requireDeveloper(principal: Principal, what: string): void {
  if (roleAtLeast(principal.role, 'developer')) return;
  throw new DaguError(
    'unauthorized',
    `${what} needs the developer role or higher; ${principal.subject} is ${principal.role}.`,
  );
}

/**
 * `set_dag_profile` / `clear_dag_profile` (Dagu spec 022b): the DAG's own
 * default runtime profile, kept by run-service. Both modes check that the DAG
 * exists and (set) that the profile exists in the DAG's workspace — its
 * `workspace=` label, else `default`; an unknown profile is
 * `resource_not_found` on `profile`. Apply answers `profile` (null after a clear).
 *
 * @throws DaguError `resource_not_found` (DAG or profile), `unauthorized` (apply below developer)
 */
export async function runDagProfileChange(
  bus: BusClient,
  request: ChangeRequest,
  principal: Principal,
): Promise<CallToolResult> {
  const name = request.name ?? '';
  const profile = request.type === 'set_dag_profile' ? (request.profile ?? '') : null;
  const opts = { principal };
  if (request.mode === 'apply') requireDeveloper(principal, 'Changing the profile of a DAG');
  const detail = await bus.call('dag', dagOps, 'dag.get', { name }, opts);
  const workspace = workspaceOfLabels(detail.labels);
  const fields = { dagName: name, dagUri: request.dagUri };
  const links = [dagSpecLink(request.dagUri ?? '')];
  if (request.mode === 'preview') {
    if (profile !== null) await bus.call('run', runOps, 'profile.get', { workspace, profile }, opts);
    return changeResult(request, {
      valid: true,
      applied: false,
      fields: { ...fields, profile, workspace },
      warnings: roleWarnings(principal),
      links,
    });
  }
  const reply = await bus.call('run', runOps, 'profile.assign', { dagName: name, workspace, profile }, opts);
  return changeResult(request, { valid: true, applied: true, fields: { ...fields, profile: reply.profile }, links });
}
