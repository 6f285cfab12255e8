import {
  DaguError,
  dagOps,
  requireOpRole,
  RunStatus,
  runOps,
  type DagOps,
  type OpReply,
  type OpRequest,
  type Principal,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { refusedAtEdge } from './spec-edge';

/**
 * DAG changes (Dagu spec 022 `upsert_dag`, 022b `rename_dag`, `delete_dag`;
 * docs/rest-api.md "DAGs"): validate, write, suspend, rename and delete a
 * definition in dag-service. Rename and delete as 022b makes them first ask
 * run-service whether a run of the DAG is active ({@link requireNoActiveRun}).
 * Each `check…` action is the preview of a change: the same checks, nothing
 * written, and no role beyond reading (022b: "preview never fails on role").
 */

type Request<K extends keyof DagOps> = OpRequest<DagOps, K>;
type Reply<K extends keyof DagOps> = OpReply<DagOps, K>;

/** Statuses that block a rename or delete (Dagu spec 022b §Preview and apply). */
const BLOCKING = [RunStatus.running, RunStatus.queued, RunStatus.waiting];

/**
 * Validates a YAML spec without writing it (`dag.validate`, 022 preview of `upsert_dag`).
 * A spec past the pre-scan's bounds is answered at the gateway ({@link refusedAtEdge}).
 * @returns `{valid, errors, errorLocations?, warnings?, dag?, stored?}`; an invalid spec is a reply, not an error
 * @throws DaguError `invalid_tool_input` (name or empty spec)
 */
export async function validateDag(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.validate'>,
): Promise<Reply<'dag.validate'>> {
  requireOpRole(principal, 'dag.validate');
  const refused = await refusedAtEdge(bus, principal, input);
  if (refused !== undefined) return { valid: false, ...refused };
  return bus.call('dag', dagOps, 'dag.validate', input, { principal });
}

/**
 * Creates or replaces a DAG (`dag.upsert`, 022 apply of `upsert_dag`). An
 * invalid spec writes nothing and answers `valid: false, applied: false` (one past the
 * pre-scan's bounds at the gateway, {@link refusedAtEdge}).
 * @throws DaguError `unauthorized` below developer (dagu-model §9), `invalid_tool_input`
 */
export async function upsertDag(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.upsert'>,
): Promise<Reply<'dag.upsert'>> {
  requireOpRole(principal, 'dag.upsert');
  const refused = await refusedAtEdge(bus, principal, input);
  if (refused !== undefined) return { valid: false, errors: refused.errors, applied: false, stored: refused.stored };
  return bus.call('dag', dagOps, 'dag.upsert', input, { principal });
}

/**
 * Suspends or resumes a DAG's schedule (`dag.setSuspended`); answers the DAG detail.
 * @throws DaguError `unauthorized` below developer, `resource_not_found` when no such DAG
 */
export async function setDagSuspended(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.setSuspended'>,
): Promise<Reply<'dag.setSuspended'>> {
  requireOpRole(principal, 'dag.setSuspended');
  return bus.call('dag', dagOps, 'dag.setSuspended', input, { principal });
}

/**
 * Deletes a DAG as `DELETE /dags/{name}` does (docs/rest-api.md "DAGs"): the
 * definition and its schedule go in one dag-service transaction; its runs,
 * active ones included, go on and stay readable.
 * @throws DaguError `unauthorized` below developer, `resource_not_found` when no such DAG
 */
export async function deleteDag(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.delete'>,
): Promise<Reply<'dag.delete'>> {
  requireOpRole(principal, 'dag.delete');
  return bus.call('dag', dagOps, 'dag.delete', input, { principal });
}

/**
 * `delete_dag` apply (Dagu spec 022b): {@link deleteDag}, refused while a run
 * of the DAG is active. Its finished runs stay readable in run-service until
 * retention removes them.
 * @throws DaguError `unauthorized` below developer, `conflict` (an active run, {@link requireNoActiveRun}),
 *   `resource_not_found`
 */
export async function deleteIdleDag(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.delete'>,
): Promise<Reply<'dag.delete'>> {
  requireOpRole(principal, 'dag.delete');
  await requireNoActiveRun(bus, principal, input.name);
  return bus.call('dag', dagOps, 'dag.delete', input, { principal });
}

/**
 * `delete_dag` preview (022b): the DAG exists and no run of it is active.
 * @throws DaguError `resource_not_found` (the DAG), `conflict` (an active run)
 */
export async function checkDeleteDag(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.delete'>,
): Promise<void> {
  requireOpRole(principal, 'dag.get');
  await bus.call('dag', dagOps, 'dag.get', { name: input.name }, { principal });
  await requireNoActiveRun(bus, principal, input.name);
}

/**
 * `rename_dag` apply (Dagu spec 022b): refused while a run is active, then
 * dag-service renames the definition (schedule, labels and suspension go with
 * it) and records the rename, whose outbox row moves the run history in
 * run-service (docs/decisions.md). Old URIs then answer `resource_not_found`.
 * @throws DaguError `unauthorized` below developer, `resource_not_found` (the DAG),
 *   `conflict` (`newName` taken, or an active run)
 */
export async function renameDag(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.rename'>,
): Promise<Reply<'dag.rename'>> {
  requireOpRole(principal, 'dag.rename');
  await requireNoActiveRun(bus, principal, input.name);
  return bus.call('dag', dagOps, 'dag.rename', input, { principal });
}

/**
 * `rename_dag` preview (022b): the DAG exists, `newName` is free and no run is active.
 * @throws DaguError `resource_not_found` (the DAG), `conflict` on `newName` (taken), `conflict` (an active run)
 */
export async function checkRenameDag(
  bus: BusClient,
  principal: Principal,
  input: Request<'dag.rename'>,
): Promise<void> {
  requireOpRole(principal, 'dag.get');
  const opts = { principal };
  await bus.call('dag', dagOps, 'dag.get', { name: input.name }, opts);
  const taken = await bus.call('dag', dagOps, 'dag.get', { name: input.newName }, opts).then(
    () => true,
    (error: unknown) => {
      if (error instanceof DaguError && error.code === 'resource_not_found') return false;
      throw error;
    },
  );
  if (taken) {
    throw new DaguError('conflict', `DAG "${input.newName}" already exists; choose another newName.`, {
      field: 'newName',
    });
  }
  await requireNoActiveRun(bus, principal, input.name);
}

/**
 * The cross-service rule of a rename or delete (Dagu spec 022b §Preview and
 * apply): run-service must have no run of DAG `name` that is `running`,
 * `queued` or `waiting`.
 * @throws DaguError `conflict` naming the blocking run (`details.dagRunId`, `status`, `uri`)
 */
export async function requireNoActiveRun(bus: BusClient, principal: Principal, name: string): Promise<void> {
  const { items } = await bus.call('run', runOps, 'run.list', { name, status: BLOCKING, limit: 1 }, { principal });
  const run = items[0];
  if (run === undefined) return;
  throw new DaguError(
    'conflict',
    `DAG "${name}" has run ${run.dagRunId} that is ${run.statusLabel} (${run.uri}); stop it or wait for it to end, then try again.`,
    { details: { dagRunId: run.dagRunId, status: run.statusLabel, uri: run.uri } },
  );
}
