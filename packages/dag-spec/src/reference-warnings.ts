/**
 * Preview warnings (spec 022 allows added fields): references
 * in a valid DAG that will certainly fail or surprise at run time, because the
 * engine keeps an unresolved reference literally (dagu-model §3
 * "Interpolation"):
 *
 * - `${steps.X.…}` naming a step that does not exist, or one that is not
 *   upstream (directly or transitively, through `depends`) of the step using
 *   it — its value is not there yet when the step starts;
 * - `${steps.X.outputs.Y}` where X declares no output `Y`. Declared are the
 *   `outputs` names, an `output:` variable or field name, a human task's form
 *   fields and an approval's `input` names; a sub-DAG call (its outputs are the
 *   child's), a human task without a form (it accepts any values) and a
 *   foreach step without `collect` declare nothing checkable and are skipped;
 * - `${params.NAME}` naming no declared param.
 *
 * Warnings are strings shaped like dagu-model §4's errors, naming the step,
 * the field and the reference: `step 'deploy': field 'run': step 'biuld' does
 * not exist; did you mean 'build'? (value: ${steps.biuld.outputs.tag})`.
 */
import { upstreamOf } from './dependencies';
import type { HostAction, JsonValue, NormalizedDag, NormalizedStep, StepAction } from './dag.types';
import { ErrorSink } from './error-sink';
import { didYouMeanSuffix } from './suggest-names';

const REFERENCE = /\$\{([^{}\s]+)\}/g;

/** Where a step's references are judged: the steps it can see and those that ran before it. */
interface Scope {
  /** Step name and id → step, of every step a reference may name. */
  readonly byRef: ReadonlyMap<string, NormalizedStep>;
  /** Names of the steps finished before this one starts. */
  readonly before: ReadonlySet<string>;
  readonly params: ReadonlySet<string>;
}

/**
 * The warnings of one normalized DAG (root or local sub-DAG).
 *
 * @param dag - a DAG `parseDagSpec` reported valid.
 * @param prefix - context put before each warning (`sub-DAG 'x'`), none by default.
 * @returns the warnings in step order; empty when every reference resolves.
 */
export function findReferenceWarnings(dag: NormalizedDag, prefix?: string): string[] {
  const root = ErrorSink.create();
  const sink = prefix === undefined ? root : root.child(prefix);
  const params = new Set(dag.params.map((param) => param.name));
  const byRef = refsOf(dag.steps);
  for (const step of dag.steps) {
    const scope = { byRef, before: upstreamOf(dag.steps, step.name), params };
    checkStep(step, scope, sink.child(`step '${step.name}'`));
  }
  const allSteps = new Set(dag.steps.map((step) => step.name));
  for (const [kind, handler] of Object.entries(dag.handlerOn)) {
    // `init` runs before any step; every other handler runs after the steps.
    const before = kind === 'init' ? new Set<string>() : allSteps;
    checkStep(handler, { byRef, before, params }, sink.child(`handler_on.${kind}`));
  }
  return [...root.errors];
}

function refsOf(
  steps: readonly NormalizedStep[],
  base?: ReadonlyMap<string, NormalizedStep>,
): Map<string, NormalizedStep> {
  const out = new Map(base ?? []);
  for (const step of steps) out.set(step.name, step);
  for (const step of steps) if (step.id !== undefined) out.set(step.id, step);
  return out;
}

function checkStep(step: NormalizedStep, scope: Scope, sink: ErrorSink): void {
  for (const [field, text] of textFields(step)) checkText(text, field, scope, sink);
  const body = step.foreach?.steps;
  if (body === undefined) return;
  // A foreach body sees its own steps and the steps before the foreach step.
  const byRef = refsOf(body, scope.byRef);
  for (const inner of body) {
    const before = new Set([...scope.before, ...upstreamOf(body, inner.name)]);
    checkStep(inner, { ...scope, byRef, before }, sink.child(`step '${inner.name}'`));
  }
}

