import {
  DaguError,
  requireOpRole,
  type OperationCallReply,
  type OperationCallRequest,
  type OperationToolReply,
  type OperationToolRequest,
  type Principal,
} from '@dagu-mcp/contracts';
import {
  buildUpstreamRequest,
  callUpstream,
  InputValidators,
  isIdempotent,
  resultOfFailure,
  resultOfResponse,
  UpstreamFailure,
  type OperationVersionSpec,
} from '@dagu-mcp/rest-operations';
import { OutboundAllowList, type Logger, type Pool, type ReachableRanges } from '@dagu-mcp/runtime';
import { z } from 'zod';
import type { SecretSource } from '@dagu-mcp/service-kit';
import { withStorageErrors } from '../db/storage-errors';
import { parseOperationSpec } from './operation-spec';
import { loadUpstreamForCall } from './upstream-store';

/** A published version as a tool needs it. */
interface PublishedVersion {
  readonly operationId: string;
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly version: number;
  readonly spec: OperationVersionSpec;
}

const RowSchema = z.object({
  id: z.string(),
  name: z.string(),
  title: z.string(),
  description: z.string(),
  version: z.number().int(),
  spec: z.unknown(),
});

/**
 * The published version a binding names: a number (published), or `latest` (the newest
 * published). A draft is never answered: to an agent it does not exist.
 *
 * @throws DaguError `resource_not_found` (field `operation`, or `version`)
 */
export async function resolvePublished(pool: Pool, request: OperationToolRequest): Promise<PublishedVersion> {
  const { rows } = await withStorageErrors(() =>
    pool.query(
      `SELECT o.id, o.name, o.title, o.description, v.version, v.spec
         FROM operations o JOIN operation_versions v ON v.operation_id = o.id
        WHERE o.workspace = $1 AND o.name = $2 AND v.state = 'published' AND ($3::int IS NULL OR v.version = $3)
        ORDER BY v.version DESC LIMIT 1`,
      [request.workspace, request.name, request.version === 'latest' ? null : request.version],
    ),
  );
  if (rows[0] === undefined)
    throw new DaguError(
      'resource_not_found',
      request.version === 'latest'
        ? `Operation ${request.name} has no published version.`
        : `Operation ${request.name} has no published version ${request.version}.`,
      { field: request.version === 'latest' ? 'operation' : 'version' },
    );
  const r = RowSchema.parse(rows[0]);
  return {
    operationId: r.id,
    name: r.name,
    title: r.title,
    description: r.description,
    version: r.version,
    spec: parseOperationSpec(r.spec),
  };
}

/** Every attempt's timeout, the backoff between them (100 ms · 2ⁿ) and 5 s for the lookups around the call, ms. */
function callBudgetMs(spec: OperationVersionSpec): number {
  const attempts = 1 + (isIdempotent(spec) ? spec.retries : 0);
  return attempts * spec.timeoutMs + 100 * 2 ** attempts + 5_000;
}

/** The tool a `rest_operation` binding publishes (`operation.tool`): name, texts, input schema, annotations. */
export async function operationTool(pool: Pool, request: OperationToolRequest): Promise<OperationToolReply> {
  const published = await resolvePublished(pool, request);
  const { spec } = published;
  const annotations: Record<string, boolean> = { openWorldHint: true };
  for (const [key, value] of Object.entries(spec.annotations)) if (typeof value === 'boolean') annotations[key] = value;
  return {
    name: published.name,
    version: published.version,
    title: published.title !== '' ? published.title : published.name,
    description:
      published.description !== ''
        ? published.description
        : `Calls ${spec.method} ${spec.pathTemplate} on upstream ${spec.upstream}.`,
    inputSchema: spec.inputSchema,
    annotations,
    callTimeoutMs: callBudgetMs(spec),
  };
}

/** What {@link OperationCaller} needs. */
export interface OperationCallerDeps {
  readonly pool: Pool;
  readonly secrets: SecretSource;
  readonly logger: Logger;
  /** The non-public addresses upstream calls may reach: the deployment's `OUTBOUND_ALLOW_CIDRS`. */
  readonly reachable: ReachableRanges;
}

/**
 * `tools/call` of a REST tool, made here so the gateway never holds an upstream's credential
 *: the published version is resolved, the arguments checked against its
 * input schema (ajv 2020, compiled once per version and kept), the request built (path
 * segments encoded, no `/` or `..` through a path argument, headers only from declared
 * header arguments), and sent with the upstream's credential through the shared SSRF guard
 * with the upstream's allow-list; a non-public address only inside the deployment's
 * `OUTBOUND_ALLOW_CIDRS`. The caller's own credential is never an input.
 */
export class OperationCaller {
  private readonly validators = new InputValidators();

  constructor(private readonly deps: OperationCallerDeps) {}

  /**
   * @param principal the agent, with its binding author's current role (operator needed)
   * @returns the tool result: upstream answers (2xx–5xx) and failures without an answer are
   *   results (`isError` for ≥ 400 and failures), never thrown
   * @throws DaguError `invalid_tool_input` (field = the argument, `details.operation`) for input that does not fit;
   *   `resource_not_found` when the version is not published; `unauthorized` below operator
   */
  async call(request: OperationCallRequest, principal: Principal): Promise<OperationCallReply> {
    requireOpRole(principal, 'operation.call');
    const published = await resolvePublished(this.deps.pool, request);
    const { spec, name } = published;
    this.validators.check(name, `${published.operationId}@${published.version}`, spec.inputSchema, request.arguments);
    const upstream = await loadUpstreamForCall(this.deps.pool, this.deps.secrets, {
      workspace: request.workspace,
      name: spec.upstream,
    });
    const upstreamRequest = buildUpstreamRequest(
      name,
      spec,
      {
        name: upstream.name,
        baseUrl: upstream.baseUrl,
        ...(upstream.credential !== undefined ? { credential: upstream.credential } : {}),
        defaultHeaders: upstream.defaultHeaders,
      },
      request.arguments,
    );
    try {
      const response = await callUpstream(upstreamRequest, {
        timeoutMs: Math.min(spec.timeoutMs, upstream.timeoutMs),
        maxBytes: spec.responseMaxBytes,
        retries: isIdempotent(spec) ? spec.retries : 0,
        allow: new OutboundAllowList(upstream.allowHosts),
        reachable: this.deps.reachable,
      });
      const result = resultOfResponse(name, response);
      return {
        ...result,
        structuredContent: { ...result.structuredContent, version: published.version, attempts: response.attempts },
      };
    } catch (err) {
      if (!(err instanceof UpstreamFailure)) throw err;
      this.deps.logger.info(
        {
          operation: name,
          kind: err.kind,
          attempts: err.attempts,
          ...(err.refused !== undefined ? { refused: err.refused } : {}),
        },
        'upstream call failed',
      );
      const result = resultOfFailure(name, err);
      return { ...result, structuredContent: { ...result.structuredContent } };
    }
  }
}
