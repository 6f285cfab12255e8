import { topologicalOrder, type HandlerKind, type NormalizedDag, type NormalizedStep } from '@dagu-mcp/dag-spec';
import type { NodeSpec } from './run-types';
import { parseDagSpecMemo } from './dag-spec-memo';

/**
 * The nodes of a DAG in execution order: its steps in topological order
 * (declaration order among steps ready together), then its lifecycle
 * handlers in the order they can run: init, success, failure, abort, exit.
 * `seq` numbers them from 0; it is the node's key in `run_steps`.
 *
 * The `wait` handler (numbered last, so older runs keep their `seq`s) runs
 * when the run parks at a checkpoint (human.task, approval).
 */

/** Lifecycle handlers this engine runs, in order. */
export const HANDLER_ORDER: readonly HandlerKind[] = ['init', 'success', 'failure', 'abort', 'exit', 'wait'];

/** The run-detail key of a handler (`handlers.onInit`, …, dagu-model §5). */
export function handlerKey(kind: HandlerKind): string {
  return `on${kind.charAt(0).toUpperCase()}${kind.slice(1)}`;
}

/** Steps and handlers of `dag`. */
export interface DagNodes {
  steps: NodeSpec[];
  handlers: Map<HandlerKind, NodeSpec>;
  /** Every node, steps then handlers. */
  all: NodeSpec[];
}

/** Builds the nodes of a valid DAG. */
export function nodesOfDag(dag: NormalizedDag): DagNodes {
  const steps: NodeSpec[] = topologicalOrder(dag).map((step, seq) => ({ seq, name: step.name, step }));
  const handlers = new Map<HandlerKind, NodeSpec>();
  let seq = steps.length;
  for (const kind of HANDLER_ORDER) {
    const step = dag.handlerOn[kind];
    if (step !== undefined) handlers.set(kind, { seq: seq++, name: step.name, step, handler: kind });
  }
  return { steps, handlers, all: [...steps, ...handlers.values()] };
}

/**
 * Parses a run's spec snapshot again (the engine always runs the snapshot).
 *
 * @throws Error when the snapshot no longer validates (the dag-spec package
 *   changed its rules since the run was created).
 */
export function dagOfSnapshot(spec: string, name: string): NormalizedDag {
  const result = parseDagSpecMemo(spec, name);
  if (!result.valid || result.dag === undefined)
    throw new Error(`the run's spec snapshot is no longer valid: ${result.errors.join('; ')}`);
  return result.dag;
}

/**
 * The steps to run again when retrying from `stepName`: that step, and with
 * `includeDownstream` every step that depends on it directly or transitively.
 */
export function retrySet(steps: readonly NormalizedStep[], stepName: string, includeDownstream: boolean): Set<string> {
  const chosen = new Set([stepName]);
  if (!includeDownstream) return chosen;
  let grew = true;
  while (grew) {
    grew = false;
    for (const step of steps) {
      if (!chosen.has(step.name) && step.depends.some((dep) => chosen.has(dep))) {
        chosen.add(step.name);
        grew = true;
      }
    }
  }
  return chosen;
}
