/**
 * What a step runs (dagu-model.md §3): `run`/`command`/`script`, `action` +
 * `with`, legacy `call:` (and the older `run: <dag>` + `params:`), `foreach`,
 * or an `approval` gate alone; legacy `executor:` / typed `type:` forms of
 * the host actions (dagu-actions §1.1). Refuses other executors and actions.
 */
import type { NormalizedStep, StepAction, StepCommand } from './dag.types';
import { legacyActionOf, type LegacyAction } from './legacy-actions';
import { parseAction, type ActionContext } from './step-action.parser';
import { renderValue, type ErrorSink } from './error-sink';
import { asMap, isScalar, scalarToString } from './yaml-values';

/** The part of a step that says what it runs; `foreach` is parsed by the caller. */
export type RunSpec = Pick<NormalizedStep, 'kind' | 'commands' | 'script' | 'interpreter' | 'action'>;

const DAG_NAME = /^[a-zA-Z0-9_.-]+$/;
const SHELL_EXECUTORS = ['', 'shell', 'command'];

/** `shell: bash -e` or `[bash, -e]` → argv; errors name `field`. */
export function parseShell(value: unknown, field: string, sink: ErrorSink): string[] | undefined {
  if (value === undefined || value === null) return undefined;
  const argv = toArgv(value);
  if (argv === undefined || argv.length === 0) sink.field(field, 'must be a command string or list', value);
  return argv && argv.length > 0 ? argv : undefined;
}

function toArgv(value: unknown): string[] | undefined {
  if (typeof value === 'string')
    return value
      .trim()
      .split(/\s+/)
      .filter((part) => part !== '');
  if (!Array.isArray(value)) return undefined;
  const argv = value.map((item: unknown) => scalarToString(item));
  return argv.every((item): item is string => item !== undefined) ? argv : undefined;
}

/** What `executor` / step `type` say: the shell, a legacy host action (dagu-actions §1.1), or refused. */
type ExecutorChoice = { kind: 'shell' } | { kind: 'refused' } | { kind: 'action'; legacy: LegacyAction };

/**
 * Reads `executor` and step `type`: the shell (none, `shell`, `command`), a
 * legacy form of a host action (`jq`, `docker`, `container`, `template`,
 * `file`; legacy-actions.ts), or an error for anything else.
 */
function checkExecutor(keys: Map<string, unknown>, sink: ErrorSink): ExecutorChoice {
  let choice: ExecutorChoice = { kind: 'shell' };
  for (const key of ['executor', 'type'] as const) {
    if (!keys.has(key)) continue;
    const value = keys.get(key);
    const type = typeof value === 'string' ? value : (asMap(value)?.get('type') ?? (value === null ? '' : undefined));
    if (typeof type === 'string' && SHELL_EXECUTORS.includes(type)) continue;
    const legacy = typeof type === 'string' ? legacyActionOf(type, value, keys) : undefined;
    if (legacy !== undefined && choice.kind === 'shell') {
      choice = { kind: 'action', legacy };
      continue;
    }
    const label = key === 'executor' ? 'executor type' : 'step type';
    sink.field(key, `${label} '${scalarToString(type) ?? renderValue(value)}' is not supported here`);
    choice = { kind: 'refused' };
  }
  return choice;
}

/**
 * Resolves what the step runs. Errors: `field 'command': step command is
 * required` when nothing runs; `field '<b>': cannot be combined with '<a>'`
 * for two run modes; unsupported executors and actions.
 */
export function parseRun(keys: Map<string, unknown>, context: ActionContext, sink: ErrorSink): RunSpec {
  const executor = checkExecutor(keys, sink);
  if (executor.kind === 'refused') return { kind: 'command' };
  if (executor.kind === 'action') return runLegacyAction(executor.legacy, keys, context, sink);
  if (keys.has('config')) sink.field('config', "requires 'executor' or 'type'");
  if (keys.has('run') && keys.has('command')) sink.field('command', "cannot be combined with 'run'");
  const fromCommand = !keys.has('run') && keys.has('command');
  const runValue = keys.get('run') ?? keys.get('command');
  const legacyCall =
    !keys.has('call') &&
    !fromCommand &&
    keys.has('params') &&
    typeof runValue === 'string' &&
    DAG_NAME.test(runValue.trim());
  const callTarget = keys.has('call') ? keys.get('call') : legacyCall ? runValue : undefined;
  const modes: string[] = [];
  if (keys.has('call')) modes.push('call');
  if (keys.has('action')) modes.push('action');
  if (keys.has('foreach')) modes.push('foreach');
  if (runValue !== undefined && !legacyCall) modes.push(fromCommand ? 'command' : 'run');
  const [first, second] = modes;
  if (first !== undefined && second !== undefined) sink.field(second, `cannot be combined with '${first}'`);
  if (keys.has('script') && first !== undefined && !['run', 'command'].includes(first)) {
    sink.field('script', `cannot be combined with '${first}'`);
  }
  if (keys.has('params') && callTarget === undefined)
    sink.field('params', 'step params are only valid with call; use with.params');
  if (keys.has('with') && !keys.has('action') && callTarget === undefined) sink.field('with', "requires 'action'");
  if (callTarget !== undefined) return runCall(callTarget, keys, sink);
  if (first === 'action') return runAction(keys, context, sink);
  if (first === 'foreach') return { kind: 'foreach' };
  if (keys.has('script')) return runScript(keys.get('script'), runValue, sink);
  if (runValue !== undefined) return runCommands(runValue, fromCommand, sink);
  if (keys.has('approval')) return { kind: 'approval' };
  sink.field('command', 'step command is required');
  return { kind: 'command' };
}

