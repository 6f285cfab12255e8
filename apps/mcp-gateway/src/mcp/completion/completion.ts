import {
  CompleteRequestParamsSchema,
  CompleteResultSchema,
  type CompleteRequestParams,
  type CompleteResult,
} from '@modelcontextprotocol/sdk/types.js';
import {
  isValidDagName,
  isValidDagRunId,
  isValidWikiPathPrefix,
  isValidWikiWorkspace,
  type Principal,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import { listDags } from '../../actions/dag-reads.actions';
import { getRun, listRuns } from '../../actions/run-reads.actions';
import { listWikiPages } from '../../actions/wiki.actions';
import type { ExtensionRouter } from '../extensions/extension-router';
import type { McpHandlers } from '../mcp-types';
import { hasPrompt } from '../prompts/prompt-catalog';
import { parseParams, type MethodHandler } from '../transport/dispatcher';
import { INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError } from '../transport/protocol';

/**
 * `completion/complete` for the gateway's prompt arguments and `dagu://`
 * resource-template variables (MCP server/utilities/completion), fed by the
 * services through the read actions (`actions/`) with the caller's principal
 * (so a caller only sees names it may read):
 *
 * | Argument / variable | Values | Source |
 * | --- | --- | --- |
 * | `name` | DAG names | dag-service `dag.list` (name substring) |
 * | `dagRunId` | run ids of the DAG in `context.arguments.name` | run-service `run.list` |
 * | `stepName` | steps of that run | run-service `run.get` |
 * | `workspace` | wiki workspaces | wiki-service `wiki.list` (flat, all workspaces) |
 * | `path` | page paths of `context.arguments.workspace` | wiki-service `wiki.list` |
 * | `topic` | reference topics | the gateway's own |
 *
 * Values that start with the typed text come first, then those containing it
 * (case-insensitive); at most 100, with `total` and `hasMore`. A service
 * that fails or is slow (> `timeoutMs`) gives no values, never an error.
 */
export type CompletionSource = (
  params: CompleteRequestParams,
  principal: Principal,
) => Promise<CompleteResult['completion']>;

/** What completions are built from. */
export interface CompletionDeps {
  readonly bus: BusClient;
  readonly topics: ReadonlyMap<string, unknown>;
  readonly logger: Logger;
  /** Deadline of each bus call, ms. Default 3000. */
  readonly timeoutMs?: number;
}

const MAX_VALUES = 100;
type Provider = (typed: string, context: Readonly<Record<string, string>>, principal: Principal) => Promise<string[]>;

/** Builds the completion source of the gateway's own prompts and templates. */
export function createCompletionSource(deps: CompletionDeps): CompletionSource {
  const timeoutMs = deps.timeoutMs ?? 3000;
  const providers: Record<string, Provider> = {
    name: async (typed, _ctx, principal) => {
      const reply = await listDags(
        deps.bus,
        principal,
        { perPage: 200, ...(typed !== '' ? { name: typed } : {}) },
        {
          timeoutMs,
        },
      );
      return reply.items.map((d) => d.name);
    },
    dagRunId: async (_typed, ctx, principal) => {
      const dagName = ctx.name ?? '';
      if (!isValidDagName(dagName)) return [];
      const reply = await listRuns(deps.bus, principal, { name: dagName, limit: 200 }, { timeoutMs });
      return reply.items.map((r) => r.dagRunId);
    },
    stepName: async (_typed, ctx, principal) => {
      const dagName = ctx.name ?? '';
      const dagRunId = ctx.dagRunId ?? '';
      if (!isValidDagName(dagName) || !isValidDagRunId(dagRunId)) return [];
      const run = await getRun(deps.bus, principal, { dagName, dagRunId }, { timeoutMs });
      return run.steps.map((s) => s.name);
    },
    workspace: async (_typed, _ctx, principal) => {
      const reply = await listWikiPages(deps.bus, principal, { flat: true, perPage: 200 }, { timeoutMs });
      return [...new Set((reply.items ?? []).map((p) => p.workspace))];
    },
    path: async (typed, ctx, principal) => {
      const workspace = ctx.workspace ?? '';
      if (workspace === 'all' || !isValidWikiWorkspace(workspace)) return [];
      const prefix = isValidWikiPathPrefix(typed) ? { prefix: typed } : {};
      const reply = await listWikiPages(
        deps.bus,
        principal,
        { workspace, flat: true, perPage: 200, ...prefix },
        { timeoutMs },
      );
      return (reply.items ?? []).map((p) => p.id);
    },
    topic: async () => [...deps.topics.keys()],
  };

  return async (params, principal) => {
    const provider = providers[params.argument.name];
    if (provider === undefined) return { values: [], total: 0, hasMore: false };
    const typed = params.argument.value;
    let candidates: string[];
    try {
      candidates = await provider(typed, params.context?.arguments ?? {}, principal);
    } catch (err) {
      deps.logger.debug({ argument: params.argument.name, err }, 'completion source failed');
      candidates = [];
    }
    return rank(candidates, typed);
  };
}

/** Prefix matches first, then substring matches (case-insensitive), each group sorted; capped at 100. */
export function rank(candidates: readonly string[], typed: string): CompleteResult['completion'] {
  const needle = typed.toLowerCase();
  const unique = [...new Set(candidates)].sort();
  const prefixed = unique.filter((v) => v.toLowerCase().startsWith(needle));
  const containing = unique.filter((v) => !v.toLowerCase().startsWith(needle) && v.toLowerCase().includes(needle));
  const all = [...prefixed, ...containing];
  return { values: all.slice(0, MAX_VALUES), total: all.length, hasMore: all.length > MAX_VALUES };
}

/** What `completion/complete` is built from. */
export interface CompletionMethodDeps {
  readonly handlers: McpHandlers;
  readonly source: CompletionSource | undefined;
  readonly extensions: ExtensionRouter | undefined;
}

/**
 * `completion/complete` (MCP server/utilities/completion): a `ref/prompt`
 * naming one of the gateway's prompts, or a `ref/resource` naming one of its
 * `dagu://` templates, is answered by {@link CompletionSource}; a prompt or
 * template of an enabled extension is relayed to it; anything else is -32602.
 * Result: `{completion: {values (≤ 100), total, hasMore}}`.
 */
export function completionMethods(deps: CompletionMethodDeps): Record<string, MethodHandler> {
  return {
    'completion/complete': async (params, { ctx, session }) => {
      const request = parseParams(
        CompleteRequestParamsSchema,
        params,
        'completion/complete needs a ref and an argument {name, value}',
      );
      const ref = request.ref;
      const ours =
        ref.type === 'ref/prompt'
          ? hasPrompt(ref.name)
          : deps.handlers.listResourceTemplates().some((t) => t.uriTemplate === ref.uri);
      if (ours) {
        const completion =
          deps.source === undefined
            ? { values: [], total: 0, hasMore: false }
            : await deps.source(request, ctx.principal);
        return { completion };
      }
      // An extension's prompt is listed as `<extension>.<prompt>`; the extension is asked with its own name.
      const prompt = ref.type === 'ref/prompt' ? await deps.extensions?.promptTarget(ref.name) : undefined;
      const owner = ref.type === 'ref/prompt' ? prompt?.extension : await deps.extensions?.uriOwner(ref.uri);
      if (owner === undefined) {
        const what = ref.type === 'ref/prompt' ? `prompt ${ref.name}` : `resource template ${ref.uri}`;
        throw new JsonRpcError(INVALID_PARAMS, `Invalid params: no completions for unknown ${what}.`);
      }
      const relay = prompt === undefined ? { ...request } : { ...request, ref: { ...ref, name: prompt.ownName } };
      const relayed = CompleteResultSchema.safeParse(
        await deps.extensions?.call(owner, 'completion/complete', relay, ctx, session.clientCapabilities),
      );
      if (!relayed.success) throw new JsonRpcError(INTERNAL_ERROR, 'Completion came back malformed.');
      return relayed.data;
    },
  };
}
