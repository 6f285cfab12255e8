import {
  DaguError,
  requireMutationRole,
  UpstreamCredentialInputSchema,
  type UpstreamCredentialInput,
  type UpstreamPutRequest,
  type UpstreamRef,
  type UpstreamView,
} from '@dagu-mcp/contracts';
import { OutboundAllowList, parseAddress, recordMutation, type Pool } from '@dagu-mcp/runtime';
import { z } from 'zod';
import type { SecretSource } from '@dagu-mcp/service-kit';
import { withStorageErrors } from '../db/storage-errors';
import { writeTx, type RestWriteContext } from './rest-write';

const CreatedRowSchema = z.object({ created: z.boolean() });

/**
 * Upstreams of REST operations in agent-service's schema.
 * The credential is encrypted with the shared secrets helper (SecretBox,
 * `DAGU_ENCRYPTION_KEY`) before it is written and is never part of a read:
 * reads show its type and header or parameter name only; only
 * {@link loadUpstreamForCall} decrypts it, for one upstream call.
 */

/** Default upper bound of a call's timeout, ms. */
export const UPSTREAM_TIMEOUT_MS_DEFAULT = 10_000;

const COLUMNS =
  'workspace, name, base_url, allow_hosts, credential_type, credential_name, default_headers, timeout_ms, version, created_at, updated_at, created_by, updated_by';

const RowSchema = z.object({
  workspace: z.string(),
  name: z.string(),
  base_url: z.string(),
  allow_hosts: z.array(z.string()),
  credential_type: z.enum(['bearer', 'header', 'query', 'basic']).nullable(),
  credential_name: z.string().nullable(),
  default_headers: z.record(z.string(), z.string()),
  timeout_ms: z.number().int(),
  version: z.number().int(),
  created_at: z.date(),
  updated_at: z.date(),
  created_by: z.string(),
  updated_by: z.string(),
});

/** The SecretBox purpose of an upstream's credential: a ciphertext copied to another upstream does not open. */
export const credentialPurpose = (ref: UpstreamRef): string => `agent.upstream:${ref.workspace}/${ref.name}`;

const notFound = (ref: UpstreamRef): DaguError =>
  new DaguError('resource_not_found', `No upstream ${ref.name} in workspace ${ref.workspace}.`, { field: 'upstream' });

function viewOf(row: unknown): UpstreamView {
  const r = RowSchema.parse(row);
  const credential =
    r.credential_type === null
      ? null
      : {
          type: r.credential_type,
          ...(r.credential_type === 'header' && r.credential_name !== null ? { header: r.credential_name } : {}),
          ...(r.credential_type === 'query' && r.credential_name !== null ? { param: r.credential_name } : {}),
        };
  return {
    workspace: r.workspace,
    name: r.name,
    baseUrl: r.base_url,
    allowHosts: r.allow_hosts,
    credential,
    defaultHeaders: r.default_headers,
    timeoutMs: r.timeout_ms,
    version: r.version,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    createdBy: r.created_by,
    updatedBy: r.updated_by,
  };
}

/** The upstreams of a workspace, by name. */
export async function listUpstreams(pool: Pool, workspace: string): Promise<UpstreamView[]> {
  const { rows } = await withStorageErrors(() =>
    pool.query(`SELECT ${COLUMNS} FROM upstreams WHERE workspace = $1 ORDER BY name`, [workspace]),
  );
  return rows.map(viewOf);
}

/** @throws DaguError `resource_not_found` (field `upstream`) */
export async function getUpstream(pool: Pool, ref: UpstreamRef): Promise<UpstreamView> {
  const { rows } = await withStorageErrors(() =>
    pool.query(`SELECT ${COLUMNS} FROM upstreams WHERE workspace = $1 AND name = $2`, [ref.workspace, ref.name]),
  );
  if (rows[0] === undefined) throw notFound(ref);
  return viewOf(rows[0]);
}

