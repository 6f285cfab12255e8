import { extname, join } from 'node:path';
import { prescanYaml } from '@dagu-mcp/dag-spec';
import { BudgetedThreads } from '@dagu-mcp/runtime';
import { assertValidDagName, validateDagChange, type DagChangeCheck } from './dag-validation';
import type { SpecParseLimits } from '../config/dag-config';

export type { SpecParseLimits };

/** Defaults: 64 KiB, 10 s, 256 MB, 1 thread (the services run on small machines; see the decision). */
export const DEFAULT_SPEC_PARSE_LIMITS: SpecParseLimits = {
  workerMinChars: 64 * 1024,
  budgetMs: 10_000,
  memoryMb: 256,
  threads: 1,
};

/** The worker's answer (spec-parse-worker.ts): the check, or why there is none. */
function answerOf(message: unknown): { check?: DagChangeCheck; message?: string } {
  if (typeof message !== 'object' || message === null) return {};
  if ('ok' in message && message.ok === true && 'check' in message)
    // eslint-disable-next-line @typescript-eslint/no-unsafe-type-assertion -- our own thread sends validateDagChange's value, structured-cloned
    return { check: message.check as DagChangeCheck };
  return 'message' in message && typeof message.message === 'string' ? { message: message.message } : {};
}

/**
 * Validates DAG specs without holding dag-service's event loop for long: every spec is bounded first by the pre-scan of `@dagu-mcp/dag-spec` (in
 * `parseDagSpec`), and a spec of {@link SpecParseLimits.workerMinChars} or more is
 * parsed in a worker thread with a time and a heap budget, so one author's large spec
 * never delays another caller's read. A thread whose job ran over its budget, or that
 * died, is ended and never reused.
 */
export class SpecParsers {
  private readonly threads: BudgetedThreads;

  /**
   * @param limits - default {@link DEFAULT_SPEC_PARSE_LIMITS}
   * @param execArgv - `execArgv` of the threads (tests running TypeScript sources); default the process's
   */
  constructor(
    private readonly limits: SpecParseLimits = DEFAULT_SPEC_PARSE_LIMITS,
    execArgv?: readonly string[],
  ) {
    this.threads = new BudgetedThreads(join(__dirname, `spec-parse-worker${extname(__filename)}`), limits, execArgv);
  }

  /**
   * `validateDagChange(name, spec)`, in-thread or in a worker by size. Never rejects on a
   * bad spec: a spec past the time or heap budget is `valid: false` with an error naming
   * the bound (`invalid YAML: the spec took longer than 10000 ms to validate (the
   * validation time is bounded)`, `… needed more than 256 MB …`).
   *
   * @throws DaguError `invalid_tool_input` on field `name` for a name that breaks dagu-model §2.
   */
  async validate(name: string, spec: string): Promise<DagChangeCheck> {
    // The pre-scan is linear and stops at the first bound passed: a text it refuses (the
    // nesting attack of docs/security.md) is answered here, without waiting for a thread.
    if (spec.length < this.limits.workerMinChars || prescanYaml(spec) !== undefined)
      return validateDagChange(name, spec);
    assertValidDagName(name);
    const outcome = await this.threads.run({ name, spec });
    const answer = 'answer' in outcome ? answerOf(outcome.answer) : {};
    if (answer.check !== undefined) return answer.check;
    const fault =
      'fault' in outcome
        ? outcome.fault === 'time'
          ? `took longer than ${this.limits.budgetMs} ms to validate (the validation time is bounded)`
          : outcome.fault === 'memory'
            ? `needed more than ${this.limits.memoryMb} MB to validate (the validation memory is bounded)`
            : `could not be validated: ${outcome.message}`
        : `could not be validated: ${answer.message ?? 'no answer'}`;
    return {
      validation: { valid: false, errors: [`invalid YAML: the spec ${fault}`], errorLocations: [] },
      write: undefined,
    };
  }

  /** Ends the idle threads; a job under way ends its own thread when it finishes. */
  close(): Promise<void> {
    return this.threads.close();
  }
}
