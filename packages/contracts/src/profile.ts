import { z } from 'zod';
import { WikiWorkspaceSchema } from './wiki';

/**
 * Runtime profiles (Dagu spec 022b "Runtime profiles", "Profiles: wire
 * details"): named sets of environment variables per workspace, owned by
 * run-service. A secret value is stored encrypted and never returned.
 */

/** A profile name: `^[a-z0-9][a-z0-9._-]*$`, at most 40 characters (022b §Input). */
export const PROFILE_NAME_PATTERN = /^[a-z0-9][a-z0-9._-]*$/;
export const ProfileNameSchema = z
  .string()
  .max(40)
  .regex(PROFILE_NAME_PATTERN, { error: 'must match ^[a-z0-9][a-z0-9._-]*$, at most 40 characters' });

/** Most variables in one profile. */
export const PROFILE_MAX_VARIABLES = 200;
/** Longest variable value, in characters. */
export const PROFILE_MAX_VALUE_LENGTH = 32_768;

/**
 * Whether a variable name may be set by a profile: a shell identifier, not
 * the engine's own (`DAG_*`, `DAGU_*`) and not one the security rules
 * forbid for params (022b "Profiles: wire details").
 */
export function isAllowedProfileVariable(name: string): boolean {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || name.length > 128) return false;
  const upper = name.toUpperCase();
  if (upper.startsWith('DAG_') || upper.startsWith('DAGU_') || upper.startsWith('LD_')) return false;
  return !FORBIDDEN_VARIABLES.has(upper);
}

/** Variables that change how a program or the shell starts (docs/security.md, the params rule). */
const FORBIDDEN_VARIABLES: ReadonlySet<string> = new Set([
  'PATH',
  'BASH_ENV',
  'ENV',
  'SHELLOPTS',
  'BASHOPTS',
  'IFS',
  'PS4',
  'PROMPT_COMMAND',
  'NODE_OPTIONS',
  'PYTHONPATH',
  'PYTHONSTARTUP',
  'PERL5OPT',
  'PERL5LIB',
  'RUBYOPT',
  'HOME',
  'SHELL',
  'DYLD_INSERT_LIBRARIES',
  'GCONV_PATH',
]);

/** One variable as written: `{value, secret?}`; `{secret: true}` without a value keeps the stored secret. */
export const ProfileVariableInputSchema = z.strictObject({
  value: z.string().max(PROFILE_MAX_VALUE_LENGTH).optional(),
  secret: z.boolean().optional(),
});

/** One variable as read: a plain one shows its value, a secret one only `{secret: true}`. */
export const ProfileVariableViewSchema = z.union([
  z.object({ value: z.string(), secret: z.literal(false) }),
  z.object({ secret: z.literal(true) }),
]);

/** A profile's address. */
export const ProfileRefSchema = z.strictObject({ workspace: WikiWorkspaceSchema, profile: ProfileNameSchema });
export type ProfileRef = z.infer<typeof ProfileRefSchema>;

/** `profile.put` request (REST `PUT /api/v1/workspaces/{ws}/profiles/{profile}`); carries secret values. */
export const ProfilePutRequestSchema = ProfileRefSchema.extend({
  env: z
    .record(z.string(), ProfileVariableInputSchema)
    .refine((env) => Object.keys(env).length <= PROFILE_MAX_VARIABLES, {
      error: `at most ${PROFILE_MAX_VARIABLES} variables`,
    }),
});
export type ProfilePutRequest = z.infer<typeof ProfilePutRequestSchema>;

/** A profile as any read shows it: names, plain values, secrets by name only. */
export const ProfileViewSchema = z.object({
  workspace: z.string(),
  name: z.string(),
  env: z.record(z.string(), ProfileVariableViewSchema),
  isDefault: z.boolean(),
  updatedAt: z.string(),
});
export type ProfileView = z.infer<typeof ProfileViewSchema>;

/** `profile.put` reply: the profile as read, and whether it was created. */
export const ProfilePutReplySchema = ProfileViewSchema.extend({ created: z.boolean() });

/** `profile.list` request / reply (REST `GET /api/v1/workspaces/{ws}/profiles`): names and variable names. */
export const ProfileListRequestSchema = z.strictObject({ workspace: WikiWorkspaceSchema });
export const ProfileListReplySchema = z.object({
  workspace: z.string(),
  defaultProfile: z.string().nullable(),
  profiles: z.array(
    z.object({ name: z.string(), variables: z.array(z.object({ name: z.string(), secret: z.boolean() })) }),
  ),
});

/** `profile.delete` reply. */
export const ProfileDeleteReplySchema = z.object({ workspace: z.string(), name: z.string(), deleted: z.literal(true) });

/** `profile.setDefault` request (REST `PUT /api/v1/workspaces/{ws}/default-profile`): `null` clears it. */
export const ProfileDefaultRequestSchema = z.strictObject({
  workspace: WikiWorkspaceSchema,
  profile: ProfileNameSchema.nullable(),
});
export const ProfileDefaultReplySchema = z.object({ workspace: z.string(), defaultProfile: z.string().nullable() });

/**
 * `profile.assign` request (Dagu spec 022b `set_dag_profile` / `clear_dag_profile`):
 * the DAG's own default profile, checked to exist in `workspace` (the DAG's); `null` clears it.
 */
export const ProfileAssignRequestSchema = z.strictObject({
  dagName: z.string().min(1).max(40),
  workspace: WikiWorkspaceSchema,
  profile: ProfileNameSchema.nullable(),
});
export const ProfileAssignReplySchema = z.object({ dagName: z.string(), profile: z.string().nullable() });

/** `profile.ofDag` request / reply (`dagu_read` target `dag_profile`, 022b). */
export const DagProfileRequestSchema = z.strictObject({
  dagName: z.string().min(1).max(40),
  workspace: WikiWorkspaceSchema,
});
export const DagProfileReplySchema = z.object({
  dagName: z.string(),
  configuredProfile: z.string().nullable(),
  effectiveProfile: z.string().nullable(),
  source: z.enum(['dag', 'workspace', 'none']),
});
export type DagProfileReply = z.infer<typeof DagProfileReplySchema>;
