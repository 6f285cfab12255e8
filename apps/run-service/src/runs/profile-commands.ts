import {
  DaguError,
  isAllowedProfileVariable,
  requireMutationRole,
  type DagProfileReply,
  type ProfilePutRequest,
  type ProfileView,
} from '@dagu-mcp/contracts';
import type { HandlerContext } from '@dagu-mcp/bus';
import type { Pool, PoolClient } from '@dagu-mcp/runtime';
import { fenceOf, type RecordMutation } from '@dagu-mcp/service-kit';
import { secretPurpose, type SecretSource } from '../store/profile-env';
import { mutate, withStorageErrors } from '../store/storage-errors';
import {
  profileDefaults,
  deleteProfile,
  findProfile,
  listProfiles,
  saveProfile,
  setDagProfile,
  setWorkspaceDefault,
  workspaceDefault,
  type ProfileRecord,
  type StoredVariable,
} from '../store/profile.repository';

/**
 * Runtime profiles (Dagu spec 022b "Runtime profiles", "Profiles: wire
 * details"): the commands and reads of run-service's profile ops. A secret
 * value is encrypted with the service's SecretBox (`DAGU_ENCRYPTION_KEY`)
 * before it reaches SQL, bound to its workspace, profile and variable name,
 * and no read returns it. Audit rows carry variable names only.
 */

/** The read view of a stored profile: secrets by name only. */
export function profileView(record: ProfileRecord, defaultProfile: string | null): ProfileView {
  const env: ProfileView['env'] = {};
  for (const [name, variable] of Object.entries(record.env)) {
    env[name] = variable.secret ? { secret: true } : { value: variable.value, secret: false };
  }
  return {
    workspace: record.workspace,
    name: record.name,
    env,
    isDefault: defaultProfile === record.name,
    updatedAt: record.updatedAt.toISOString(),
  };
}

function notFound(workspace: string, profile: string): DaguError {
  return new DaguError('resource_not_found', `Runtime profile ${profile} does not exist in workspace ${workspace}.`, {
    field: 'profile',
  });
}

/**
 * `profile.put`: creates or replaces a profile (manager and up). A variable
 * `{secret: true}` without `value` keeps its stored secret.
 *
 * @throws DaguError `invalid_tool_input` on `env.<NAME>` (a forbidden name, a
 *   kept secret that does not exist, a value missing); `unauthorized`; `resource_unavailable`
 */
export async function putProfile(pool: Pool, secrets: SecretSource, request: ProfilePutRequest, ctx: HandlerContext) {
  requireMutationRole(ctx.principal, 'profile.put');
  const { workspace, profile } = request;
  for (const name of Object.keys(request.env)) {
    if (!isAllowedProfileVariable(name)) {
      throw new DaguError(
        'invalid_tool_input',
        `Variable ${name} may not be set by a profile: use a shell name that is not DAG_*, DAGU_*, LD_*, PATH or another variable the security rules reserve.`,
        { field: `env.${name}` },
      );
    }
  }
  const write = async (client: PoolClient, record: RecordMutation) => {
    const current = await findProfile(client, workspace, profile, true);
    const env: Record<string, StoredVariable> = {};
    for (const [name, input] of Object.entries(request.env)) {
      const secret = input.secret === true;
      if (input.value === undefined) {
        const kept = current?.env[name];
        if (!secret || kept === undefined || !kept.secret) {
          throw new DaguError(
            'invalid_tool_input',
            `Variable ${name} needs a value (only a stored secret may be kept).`,
            {
              field: `env.${name}`,
            },
          );
        }
        env[name] = kept;
        continue;
      }
      env[name] = secret
        ? { value: secrets().encrypt(input.value, secretPurpose(workspace, profile, name)), secret: true }
        : { value: input.value, secret: false };
    }
    const saved = await saveProfile(client, workspace, profile, env);
    await record({
      action: 'profile.upserted',
      target: `profile:${workspace}/${profile}`,
      details: {
        created: saved.created,
        variables: Object.keys(env).sort(),
        secretVariables: Object.keys(env)
          .filter((n) => env[n]?.secret === true)
          .sort(),
      },
    });
    const def = await workspaceDefault(client, workspace);
    return {
      ...profileView({ workspace, name: profile, env, updatedAt: saved.updatedAt }, def),
      created: saved.created,
    };
  };
  return mutate(pool, fenceOf(ctx), write);
}