function runCall(target: unknown, keys: Map<string, unknown>, sink: ErrorSink): RunSpec {
  const withMap = asMap(keys.get('with'));
  const params = keys.get('params') ?? withMap?.get('params');
  const action = parseAction(
    'dag.run',
    new Map([
      ['dag', target],
      ['params', params],
    ]),
    { inForeach: false, inHandler: false },
    sink,
    'call',
  );
  return { kind: 'sub_dag', ...(action ? { action } : {}) };
}

function runAction(keys: Map<string, unknown>, context: ActionContext, sink: ErrorSink): RunSpec {
  const name = keys.get('action');
  const action = parseAction(name, keys.get('with'), context, sink, 'with');
  if (!action) return { kind: 'command' };
  return { kind: kindOfAction(action), action };
}

function kindOfAction(action: StepAction): NormalizedStep['kind'] {
  if (action.type === 'http.request') return 'http';
  if (action.type === 'human.task') return 'human_task';
  if (action.type === 'dag.run' || action.type === 'dag.enqueue') return 'sub_dag';
  return 'host_action';
}

/** A legacy or typed-executor step (dagu-actions §1.1), normalised to its action form; `action` beside it is an error. */
function runLegacyAction(
  legacy: LegacyAction,
  keys: Map<string, unknown>,
  context: ActionContext,
  sink: ErrorSink,
): RunSpec {
  for (const key of ['action', 'call', 'foreach', 'run'])
    if (keys.has(key)) sink.field(key, `cannot be combined with '${keys.has('executor') ? 'executor' : 'type'}'`);
  if (legacy.error !== undefined) {
    sink.field(legacy.field, legacy.error);
    return { kind: 'command' };
  }
  const action = parseAction(legacy.name, legacy.with, context, sink, legacy.field);
  return action ? { kind: kindOfAction(action), action } : { kind: 'command' };
}

function runScript(script: unknown, runValue: unknown, sink: ErrorSink): RunSpec {
  if (typeof script !== 'string' || script.trim() === '') {
    sink.field('script', 'must be a non-empty string', script);
    return { kind: 'script' };
  }
  const interpreter = runValue === undefined ? undefined : toArgv(runValue);
  if (runValue !== undefined && (interpreter === undefined || interpreter.length === 0)) {
    sink.field('command', 'script interpreter must be a command string or list', runValue);
  }
  return { kind: 'script', script, ...(interpreter && interpreter.length > 0 ? { interpreter } : {}) };
}

function runCommands(value: unknown, fromCommand: boolean, sink: ErrorSink): RunSpec {
  const field = fromCommand ? 'command' : 'run';
  if (isScalar(value)) {
    const text = String(value).trim();
    if (text === '') sink.field('command', 'step command is required');
    if (text.includes('\n')) return { kind: 'script', script: `${text}\n` };
    return { kind: 'command', commands: text === '' ? [] : [{ kind: 'shell', line: text }] };
  }
  if (!Array.isArray(value) || value.length === 0) {
    sink.field('command', 'step command is required', value);
    return { kind: 'command' };
  }
  if (fromCommand) {
    const argv = toArgv(value);
    if (!argv) sink.field(field, 'command arguments must be scalars', value);
    return { kind: 'command', commands: argv ? [{ kind: 'exec', argv }] : [] };
  }
  const commands: StepCommand[] = [];
  value.forEach((item: unknown, index: number) => {
    const argv = Array.isArray(item) ? toArgv(item) : undefined;
    if (typeof item === 'string' && item.trim() !== '') commands.push({ kind: 'shell', line: item.trim() });
    else if (argv && argv.length > 0) commands.push({ kind: 'exec', argv });
    else sink.field(`${field}[${index}]`, 'must be a command string or an argument list', item);
  });
  return { kind: 'command', commands };
}