/**
 * The allow-list entries of an upstream: the given ones, else the base URL's host when it is
 * a name, else none. An IP-literal host is never made an entry of its own accord (an IP literal once allowed itself): with no entries the calls still reach only the
 * base URL's origin (paths are relative to it and redirects stay within it), and whether a
 * non-public address is reached is the deployment's `OUTBOUND_ALLOW_CIDRS` alone. Given
 * entries must cover the base URL's host (by name, wildcard, address or range), or no call
 * could go out.
 *
 * @throws DaguError `invalid_request` (field `baseUrl` or `allowHosts`)
 */
function allowHostsOf(input: UpstreamPutRequest): string[] {
  const url = new URL(input.baseUrl);
  if (url.username !== '' || url.password !== '')
    throw new DaguError('invalid_request', 'baseUrl: may not carry a user or password; use credential.', {
      field: 'baseUrl',
    });
  if (url.search !== '' || url.hash !== '')
    throw new DaguError('invalid_request', 'baseUrl: may not carry a query or fragment.', { field: 'baseUrl' });
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const entries = input.allowHosts ?? (parseAddress(host) === undefined ? [host] : []);
  let list: OutboundAllowList;
  try {
    list = new OutboundAllowList(entries);
  } catch (err) {
    throw new DaguError('invalid_request', `allowHosts: ${err instanceof Error ? err.message : 'malformed'}`, {
      field: 'allowHosts',
    });
  }
  if (!list.isEmpty && !list.allowsHost(host) && !list.allowsAddress(host))
    throw new DaguError('invalid_request', `allowHosts: must allow the base URL's host ${host}.`, {
      field: 'allowHosts',
    });
  return entries;
}

/** The non-secret name a read may show: the header or query parameter the credential goes in. */
function credentialNameOf(credential: UpstreamCredentialInput): string | null {
  if (credential.type === 'header') return credential.header;
  if (credential.type === 'query') return credential.param;
  return null;
}

/**
 * Creates or replaces an upstream (`PUT`). An absent `credential` keeps the stored one; `null`
 * removes it; a given one is encrypted before the write. The credential never reaches the
 * mutation record (audit): only its type does.
 *
 * @throws DaguError `invalid_request` for a base URL or allow-list that cannot work; `unauthorized` below manager;
 *   `resource_unavailable` when a credential is given and the key ring cannot be opened
 */
export async function putUpstream(
  pool: Pool,
  secrets: SecretSource,
  input: UpstreamPutRequest,
  ctx: RestWriteContext,
): Promise<UpstreamView & { created: boolean }> {
  requireMutationRole(ctx.principal, 'upstream.put');
  const allowHosts = allowHostsOf(input);
  const sealed =
    input.credential === undefined || input.credential === null
      ? input.credential
      : secrets().encrypt(JSON.stringify(input.credential), credentialPurpose(input));
  const credentialType = input.credential === undefined ? undefined : (input.credential?.type ?? null);
  const credentialName =
    input.credential === undefined || input.credential === null ? null : credentialNameOf(input.credential);
  return writeTx(pool, ctx, async (client) => {
    const keep = input.credential === undefined;
    const { rows } = await client.query(
      `INSERT INTO upstreams (workspace, name, base_url, allow_hosts, credential_type, credential_name, credential,
                              default_headers, timeout_ms, created_by, updated_by)
       VALUES ($1, $2, $3, $4::jsonb, $5, $6, $7, $8::jsonb, $9, $10, $10)
       ON CONFLICT (workspace, name) DO UPDATE SET
         base_url = EXCLUDED.base_url, allow_hosts = EXCLUDED.allow_hosts,
         credential_type = CASE WHEN $11::boolean THEN upstreams.credential_type ELSE EXCLUDED.credential_type END,
         credential_name = CASE WHEN $11::boolean THEN upstreams.credential_name ELSE EXCLUDED.credential_name END,
         credential = CASE WHEN $11::boolean THEN upstreams.credential ELSE EXCLUDED.credential END,
         default_headers = EXCLUDED.default_headers, timeout_ms = EXCLUDED.timeout_ms,
         version = upstreams.version + 1, updated_at = now(), updated_by = EXCLUDED.updated_by
       RETURNING ${COLUMNS}, (xmax = 0) AS created`,
      [
        input.workspace,
        input.name,
        input.baseUrl,
        JSON.stringify(allowHosts),
        keep ? null : credentialType,
        keep ? null : credentialName,
        keep ? null : sealed,
        JSON.stringify(input.defaultHeaders ?? {}),
        input.timeoutMs ?? UPSTREAM_TIMEOUT_MS_DEFAULT,
        ctx.principal.subject,
        keep,
      ],
    );
    const row: unknown = rows[0];
    const view = viewOf(row);
    const { created } = CreatedRowSchema.parse(row);
    await recordMutation(client, ctx, {
      action: created ? 'upstream.created' : 'upstream.updated',
      target: `upstream:${input.workspace}/${input.name}`,
      details: { baseUrl: view.baseUrl, credentialType: view.credential?.type ?? null, version: view.version },
    });
    return { ...view, created };
  });
}

