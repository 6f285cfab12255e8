import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { READ_TARGETS } from './read/read-targets';

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
      name: str(
        'DAG name (dag, dag_spec, run, run_logs, step_log, foreach_items, foreach_item) or reference topic (reference).',
      ),
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

/** `dagu_change` (spec 022 §Input). */
const daguChange: Tool = {
  name: 'dagu_change',
  title: 'Validate and upsert a DAG',
  description:
    'Validate a DAG YAML document (mode=preview, the default, writes nothing) or validate and store it (mode=apply). ' +
    'Validation failures come back as valid=false with the errors, not as a tool error.',
  inputSchema: {
    type: 'object',
    additionalProperties: false,
    // `name` and `spec` are required, but not declared so: 022 answers a missing one, or an
    // unsupported mode or type, with its own error codes, which a validating client would pre-empt.
    properties: {
      mode: {
        type: 'string',
        default: 'preview',
        description: 'preview (default) validates only; apply validates then writes.',
      },
      type: { type: 'string', default: 'upsert_dag', description: 'Change type; the only type is upsert_dag.' },
      name: str('Required. Target DAG name: letters, digits, "_", "." and "-", at most 40 characters.'),
      spec: str('Required. The DAG YAML document; kept exactly as given.'),
    },
  },
  annotations: { title: 'Change a DAG', destructiveHint: true, openWorldHint: false },
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
      name: str('DAG name (also the name of an inline run).'),
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
