import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { BusClient } from '@dagu-mcp/bus';
import { upsertDag, validateDag } from '../../../actions/dag.actions';
import type { McpCallContext } from '../../mcp-types';
import { RESULT_REFERENCES } from '../../../reference/reference-topics';
import { asServiceError, toolError, toolSuccess } from '../tool-result';
import { parseChangeInput, type ChangeErrorContext, type ChangeRequest } from './change-input';
import { dagSpecLink, roleWarnings } from './change-output';
import { WIKI_TYPES } from './change-types';
import { runDagProfileChange, runDeleteDag, runRenameDag } from './dag-changes';
import { runWikiChange } from './wiki-changes';

const TEXT_INVALID = 'DAG spec is not valid; no changes were applied.';
const TEXT_PREVIEW_OK = 'DAG spec is valid. Re-run with mode=apply to write it.';
const TEXT_APPLIED = 'DAG change applied.';

/**
 * The `dagu_change` tool (spec 022, Dagu spec 022b): one flat input, eight
 * change types. Preview checks what apply would and writes nothing, for any
 * role (a role that could not apply gets a `warnings` entry); apply needs
 * the role of the op it makes (dagu-model §9: developer and up), checked by
 * the action (actions/dag.actions.ts, wiki.actions.ts, profile.actions.ts)
 * and again by the owning service. Validation failures are `valid=false` results; conflicts and
 * unknown sources are tool errors in both modes. Every error echoes `mode`,
 * `type` and the resolved DAG or page (dagu-model §10, 022b).
 */
export function createChangeTool(bus: BusClient) {
  return async function daguChange(args: unknown, ctx: McpCallContext): Promise<CallToolResult> {
    const context: ChangeErrorContext = {};
    try {
      const request = parseChangeInput(args, context);
      if (WIKI_TYPES.has(request.type)) return await runWikiChange(bus, request, ctx.principal);
      switch (request.type) {
        case 'rename_dag':
          return await runRenameDag(bus, request, ctx.principal);
        case 'delete_dag':
          return await runDeleteDag(bus, request, ctx.principal);
        case 'set_dag_profile':
        case 'clear_dag_profile':
          return await runDagProfileChange(bus, request, ctx.principal);
        default:
          return await runUpsertDag(bus, request, ctx);
      }
    } catch (err) {
      return toolError(asServiceError(err), { ...context });
    }
  };
}

async function runUpsertDag(bus: BusClient, request: ChangeRequest, ctx: McpCallContext): Promise<CallToolResult> {
  const input = { name: request.name ?? '', spec: request.spec ?? '' };
  if (request.mode === 'apply') return upsertSuccess(request, await upsertDag(bus, ctx.principal, input), []);
  const outcome = { ...(await validateDag(bus, ctx.principal, input)), applied: false };
  return upsertSuccess(request, outcome, roleWarnings(ctx.principal, request.type));
}

function upsertSuccess(
  request: ChangeRequest,
  outcome: {
    valid: boolean;
    errors: string[];
    warnings?: string[];
    dag?: Record<string, unknown>;
    applied: boolean;
    created?: boolean;
    updated?: boolean;
  },
  roleNotes: string[],
): CallToolResult {
  const dagUri = request.dagUri ?? '';
  const structured: Record<string, unknown> = {
    mode: request.mode,
    type: request.type,
    dagName: request.name,
    valid: outcome.valid,
    errors: outcome.errors,
    applied: outcome.applied,
  };
  // Added field (022 allows them): what will not resolve at run time, and
  // in preview what the caller's role could not apply (022b).
  if (outcome.valid || roleNotes.length > 0) structured.warnings = [...(outcome.warnings ?? []), ...roleNotes];
  if (outcome.valid && outcome.dag !== undefined) structured.dag = outcome.dag;
  if (outcome.applied) {
    structured.created = outcome.created === true;
    structured.updated = outcome.updated === true;
  }
  structured.dagUri = dagUri;
  structured.references = [...RESULT_REFERENCES];
  // The text stays exactly 022's (dagu-model §8); warnings travel only in structuredContent.
  const text = !outcome.valid ? TEXT_INVALID : outcome.applied ? TEXT_APPLIED : TEXT_PREVIEW_OK;
  // Every result links its dagUri, an invalid preview too (022 "a resource-link content item for
  // dagUri"; Dagu case TestChangePreviewInvalidReturnsValidationResult), even when no DAG of that
  // name is stored yet: the link names where the spec will live (docs/decisions.md).
  return toolSuccess(text, structured, [dagSpecLink(dagUri)]);
}
