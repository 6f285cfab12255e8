import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, dagOps, roleAtLeast } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { McpCallContext } from '../../mcp-types';
import { RESULT_REFERENCES } from '../../../reference/reference-topics';
import { asServiceError, toolError, toolSuccess } from '../tool-result';
import { parseChangeInput, type ChangeErrorContext, type ChangeRequest } from './change-input';

const TEXT_INVALID = 'DAG spec is not valid; no changes were applied.';
const TEXT_PREVIEW_OK = 'DAG spec is valid. Re-run with mode=apply to write it.';
const TEXT_APPLIED = 'DAG change applied.';

/**
 * The `dagu_change` tool (spec 022): preview validates through dag-service
 * and writes nothing; apply (developer role and up, dagu-model §9) validates
 * and writes exactly one DAG. Validation failures are `valid=false` results,
 * not tool errors.
 */
export function createChangeTool(bus: BusClient) {
  return async function daguChange(args: unknown, ctx: McpCallContext): Promise<CallToolResult> {
    const context: ChangeErrorContext = {};
    try {
      const request = parseChangeInput(args, context);
      if (request.mode === 'apply' && !roleAtLeast(ctx.principal.role, 'developer')) {
        throw new DaguError('unauthorized', 'Applying a DAG change needs the developer role or higher.');
      }
      const payload = { name: request.name, spec: request.spec };
      const outcome =
        request.mode === 'preview'
          ? {
              ...(await bus.call('dag', dagOps, 'dag.validate', payload, { principal: ctx.principal })),
              applied: false,
            }
          : await bus.call('dag', dagOps, 'dag.upsert', payload, { principal: ctx.principal });
      return changeSuccess(request, outcome);
    } catch (err) {
      return toolError(asServiceError(err), { ...context });
    }
  };
}

function changeSuccess(
  request: ChangeRequest,
  outcome: {
    valid: boolean;
    errors: string[];
    warnings?: string[];
    dag?: Record<string, unknown>;
    applied: boolean;
    created?: boolean;
    updated?: boolean;
    stored?: boolean;
  },
): CallToolResult {
  const structured: Record<string, unknown> = {
    mode: request.mode,
    type: request.type,
    dagName: request.name,
    valid: outcome.valid,
    errors: outcome.errors,
    applied: outcome.applied,
  };
  // Added field (022 allows them): what will not resolve at run time (issue 21 item 4).
  if (outcome.valid) structured.warnings = outcome.warnings ?? [];
  if (outcome.valid && outcome.dag !== undefined) structured.dag = outcome.dag;
  if (outcome.applied) {
    structured.created = outcome.created === true;
    structured.updated = outcome.updated === true;
  }
  structured.dagUri = request.dagUri;
  structured.references = [...RESULT_REFERENCES];
  // The text stays exactly 022's (dagu-model §8); warnings travel only in structuredContent.
  const text = !outcome.valid ? TEXT_INVALID : outcome.applied ? TEXT_APPLIED : TEXT_PREVIEW_OK;
  // An invalid spec under a name with no stored DAG links nothing: the link would name a spec that does not exist.
  const linkSpec = outcome.valid || outcome.stored !== false;
  const links = linkSpec ? [{ uri: request.dagUri, name: 'dag_spec', mimeType: 'application/yaml' }] : [];
  return toolSuccess(text, structured, links);
}
