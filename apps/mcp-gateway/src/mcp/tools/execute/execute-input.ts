import { DaguError, isValidDagName, isValidDagRunId, LATEST_RUN_ID, PROFILE_NAME_PATTERN } from '@dagu-mcp/contracts';
import type { RunControlRequest } from '../../../actions/run-control.actions';
import { readBoolean, readInteger, readString, rejectUnknownFields, requireObject, type ToolArgs } from '../tool-input';

/** Every field `dagu_execute` accepts, in the order of 036 §Input (types are checked in this order). */
export const EXECUTE_FIELDS = [
  'action',
  'targetType',
  'name',
  'spec',
  'dagRunId',
  'params',
  'queue',
  'singleton',
  'noReuse',
  'labels',
  'stepName',
  'includeDownstream',
  'wait',
  'waitTimeoutSeconds',
  'profile',
] as const;
const KNOWN_FIELDS: ReadonlySet<string> = new Set<string>(EXECUTE_FIELDS);

export const EXECUTE_ACTIONS = ['start', 'enqueue', 'retry', 'stop'] as const;
export type ExecuteAction = (typeof EXECUTE_ACTIONS)[number];
export const EXECUTE_TARGET_TYPES = ['dag', 'inline_spec', 'run'] as const;
export type ExecuteTargetType = (typeof EXECUTE_TARGET_TYPES)[number];

/** Default and bounds of `waitTimeoutSeconds` (036 §Input). */
export const DEFAULT_WAIT_TIMEOUT_SECONDS = 60;
const MAX_WAIT_TIMEOUT_SECONDS = 300;

/**
 * A validated `dagu_execute` request (036 §Input). Optional values are absent
 * when not supplied. `params` is the string handed to run-service: a trimmed
 * string, or an object argument re-encoded as compact JSON with keys sorted at
 * every depth. `waitTimeoutSeconds` is set exactly when `wait` is true.
 */
export interface ExecuteRequest {
  readonly action: ExecuteAction;
  readonly targetType: ExecuteTargetType;
  readonly name: string;
  readonly spec?: string;
  readonly dagRunId?: string;
  readonly params?: string;
  readonly queue?: string;
  readonly singleton?: boolean;
  /** Runtime profile for this run (Dagu spec 022b; start/enqueue only). */
  readonly profile?: string;
  readonly noReuse?: boolean;
  readonly labels?: string[];
  readonly stepName?: string;
  readonly includeDownstream?: boolean;
  readonly wait: boolean;
  readonly waitTimeoutSeconds?: number;
}

/** What is resolved so far, attached to an error object (036 §Errors optional keys). */
export interface ExecuteErrorContext {
  action?: string;
  targetType?: string;
  dagName?: string;
  dagRunId?: string;
}

function fail(field: string, message: string): never {
  throw new DaguError('invalid_tool_input', message, { field });
}

/**
 * Parses `dagu_execute` arguments: first the 036 §Input parsing rules (object,
 * unknown keys → alphabetically first, JSON types in table order, strings but
 * `spec` trimmed, empty string and `null` absent), then the eleven validation
 * steps of 036 in order; the first failure wins. Format checks sit with their
 * step: a malformed DAG name with step 5, a malformed run id with step 9.
 *
 * Booleans: `singleton` counts as supplied whenever present (036: "present at
 * all on retry/stop is an error"); `noReuse` and `includeDownstream` only when
 * true. An empty `params` object or `labels` array counts as absent.
 *
 * @param context filled with `action`, `targetType`, `dagName`, `dagRunId` as they resolve
 * @throws DaguError `invalid_tool_input` with `field` (none when `args` is not an object)
 */
