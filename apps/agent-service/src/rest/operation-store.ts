import { randomUUID } from 'node:crypto';
import {
  DaguError,
  requireMutationRole,
  type OperationCreateRequest,
  type OperationDetail,
  type OperationNewVersionRequest,
  type OperationPublishRequest,
  type OperationRef,
  type OperationSummary,
  type OperationUpdateRequest,
  type OperationVersion,
  type OperationWriteReply,
} from '@dagu-mcp/contracts';
import { recordMutation, type Pool, type PoolClient } from '@dagu-mcp/runtime';
import { z } from 'zod';
import { withStorageErrors } from '../db/storage-errors';
import { parseOperationSpec } from './operation-spec';
import { agentsBinding, writeTx, type RestWriteContext } from './rest-write';

/**
 * REST operations and their versions in agent-service's schema. Version 1 is created as a draft; a new version is a draft until
 * published; a published version never changes. Agents see published
 * versions only (`operation-call.ts` picks the published version a binding names). Writes need `manager` (dagu-model §9).
 */

const SUMMARY_SQL = `
SELECT o.workspace, o.name, o.title, o.description, o.created_at, o.updated_at, o.created_by, o.updated_by,
       max(v.version) AS latest, max(v.version) FILTER (WHERE v.state = 'published') AS published
  FROM operations o JOIN operation_versions v ON v.operation_id = o.id`;

const SummaryRowSchema = z.object({
  workspace: z.string(),
  name: z.string(),
  title: z.string(),
  description: z.string(),
  created_at: z.date(),
  updated_at: z.date(),
  created_by: z.string(),
  updated_by: z.string(),
  latest: z.number().int(),
  published: z.number().int().nullable(),
});

const VersionRowSchema = z.object({
  version: z.number().int(),
  state: z.enum(['draft', 'published']),
  spec: z.record(z.string(), z.unknown()),
  created_at: z.date(),
  created_by: z.string(),
  published_at: z.date().nullable(),
  published_by: z.string().nullable(),
});

function summaryOf(row: unknown): OperationSummary {
  const r = SummaryRowSchema.parse(row);
  return {
    workspace: r.workspace,
    name: r.name,
    title: r.title,
    description: r.description,
    latestVersion: r.latest,
    publishedVersion: r.published,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    createdBy: r.created_by,
    updatedBy: r.updated_by,
  };
}

function versionOf(row: unknown): OperationVersion {
  const r = VersionRowSchema.parse(row);
  return {
    version: r.version,
    state: r.state,
    spec: r.spec,
    createdAt: r.created_at.toISOString(),
    createdBy: r.created_by,
    publishedAt: r.published_at?.toISOString() ?? null,
    publishedBy: r.published_by,
  };
}

const notFound = (ref: OperationRef): DaguError =>
  new DaguError('resource_not_found', `No operation ${ref.name} in workspace ${ref.workspace}.`, {
    field: 'operation',
  });

const targetOf = (ref: OperationRef): string => `operation:${ref.workspace}/${ref.name}`;

/** The operations of a workspace, by name. */
export async function listOperations(pool: Pool, workspace: string): Promise<OperationSummary[]> {
  const { rows } = await withStorageErrors(() =>
    pool.query(`${SUMMARY_SQL} WHERE o.workspace = $1 GROUP BY o.id ORDER BY o.name`, [workspace]),
  );
  return rows.map(summaryOf);
}

/**
 * One operation with every version, newest first.
 *
 * @throws DaguError `resource_not_found` (field `operation`)
 */
export async function getOperation(db: Pool | PoolClient, ref: OperationRef): Promise<OperationDetail> {
  const summary = await withStorageErrors(() =>
    db.query(`${SUMMARY_SQL} WHERE o.workspace = $1 AND o.name = $2 GROUP BY o.id`, [ref.workspace, ref.name]),
  );
  if (summary.rows[0] === undefined) throw notFound(ref);
  const versions = await withStorageErrors(() =>
    db.query(
      `SELECT v.version, v.state, v.spec, v.created_at, v.created_by, v.published_at, v.published_by
         FROM operation_versions v JOIN operations o ON o.id = v.operation_id
        WHERE o.workspace = $1 AND o.name = $2 ORDER BY v.version DESC`,
      [ref.workspace, ref.name],
    ),
  );
  return { ...summaryOf(summary.rows[0]), versions: versions.rows.map(versionOf) };
}

