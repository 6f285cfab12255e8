import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { READ_TARGETS } from './read/read-targets';
import { CHANGE_TYPES } from './change/change-types';

/** Read targets advertised in `dagu_read`'s input schema (021): every target; the deprecated aliases are accepted, not advertised. */
export const ADVERTISED_READ_TARGETS = READ_TARGETS;

const str = (description: string): { type: 'string'; description: string } => ({ type: 'string', description });

/**
 * `dagu_read` (spec 021 §Input): target mode or URI mode. The schema documents
 * the fields; the gateway validates input itself against the 021 tables
 * (dagu-model §10), so the schema never answers for the tool.
 */
const daguRead: Tool = {
  name: 'dagu_read',
  title: 'Read Dagu DAGs, runs, logs, wiki pages, workbooks and reference',
  description:
    'Read-only access to Dagu state. Use target mode ({target, ...fields}) or URI mode ({uri: "dagu://..."}), never both. ' +
    'Start with {target: "reference"} for the authoring guide.',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    properties: {
      // No `enum`: a validating client would refuse an unsupported target locally, while 021 wants
      // the server's `unsupported_read_target`. The supported values are listed here instead.
      target: {
        type: 'string',
        description: `Case-sensitive read target (target mode): ${ADVERTISED_READ_TARGETS.join(', ')}.`,
      },
      // SEP-2243: mirrored as Mcp-Param-Name, so a proxy can route or limit reads by DAG (docs/mcp-transport.md).
      name: {
        ...str(
          'DAG name (dag, dag_spec, run, run_logs, step_log, foreach_items, foreach_item) or reference topic (reference).',
        ),
        'x-mcp-header': 'Name',
      },
      dagRunId: str('DAG-run id (run, run_logs, step_log, foreach_items, foreach_item).'),
      subRunId: str('Child DAG-run id under the root run (run, step_log, foreach_items, foreach_item).'),
      stepName: str('Step name (step_log, foreach_items, foreach_item).'),
      item: str(
        'Foreach item path: the index, or "<foreachParent>.<index>" for nested foreach (foreach_item; step_log with bodyStepName).',
      ),
      bodyStepName: str('Body step name or id inside a foreach item (step_log, with item).'),
      query: str('URL query string without a leading "?" (dags, wiki, runs, run_logs, step_log, foreach_items).'),
      workspace: str(
        'Workspace selector (wiki_page: required, not "all"; wiki, wiki_search, dag_search: optional, default "all").',
      ),
      path: str(
        'Wiki page path without ".md" (wiki_page); or a .xlsx/.xlsm file where steps run, relative to the run work directory (workbook, developer role).',
      ),
      password: str('Password of a protected workbook, kept exactly as given and never recorded (workbook).'),
      search: str('Search text (wiki_search, dag_search).'),
      prefix: str('Wiki page path prefix (wiki, wiki_search).'),
      cursor: str('Opaque continuation cursor from the same search target (wiki_search, dag_search).'),
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: 50,
        description: 'Maximum number of search results (wiki_search, dag_search).',
      },
      uri: str('A dagu:// resource URI (URI mode); query parameters live inside it.'),
    },
  },
  annotations: { title: 'Read Dagu state', readOnlyHint: true, openWorldHint: false },
};

/**
 * `dagu_change` (spec 022 §Input, Dagu spec 022b §Input): one flat object, no
 * `oneOf`/`anyOf`/`allOf` at the root (the model APIs behind the mainstream
 * clients refuse such tool schemas); each field's description names the
 * types that use it, and the server enforces the per-type rules.
 */