export function parseExecuteInput(args: unknown, context: ExecuteErrorContext): ExecuteRequest {
  const input = requireObject(args);
  rejectUnknownFields(input, KNOWN_FIELDS);
  const action = readString(input, 'action');
  const targetTypeArg = readString(input, 'targetType');
  const name = readString(input, 'name');
  const spec = readString(input, 'spec', { keepAsIs: true });
  const dagRunId = readString(input, 'dagRunId');
  const params = readParams(input);
  const queue = readString(input, 'queue');
  const singleton = readBoolean(input, 'singleton');
  const noReuse = readBoolean(input, 'noReuse');
  const labels = readLabels(input);
  const stepName = readString(input, 'stepName');
  const includeDownstream = readBoolean(input, 'includeDownstream');
  const wait = readBoolean(input, 'wait') === true;
  const waitTimeoutSeconds = readInteger(input, 'waitTimeoutSeconds');
  const profile = readString(input, 'profile');

  // 1. action
  if (action === undefined) fail('action', 'The action field is required: start, enqueue, retry or stop.');
  if (!isAction(action)) fail('action', `Unsupported action: ${String(action)}. Use start, enqueue, retry or stop.`);
  context.action = action;
  const runControl = action === 'retry' || action === 'stop';
  // 2. targetType default
  const specNonBlank = spec !== undefined && spec.trim() !== '';
  const targetType = targetTypeArg ?? (runControl ? 'run' : specNonBlank ? 'inline_spec' : 'dag');
  if (!isTargetType(targetType))
    fail('targetType', `Unsupported targetType: ${targetType}. Use dag, inline_spec or run.`);
  context.targetType = targetType;
  if (!runControl) {
    // 3. start/enqueue targets
    if (targetType === 'dag' && spec !== undefined)
      fail('spec', 'The spec field is not allowed with targetType dag; use targetType inline_spec.');
    if (targetType === 'inline_spec' && !specNonBlank)
      fail('spec', 'The spec field is required for targetType inline_spec.');
    if (targetType === 'run')
      fail('targetType', `targetType run is only for retry and stop; use dag or inline_spec to ${action}.`);
  } else if (targetType !== 'run') {
    // 4. retry/stop target a run
    fail('targetType', `The ${action} action targets a run; targetType must be run.`);
  }
  // 5. name
  if (name === undefined) fail('name', 'The name field is required.');
  context.dagName = name;
  if (!isValidDagName(name)) {
    fail('name', 'The name field must be 1-40 characters of letters, digits, "_", "." or "-", and not "." or "..".');
  }
  // 6. queue
  if (queue !== undefined && action !== 'enqueue')
    fail('queue', 'The queue field is only allowed with action enqueue.');
  // 7. start/enqueue-only fields
  if (runControl) {
    const extra: Array<[string, boolean]> = [
      ['spec', spec !== undefined],
      ['params', params !== undefined],
      ['singleton', singleton !== undefined],
      ['noReuse', noReuse === true],
      ['labels', labels !== undefined],
      ['profile', profile !== undefined],
    ];
    for (const [field, present] of extra)
      if (present) fail(field, `The ${field} field is not allowed with action ${action}.`);
  }
  // 7b. profile (Dagu spec 022b)
  if (profile !== undefined && (!PROFILE_NAME_PATTERN.test(profile) || profile.length > 40))
    fail('profile', 'The profile field must match ^[a-z0-9][a-z0-9._-]*$, at most 40 characters.');
  // 8. retry-only fields
  if (action !== 'retry') {
    if (stepName !== undefined) fail('stepName', 'The stepName field is only allowed with action retry.');
    if (includeDownstream === true)
      fail('includeDownstream', 'The includeDownstream field is only allowed with action retry.');
  }
  // 9. run id
  if (runControl && dagRunId === undefined) fail('dagRunId', `The dagRunId field is required for action ${action}.`);
  if (dagRunId !== undefined) {
    if (!isValidDagRunId(dagRunId))
      fail('dagRunId', 'The dagRunId field must match ^[-a-zA-Z0-9_]+$ and be at most 64 characters.');
    context.dagRunId = dagRunId;
    // Reads resolve `latest` to the DAG's latest run, so a new run cannot take it.
    if (!runControl && dagRunId === LATEST_RUN_ID)
      fail('dagRunId', `The dagRunId "${LATEST_RUN_ID}" names the latest run of a DAG; a new run cannot take it.`);
  }
  // 10. includeDownstream needs stepName
  if (includeDownstream === true && stepName === undefined)
    fail('stepName', 'The stepName field is required when includeDownstream is true.');
  // 11. waitTimeoutSeconds
  if (waitTimeoutSeconds !== undefined && !wait)
    fail('waitTimeoutSeconds', 'The waitTimeoutSeconds field is only allowed with wait=true.');
  if (waitTimeoutSeconds !== undefined && (waitTimeoutSeconds < 1 || waitTimeoutSeconds > MAX_WAIT_TIMEOUT_SECONDS)) {
    fail('waitTimeoutSeconds', 'The waitTimeoutSeconds field must be an integer from 1 through 300.');
  }
  return {
    action,
    targetType,
    name,
    wait,
    ...(spec !== undefined && targetType === 'inline_spec' ? { spec } : {}),
    ...(dagRunId !== undefined ? { dagRunId } : {}),
    ...(params !== undefined ? { params } : {}),
    ...(queue !== undefined ? { queue } : {}),
    ...(singleton !== undefined ? { singleton } : {}),
    ...(profile !== undefined ? { profile } : {}),
    ...(noReuse !== undefined ? { noReuse } : {}),
    ...(labels !== undefined ? { labels } : {}),
    ...(stepName !== undefined ? { stepName } : {}),
    ...(includeDownstream !== undefined ? { includeDownstream } : {}),
    ...(wait ? { waitTimeoutSeconds: waitTimeoutSeconds ?? DEFAULT_WAIT_TIMEOUT_SECONDS } : {}),
  };
}

