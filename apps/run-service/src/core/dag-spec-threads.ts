import { extname, join } from 'node:path';
import { prescanYaml, type DagSpecResult } from '@dagu-mcp/dag-spec';
import { BudgetedThreads } from '@dagu-mcp/runtime';
import type { DagSpecThreadLimits } from '../config/run-config';
import { heldDagSpec, holdDagSpec, parseDagSpecMemo } from './dag-spec-memo';

export type { DagSpecThreadLimits };

let threads: { pool: BudgetedThreads; limits: DagSpecThreadLimits } | undefined;

/**
 * Turns on parsing of large specs on threads for this process (run-service's main; tests
 * of the sources pass `execArgv` loading TypeScript). Until it is called,
 * {@link parseDagSpecOffThread} parses in place.
 */
export function useDagSpecThreads(limits: DagSpecThreadLimits, execArgv?: readonly string[]): void {
  const file = join(__dirname, `spec-parse-thread${extname(__filename)}`);
  threads = { pool: new BudgetedThreads(file, limits, execArgv), limits };
}

/** Ends the threads (shutdown, tests); later parses are in place. */
export async function closeDagSpecThreads(): Promise<void> {
  const current = threads;
  threads = undefined;
  await current?.pool.close();
}

/**
 * `parseDagSpecMemo(spec, name)` without holding the event loop for a large spec: a spec of `threadMinChars` or more that the pre-scan lets through is parsed on a
 * thread with a time and heap budget, and its result is held in the memo, so the engine's
 * in-place look-ups of the same snapshot (planning an attempt, sub-DAGs) find it. Small
 * specs, specs the pre-scan refuses (answered at once) and every spec before
 * {@link useDagSpecThreads} are parsed in place, as before.
 *
 * @returns `parseDagSpec`'s result (frozen); past the budget `valid: false` with one error
 *   naming the bound (`invalid YAML: the spec took longer than 10000 ms to parse (the parse
 *   time is bounded)`, `… needed more than 256 MB to parse (the parse memory is bounded)`)
 */
export async function parseDagSpecOffThread(spec: string, name: string): Promise<DagSpecResult> {
  const current = threads;
  if (current === undefined || spec.length < current.limits.threadMinChars || prescanYaml(spec) !== undefined)
    return parseDagSpecMemo(spec, name);
  const hit = heldDagSpec(spec, name);
  if (hit !== undefined) return hit;
  const outcome = await current.pool.run({ name, spec });
  if ('answer' in outcome) {
    const answer = threadAnswerOf(outcome.answer);
    if (answer.result !== undefined)
      return holdDagSpec(spec, name, answer.result, answer.weight, Number.POSITIVE_INFINITY);
    return refused(`could not be parsed: ${answer.message}`);
  }
  if (outcome.fault === 'time')
    return refused(`took longer than ${current.limits.budgetMs} ms to parse (the parse time is bounded)`);
  if (outcome.fault === 'memory')
    return refused(`needed more than ${current.limits.memoryMb} MB to parse (the parse memory is bounded)`);
  return refused(`could not be parsed: ${outcome.message}`);
}

function refused(fault: string): DagSpecResult {
  return { valid: false, errors: [`invalid YAML: the spec ${fault}`], warnings: [], subDags: [] };
}

/** The thread's answer (spec-parse-thread.ts): the result and its weight, or why there is none. */
function threadAnswerOf(message: unknown): { result?: DagSpecResult; weight: number; message: string } {
  if (typeof message !== 'object' || message === null) return { weight: 0, message: 'no answer' };
  if ('ok' in message && message.ok === true && 'result' in message) {
    const weight =
      'weight' in message && typeof message.weight === 'number' ? message.weight : Number.POSITIVE_INFINITY;
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- our own thread sends parseDagSpec's value, structured-cloned
    return { result: message.result as DagSpecResult, weight, message: '' };
  }
  return {
    weight: 0,
    message: 'message' in message && typeof message.message === 'string' ? message.message : 'no answer',
  };
}
