import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { prescanYaml } from '@dagu-mcp/dag-spec';
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
 * Validates DAG specs without holding dag-service's event loop for long (issue 42 item
 * 2): every spec is bounded first by the pre-scan of `@dagu-mcp/dag-spec` (in
 * `parseDagSpec`), and a spec of {@link SpecParseLimits.workerMinChars} or more is
 * parsed in a worker thread with a time and a heap budget, so one author's large spec
 * never delays another caller's read. A thread whose job ran over its budget, or that
 * died, is ended and never reused.
 */
export class SpecParsers {
  private readonly idle: Worker[] = [];
  private readonly waiting: Array<() => void> = [];
  private running = 0;
  private closed = false;

  /**
   * @param limits - default {@link DEFAULT_SPEC_PARSE_LIMITS}
   * @param execArgv - `execArgv` of the threads (tests running TypeScript sources); default the process's
   */
  constructor(
    private readonly limits: SpecParseLimits = DEFAULT_SPEC_PARSE_LIMITS,
    private readonly execArgv?: readonly string[],
  ) {}

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
    // nesting attack of issue 42) is answered here, without waiting for a thread.
    if (spec.length < this.limits.workerMinChars || prescanYaml(spec) !== undefined)
      return validateDagChange(name, spec);
    assertValidDagName(name);
    await this.slot();
    try {
      return await this.inWorker(name, spec);
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }

  /** Ends the idle threads; a job under way ends its own thread when it finishes. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((worker) => worker.terminate()));
  }

  private async slot(): Promise<void> {
    while (this.running >= this.limits.threads) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running += 1;
  }

  private async inWorker(name: string, spec: string): Promise<DagChangeCheck> {
    const worker = this.idle.pop() ?? this.spawn();
    const outcome = await new Promise<{ answer?: unknown; fault?: string }>((resolve) => {
      const done = (result: { answer?: unknown; fault?: string }): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        resolve(result);
      };
      const onMessage = (answer: unknown): void => done({ answer });
      const onError = (error: Error): void =>
        done({
          fault:
            'code' in error && error.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? `needed more than ${this.limits.memoryMb} MB to validate (the validation memory is bounded)`
              : `could not be validated: ${error.message}`,
        });
      const onExit = (): void => done({ fault: 'could not be validated: the validating thread ended' });
      const timer = setTimeout(
        () =>
          done({ fault: `took longer than ${this.limits.budgetMs} ms to validate (the validation time is bounded)` }),
        this.limits.budgetMs,
      );
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ name, spec });
    });
    const answer = answerOf(outcome.answer);
    if (answer.check !== undefined) {
      if (!this.closed) this.idle.push(worker);
      else void worker.terminate();
      return answer.check;
    }
    void worker.terminate();
    const fault = outcome.fault ?? `could not be validated: ${answer.message ?? 'no answer'}`;
    return {
      validation: { valid: false, errors: [`invalid YAML: the spec ${fault}`], errorLocations: [] },
      write: undefined,
    };
  }

  private spawn(): Worker {
    const file = join(__dirname, `spec-parse-worker${extname(__filename)}`);
    const worker = new Worker(file, {
      resourceLimits: { maxOldGenerationSizeMb: this.limits.memoryMb },
      ...(this.execArgv !== undefined ? { execArgv: [...this.execArgv] } : {}),
    });
    // An idle thread must not keep dag-service alive at exit.
    worker.unref();
    return worker;
  }
}
