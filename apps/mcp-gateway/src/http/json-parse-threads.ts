import { Worker } from 'node:worker_threads';

/**
 * `JSON.parse` of a request body under body-parser's strict rule: the text (after JSON
 * whitespace or a BOM, which the decoder drops) is an object or an array.
 *
 * @throws SyntaxError when it is not, or is not JSON
 */
export function parseStrict(text: string): unknown {
  const first = text.trimStart().charAt(0);
  if (first !== '{' && first !== '[') throw new SyntaxError('the body is not a JSON object or array');
  return JSON.parse(text) as unknown;
}

/**
 * The thread's whole program: decode the bytes with the request's charset and parse them
 * with {@link parseStrict} (its source, so there is one rule). It is evaluated from this
 * string (`eval: true`), so the built gateway and the tests running the TypeScript sources
 * start the same thread without a file path to resolve.
 */
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const parseStrict = ${parseStrict.toString()};
parentPort.on('message', ({ id, bytes, charset }) => {
  let answer;
  try {
    answer = { id, ok: true, value: parseStrict(new TextDecoder(charset).decode(bytes)) };
  } catch (err) {
    answer = { id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
  parentPort.postMessage(answer);
});
`;

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (err: Error) => void;
}

/** Why a body could not be parsed: its text is not JSON (the gateway answers a parse error). */
export class JsonSyntaxError extends Error {}

/**
 * Parses large JSON request bodies on threads beside the gateway's event loop: reading a megabyte body as text and `JSON.parse`-ing it takes some 7–9 ms of
 * one core on a small machine, which every other caller on the same replica would wait
 * behind; on a thread, the event loop only takes the parsed value back (a structured
 * clone, about a third of that). Jobs are spread round robin over `threads` threads,
 * started when first needed and `unref`'d (they never keep the process alive). A thread
 * that fails is replaced; its jobs are rejected, never left waiting.
 */
export class JsonParseThreads {
  private readonly workers: (Worker | undefined)[];
  private readonly pending = new Map<number, { worker: Worker } & Pending>();
  private nextId = 0;
  private nextWorker = 0;

  /** @param threads - how many threads, default 1 (a replica has a core or two; see docs/security.md) */
  constructor(threads = 1) {
    this.workers = new Array<Worker | undefined>(Math.max(1, threads)).fill(undefined);
  }

  /**
   * Decodes `bytes` as `charset` (a WHATWG encoding label: `utf-8`, `utf-16le`, …) and parses
   * them as JSON, on a thread. `bytes` is transferred to the thread: the caller must not use
   * it afterwards.
   *
   * @returns the parsed value (a structured clone of `JSON.parse`'s)
   * @throws JsonSyntaxError when the text is not JSON (its message is `JSON.parse`'s);
   *   Error when the thread failed (it is replaced for the next job)
   */
  parse(bytes: Uint8Array, charset: string): Promise<unknown> {
    const index = this.nextWorker;
    this.nextWorker = (this.nextWorker + 1) % this.workers.length;
    const worker = this.workers[index] ?? this.start(index);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { worker, resolve, reject });
      // Transfer, not copy, when the bytes own their whole buffer (a concatenated body does).
      const own = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
      const payload = own ? bytes : bytes.slice();
      // A SharedArrayBuffer is not transferred (the thread shares it anyway).
      const transfer = payload.buffer instanceof ArrayBuffer ? [payload.buffer] : [];
      worker.postMessage({ id, bytes: payload, charset }, transfer);
    });
  }

  /** Ends every thread; jobs still waiting are rejected. */
  async close(): Promise<void> {
    const workers = this.workers.filter((w): w is Worker => w !== undefined);
    this.workers.fill(undefined);
    await Promise.all(workers.map((w) => w.terminate()));
  }

  private start(index: number): Worker {
    const worker = new Worker(THREAD_SOURCE, { eval: true });
    worker.unref();
    worker.on('message', (message: { id: number; ok: boolean; value?: unknown; message?: string }) => {
      const job = this.pending.get(message.id);
      if (job === undefined) return;
      this.pending.delete(message.id);
      if (message.ok) job.resolve(message.value);
      else job.reject(new JsonSyntaxError(message.message ?? 'invalid JSON'));
    });
    const fail = (err: Error): void => {
      if (this.workers[index] === worker) this.workers[index] = undefined;
      for (const [id, job] of this.pending) {
        if (job.worker !== worker) continue;
        this.pending.delete(id);
        job.reject(err);
      }
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the JSON parse thread exited (${code})`)));
    this.workers[index] = worker;
    return worker;
  }
}