/**
 * Deletes an upstream no operation version uses.
 *
 * @throws DaguError `resource_not_found`; `conflict` (field `upstream`) while an operation version names it
 */
export async function deleteUpstream(
  pool: Pool,
  ref: UpstreamRef,
  ctx: RestWriteContext,
): Promise<{ name: string; deleted: true }> {
  requireMutationRole(ctx.principal, 'upstream.delete');
  return writeTx(pool, ctx, async (client) => {
    const used = await client.query<{ name: string }>(
      `SELECT DISTINCT o.name FROM operation_versions v JOIN operations o ON o.id = v.operation_id
        WHERE o.workspace = $1 AND v.upstream = $2 ORDER BY o.name LIMIT 5`,
      [ref.workspace, ref.name],
    );
    if (used.rows.length > 0)
      throw new DaguError(
        'conflict',
        `Upstream ${ref.name} is used by operation(s) ${used.rows.map((r) => r.name).join(', ')}; delete them first.`,
        { field: 'upstream' },
      );
    const { rowCount } = await client.query('DELETE FROM upstreams WHERE workspace = $1 AND name = $2', [
      ref.workspace,
      ref.name,
    ]);
    if (rowCount === 0) throw notFound(ref);
    await recordMutation(client, ctx, { action: 'upstream.deleted', target: `upstream:${ref.workspace}/${ref.name}` });
    return { name: ref.name, deleted: true as const };
  });
}

/** An upstream as a call needs it, the credential decrypted (keep it out of logs and errors). */
export interface UpstreamForCall {
  readonly name: string;
  readonly baseUrl: string;
  readonly allowHosts: readonly string[];
  readonly credential?: UpstreamCredentialInput;
  readonly defaultHeaders: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

/**
 * Loads an upstream for one call and decrypts its credential.
 *
 * @throws DaguError `resource_not_found` (the upstream is gone); `resource_unavailable` when the credential cannot be opened
 */
export async function loadUpstreamForCall(
  pool: Pool,
  secrets: SecretSource,
  ref: UpstreamRef,
): Promise<UpstreamForCall> {
  const { rows } = await withStorageErrors(() =>
    pool.query<{ credential: string | null } & Record<string, unknown>>(
      `SELECT ${COLUMNS}, credential FROM upstreams WHERE workspace = $1 AND name = $2`,
      [ref.workspace, ref.name],
    ),
  );
  const row = rows[0];
  if (row === undefined) throw notFound(ref);
  const view = viewOf(row);
  let credential: UpstreamCredentialInput | undefined;
  if (row.credential !== null) {
    let opened: string;
    try {
      opened = secrets().decrypt(row.credential, credentialPurpose(ref));
    } catch (err) {
      if (err instanceof DaguError) throw err;
      throw new DaguError(
        'resource_unavailable',
        `The credential of upstream ${ref.name} cannot be opened with DAGU_ENCRYPTION_KEY; save the upstream again.`,
      );
    }
    credential = UpstreamCredentialInputSchema.parse(JSON.parse(opened));
  }
  return {
    name: view.name,
    baseUrl: view.baseUrl,
    allowHosts: view.allowHosts,
    ...(credential !== undefined ? { credential } : {}),
    defaultHeaders: view.defaultHeaders,
    timeoutMs: view.timeoutMs,
  };
}