/** `profile.get`. @throws DaguError `resource_not_found` on `profile` */
export async function getProfile(pool: Pool, workspace: string, profile: string): Promise<ProfileView> {
  return withStorageErrors(async () => {
    const record = await findProfile(pool, workspace, profile);
    if (record === undefined) throw notFound(workspace, profile);
    return profileView(record, await workspaceDefault(pool, workspace));
  });
}

/** `profile.list`: names and variable names of a workspace's profiles, and its default. */
export async function listWorkspaceProfiles(pool: Pool, workspace: string) {
  return withStorageErrors(async () => {
    const records = await listProfiles(pool, workspace);
    return {
      workspace,
      defaultProfile: await workspaceDefault(pool, workspace),
      profiles: records.map((r) => ({
        name: r.name,
        variables: Object.entries(r.env).map(([name, v]) => ({ name, secret: v.secret })),
      })),
    };
  });
}

/** `profile.delete` (manager and up). @throws DaguError `resource_not_found` on `profile` */
export async function removeProfile(pool: Pool, workspace: string, profile: string, ctx: HandlerContext) {
  requireMutationRole(ctx.principal, 'profile.delete');
  return mutate(pool, fenceOf(ctx), async (client, record) => {
    if (!(await deleteProfile(client, workspace, profile))) throw notFound(workspace, profile);
    await record({ action: 'profile.deleted', target: `profile:${workspace}/${profile}` });
    return { workspace, name: profile, deleted: true as const };
  });
}

/** `profile.setDefault` (manager and up): the workspace default, or none. @throws `resource_not_found` on `profile` */
export async function setDefaultProfile(pool: Pool, workspace: string, profile: string | null, ctx: HandlerContext) {
  requireMutationRole(ctx.principal, 'profile.setDefault');
  return mutate(pool, fenceOf(ctx), async (client, record) => {
    if (profile !== null && (await findProfile(client, workspace, profile)) === undefined)
      throw notFound(workspace, profile);
    await setWorkspaceDefault(client, workspace, profile);
    await record({
      action: 'profile.default_set',
      target: `workspace:${workspace}`,
      details: { profile },
    });
    return { workspace, defaultProfile: profile };
  });
}

/**
 * `profile.assign` (Dagu spec 022b `set_dag_profile` / `clear_dag_profile`,
 * developer and up): the DAG's own default profile, which must exist in the
 * DAG's workspace; `null` clears it.
 */
export async function assignDagProfile(
  pool: Pool,
  request: { dagName: string; workspace: string; profile: string | null },
  ctx: HandlerContext,
) {
  requireMutationRole(ctx.principal, 'profile.assign');
  const { dagName, workspace, profile } = request;
  return mutate(pool, fenceOf(ctx), async (client, record) => {
    if (profile !== null && (await findProfile(client, workspace, profile)) === undefined)
      throw notFound(workspace, profile);
    await setDagProfile(client, dagName, profile);
    await record({
      action: profile === null ? 'dag.profile_cleared' : 'dag.profile_set',
      target: `dagu://dags/${encodeURIComponent(dagName)}/spec`,
      details: { profile },
    });
    return { dagName, profile };
  });
}

/** `profile.ofDag` (`dagu_read` target `dag_profile`): the DAG's own profile, its workspace's, and which applies. */
export async function profileOfDag(pool: Pool, dagName: string, workspace: string): Promise<DagProfileReply> {
  return withStorageErrors(async () => {
    // One query for both (a run start resolves this every time).
    const { dag: configured, workspace: fallback } = await profileDefaults(pool, dagName, workspace);
    if (configured !== null)
      return { dagName, configuredProfile: configured, effectiveProfile: configured, source: 'dag' };
    return fallback === null
      ? { dagName, configuredProfile: null, effectiveProfile: null, source: 'none' }
      : { dagName, configuredProfile: null, effectiveProfile: fallback, source: 'workspace' };
  });
}

/**
 * The profile a new run of `dagName` in `workspace` uses: the caller's
 * `requested` one, else the DAG's own, else the workspace default, else none.
 *
 * @throws DaguError `resource_not_found` on `profile` when the chosen profile does not exist
 */
export async function resolveRunProfile(
  pool: Pool,
  dagName: string,
  workspace: string,
  requested: string | undefined,
): Promise<string | null> {
  const chosen = requested ?? (await profileOfDag(pool, dagName, workspace)).effectiveProfile;
  if (chosen === null) return null;
  if ((await findProfile(pool, workspace, chosen)) === undefined) throw notFound(workspace, chosen);
  return chosen;
}
