import type { OpHandler } from '@dagu-mcp/bus';
import type { RunOps } from '@dagu-mcp/contracts';
import type { Pool } from '@dagu-mcp/runtime';
import {
  assignDagProfile,
  getProfile,
  listWorkspaceProfiles,
  profileOfDag,
  putProfile,
  removeProfile,
  setDefaultProfile,
} from '../runs/profile-commands';
import type { SecretSource } from '../store/profile-env';

/**
 * The runtime-profile ops of run-service (Dagu spec 022b "Profiles: wire
 * details"): `profile.list`, `profile.get`, `profile.put` (manager; carries
 * secret values, so its job is removed from Redis however it ends),
 * `profile.delete`, `profile.setDefault` (manager), `profile.assign`
 * (developer: a DAG's own default) and `profile.ofDag` (`dagu_read` target
 * `dag_profile`). Each parses nothing beyond its contract and calls one
 * function of runs/profile-commands.ts.
 */
export function createProfileHandlers(
  pool: Pool,
  secrets: SecretSource,
): {
  'profile.list': OpHandler<RunOps, 'profile.list'>;
  'profile.get': OpHandler<RunOps, 'profile.get'>;
  'profile.put': OpHandler<RunOps, 'profile.put'>;
  'profile.delete': OpHandler<RunOps, 'profile.delete'>;
  'profile.setDefault': OpHandler<RunOps, 'profile.setDefault'>;
  'profile.assign': OpHandler<RunOps, 'profile.assign'>;
  'profile.ofDag': OpHandler<RunOps, 'profile.ofDag'>;
} {
  return {
    'profile.list': (payload) => listWorkspaceProfiles(pool, payload.workspace),
    'profile.get': (payload) => getProfile(pool, payload.workspace, payload.profile),
    'profile.put': (payload, ctx) => putProfile(pool, secrets, payload, ctx),
    'profile.delete': (payload, ctx) => removeProfile(pool, payload.workspace, payload.profile, ctx),
    'profile.setDefault': (payload, ctx) => setDefaultProfile(pool, payload.workspace, payload.profile, ctx),
    'profile.assign': (payload, ctx) => assignDagProfile(pool, payload, ctx),
    'profile.ofDag': (payload) => profileOfDag(pool, payload.dagName, payload.workspace),
  };
}