/** The text fields of a step in which references are expanded, as `[field, text]`. */
function textFields(step: NormalizedStep): [string, string][] {
  const out: [string, string][] = [];
  for (const command of step.commands ?? [])
    out.push(['run', command.kind === 'shell' ? command.line : command.argv.join(' ')]);
  if (step.script !== undefined) out.push(['script', step.script]);
  if (step.workingDir !== undefined) out.push(['working_dir', step.workingDir]);
  for (const entry of step.env) out.push([`env.${entry.key}`, entry.value]);
  step.preconditions.forEach((condition, index) => {
    out.push([`preconditions[${index}].condition`, condition.condition]);
    if (condition.expected !== undefined) out.push([`preconditions[${index}].expected`, condition.expected]);
  });
  if (step.repeatPolicy?.condition !== undefined) out.push(['repeat_policy.condition', step.repeatPolicy.condition]);
  if (step.approval?.prompt !== undefined) out.push(['approval.prompt', step.approval.prompt]);
  if (typeof step.foreach?.items === 'string') out.push(['foreach.items', step.foreach.items]);
  if (step.action !== undefined) out.push(...actionFields(step.action));
  return out;
}

function actionFields(action: StepAction): [string, string][] {
  if (action.type === 'human.task') return [['with.prompt', action.prompt]];
  if (action.type === 'http.request') {
    const out: [string, string][] = [['with.url', action.url]];
    for (const [key, value] of Object.entries(action.headers)) out.push([`with.headers.${key}`, value]);
    if (action.body !== undefined) out.push(['with.body', action.body]);
    return out;
  }
  if ('with' in action) return hostActionFields(action);
  if (action.params === undefined) return [];
  if (typeof action.params === 'string') return [['with.params', action.params]];
  return Object.entries(action.params).map(([key, value]): [string, string] => [`with.params.${key}`, value]);
}

/** The `with` strings of a host action that get `${...}` resolution (dagu-actions §1.1: not a template's text, not a jq filter with `args`). */
function hostActionFields(action: HostAction): [string, string][] {
  const out: [string, string][] = [];
  const walk = (value: JsonValue, path: string): void => {
    if (typeof value === 'string') out.push([path, value]);
    else if (Array.isArray(value)) value.forEach((item, i) => walk(item, `${path}[${i}]`));
    else if (value !== null && typeof value === 'object')
      for (const [key, item] of Object.entries(value)) walk(item, `${path}.${key}`);
  };
  for (const [key, value] of Object.entries(action.with)) {
    if (action.type === 'template.render' && key === 'template') continue;
    if (action.type === 'jq.filter' && key === 'filter' && action.with.args !== undefined) continue;
    walk(value, `with.${key}`);
  }
  return out;
}

function checkText(text: string, field: string, scope: Scope, sink: ErrorSink): void {
  for (const match of text.matchAll(REFERENCE)) {
    const reference = match[0];
    const parts = (match[1] ?? '').split('.');
    const [head, name, kind, output] = parts;
    if (head === 'params' && name !== undefined && parts.length === 2 && !scope.params.has(name)) {
      const hint = didYouMeanSuffix(name, scope.params);
      sink.field(field, `param '${name}' is not declared in params${hint}`, reference);
    }
    if (head !== 'steps' || name === undefined) continue;
    const target = scope.byRef.get(name);
    if (target === undefined) {
      sink.field(field, `step '${name}' does not exist${didYouMeanSuffix(name, scope.byRef.keys())}`, reference);
    } else if (!scope.before.has(target.name)) {
      sink.field(field, `step '${name}' is not upstream of this step (add it to depends)`, reference);
    } else if (kind === 'outputs' && output !== undefined && parts.length === 4) {
      const declared = declaredOutputs(target);
      if (declared !== undefined && !declared.has(output)) {
        const hint = didYouMeanSuffix(output, declared);
        sink.field(field, `step '${name}' declares no output '${output}'${hint}`, reference);
      }
    }
  }
}

/** The names `${steps.<step>.outputs.<name>}` can read, or `undefined` when they cannot be known before the run. */
function declaredOutputs(step: NormalizedStep): Set<string> | undefined {
  const action = step.action;
  if (action?.type === 'dag.run' || action?.type === 'dag.enqueue') return undefined;
  if (step.foreach !== undefined && step.foreach.collect === undefined) return undefined;
  const names = new Set(step.outputs);
  if (step.output?.kind === 'variable') names.add(step.output.name);
  if (step.output?.kind === 'fields') for (const field of step.output.fields) names.add(field.name);
  for (const name of Object.keys(step.foreach?.collect ?? {})) names.add(name);
  for (const name of [...(step.approval?.input ?? []), ...(step.approval?.required ?? [])]) names.add(name);
  if (action?.type === 'human.task') {
    const properties = action.form?.properties;
    if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return undefined;
    for (const name of Object.keys(properties)) names.add(name);
  }
  return names;
}
