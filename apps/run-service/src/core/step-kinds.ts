import type { StepKind } from '@dagu-mcp/dag-spec';

/**
 * Every step kind the DAG spec model can produce (`NormalizedStep.kind`,
 * dagu-model §3 step types), with what it is. The record is typed by
 * `StepKind`, so a kind added to dag-spec fails to compile here until it is
 * listed — and then fails the engine's start until an executor is registered
 * for it (executors/step-executor-registry.ts).
 */
const STEP_KIND_NAMES: Readonly<Record<StepKind, string>> = {
  command: 'command steps (`run:` / `command:` lines)',
  script: 'script steps (`script:` or multi-line `run:`)',
  http: 'http.request steps',
  sub_dag: 'sub-DAG steps (dag.run / dag.enqueue / call)',
  foreach: 'foreach steps',
  human_task: 'human.task steps',
  approval: 'approval steps',
  host_action: 'host actions (jq.filter, template.render, file.*, docker.run) run by a helper process',
};

/** True when `kind` is a step kind of the spec model. */
export function isStepKind(kind: string): kind is StepKind {
  return Object.hasOwn(STEP_KIND_NAMES, kind);
}

/** Every step kind, in a stable order. */
export const STEP_KINDS: readonly StepKind[] = Object.keys(STEP_KIND_NAMES).filter(isStepKind);

/** What a step kind is, for messages (`sub_dag` → "sub-DAG steps (dag.run / dag.enqueue / call)"). */
export function describeStepKind(kind: StepKind): string {
  return STEP_KIND_NAMES[kind];
}
