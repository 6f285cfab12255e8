/**
 * A DAG's `steps` (list, or map whose keys are step names) → normalized steps
 * with names generated, uniqueness checked (§2) and `depends` resolved to step
 * names (§3–4): in a `chain` each step depends on the previous one and an
 * explicit `depends` is an error; otherwise a dependency may name a step by
 * name or id. Dependency cycles are errors here. Used for foreach bodies too.
 */
import type { NormalizedStep } from './dag.types';
import { findCycles, upstreamOf } from './dependencies';
import type { ErrorSink } from './error-sink';
import { parseStep, type ParsedStep, type StepContext, type StepDefaults } from './step.parser';
import { didYouMeanSuffix } from './suggest-names';
import { asMap, type YamlMap } from './yaml-values';

/** Options for one list of steps. */
export interface StepListOptions {
  chain: boolean;
  inForeach: boolean;
  defaults: StepDefaults;
  /** Field named in shape errors (`steps`, `foreach.steps`). */
  field: string;
}

interface Entry {
  map: YamlMap;
  keyName?: string;
  sink: ErrorSink;
}

/** Parses and resolves a list of steps; every problem is recorded on `sink`. */
export function parseStepList(value: unknown, options: StepListOptions, sink: ErrorSink): NormalizedStep[] {
  const context: StepContext = {
    inForeach: options.inForeach,
    inHandler: false,
    defaults: options.defaults,
    parseBody: (body, bodySink) =>
      parseStepList(body, { ...options, chain: false, inForeach: true, field: 'foreach.steps' }, bodySink),
  };
  const parsed = collectEntries(value, options.field, sink).map((entry) => ({
    entry,
    parsed: parseStep(entry.map, entry.keyName, context, entry.sink),
  }));
  const steps = parsed.map(({ parsed: p }) => p.step);
  nameUnnamedSteps(steps);
  checkUniqueness(parsed.map(({ entry, parsed: p }) => ({ sink: entry.sink, parsed: p })));
  resolveDepends(
    parsed.map(({ entry, parsed: p }) => ({ sink: entry.sink, parsed: p })),
    options.chain,
    sink,
  );
  for (const cycle of findCycles(steps)) sink.plain(`dependency cycle detected: ${cycle.join(' -> ')}`);
  checkRewindTargets(
    parsed.map(({ entry, parsed: p }) => ({ sink: entry.sink, step: p.step })),
    steps,
  );
  return steps;
}

/**
 * `approval.rewind_to` must name the approval step itself or a step it depends
 * on, directly or transitively: a rejection runs that part of the graph again
 * (README "Checkpoints" of run-service). Unknown names are reported by
 * {@link resolveDepends}.
 */
function checkRewindTargets(
  items: { sink: ErrorSink; step: NormalizedStep }[],
  steps: readonly NormalizedStep[],
): void {
  const names = new Set(steps.map((step) => step.name));
  for (const { sink, step } of items) {
    const target = step.approval?.rewindTo;
    if (target === undefined || !names.has(target) || target === step.name) continue;
    if (!upstreamOf(steps, step.name).has(target)) {
      sink.field('approval.rewind_to', 'must be this step or a step it depends on, directly or transitively', target);
    }
  }
}

function collectEntries(value: unknown, field: string, sink: ErrorSink): Entry[] {
  const label = (map: YamlMap | undefined, fallback: string): string => {
    const name = map?.get('name') ?? map?.get('id');
    return typeof name === 'string' || typeof name === 'number' ? `step '${name}'` : fallback;
  };
  const map = asMap(value);
  if (map) {
    return [...map].flatMap(([keyName, raw]): Entry[] => {
      const stepMap = raw === null ? new Map<string, unknown>() : asMap(raw);
      if (stepMap) return [{ map: stepMap, keyName, sink: sink.child(`step '${keyName}'`) }];
      sink.field(`${field}.${keyName}`, 'step must be a map', raw);
      return [];
    });
  }
  if (!Array.isArray(value)) {
    sink.field(field, 'must be a list of steps or a map of step names to steps', value);
    return [];
  }
  return value.flatMap((raw: unknown, index: number): Entry[] => {
    const stepMap = asMap(raw);
    if (stepMap) return [{ map: stepMap, sink: sink.child(label(stepMap, `${field}[${index}]`)) }];
    sink.field(`${field}[${index}]`, 'step must be a map', raw);
    return [];
  });
}

/** Steps with neither name nor id get `step_<position>` (skipping names already taken). */
function nameUnnamedSteps(steps: NormalizedStep[]): void {
  const taken = new Set(steps.flatMap((step) => [step.name, step.id ?? '']));
  steps.forEach((step, index) => {
    if (step.name !== '') return;
    let name = `step_${index + 1}`;
    for (let n = 2; taken.has(name); n++) name = `step_${index + 1}_${n}`;
    taken.add(name);
    step.name = name;
  });
}

function checkUniqueness(items: { sink: ErrorSink; parsed: ParsedStep }[]): void {
  const nameOwners = new Map<string, number[]>();
  items.forEach(({ parsed }, index) => {
    nameOwners.set(parsed.step.name, [...(nameOwners.get(parsed.step.name) ?? []), index]);
  });
  const seenNames = new Set<string>();
  const seenIds = new Set<string>();
  for (const [index, { sink, parsed }] of items.entries()) {
    const { name, id } = parsed.step;
    if (seenNames.has(name)) sink.field('name', 'duplicate step name', name);
    seenNames.add(name);
    if (id === undefined) continue;
    if (seenIds.has(id)) sink.field('id', 'duplicate step id', id);
    seenIds.add(id);
    // A step named after its own (duplicate) id is already reported above.
    const others = (nameOwners.get(id) ?? []).filter((other) => other !== index && items[other]?.parsed.step.id !== id);
    if (others.length > 0) sink.field('id', 'step id equals the name of another step', id);
  }
}

function resolveDepends(items: { sink: ErrorSink; parsed: ParsedStep }[], chain: boolean, listSink: ErrorSink): void {
  const byRef = new Map<string, string>();
  for (const { parsed } of items) if (parsed.step.id !== undefined) byRef.set(parsed.step.id, parsed.step.name);
  for (const { parsed } of items) byRef.set(parsed.step.name, parsed.step.name);
  items.forEach(({ sink, parsed }, index) => {
    const { step } = parsed;
    if (chain) {
      if (parsed.depends !== undefined) sink.field('depends', 'depends is not allowed in a chain DAG', parsed.depends);
      const previous = items[index - 1]?.parsed.step.name;
      step.depends = previous === undefined ? [] : [previous];
    } else {
      const resolved = new Set<string>();
      for (const ref of parsed.depends ?? []) {
        const target = byRef.get(ref);
        if (target === undefined) {
          const others = [...byRef.keys()].filter((name) => name !== step.name && name !== step.id);
          listSink.plain(`step ${step.name} depends on non-existent step ${ref}${didYouMeanSuffix(ref, others)}`);
        } else resolved.add(target);
      }
      step.depends = [...resolved];
    }
    const rewindTo = step.approval?.rewindTo;
    if (step.approval && rewindTo !== undefined) {
      const target = byRef.get(rewindTo);
      if (target === undefined) sink.field('approval.rewind_to', 'names no step of this DAG', rewindTo);
      else step.approval.rewindTo = target;
    }
  });
}
