/**
 * One step mapping → a `NormalizedStep` (dagu-model.md §2–3): key checks,
 * name/id rules, what it runs, policies, and `defaults` inheritance. Names
 * still missing (no name, no id) and `depends` are resolved by the step-list
 * parser, which sees all the steps.
 */
import type { ContinueOn, EnvVar, NormalizedStep, RetryPolicy } from './dag.types';
import type { ErrorSink } from './error-sink';
import { mergeEnv, parseEnv } from './env-labels.parser';
import { parseForeach, type ForeachBodyParser } from './foreach.parser';
import { readKeys, STEP_KEYS } from './keys';
import { parseApproval, parseOutput, parseOutputs } from './outputs.parser';
import {
  defaultContinueOn,
  parseContinueOn,
  parsePreconditions,
  parseRepeatPolicy,
  parseRetryPolicy,
  readNonNegativeInt,
} from './policies.parser';
import type { ActionContext } from './step-action.parser';
import { parseRun, parseShell } from './step-run.parser';
import { asList, compact, scalarToString, type YamlMap } from './yaml-values';

/** Step settings from the DAG's `defaults` (and root `working_dir`) that steps inherit. */
export interface StepDefaults {
  retryPolicy?: RetryPolicy;
  continueOn?: ContinueOn;
  timeoutSec?: number;
  env: EnvVar[];
  workingDir?: string;
  shell?: string[];
}

/** Where a step is parsed and what it inherits. */
export interface StepContext extends ActionContext {
  defaults: StepDefaults;
  parseBody: ForeachBodyParser;
}

/** A parsed step before list-level resolution: `depends` are still raw references. */
export interface ParsedStep {
  step: NormalizedStep;
  /** True when the YAML gave a name (or the steps-map key did). */
  named: boolean;
  /** Raw `depends` references (names or ids); `undefined` when the key is absent. */
  depends?: string[];
}

export const STEP_ID = /^[A-Za-z][A-Za-z0-9_]*$/;
export const RESERVED_IDS = ['env', 'params', 'args', 'stdout', 'stderr', 'output', 'outputs'];
const MAX_NAME = 255;
const MAX_ID = 40;

/** Checks a step id (§2): pattern, length, reserved words (case-insensitive). */
export function checkStepId(id: string, sink: ErrorSink): void {
  if (!STEP_ID.test(id) || id.length > MAX_ID) {
    sink.field('id', `step id must match ${STEP_ID.source} and be at most ${MAX_ID} characters`, id);
  } else if (RESERVED_IDS.includes(id.toLowerCase())) {
    sink.field('id', `step id '${id}' is reserved`, id);
  }
}

function readDepends(value: unknown, sink: ErrorSink): string[] {
  const out: string[] = [];
  for (const item of asList(value)) {
    const text = typeof item === 'string' || typeof item === 'number' ? String(item).trim() : undefined;
    if (text === undefined || text === '') sink.field('depends', 'must be a step name or a list of step names', item);
    else out.push(text);
  }
  return out;
}

/**
 * Parses one step. `keyName` is the key of a steps map entry (it is the
 * step's name). The step's `name` is `''` when neither a name nor an id is
 * given; the list parser generates one.
 */
export function parseStep(
  map: YamlMap,
  keyName: string | undefined,
  context: StepContext,
  sink: ErrorSink,
): ParsedStep {
  const keys = readKeys(map, STEP_KEYS, sink);
  const rawName = keys.get('name');
  const rawId = keys.get('id');
  const id = typeof rawId === 'string' ? rawId : undefined;
  if (rawId !== undefined && id === undefined) sink.field('id', 'step id must be a string', rawId);
  if (id !== undefined) checkStepId(id, sink);
  let name = keyName ?? (typeof rawName === 'string' || typeof rawName === 'number' ? String(rawName) : undefined);
  if (rawName !== undefined && typeof rawName !== 'string' && typeof rawName !== 'number') {
    sink.field('name', 'step name must be a string', rawName);
  } else if (keyName !== undefined && rawName !== undefined && String(rawName) !== keyName) {
    sink.field('name', `differs from the steps map key '${keyName}'`, rawName);
  }
  if (name !== undefined && (name.trim() === '' || name.length > MAX_NAME)) {
    sink.field('name', `step name must be 1 to ${MAX_NAME} characters`, name);
  }
  const named = name !== undefined;
  name = name ?? id ?? '';
  const run = parseRun(keys, context, sink);
  if (run.action?.type === 'human.task' && id === undefined) sink.field('id', 'human.task steps need an explicit id');
  const description = scalarToString(keys.get('description'));
  const { defaults } = context;
  const has = (key: string): boolean => keys.has(key) && keys.get(key) !== null;
  const step = compact<NormalizedStep>({
    name,
    id,
    description: description || undefined,
    ...run,
    shell: has('shell') ? parseShell(keys.get('shell'), 'shell', sink) : defaults.shell,
    workingDir: has('working_dir') ? (scalarToString(keys.get('working_dir')) ?? undefined) : defaults.workingDir,
    env: mergeEnv(defaults.env, parseEnv(keys.get('env'), 'env', sink)),
    depends: [],
    continueOn: has('continue_on')
      ? parseContinueOn(keys.get('continue_on'), 'continue_on', sink)
      : (defaults.continueOn ?? defaultContinueOn()),
    retryPolicy: has('retry_policy')
      ? parseRetryPolicy(keys.get('retry_policy'), 'retry_policy', sink)
      : defaults.retryPolicy,
    repeatPolicy: has('repeat_policy')
      ? parseRepeatPolicy(keys.get('repeat_policy'), 'repeat_policy', sink)
      : undefined,
    preconditions: parsePreconditions(keys.get('preconditions'), 'preconditions', sink),
    timeoutSec: has('timeout_sec')
      ? readNonNegativeInt(keys.get('timeout_sec'), 'timeout_sec', sink)
      : defaults.timeoutSec,
    outputs: parseOutputs(keys.get('outputs'), sink),
    output: has('output') ? parseOutput(keys.get('output'), sink) : undefined,
    foreach: run.kind === 'foreach' ? parseForeach(keys.get('foreach'), sink, context.parseBody) : undefined,
    approval: keys.has('approval') ? parseApproval(keys.get('approval'), sink) : undefined,
  });
  // An approval parks the whole run, like a human task: only among a DAG's top-level steps.
  if (keys.has('approval') && context.inForeach)
    sink.field('approval', 'an approval gate is not allowed inside foreach', 'approval');
  if (keys.has('approval') && context.inHandler)
    sink.field('approval', 'an approval gate is not allowed in handler_on', 'approval');
  return { step, named, ...(keys.has('depends') ? { depends: readDepends(keys.get('depends'), sink) } : {}) };
}
