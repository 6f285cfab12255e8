/**
 * Dependency graph helpers over normalized steps (`depends` = step names):
 * cycle detection (dagu-model.md §4 — this project rejects cycles at
 * validation, Dagu only at run time) and the execution order the engine uses.
 */
import type { NormalizedDag, NormalizedStep } from './dag.types';

/**
 * Finds dependency cycles. Each is returned as the path of step names along
 * `depends` edges (`a` depends on `b`: `['a', 'b', 'a']`), starting at the
 * cycle's first declared step. Dependencies on unknown names are ignored.
 */
export function findCycles(steps: readonly NormalizedStep[]): string[][] {
  const byName = new Map(steps.map((step) => [step.name, step]));
  const state = new Map<string, 'active' | 'done'>();
  const cycles: string[][] = [];
  const stack: string[] = [];
  const visit = (name: string): void => {
    state.set(name, 'active');
    stack.push(name);
    for (const dep of byName.get(name)?.depends ?? []) {
      if (!byName.has(dep)) continue;
      const seen = state.get(dep);
      if (seen === 'active') {
        // The stack is the chain of `depends` edges walked so far; `a -> b` reads "a depends on b".
        const path = stack.slice(stack.indexOf(dep));
        cycles.push([...path, path[0] ?? dep]);
      } else if (seen === undefined) visit(dep);
    }
    stack.pop();
    state.set(name, 'done');
  };
  for (const step of steps) if (!state.has(step.name)) visit(step.name);
  return cycles.map(rotateToFirstDeclared(steps));
}

function rotateToFirstDeclared(steps: readonly NormalizedStep[]): (cycle: string[]) => string[] {
  const order = new Map(steps.map((step, index) => [step.name, index]));
  return (cycle) => {
    const ring = cycle.slice(0, -1);
    let start = 0;
    ring.forEach((name, index) => {
      if ((order.get(name) ?? 0) < (order.get(ring[start] ?? name) ?? 0)) start = index;
    });
    const rotated = [...ring.slice(start), ...ring.slice(0, start)];
    return [...rotated, rotated[0] ?? ''];
  };
}

/**
 * The order in which steps can run: every step after all steps it depends on;
 * among steps that are ready together, declaration order. Works on a DAG or a
 * foreach body (`{steps}`).
 *
 * @throws Error when the steps have a dependency cycle or depend on an unknown
 *   step — impossible for a DAG that `parseDagSpec` reported valid.
 */
export function topologicalOrder(dag: Pick<NormalizedDag, 'steps'>): NormalizedStep[] {
  const { steps } = dag;
  const index = new Map(steps.map((step, i) => [step.name, i]));
  const remaining = steps.map((step) => new Set(step.depends));
  for (const [i, deps] of remaining.entries()) {
    for (const dep of deps) {
      if (!index.has(dep)) throw new Error(`step ${steps[i]?.name ?? ''} depends on non-existent step ${dep}`);
    }
  }
  const done = new Set<string>();
  const order: NormalizedStep[] = [];
  while (order.length < steps.length) {
    const next = steps.find((step, i) => !done.has(step.name) && [...(remaining[i] ?? [])].every((d) => done.has(d)));
    if (!next) throw new Error('dependency cycle detected');
    done.add(next.name);
    order.push(next);
  }
  return order;
}

/**
 * Every step `name` depends on, directly or transitively (not `name` itself
 * unless a cycle leads back to it). Unknown names are ignored.
 */
export function upstreamOf(steps: readonly Pick<NormalizedStep, 'name' | 'depends'>[], name: string): Set<string> {
  const byName = new Map(steps.map((step) => [step.name, step]));
  const found = new Set<string>();
  const stack = [...(byName.get(name)?.depends ?? [])];
  for (let dep = stack.pop(); dep !== undefined; dep = stack.pop()) {
    if (found.has(dep)) continue;
    found.add(dep);
    stack.push(...(byName.get(dep)?.depends ?? []));
  }
  return found;
}

/**
 * The steps an approval's `rewind_to` runs again (dagu-model §3 `approval`;
 * this project's semantics, README "Checkpoints"): `from` (the rewind
 * target), `to` (the approval step) and every step on a dependency path
 * between them — steps `to` depends on that depend on `from`. Empty when
 * `from` is neither `to` nor upstream of it (the validator refuses that).
 */
export function rewindSet(
  steps: readonly Pick<NormalizedStep, 'name' | 'depends'>[],
  from: string,
  to: string,
): Set<string> {
  if (from === to) return new Set([to]);
  const upstream = upstreamOf(steps, to);
  if (!upstream.has(from)) return new Set();
  const chosen = new Set([from, to]);
  for (const name of upstream) if (upstreamOf(steps, name).has(from)) chosen.add(name);
  return chosen;
}
