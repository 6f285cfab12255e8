import { z } from 'zod';
import type { Pool } from '@dagu-mcp/runtime';
import type { Queryable } from './run-rows';

// Row schemas are built once: building a zod schema costs far more than parsing with it (S8 profile:
// the defaults look-up's schema was three quarters of run-service's zod time per start).
const WorkspaceDefaultRowSchema = z.object({ default_profile: z.string().nullable() }).optional();
const ProfileDefaultsRowSchema = z.object({ dag: z.string().nullable(), workspace: z.string().nullable() });

/*
 * Runtime profiles (Dagu spec 022b; store/migrations.ts `008_runtime_profiles`):
 * `profiles` (workspace, name, env), `workspace_settings` (the workspace
 * default) and `dag_profiles` (a DAG's own default). `env` maps each variable
 * name to `{value, secret}`; a secret's value is a SecretBox ciphertext —
 * this file stores what it is given and never sees a plaintext secret.
 */

/** A stored variable: a plain value, or a ciphertext when `secret`. */
export interface StoredVariable {
  readonly value: string;
  readonly secret: boolean;
}

/** A stored profile. */
export interface ProfileRecord {
  readonly workspace: string;
  readonly name: string;
  readonly env: Record<string, StoredVariable>;
  readonly updatedAt: Date;
}

const StoredEnvSchema = z.record(z.string(), z.object({ value: z.string(), secret: z.boolean() }));
const ProfileRowSchema = z.object({
  workspace: z.string(),
  name: z.string(),
  env: StoredEnvSchema,
  updated_at: z.date(),
});

function parseProfile(row: unknown): ProfileRecord {
  const parsed = ProfileRowSchema.parse(row);
  return { workspace: parsed.workspace, name: parsed.name, env: parsed.env, updatedAt: parsed.updated_at };
}

/** The profile, or undefined. With `forUpdate` the row is locked until the transaction ends. */
export async function findProfile(
  db: Queryable,
  workspace: string,
  name: string,
  forUpdate = false,
): Promise<ProfileRecord | undefined> {
  const result = await db.query(
    `SELECT workspace, name, env, updated_at FROM profiles WHERE workspace = $1 AND name = $2${forUpdate ? ' FOR UPDATE' : ''}`,
    [workspace, name],
  );
  const row = result.rows[0];
  return row === undefined ? undefined : parseProfile(row);
}

/** Every profile of a workspace, by name. */
export async function listProfiles(db: Queryable, workspace: string): Promise<ProfileRecord[]> {
  const result = await db.query(
    'SELECT workspace, name, env, updated_at FROM profiles WHERE workspace = $1 ORDER BY name',
    [workspace],
  );
  return result.rows.map(parseProfile);
}

/** Creates or replaces a profile. @returns whether it was created. */
export async function saveProfile(
  db: Queryable,
  workspace: string,
  name: string,
  env: Record<string, StoredVariable>,
): Promise<{ created: boolean; updatedAt: Date }> {
  const result = await db.query(
    `INSERT INTO profiles AS p (workspace, name, env) VALUES ($1, $2, $3::jsonb)
     ON CONFLICT (workspace, name) DO UPDATE SET env = EXCLUDED.env, updated_at = clock_timestamp()
     RETURNING (xmax = 0) AS created, updated_at`,
    [workspace, name, JSON.stringify(env)],
  );
  return z
    .object({ created: z.boolean(), updated_at: z.date() })
    .transform((r) => ({ created: r.created, updatedAt: r.updated_at }))
    .parse(result.rows[0]);
}

/** Deletes a profile (and clears it as its workspace's default). @returns false when it did not exist. */
export async function deleteProfile(db: Queryable, workspace: string, name: string): Promise<boolean> {
  const result = await db.query('DELETE FROM profiles WHERE workspace = $1 AND name = $2 RETURNING name', [
    workspace,
    name,
  ]);
  await db.query('UPDATE workspace_settings SET default_profile = NULL WHERE workspace = $1 AND default_profile = $2', [
    workspace,
    name,
  ]);
  return result.rows.length > 0;
}

/** The workspace's default profile name, or null. */
export async function workspaceDefault(db: Queryable, workspace: string): Promise<string | null> {
  const result = await db.query('SELECT default_profile FROM workspace_settings WHERE workspace = $1', [workspace]);
  const row = WorkspaceDefaultRowSchema.parse(result.rows[0]);
  return row?.default_profile ?? null;
}

/** The DAG's own default profile and its workspace's default, in one query (either may be null). */
export async function profileDefaults(
  db: Queryable,
  dagName: string,
  workspace: string,
): Promise<{ dag: string | null; workspace: string | null }> {
  const result = await db.query(
    `SELECT (SELECT profile FROM dag_profiles WHERE dag_name = $1) AS dag,
            (SELECT default_profile FROM workspace_settings WHERE workspace = $2) AS workspace`,
    [dagName, workspace],
  );
  return ProfileDefaultsRowSchema.parse(result.rows[0]);
}

/** Sets or clears (null) the workspace's default profile. */
export async function setWorkspaceDefault(db: Queryable, workspace: string, profile: string | null): Promise<void> {
  await db.query(
    `INSERT INTO workspace_settings (workspace, default_profile) VALUES ($1, $2)
     ON CONFLICT (workspace) DO UPDATE SET default_profile = EXCLUDED.default_profile`,
    [workspace, profile],
  );
}

/** Sets or clears (null) the DAG's own default profile. */
export async function setDagProfile(db: Queryable, dagName: string, profile: string | null): Promise<void> {
  if (profile === null) {
    await db.query('DELETE FROM dag_profiles WHERE dag_name = $1', [dagName]);
    return;
  }
  await db.query(
    `INSERT INTO dag_profiles (dag_name, profile) VALUES ($1, $2)
     ON CONFLICT (dag_name) DO UPDATE SET profile = EXCLUDED.profile, updated_at = clock_timestamp()`,
    [dagName, profile],
  );
}

/**
 * Moves a renamed DAG's own profile (022b `rename_dag`), as its run history
 * moves: only an assignment made before the rename (`renamedAt`), and never
 * over one the new name already has.
 */
export async function moveDagProfile(db: Pool, from: string, to: string, renamedAt: Date): Promise<void> {
  await db.query(
    `UPDATE dag_profiles SET dag_name = $2 WHERE dag_name = $1 AND updated_at <= $3
       AND NOT EXISTS (SELECT 1 FROM dag_profiles WHERE dag_name = $2)`,
    [from, to, renamedAt],
  );
}

/** Records the profile run `pk` runs with (`runs.profile`). */
export async function setRunProfile(db: Queryable, pk: number, profile: string): Promise<void> {
  await db.query('UPDATE runs SET profile = $2 WHERE pk = $1', [pk, profile]);
}

/** Drops a deleted DAG's own profile (022b `delete_dag`): only an assignment made before the delete. */
export async function dropDagProfile(db: Pool, dagName: string, deletedAt: Date): Promise<void> {
  await db.query('DELETE FROM dag_profiles WHERE dag_name = $1 AND updated_at <= $2', [dagName, deletedAt]);
}