async function lockOperation(
  client: PoolClient,
  ref: OperationRef,
): Promise<{ id: string; latest: number; latestState: string }> {
  const { rows } = await client.query<{ id: string }>(
    'SELECT id FROM operations WHERE workspace = $1 AND name = $2 FOR UPDATE',
    [ref.workspace, ref.name],
  );
  const id = rows[0]?.id;
  if (id === undefined) throw notFound(ref);
  const latest = await client.query<{ version: number; state: string }>(
    'SELECT version, state FROM operation_versions WHERE operation_id = $1 ORDER BY version DESC LIMIT 1',
    [id],
  );
  return { id, latest: latest.rows[0]?.version ?? 0, latestState: latest.rows[0]?.state ?? 'published' };
}

async function replyOf(client: PoolClient, ref: OperationRef): Promise<OperationWriteReply> {
  return { ...(await getOperation(client, ref)), boundAgents: await agentsBinding(client, ref.workspace, ref.name) };
}

/**
 * Creates an operation with version 1 as a draft.
 *
 * @throws DaguError `conflict` (field `name`) when the workspace has one of that name; `invalid_request` (field `spec.…`)
 */
export async function createOperation(
  pool: Pool,
  input: OperationCreateRequest,
  ctx: RestWriteContext,
): Promise<OperationWriteReply> {
  requireMutationRole(ctx.principal, 'operation.create');
  const spec = parseOperationSpec(input.spec);
  return writeTx(pool, ctx, async (client) => {
    const id = randomUUID();
    const { rowCount } = await client.query(
      `INSERT INTO operations (id, workspace, name, title, description, created_by, updated_by)
       VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (workspace, name) DO NOTHING`,
      [id, input.workspace, input.name, input.title ?? '', input.description ?? '', ctx.principal.subject],
    );
    if (rowCount === 0)
      throw new DaguError('conflict', `Workspace ${input.workspace} already has an operation ${input.name}.`, {
        field: 'name',
      });
    await insertVersion(client, id, 1, spec, ctx.principal.subject);
    await recordMutation(client, ctx, {
      action: 'operation.created',
      target: targetOf(input),
      details: { version: 1, upstream: spec.upstream },
    });
    return replyOf(client, input);
  });
}

async function insertVersion(
  client: PoolClient,
  operationId: string,
  version: number,
  spec: { upstream: string },
  by: string,
): Promise<void> {
  await client.query(
    `INSERT INTO operation_versions (operation_id, version, state, spec, upstream, created_by)
     VALUES ($1, $2, 'draft', $3::jsonb, $4, $5)`,
    [operationId, version, JSON.stringify(spec), spec.upstream, by],
  );
}

/**
 * Changes title and description, and with `spec` the current draft's spec.
 *
 * @throws DaguError `resource_not_found`; `conflict` (field `spec`) when the latest version is published
 */
export async function updateOperation(
  pool: Pool,
  input: OperationUpdateRequest,
  ctx: RestWriteContext,
): Promise<OperationWriteReply> {
  requireMutationRole(ctx.principal, 'operation.update');
  const spec = input.spec === undefined ? undefined : parseOperationSpec(input.spec);
  return writeTx(pool, ctx, async (client) => {
    const op = await lockOperation(client, input);
    await client.query(
      `UPDATE operations SET title = COALESCE($2, title), description = COALESCE($3, description),
              updated_at = now(), updated_by = $4 WHERE id = $1`,
      [op.id, input.title ?? null, input.description ?? null, ctx.principal.subject],
    );
    if (spec !== undefined) {
      if (op.latestState !== 'draft')
        throw new DaguError(
          'conflict',
          `Version ${op.latest} of ${input.name} is published and never changes; create a new version (POST …/versions).`,
          { field: 'spec' },
        );
      await client.query(
        `UPDATE operation_versions SET spec = $3::jsonb, upstream = $4 WHERE operation_id = $1 AND version = $2`,
        [op.id, op.latest, JSON.stringify(spec), spec.upstream],
      );
    }
    await recordMutation(client, ctx, {
      action: 'operation.updated',
      target: targetOf(input),
      details: { draftChanged: spec !== undefined ? op.latest : null },
    });
    return replyOf(client, input);
  });
}

/**
 * A new draft version: the given spec, else a copy of the latest version's.
 *
 * @throws DaguError `resource_not_found`; `conflict` (field `version`) while the latest version is still a draft
 */
