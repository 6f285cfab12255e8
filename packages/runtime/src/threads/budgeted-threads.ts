import { Worker } from 'node:worker_threads';

/** The budget of {@link BudgetedThreads}. */
export interface ThreadBudget {
  /** Most time one job may take, ms; past it the thread is ended. */
  readonly budgetMs: number;
  /** Heap cap of each thread (`resourceLimits.maxOldGenerationSizeMb`), MB. */
  readonly memoryMb: number;
  /** Most threads working at once; later jobs wait for one. */
  readonly threads: number;
}

/**
 * How one job ended: the thread's answer (its first message), or why there is none —
 * `time` (over `budgetMs`), `memory` (over `memoryMb`), `failed` (it threw or exited;
 * `message` says how).
 */
export type ThreadOutcome =
  { readonly answer: unknown } | { readonly fault: 'time' | 'memory' | 'failed'; readonly message: string };

/**
 * Worker threads that run one job at a time each, within a time and a heap budget, so
 * that work on authors' text (a large DAG spec) never holds a service's event loop
 *. The thread program at `file` answers each message it gets with one
 * message. Threads are kept warm between jobs, started when needed and `unref`'d (an idle
 * one never keeps the process alive); a thread whose job ran over its budget, failed or
 * exited is ended and never reused. Used by dag-service (validations) and run-service
 * (parsing specs a run starts from).
 */
export class BudgetedThreads {
  private readonly idle: Worker[] = [];
  private readonly waiting: Array<() => void> = [];
  private running = 0;
  private closed = false;

  /**
   * @param file - the thread program (a `.js` file, or `.ts` with `execArgv` loading TypeScript)
   * @param budget - time, heap and thread count
   * @param execArgv - `execArgv` of the threads (tests running TypeScript sources); default the process's
   */
  constructor(
    private readonly file: string,
    private readonly budget: ThreadBudget,
    private readonly execArgv?: readonly string[],
  ) {}

  /**
   * Sends `message` (structured-cloned) to a free thread, waiting for one when
   * `budget.threads` are busy. Never rejects: a fault is an outcome.
   */
  async run(message: unknown): Promise<ThreadOutcome> {
    while (this.running >= this.budget.threads) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.running += 1;
    try {
      return await this.inThread(message);
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

  private async inThread(message: unknown): Promise<ThreadOutcome> {
    const worker = this.idle.pop() ?? this.spawn();
    const outcome = await new Promise<ThreadOutcome>((resolve) => {
      const done = (result: ThreadOutcome): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        resolve(result);
      };
      const onMessage = (answer: unknown): void => done({ answer });
      const onError = (error: Error): void =>
        done(
          'code' in error && error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? { fault: 'memory', message: error.message }
            : { fault: 'failed', message: error.message },
        );
      const onExit = (): void => done({ fault: 'failed', message: 'the thread ended' });
      const timer = setTimeout(
        () => done({ fault: 'time', message: `over ${this.budget.budgetMs} ms` }),
        this.budget.budgetMs,
      );
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage(message);
    });
    if ('answer' in outcome && !this.closed) this.idle.push(worker);
    else void worker.terminate();
    return outcome;
  }

  private spawn(): Worker {
    const worker = new Worker(this.file, {
      resourceLimits: { maxOldGenerationSizeMb: this.budget.memoryMb },
      ...(this.execArgv !== undefined ? { execArgv: [...this.execArgv] } : {}),
    });
    // An idle thread must not keep the service alive at exit.
    worker.unref();
    return worker;
  }
}
