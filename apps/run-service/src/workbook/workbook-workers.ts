import { extname, join } from 'node:path';
import { Worker } from 'node:worker_threads';

/** One parse for a worker thread (`workbook-worker.ts`). */
export interface ParseJob {
  readonly bytes: Buffer;
  readonly path: string;
  readonly password?: string;
  readonly profileRowCap?: number;
}

/** How a parse ended: the worker's answer, the budget passed, or the thread died (`error`: e.g. out of heap). */
export type ParseOutcome =
  | { readonly kind: 'answer'; readonly message: unknown }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'error'; readonly error: Error };

/**
 * The worker threads that parse workbooks, kept warm between reads (a new
 * thread spends most of a small read loading ExcelJS). A thread is used by
 * one parse at a time; the caller bounds how many run at once
 * (`WorkbookSlots`). A thread whose parse ran over its budget, or that
 * failed, is terminated and never reused; at most `keep` idle threads stay.
 * Each thread's heap is capped at `memoryMb`.
 */
export class WorkbookWorkers {
  private readonly idle: Worker[] = [];
  private closed = false;

  constructor(
    private readonly options: {
      readonly keep: number;
      readonly memoryMb: number;
      readonly execArgv?: readonly string[];
    },
  ) {}

  /** Parses one workbook within `budgetMs`; never rejects. */
  async parse(job: ParseJob, budgetMs: number): Promise<ParseOutcome> {
    const worker = this.idle.pop() ?? this.spawn();
    const outcome = await new Promise<ParseOutcome>((resolve) => {
      const done = (result: ParseOutcome): void => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        resolve(result);
      };
      const onMessage = (message: unknown): void => done({ kind: 'answer', message });
      const onError = (error: Error): void => done({ kind: 'error', error });
      const onExit = (code: number): void =>
        done({ kind: 'error', error: new Error(`workbook worker exited with code ${code} before answering`) });
      const timer = setTimeout(() => done({ kind: 'timeout' }), budgetMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({
        bytes: job.bytes,
        path: job.path,
        ...(job.password !== undefined ? { password: job.password } : {}),
        ...(job.profileRowCap !== undefined ? { profileRowCap: job.profileRowCap } : {}),
      });
    });
    if (outcome.kind === 'answer' && !this.closed && this.idle.length < this.options.keep) this.idle.push(worker);
    else void worker.terminate();
    return outcome;
  }

  /** Ends the idle threads; a parse under way ends its own thread when it finishes. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.idle.splice(0).map((w) => w.terminate()));
  }

  private spawn(): Worker {
    const file = join(__dirname, `workbook-worker${extname(__filename)}`);
    const worker = new Worker(file, {
      resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb },
      ...(this.options.execArgv !== undefined ? { execArgv: [...this.options.execArgv] } : {}),
    });
    // An idle thread must not keep run-service alive at exit.
    worker.unref();
    return worker;
  }
}
