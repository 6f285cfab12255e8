/**
 * One DAG document (root mapping) → `NormalizedDag` (dagu-model.md §3): root
 * keys, `defaults`, params, env, labels, schedule, handlers and steps.
 */
import { HANDLER_KINDS, type HandlerKind, type HandlerOn, type NormalizedDag } from './dag.types';
import type { ErrorSink } from './error-sink';
import { parseEnv, parseLabels } from './env-labels.parser';
import { DEFAULTS_KEYS, readKeys, ROOT_KEYS } from './keys';
import { parseParams } from './params.parser';
import { parseContinueOn, parsePreconditions, parseRetryPolicy, readNonNegativeInt } from './policies.parser';
import { parseSchedule } from './schedule.parser';
import { parseStep, type StepDefaults } from './step.parser';
import { parseShell } from './step-run.parser';
import { parseStepList } from './steps.parser';
import { asMap, compact, scalarToString, toFiniteNumber, type YamlMap } from './yaml-values';

const DAG_NAME = /^[a-zA-Z0-9_.-]+$/;

/** Checks a DAG name (§2): `^[a-zA-Z0-9_.-]+$`, at most 40 chars, not `.` or `..`. Returns a message or undefined. */
export function checkDagName(name: string): string | undefined {
  if (!DAG_NAME.test(name) || name === '.' || name === '..')
    return 'DAG name must match ^[a-zA-Z0-9_.-]+$ and not be . or ..';
  if (name.length > 40) return 'DAG name must be at most 40 characters';
  return undefined;
}

/**
 * Parses a DAG document. `name` (the tool's name) wins over the YAML `name`,
 * which is then kept as `yamlName`. Errors are recorded on `sink`; the
 * returned model is meaningful only when none were recorded.
 */
export function parseDagDocument(map: YamlMap, name: string | undefined, sink: ErrorSink): NormalizedDag {
  const keys = readKeys(map, ROOT_KEYS, sink);
  const yamlName = keys.get('name');
  if (yamlName !== undefined && typeof yamlName !== 'string') sink.field('name', 'DAG name must be a string', yamlName);
  const effective = name ?? (typeof yamlName === 'string' ? yamlName : undefined);
  const nameProblem = effective === undefined ? 'DAG name is required' : checkDagName(effective);
  if (nameProblem) sink.field('name', nameProblem, effective);
  const type = keys.get('type') ?? 'graph';
  if (type === 'agent') sink.field('type', "DAG type 'agent' (LLM agent) is not supported here");
  else if (type !== 'graph' && type !== 'chain') sink.field('type', "must be 'graph' or 'chain'", type);
  const workingDir = scalarToString(keys.get('working_dir')) || undefined;
  const defaults = parseDefaults(keys.get('defaults'), workingDir, sink);
  const labels = [...parseLabels(keys.get('labels'), 'labels', sink), ...parseLabels(keys.get('tags'), 'tags', sink)];
  const queue = keys.get('queue');
  if (queue !== undefined && queue !== null && (typeof queue !== 'string' || queue.trim() === '')) {
    sink.field('queue', 'queue must be a queue name; worker queues and labels are not supported here', queue);
  }
  const steps = keys.get('steps');
  const noSteps = steps === undefined || steps === null || (Array.isArray(steps) && steps.length === 0);
  if (noSteps) sink.field('steps', 'at least one step is required');
  return compact<NormalizedDag>({
    name: effective ?? '',
    yamlName: typeof yamlName === 'string' && yamlName !== effective ? yamlName : undefined,
    description: scalarToString(keys.get('description')) || undefined,
    type: type === 'chain' ? 'chain' : 'graph',
    workingDir,
    histRetentionDays: readNonNegativeInt(keys.get('hist_retention_days'), 'hist_retention_days', sink),
    params: parseParams(keys.get('params'), sink),
    env: parseEnv(keys.get('env'), 'env', sink),
    labels: [...new Set(labels)],
    schedule: parseSchedule(keys.get('schedule'), sink),
    queue: typeof queue === 'string' && queue.trim() !== '' ? queue.trim() : undefined,
    maxActiveRuns: readMaxActiveRuns(keys.get('max_active_runs'), sink),
    maxActiveSteps: readNonNegativeInt(keys.get('max_active_steps'), 'max_active_steps', sink) ?? 0,
    timeoutSec: readNonNegativeInt(keys.get('timeout_sec'), 'timeout_sec', sink),
    preconditions: parsePreconditions(keys.get('preconditions'), 'preconditions', sink),
    handlerOn: parseHandlers(keys.get('handler_on'), defaults, sink),
    steps: noSteps
      ? []
      : parseStepList(steps, { chain: type === 'chain', inForeach: false, defaults, field: 'steps' }, sink),
  });
}

