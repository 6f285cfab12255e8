import {
  GetPromptRequestParamsSchema,
  GetPromptResultSchema,
  type GetPromptResult,
  type Prompt,
} from '@modelcontextprotocol/sdk/types.js';
import { isValidDagName, isValidDagRunId, isValidWikiPath, isValidWikiWorkspace } from '@dagu-mcp/contracts';
import type { ExtensionRouter } from '../extensions/extension-router';
import { parseParams, type MethodHandler } from '../transport/dispatcher';
import { INTERNAL_ERROR, INVALID_PARAMS, JsonRpcError } from '../transport/protocol';

/**
 * The gateway's prompts (dagu-model §8; reference topic `apps` §Prompts):
 * `dagu_create_dag(goal)`, `dagu_edit_dag(name, change)`,
 * `dagu_create_wiki_page(workspace, path, goal)`,
 * `dagu_edit_wiki_page(workspace, path, change)`,
 * `dagu_debug_failed_run(name, dagRunId)`. Each `prompts/get` returns one
 * user-role text message that steers the agent through the right tool calls.
 */

interface ArgumentSpec {
  readonly name: string;
  readonly description: string;
  /** Returns an error message when the (trimmed, non-empty) value is not acceptable. */
  readonly check?: (value: string) => string | undefined;
}

interface PromptSpec {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly arguments: readonly ArgumentSpec[];
  readonly text: (args: Readonly<Record<string, string>>) => string;
}

const dagName: ArgumentSpec = {
  name: 'name',
  description: 'DAG name: letters, digits, "_", "." and "-", at most 40 characters.',
  check: (v) =>
    isValidDagName(v) ? undefined : 'must be a DAG name (letters, digits, "_", "." and "-", at most 40 characters)',
};
const workspace: ArgumentSpec = {
  name: 'workspace',
  description: 'Wiki workspace (one workspace, not "all").',
  check: (v) => (v !== 'all' && isValidWikiWorkspace(v) ? undefined : 'must name one wiki workspace (not "all")'),
};
const pagePath: ArgumentSpec = {
  name: 'path',
  description: 'Wiki page path without ".md", e.g. runbooks/etl.',
  check: (v) =>
    isValidWikiPath(v) ? undefined : 'must be a wiki page path: segments of A-Z a-z 0-9 . _ - joined by /',
};
const free = (name: string, description: string): ArgumentSpec => ({ name, description });

const PREVIEW_APPLY =
  'Validate it with dagu_change (mode "preview", the default) and fix every error it reports; ' +
  'only when the preview says valid=true, store it with dagu_change mode "apply".';

const PROMPTS: readonly PromptSpec[] = [
  {
    name: 'dagu_create_dag',
    title: 'Create a DAG',
    description: 'Draft a new Dagu DAG for a goal, preview it, then apply it.',
    arguments: [free('goal', 'What the workflow should achieve.')],
    text: (a) =>
      `Create a Dagu DAG that achieves this goal: ${a.goal}\n\n` +
      'First read the authoring guide with dagu_read {"target":"reference","name":"authoring"} and check existing DAGs with ' +
      `dagu_read {"target":"dag_search","search":"..."} so you do not duplicate one. Write the YAML using only the supported keys. ${PREVIEW_APPLY}`,
  },
  {
    name: 'dagu_edit_dag',
    title: 'Edit a DAG',
    description: 'Read a stored DAG, change it, preview the result, then apply it.',
    arguments: [dagName, free('change', 'The change to make.')],
    text: (a) =>
      `Change the Dagu DAG "${a.name}": ${a.change}\n\n` +
      `Read its current YAML with dagu_read {"target":"dag_spec","name":"${a.name}"} and keep everything the change does not touch. ` +
      `${PREVIEW_APPLY} Send the whole document, not a diff.`,
  },
  {
    name: 'dagu_create_wiki_page',
    title: 'Create a wiki page',
    description: 'Draft Markdown for a new wiki page at a path of a workspace.',
    arguments: [workspace, pagePath, free('goal', 'What the page should cover.')],
    text: (a) =>
      `Draft a new wiki page "${a.path}" in workspace "${a.workspace}" that covers: ${a.goal}\n\n` +
      `Look at the pages already there with dagu_read {"target":"wiki","workspace":"${a.workspace}"} and ` +
      `dagu_read {"target":"wiki_search","workspace":"${a.workspace}","search":"..."} to match their style and avoid duplicates. ` +
      'Write Markdown with YAML frontmatter (title, tags) and link related DAGs by their dagu:// URIs.',
  },
  {
    name: 'dagu_edit_wiki_page',
    title: 'Edit a wiki page',
    description: 'Read an existing wiki page and draft its revision.',
    arguments: [workspace, pagePath, free('change', 'The change to make.')],
    text: (a) =>
      `Revise the wiki page "${a.path}" of workspace "${a.workspace}": ${a.change}\n\n` +
      `Read it first with dagu_read {"target":"wiki_page","workspace":"${a.workspace}","path":"${a.path}"}, keep its frontmatter ` +
      'and everything the change does not touch, and give the complete revised Markdown.',
  },
  {
    name: 'dagu_debug_failed_run',
    title: 'Debug a failed DAG-run',
    description: 'Read a failed DAG-run and its logs, find the cause, and propose a fix.',
    arguments: [
      dagName,
      {
        name: 'dagRunId',
        description: 'The DAG-run id.',
        check: (v) =>
          isValidDagRunId(v) ? undefined : 'must be a DAG-run id (^[-a-zA-Z0-9_]+$, at most 64 characters)',
      },
    ],
    text: (a) =>
      `Find out why DAG-run ${a.dagRunId} of DAG "${a.name}" failed and propose a fix.\n\n` +
      `Read the run with dagu_read {"target":"run","name":"${a.name}","dagRunId":"${a.dagRunId}"}, then its scheduler log ` +
      '(target "run_logs") and the stdout/stderr of each failed step (target "step_log" with its stepName). ' +
      `Read the DAG's YAML (target "dag_spec"). Explain the cause. When the DAG must change, ${PREVIEW_APPLY} ` +
      'Then offer to retry the run with dagu_execute {"action":"retry"} — do not retry without asking.',
  },
];