/**
 * The run-control action's request for a validated 036 request: the target
 * becomes `dagName`, an inline start carries its `spec`; `noReuse`, `wait`
 * and `waitTimeoutSeconds` stay with the face (run-service takes no such field).
 */
export function runControlOf(request: ExecuteRequest): RunControlRequest {
  const { action, name: dagName } = request;
  // parseExecuteInput requires dagRunId for retry and stop (036 step 9).
  const dagRunId = request.dagRunId ?? '';
  switch (action) {
    case 'retry':
      return {
        action,
        dagName,
        dagRunId,
        ...(request.stepName !== undefined ? { stepName: request.stepName } : {}),
        ...(request.includeDownstream !== undefined ? { includeDownstream: request.includeDownstream } : {}),
      };
    case 'stop':
      return { action, dagName, dagRunId };
    case 'start':
    case 'enqueue': {
      const { spec, params, queue, labels, singleton, profile } = request;
      return {
        action,
        dagName,
        ...(spec !== undefined ? { spec } : {}),
        ...(request.dagRunId !== undefined ? { dagRunId: request.dagRunId } : {}),
        ...(params !== undefined ? { params } : {}),
        ...(queue !== undefined ? { queue } : {}),
        ...(labels !== undefined ? { labels } : {}),
        ...(singleton !== undefined ? { singleton } : {}),
        ...(profile !== undefined ? { profile } : {}),
      };
    }
  }
}

function isAction(value: string): value is ExecuteAction {
  return (EXECUTE_ACTIONS as readonly string[]).includes(value);
}

function isTargetType(value: string): value is ExecuteTargetType {
  return (EXECUTE_TARGET_TYPES as readonly string[]).includes(value);
}

/** `params`: a string (trimmed; empty → absent) or an object (compact JSON, keys sorted; `{}` → absent). */
function readParams(input: ToolArgs): string | undefined {
  const value = input.params;
  if (value === undefined || value === null || typeof value === 'string') return readString(input, 'params');
  if (!isPlainObject(value)) return fail('params', 'The params field must be a string or a JSON object.');
  return Object.keys(value).length === 0 ? undefined : JSON.stringify(sortKeys(value));
}

/** `labels`: an array of strings, each trimmed; blank entries fail; `[]` → absent. */
function readLabels(input: ToolArgs): string[] | undefined {
  const value = input.labels;
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value)) return fail('labels', 'The labels field must be an array of strings.');
  const labels: string[] = [];
  for (const entry of value) {
    if (typeof entry !== 'string') return fail('labels', 'The labels field must be an array of strings.');
    const label = entry.trim();
    if (label === '' || label.startsWith('=')) return fail('labels', 'Each label must be "key=value" or a bare "key".');
    labels.push(label);
  }
  return labels.length === 0 ? undefined : labels;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A copy of a JSON value with object keys sorted at every depth (036: "keys sorted"). */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isPlainObject(value)) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys(value[key]);
  return sorted;
}