/** `max_active_runs`: an integer ≥ -1 (-1 = not queued, as in Dagu); default 1. */
function readMaxActiveRuns(value: unknown, sink: ErrorSink): number {
  if (value === undefined || value === null) return 1;
  const n = toFiniteNumber(value);
  if (n !== undefined && Number.isInteger(n) && n >= -1) return n;
  sink.field('max_active_runs', 'must be an integer of at least -1', value);
  return 1;
}

function parseDefaults(value: unknown, rootWorkingDir: string | undefined, sink: ErrorSink): StepDefaults {
  const base: StepDefaults = compact({ env: [], workingDir: rootWorkingDir });
  if (value === undefined || value === null) return base;
  const map = asMap(value);
  if (!map) {
    sink.field('defaults', 'must be a map', value);
    return base;
  }
  const keys = readKeys(map, DEFAULTS_KEYS, sink, 'defaults.');
  const get = (key: string): unknown => (keys.get(key) === null ? undefined : keys.get(key));
  return compact<StepDefaults>({
    retryPolicy:
      get('retry_policy') === undefined
        ? undefined
        : parseRetryPolicy(get('retry_policy'), 'defaults.retry_policy', sink),
    continueOn:
      get('continue_on') === undefined ? undefined : parseContinueOn(get('continue_on'), 'defaults.continue_on', sink),
    timeoutSec: readNonNegativeInt(get('timeout_sec'), 'defaults.timeout_sec', sink),
    env: parseEnv(get('env'), 'defaults.env', sink),
    workingDir: scalarToString(get('working_dir')) || rootWorkingDir,
    shell: parseShell(get('shell'), 'defaults.shell', sink),
  });
}

/** `handler_on`: each kind is one step, named `on<Kind>` unless it has a name or id. Legacy `cancel` = `abort`. */
function parseHandlers(value: unknown, defaults: StepDefaults, sink: ErrorSink): HandlerOn {
  const handlers: HandlerOn = {};
  if (value === undefined || value === null) return handlers;
  const map = asMap(value);
  if (!map) {
    sink.field('handler_on', 'must be a map', value);
    return handlers;
  }
  const keys = readKeys(map, { allowed: HANDLER_KINDS, aliases: { cancel: 'abort' } }, sink, 'handler_on.');
  for (const [kind, raw] of keys) {
    const handlerKind = HANDLER_KINDS.find((k): k is HandlerKind => k === kind);
    const stepMap = raw === null ? undefined : asMap(raw);
    const handlerSink = sink.child(`handler_on.${kind}`);
    if (handlerKind === undefined) continue;
    if (!stepMap) {
      handlerSink.field(kind, 'handler must be a step map', raw);
      continue;
    }
    const context = {
      inForeach: false,
      inHandler: true,
      defaults,
      parseBody: (body: unknown, bodySink: ErrorSink) =>
        parseStepList(body, { chain: false, inForeach: true, defaults, field: 'foreach.steps' }, bodySink),
    };
    const parsed = parseStep(stepMap, undefined, context, handlerSink);
    if (parsed.depends !== undefined) handlerSink.field('depends', 'handlers cannot have depends', parsed.depends);
    if (parsed.step.name === '') parsed.step.name = `on${kind.charAt(0).toUpperCase()}${kind.slice(1)}`;
    handlers[handlerKind] = parsed.step;
  }
  return handlers;
}