const BY_NAME = new Map(PROMPTS.map((p) => [p.name, p]));

/** `prompts/list`: every prompt with its arguments (all required). */
export function listPrompts(): Prompt[] {
  return PROMPTS.map((p) => ({
    name: p.name,
    title: p.title,
    description: p.description,
    arguments: p.arguments.map((a) => ({ name: a.name, description: a.description, required: true })),
  }));
}

/** True when `name` is one of the gateway's prompts. */
export function hasPrompt(name: string): boolean {
  return BY_NAME.has(name);
}

/**
 * `prompts/get`: validates the arguments and renders the message.
 *
 * @throws JsonRpcError -32602 for an unknown prompt, a missing, empty, unknown
 *   or malformed argument; `data` is the 020 error object with `details.field`.
 */
export function getPrompt(name: string, args: Readonly<Record<string, string>> | undefined): GetPromptResult {
  const prompt = BY_NAME.get(name);
  if (prompt === undefined) throw invalid(`Unknown prompt: ${name}.`, 'name');
  const given = args ?? {};
  const known = new Set(prompt.arguments.map((a) => a.name));
  const unknown = Object.keys(given).find((key) => !known.has(key));
  if (unknown !== undefined) throw invalid(`Prompt ${name} has no argument "${unknown}".`, unknown);
  const values: Record<string, string> = {};
  for (const spec of prompt.arguments) {
    const value = given[spec.name]?.trim() ?? '';
    if (value === '') throw invalid(`Prompt ${name} needs the argument "${spec.name}".`, spec.name);
    const problem = spec.check?.(value);
    if (problem !== undefined) throw invalid(`Argument "${spec.name}" ${problem}.`, spec.name);
    values[spec.name] = value;
  }
  return {
    description: prompt.description,
    messages: [{ role: 'user', content: { type: 'text', text: prompt.text(values) } }],
  };
}

function invalid(message: string, field: string): JsonRpcError {
  return new JsonRpcError(INVALID_PARAMS, message, {
    code: 'invalid_request',
    message,
    operation: 'prompts/get',
    details: { field },
  });
}

/**
 * `prompts/list` and `prompts/get` (MCP server/prompts; dagu-model §8): the
 * gateway's five prompts, then those of served extensions (`<extension>.<prompt>`).
 *
 * `prompts/get` errors: -32602 with the 020 error object as `data` for an
 * unknown prompt or a missing, unknown or malformed argument (prompt-catalog.ts).
 */
export function promptMethods(extensions: ExtensionRouter | undefined): Record<string, MethodHandler> {
  return {
    'prompts/list': async () => {
      const extra = extensions === undefined ? [] : (await extensions.catalogs()).flatMap((c) => c.catalog.prompts);
      return { prompts: [...listPrompts(), ...extra] };
    },
    'prompts/get': async (params, { ctx, session }) => {
      const request = parseParams(
        GetPromptRequestParamsSchema,
        params,
        'prompts/get needs a name and string arguments',
      );
      if (hasPrompt(request.name)) return getPrompt(request.name, request.arguments);
      // An extension's prompt is listed as `<extension>.<prompt>`; the extension is asked for its own name.
      const target = await extensions?.promptTarget(request.name);
      if (target === undefined) return getPrompt(request.name, request.arguments);
      // The raw params go along: a 2026-07-28 retry carries inputResponses and requestState (SEP-2322).
      const raw = typeof params === 'object' && params !== null ? params : {};
      const answer = await extensions?.call(
        target.extension,
        'prompts/get',
        { ...raw, ...request, name: target.ownName },
        ctx,
        session.clientCapabilities,
      );
      // An extension's prompt may ask for input first (2026-07-28 multi-round-trip requests): passed through as is.
      if (typeof answer === 'object' && answer !== null && answer.resultType === 'input_required') return answer;
      const relayed = GetPromptResultSchema.safeParse(answer);
      if (!relayed.success) throw new JsonRpcError(INTERNAL_ERROR, `Prompt ${request.name} came back malformed.`);
      return relayed.data;
    },
  };
}
