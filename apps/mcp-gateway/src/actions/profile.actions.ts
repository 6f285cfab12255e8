import {
  dagOps,
  requireOpRole,
  runOps,
  type OpReply,
  type OpRequest,
  type Principal,
  type RunOps,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { workspaceOfLabels } from './dag-reads.actions';

/**
 * Runtime profiles (Dagu spec 022b "Runtime profiles", "Profiles: wire
 * details"), owned by run-service: list and read (operator and up: an
 * operator chooses among profiles when starting a run), write, delete and the
 * workspace default (manager and up), and a DAG's own default profile
 * (developer and up, 022b `set_dag_profile` / `clear_dag_profile`). A read
 * shows a secret variable as `{secret: true}` without its value.
 */

type Request<K extends keyof RunOps> = OpRequest<RunOps, K>;
type Reply<K extends keyof RunOps> = OpReply<RunOps, K>;

/**
 * A workspace's profiles (`profile.list`): names, variable names, the default.
 * @throws DaguError `unauthorized` below operator (dagu-model §9), `invalid_tool_input` on `workspace`
 */
export async function listProfiles(
  bus: BusClient,
  principal: Principal,
  input: Request<'profile.list'>,
): Promise<Reply<'profile.list'>> {
  requireOpRole(principal, 'profile.list');
  return bus.call('run', runOps, 'profile.list', input, { principal });
}

/**
 * One profile (`profile.get`); secret values are never shown.
 * @throws DaguError `unauthorized` below operator, `resource_not_found` on `profile`
 */
export async function getProfile(
  bus: BusClient,
  principal: Principal,
  input: Request<'profile.get'>,
): Promise<Reply<'profile.get'>> {
  requireOpRole(principal, 'profile.get');
  return bus.call('run', runOps, 'profile.get', input, { principal });
}

/**
 * Creates or replaces a profile (`profile.put`); an entry `{secret: true}`
 * without a value keeps the stored secret. Answers the profile as read and `created`.
 * @throws DaguError `unauthorized` below manager, `invalid_tool_input` (the variables)
 */
export async function putProfile(
  bus: BusClient,
  principal: Principal,
  input: Request<'profile.put'>,
): Promise<Reply<'profile.put'>> {
  requireOpRole(principal, 'profile.put');
  return bus.call('run', runOps, 'profile.put', input, { principal });
}

/**
 * Deletes a profile (`profile.delete`).
 * @throws DaguError `unauthorized` below manager, `resource_not_found` on `profile`
 */
export async function deleteProfile(
  bus: BusClient,
  principal: Principal,
  input: Request<'profile.delete'>,
): Promise<Reply<'profile.delete'>> {
  requireOpRole(principal, 'profile.delete');
  return bus.call('run', runOps, 'profile.delete', input, { principal });
}

/**
 * Sets (or, with `profile: null`, clears) a workspace's default profile (`profile.setDefault`).
 * @throws DaguError `unauthorized` below manager, `resource_not_found` on `profile`
 */
export async function setDefaultProfile(
  bus: BusClient,
  principal: Principal,
  input: Request<'profile.setDefault'>,
): Promise<Reply<'profile.setDefault'>> {
  requireOpRole(principal, 'profile.setDefault');
  return bus.call('run', runOps, 'profile.setDefault', input, { principal });
}

/** A DAG and the profile to make its own default (`null`: clear it). */
export interface DagProfileInput {
  readonly dagName: string;
  readonly profile: string | null;
}

/**
 * `set_dag_profile` / `clear_dag_profile` apply (Dagu spec 022b): the DAG must
 * exist (`dag.get`), and its workspace (`workspace=` label, else `default`)
 * is where run-service's `profile.assign` looks the profile up.
 * @returns `{dagName, profile}` (`profile` null after a clear)
 * @throws DaguError `unauthorized` below developer, `resource_not_found` (the DAG, or on `profile`)
 */
export async function assignDagProfile(
  bus: BusClient,
  principal: Principal,
  input: DagProfileInput,
): Promise<Reply<'profile.assign'>> {
  requireOpRole(principal, 'profile.assign');
  const workspace = await workspaceOfDag(bus, principal, input.dagName);
  return bus.call(
    'run',
    runOps,
    'profile.assign',
    { dagName: input.dagName, workspace, profile: input.profile },
    { principal },
  );
}

/**
 * `set_dag_profile` / `clear_dag_profile` preview (022b): the DAG exists and
 * (set) the profile exists in the DAG's workspace; nothing is written, and
 * any role may ask ("preview never fails on role").
 * @returns the DAG's workspace
 * @throws DaguError `resource_not_found` (the DAG, or on `profile`)
 */
export async function checkDagProfile(
  bus: BusClient,
  principal: Principal,
  input: DagProfileInput,
): Promise<{ workspace: string }> {
  requireOpRole(principal, 'dag.get');
  const workspace = await workspaceOfDag(bus, principal, input.dagName);
  // The existence check of the profile, not a read of it: the value stays with the roles that read profiles.
  if (input.profile !== null)
    await bus.call('run', runOps, 'profile.get', { workspace, profile: input.profile }, { principal });
  return { workspace };
}

async function workspaceOfDag(bus: BusClient, principal: Principal, dagName: string): Promise<string> {
  const detail = await bus.call('dag', dagOps, 'dag.get', { name: dagName }, { principal });
  return workspaceOfLabels(detail.labels);
}