export async function newOperationVersion(
  pool: Pool,
  input: OperationNewVersionRequest,
  ctx: RestWriteContext,
): Promise<OperationWriteReply> {
  requireMutationRole(ctx.principal, 'operation.newVersion');
  const given = input.spec === undefined ? undefined : parseOperationSpec(input.spec);
  return writeTx(pool, ctx, async (client) => {
    const op = await lockOperation(client, input);
    if (op.latestState === 'draft')
      throw new DaguError(
        'conflict',
        `Version ${op.latest} of ${input.name} is still a draft; change it (PATCH) or publish it first.`,
        { field: 'version' },
      );
    let spec = given;
    if (spec === undefined) {
      const { rows } = await client.query<{ spec: unknown }>(
        'SELECT spec FROM operation_versions WHERE operation_id = $1 AND version = $2',
        [op.id, op.latest],
      );
      spec = parseOperationSpec(rows[0]?.spec);
    }
    await insertVersion(client, op.id, op.latest + 1, spec, ctx.principal.subject);
    await client.query('UPDATE operations SET updated_at = now(), updated_by = $2 WHERE id = $1', [
      op.id,
      ctx.principal.subject,
    ]);
    await recordMutation(client, ctx, {
      action: 'operation.version_created',
      target: targetOf(input),
      details: { version: op.latest + 1 },
    });
    return replyOf(client, input);
  });
}

/**
 * Publishes a draft version: agents bound to `latest` (or to this number) serve it from now on.
 * Publishing a published version again changes nothing (a retried request is safe).
 *
 * @throws DaguError `resource_not_found` (field `version` for an unknown version);
 *   `invalid_request` (field `spec.upstream`) when its upstream does not exist
 */
export async function publishOperationVersion(
  pool: Pool,
  input: OperationPublishRequest,
  ctx: RestWriteContext,
): Promise<OperationWriteReply> {
  requireMutationRole(ctx.principal, 'operation.publish');
  return writeTx(pool, ctx, async (client) => {
    const op = await lockOperation(client, input);
    const { rows } = await client.query<{ state: string; spec: unknown }>(
      'SELECT state, spec FROM operation_versions WHERE operation_id = $1 AND version = $2',
      [op.id, input.version],
    );
    const row = rows[0];
    if (row === undefined)
      throw new DaguError('resource_not_found', `Operation ${input.name} has no version ${input.version}.`, {
        field: 'version',
      });
    if (row.state === 'published') return replyOf(client, input);
    const spec = parseOperationSpec(row.spec);
    const upstream = await client.query('SELECT 1 FROM upstreams WHERE workspace = $1 AND name = $2', [
      input.workspace,
      spec.upstream,
    ]);
    if (upstream.rowCount === 0)
      throw new DaguError(
        'invalid_request',
        `spec.upstream: workspace ${input.workspace} has no upstream ${spec.upstream}; PUT it first.`,
        { field: 'spec.upstream' },
      );
    await client.query(
      `UPDATE operation_versions SET state = 'published', published_at = clock_timestamp(), published_by = $3
        WHERE operation_id = $1 AND version = $2`,
      [op.id, input.version, ctx.principal.subject],
    );
    await client.query('UPDATE operations SET updated_at = now(), updated_by = $2 WHERE id = $1', [
      op.id,
      ctx.principal.subject,
    ]);
    await recordMutation(client, ctx, {
      action: 'operation.published',
      target: targetOf(input),
      details: { version: input.version },
    });
    return replyOf(client, input);
  });
}

/**
 * Deletes an operation and its versions; agents that bound it lose the tool at their next rebuild
 * (the reply names them so the gateway announces them now).
 *
 * @throws DaguError `resource_not_found`
 */
export async function deleteOperation(
  pool: Pool,
  ref: OperationRef,
  ctx: RestWriteContext,
): Promise<{ name: string; deleted: true; boundAgents: string[] }> {
  requireMutationRole(ctx.principal, 'operation.delete');
  return writeTx(pool, ctx, async (client) => {
    const { rowCount } = await client.query('DELETE FROM operations WHERE workspace = $1 AND name = $2', [
      ref.workspace,
      ref.name,
    ]);
    if (rowCount === 0) throw notFound(ref);
    await recordMutation(client, ctx, { action: 'operation.deleted', target: targetOf(ref) });
    return {
      name: ref.name,
      deleted: true as const,
      boundAgents: await agentsBinding(client, ref.workspace, ref.name),
    };
  });
}

/** Inserts one imported operation (version 1 a draft) unless the name is taken; true when inserted. */
export async function insertImportedOperation(
  client: PoolClient,
  workspace: string,
  draft: { name: string; title?: string; description?: string; spec: { upstream: string } },
  by: string,
): Promise<boolean> {
  const id = randomUUID();
  const { rowCount } = await client.query(
    `INSERT INTO operations (id, workspace, name, title, description, created_by, updated_by)
     VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (workspace, name) DO NOTHING`,
    [id, workspace, draft.name, draft.title ?? '', draft.description ?? '', by],
  );
  if (rowCount === 0) return false;
  await insertVersion(client, id, 1, draft.spec, by);
  return true;
}
