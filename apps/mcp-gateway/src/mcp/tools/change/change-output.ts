import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { requiredRoleOf, roleAtLeast, type Principal } from '@dagu-mcp/contracts';
import { RESULT_REFERENCES } from '../../../reference/reference-topics';
import { toolSuccess, type ResourceLink } from '../tool-result';
import type { ChangeRequest } from './change-input';
import { APPLY_OP_OF_TYPE, type ChangeType } from './change-types';

/** Dagu spec 022b §Output texts of the types beyond `upsert_dag` (which keeps 022's). */
export const TEXT_PREVIEW_OK = 'Change is valid. Re-run with mode=apply to make it.';
export const TEXT_APPLIED = 'Change applied.';
export const TEXT_INVALID = 'Change is not valid; no changes were applied.';

/**
 * The preview warning of a caller whose role could not apply a change of
 * `type` (022b §Preview and apply: "preview never fails on role; it warns");
 * none when the role suffices. The role is that of the op the apply makes
 * ({@link APPLY_OP_OF_TYPE}); the apply's action refuses the same callers.
 */
export function roleWarnings(principal: Principal, type: ChangeType): string[] {
  const required = requiredRoleOf(APPLY_OP_OF_TYPE[type]);
  if (roleAtLeast(principal.role, required)) return [];
  return [
    `Applying this change needs the ${required} role or higher; ${principal.subject} is ${principal.role}, so mode=apply will fail with unauthorized.`,
  ];
}

/** A link to a DAG's stored spec (022 resource-link rules). */
export function dagSpecLink(uri: string): ResourceLink {
  return { uri, name: 'dag_spec', mimeType: 'application/yaml' };
}

/** A link to a wiki page (021 wiki page model). */
export function wikiPageLink(uri: string): ResourceLink {
  return { uri, name: 'wiki_page', mimeType: 'text/markdown' };
}

/**
 * The 022 envelope of a type beyond `upsert_dag` (022b §Output): `mode`,
 * `type`, `valid`, `errors`, `applied`, the type's own fields (`dagName`/
 * `dagUri` or `workspace`/`path`/`pageUri`, and what apply did), `warnings`
 * in preview, and `references`. The text follows `valid` and `applied`.
 */
export function changeResult(
  request: ChangeRequest,
  outcome: {
    valid: boolean;
    errors?: string[];
    applied: boolean;
    fields: Record<string, unknown>;
    warnings?: string[];
    links?: ResourceLink[];
  },
): CallToolResult {
  const structured: Record<string, unknown> = {
    mode: request.mode,
    type: request.type,
    ...outcome.fields,
    valid: outcome.valid,
    errors: outcome.errors ?? [],
    applied: outcome.applied,
  };
  if (request.mode === 'preview') structured.warnings = outcome.warnings ?? [];
  structured.references = [...RESULT_REFERENCES];
  const text = !outcome.valid ? TEXT_INVALID : outcome.applied ? TEXT_APPLIED : TEXT_PREVIEW_OK;
  return toolSuccess(text, structured, outcome.links ?? []);
}