const daguChange: Tool = {
  name: 'dagu_change',
  title: 'Change DAGs and wiki pages',
  description:
    'Write DAGs and wiki pages. mode=preview (the default) checks everything apply would check and writes nothing; ' +
    'mode=apply makes the change (developer role). Types: upsert_dag (default), rename_dag, delete_dag, ' +
    'set_dag_profile, clear_dag_profile, upsert_wiki_page, rename_wiki_page, delete_wiki_page. ' +
    'A DAG spec that fails validation comes back as valid=false with the errors, not as a tool error.',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    // No `required`: which fields are required depends on `type`, and 022 answers a missing
    // one, or an unsupported mode or type, with its own error codes, which a validating client would pre-empt.
    properties: {
      mode: {
        type: 'string',
        default: 'preview',
        description: 'preview (default) checks only; apply checks then writes.',
      },
      type: {
        type: 'string',
        enum: [...CHANGE_TYPES],
        default: 'upsert_dag',
        description: 'Change type (default upsert_dag).',
      },
      name: {
        ...str(
          'DAG name (upsert_dag, rename_dag, delete_dag, set_dag_profile, clear_dag_profile): letters, digits, "_", "." and "-", at most 40 characters.',
        ),
        'x-mcp-header': 'Name',
      },
      spec: str('The DAG YAML document, kept exactly as given (upsert_dag).'),
      newName: str('The new DAG name (rename_dag).'),
      profile: str("Runtime profile name of the DAG's workspace, ^[a-z0-9][a-z0-9._-]*$ (set_dag_profile)."),
      workspace: str(
        'Wiki workspace, one workspace, not "all" (upsert_wiki_page, rename_wiki_page, delete_wiki_page).',
      ),
      path: str(
        'Wiki page path without ".md": segments of A-Z a-z 0-9 . _ - joined by / (upsert_wiki_page, rename_wiki_page, delete_wiki_page).',
      ),
      content: str(
        'The page Markdown with optional YAML frontmatter (title, tags), kept exactly as given (upsert_wiki_page).',
      ),
      newPath: str('The new page path in the same workspace (rename_wiki_page).'),
    },
  },
  annotations: { title: 'Change DAGs and wiki pages', destructiveHint: true, openWorldHint: false },
};

/** `dagu_execute` (spec 036 §Identity, §Input). */
const daguExecute: Tool = {
  name: 'dagu_execute',
  title: 'Execute, enqueue, retry, or stop DAG-runs',
  description:
    'Run control: start or enqueue a stored DAG or an inline spec, retry a DAG-run (whole or from a step), or stop it. ' +
    'With wait=true the call blocks until the run ends or parks at a waiting checkpoint.',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    required: ['action', 'name'],
    properties: {
      action: { type: 'string', enum: ['start', 'enqueue', 'retry', 'stop'] },
      targetType: {
        type: 'string',
        enum: ['dag', 'inline_spec', 'run'],
        description: 'Default: run for retry/stop; inline_spec when spec is given; else dag.',
      },
      name: { ...str('DAG name (also the name of an inline run).'), 'x-mcp-header': 'Name' },
      spec: str('Inline DAG YAML (targetType inline_spec); never trimmed.'),
      dagRunId: str(
        'Run id: required for retry/stop, optional override for start/enqueue. ^[-a-zA-Z0-9_]+$, at most 64 characters.',
      ),
      params: {
        type: ['string', 'object'],
        description: 'Run params: "A=1 B=2" or an object (sent as compact JSON with sorted keys).',
      },
      queue: str('Queue override (enqueue only).'),
      singleton: {
        type: 'boolean',
        description: 'Refuse if a run of this DAG is already running or queued (start/enqueue).',
      },
      noReuse: { type: 'boolean', description: 'Accepted for compatibility (start/enqueue).' },
      labels: {
        type: 'array',
        items: { type: 'string' },
        description: 'key=value or bare key labels added to the run (start/enqueue).',
      },
      stepName: str('Retry from this step (retry only).'),
      includeDownstream: { type: 'boolean', description: 'Also retry every step downstream of stepName (retry only).' },
      wait: { type: 'boolean', description: 'Block until the run ends or reaches a waiting checkpoint.' },
      waitTimeoutSeconds: {
        type: 'integer',
        minimum: 1,
        maximum: 300,
        default: 60,
        description: 'Cap on the wait, seconds (only with wait=true).',
      },
      profile: str(
        "Runtime profile for this run (start/enqueue), overriding the DAG's and the workspace default; an existing profile of the DAG's workspace.",
      ),
    },
  },
  annotations: {
    title: 'Control DAG-runs',
    readOnlyHint: false,
    idempotentHint: false,
    destructiveHint: true,
    openWorldHint: false,
  },
};

/** The three tools, as `tools/list` advertises them (no `outputSchema`, dagu-model §8). */
export const TOOL_DEFINITIONS: readonly Tool[] = [daguRead, daguChange, daguExecute];
