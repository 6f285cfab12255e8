import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { resourceLinkFor } from '@dagu-mcp/contracts';
import type { McpCallContext } from '../../mcp-types';
import { RESULT_REFERENCES } from '../../../reference/reference-topics';
import { asServiceError, toolError, toolSuccess } from '../tool-result';
import type { ReadBackends } from './read-backends';
import { parseReadInput, type ReadErrorContext, type ReadRequest } from './read-input';
import { shareResult } from '../../transport/shared-result';

const SUCCESS_TEXT = 'Dagu read completed.';
const STEP_ECHO = ['name', 'dagRunId', 'stepName', 'subRunId', 'item', 'bodyStepName'] as const;
const WIKI_ECHO = ['workspace', 'path', 'prefix'] as const;
const WORKBOOK_ECHO = ['path'] as const;

/**
 * The `dagu_read` tool (spec 021): validates the input itself, reads through
 * the target's backend and shapes the envelope `{target, uri?, data,
 * references, …echoes}` with the success text and resource link.
 */
export function createReadTool(backends: ReadBackends) {
  return async function daguRead(args: unknown, ctx: McpCallContext): Promise<CallToolResult> {
    const context: ReadErrorContext = {};
    try {
      const request = parseReadInput(args, context);
      const data = await backends[request.target](request, ctx.principal);
      return readSuccess(request, data);
    } catch (err) {
      return toolError(asServiceError(err), { target: context.target, uri: context.uri });
    }
  };
}

/**
 * Results of frozen `dags` pages (the replica's page memo, dag-page-memo.ts)
 * → the answer built for them, itself shared (../../shared-result.ts): a
 * page held by the memo is rendered and encoded once, not per read.
 */
const sharedDagsResults = new WeakMap<object, { uri: string | undefined; result: CallToolResult }>();

/**
 * Shapes a successful read (021 §Output). A `dags` page that is frozen
 * (held by the page memo) gets the one result built for it, shared.
 */
export function readSuccess(request: ReadRequest, data: Record<string, unknown>): CallToolResult {
  if (request.target !== 'dags' || !Object.isFrozen(data)) return buildReadSuccess(request, data);
  const held = sharedDagsResults.get(data);
  if (held !== undefined && held.uri === request.uri) return held.result;
  const result = shareResult(buildReadSuccess(request, data));
  sharedDagsResults.set(data, { uri: request.uri, result });
  return result;
}

function buildReadSuccess(request: ReadRequest, data: Record<string, unknown>): CallToolResult {
  const structured: Record<string, unknown> = { target: request.target };
  if (request.uri !== undefined) structured.uri = request.uri;
  structured.data = data;
  structured.references = [...RESULT_REFERENCES];
  // 021: the workbook output "also carries `path` as supplied" (never the password).
  const echo = ['step_log', 'foreach_items', 'foreach_item'].includes(request.target)
    ? STEP_ECHO
    : ['wiki', 'wiki_page', 'wiki_search'].includes(request.target)
      ? WIKI_ECHO
      : request.target === 'workbook'
        ? WORKBOOK_ECHO
        : [];
  for (const key of echo) {
    const value = request.fields[key];
    if (value !== undefined) structured[key] = value;
  }
  // Only `dags` carries the data as indented JSON in its text (021 §Output).
  const text = request.target === 'dags' ? `${SUCCESS_TEXT}\n\n${JSON.stringify(data, null, 2)}` : SUCCESS_TEXT;
  const links =
    request.uri !== undefined && request.resource !== undefined
      ? [resourceLinkFor(request.resource, { uri: request.uri })]
      : [];
  return toolSuccess(text, structured, links);
}
