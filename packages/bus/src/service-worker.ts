import { randomUUID } from 'node:crypto';
import { type OpCatalog, type ServiceName } from '@dagu-mcp/contracts';
import { Job, UnrecoverableError, Worker } from 'bullmq';
import { type Redis } from 'ioredis';
import { bindLogger, describeError, SILENT_LOGGER, type BusLogger } from './bus-logger';
import { DEFAULT_BUS_PREFIX, encodeReplyMessage, queueNameOf } from './bus-protocol';
import { bullKeysOf, handoffKeysOf, HandoffLane, JobCompleter, rawJobOf, type HandedOffJob } from './handoff';
import { type HandlerMap } from './handler-context';
import { processBusJob, type JobInput, type JobOutcome } from './job-processor';
import { closeRedisConnection, openRedisConnection, waitUntilReady } from './redis-connection';

/** Options of {@link ServiceWorker}. */
export interface ServiceWorkerOptions<C extends OpCatalog> {
  /** The service whose queue this worker consumes (`QUEUE_NAMES[service]`). */
  service: ServiceName;
  /** The service's op catalog: schemas both sides validate with. */
  catalog: C;
  /** One handler per op of `catalog`. */
  handlers: HandlerMap<C>;
  /** `redis://host:port[/db]` of the bus. */
  redisUrl: string;
  /** BullMQ key prefix; default `dagu`. */
  prefix?: string;
  /**
   * Jobs handled at once by this replica on each path, default 16: as many
   * slots for jobs handed straight to it (handoff/handoff-lane.ts) and as many for
   * jobs BullMQ's Worker fetches from `wait` (only used while every slot is
   * busy, and for retries and recovered jobs), so at most twice this.
   */
  concurrency?: number;
  /** How long a job's lock lives without renewal, in ms; default 10000. A killed worker's job is recovered after it. */
  lockDurationMs?: number;
  /** How often stalled jobs (lock lost) are moved back to waiting, in ms; default 5000. */
  stalledIntervalMs?: number;
  /**
   * How long this replica's hand-off slots outlive it unrenewed, in ms;
   * default 1000 (renewed every third of it). After a crash, callers skip its
   * slots once this passed; the requests handed to it until then (at most
   * one per free slot) are moved back to `wait` by a live replica's next
   * refresh, so they are answered about `aliveTtlMs * 4/3` late.
   */
  aliveTtlMs?: number;
  /**
   * Whether callers may hand requests straight to this replica's idle slots
   * (handoff/handoff-lane.ts); default true. With false, every job this replica
   * takes is fetched by BullMQ's Worker (three Redis hops instead of one).
   */
  handoff?: boolean;
  /** pino-like logger; default silent. */
  logger?: BusLogger;
}

/** A reply ready to go, on the request's `replyTo`; useless after `deadline` (epoch ms). */
interface ReadyReply {
  channel: string;
  message: string;
  deadline: number;
}

/**
 * How a job's processing ended, never a rejected promise (see `started`):
 * the reply not yet sent, if any, and the failure to give BullMQ, if any.
 */
interface Processed {
  reply?: ReadyReply;
  failure?: Error;
}

/** A bus job as BullMQ hands it over: data not trusted until parsed, no return value. */
type BusJob = Job<unknown, void, string>;

/**
 * The service side of the bus: runs each job of the service's queue through
 * {@link processBusJob} and PUBLISHes the reply on the request's `replyTo`
 * before the job is marked completed (so the caller's latency does not
 * include BullMQ's completion bookkeeping).
 *
 * Jobs come two ways. Most are handed straight to one of this replica's idle
 * slots by the caller's insert script ({@link HandoffLane}): already active
 * and locked for this replica, they are run at once (locks extended while
 * they run); a success is then published, completed and its slot freed by
 * one script (handoff/job-complete.ts), anything else is published and failed with
 * BullMQ's own `Job` methods. The others (every slot busy, retries,
 * recovered jobs) are fetched by a BullMQ Worker.
 *
 * Fast path: a job starts when BullMQ emits `active` (the moment it is moved
 * to active and locked), not when BullMQ later calls the processor: with
 * concurrency > 1 an idle BullMQ worker first tries to fetch one more job, a
 * whole Redis round trip, before it processes the one it has. The processor
 * then just awaits that same run, so BullMQ still completes, fails, retries,
 * locks and recovers the job exactly as usual.
 *
 * A replica killed mid-job leaves the job `active` until its lock expires
 * (`lockDurationMs`); another replica's stalled check then moves it back to
 * waiting once (`maxStalledCount: 1`), where it is dropped if its deadline
 * has passed. A read is then run again (handlers must be safe to run twice,
 * CONTRIBUTING §6); a mutation is not: it is answered `resource_unavailable`
 * with `details.outcome: "unknown"` (job-processor.ts, `stalledCount`).
 */
export class ServiceWorker<C extends OpCatalog> {
  private readonly logger: BusLogger;
  private connection: Redis | undefined;
  private worker: Worker<unknown, void, string> | undefined;
  private blocking: Redis | undefined;
  private lane: HandoffLane | undefined;
  private completer: JobCompleter | undefined;
  /** This replica's hand-off worker id (the lock tokens of its handed-off jobs start with it). */
  private readonly workerId = randomUUID();
  /** Runs started on `active`, by job id, until BullMQ's processor picks them up. */
  private readonly started = new Map<string, Promise<Processed>>();
  private state: 'new' | 'starting' | 'started' | 'closed' = 'new';

  constructor(private readonly options: ServiceWorkerOptions<C>) {
    this.logger = bindLogger(options.logger ?? SILENT_LOGGER, { module: 'service-worker', service: options.service });
  }

  /**
   * Connects and starts taking jobs. Resolves once the worker is running;
   * while Redis is down it waits (the connection retries by itself). Call once.
   *
   * @throws Error when called twice or closed while starting.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('ServiceWorker.start() may be called once.');
    this.state = 'starting';
    const { service, redisUrl } = this.options;
    const prefix = this.options.prefix ?? DEFAULT_BUS_PREFIX;
    const connection = openRedisConnection(redisUrl, 'worker', `${prefix}:worker:${queueNameOf(service)}`, this.logger);
    this.connection = connection;
    await waitUntilReady(connection);
    const worker = new Worker<unknown, void, string>(queueNameOf(service), (job: BusJob) => this.processor(job), {
      connection,
      prefix,
      concurrency: this.options.concurrency ?? 16,
      lockDuration: this.lockDurationMs(),
      stalledInterval: this.options.stalledIntervalMs ?? 5_000,
      maxStalledCount: 1,
      autorun: false,
    });
    worker.on('active', (job: BusJob) => {
      if (job.id !== undefined) this.started.set(job.id, this.execute(inputOf(job), true));
    });
    worker.on('error', (error: Error) => this.logger.warn({ error: error.message }, 'bus worker error'));
    worker.on('stalled', (jobId: string) => this.logger.warn({ jobId }, 'bus job stalled; moved back to waiting'));
    this.worker = worker;
    worker.run().catch((error: unknown) => this.logger.error({ error: describeError(error) }, 'bus worker stopped'));
    await worker.waitUntilReady();
    if (this.options.handoff !== false) await this.startLane(worker, connection, prefix);
    if (this.state !== 'starting') throw new Error('ServiceWorker was closed while starting.');
    this.state = 'started';
    this.logger.info({ queue: queueNameOf(service), handoff: this.options.handoff !== false }, 'bus worker started');
  }

  /** Opens the lane's blocking connection and advertises this replica's slots. */
  private async startLane(worker: Worker<unknown, void, string>, connection: Redis, prefix: string): Promise<void> {
    const { service, redisUrl } = this.options;
    const blocking = openRedisConnection(redisUrl, 'worker', `${prefix}:handoff:${queueNameOf(service)}`, this.logger);
    this.blocking = blocking;
    await waitUntilReady(blocking);
    const lane = new HandoffLane({
      prefix,
      queueName: queueNameOf(service),
      workerId: this.workerId,
      concurrency: this.options.concurrency ?? 16,
      lockDurationMs: this.lockDurationMs(),
      queueKeys: bullKeysOf(worker, ['wait', 'active', 'marker', 'events', 'meta', 'paused']),
      ...(this.options.aliveTtlMs !== undefined ? { aliveTtlMs: this.options.aliveTtlMs } : {}),
      commands: connection,
      blocking,
      logger: this.logger,
      run: (job) => this.runHandedOff(job),
    });
    this.lane = lane;
    const completionKeys = bullKeysOf(worker, ['active', 'events', 'stalled', 'meta', 'wait', 'prioritized']);
    this.completer = new JobCompleter(connection, {
      ...completionKeys,
      idle: handoffKeysOf(prefix, queueNameOf(service)).idle,
    });
    await lane.start();
  }

  /** True when started, connected and taking jobs. */
  isReady(): boolean {
    return this.state === 'started' && this.connection?.status === 'ready' && this.worker?.isRunning() === true;
  }

  /**
   * Graceful stop (CONTRIBUTING §13): takes no new job, waits for the jobs in
   * hand to finish and reply, then closes the connections. Idempotent.
   */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    await this.lane?.close();
    if (this.blocking !== undefined) this.blocking.disconnect(false);
    try {
      await this.worker?.close();
    } catch (error) {
      this.logger.warn({ error: describeError(error) }, 'bus worker close failed');
    }
    this.started.clear();
    if (this.connection !== undefined) await closeRedisConnection(this.connection);
  }

  /** BullMQ's processor: awaits the run begun on `active` (or begins it) and rethrows its failure. */
  private async processor(job: BusJob): Promise<void> {
    const early = job.id === undefined ? undefined : this.started.get(job.id);
    if (job.id !== undefined) this.started.delete(job.id);
    const processed = await (early ?? this.execute(inputOf(job), true));
    if (processed.failure !== undefined) throw processed.failure;
  }

  private lockDurationMs(): number {
    return this.options.lockDurationMs ?? 10_000;
  }

  /**
   * Runs a job handed to this replica and finishes it with this replica's
   * token. A success (every bus job is `removeOnComplete`) is published,
   * completed and its slot given back by one script (handoff/job-complete.ts); any
   * other end is published, then failed or completed with BullMQ's `Job`
   * methods, as BullMQ's Worker does for the jobs it fetches (a transient
   * failure with attempts left is so retried by BullMQ). The lock is extended
   * every half lock duration while the job runs, and a job that waited in the
   * lane longer than half of it is first checked to still hold its lock (else
   * it is skipped: the stalled check gave it to another worker). Never
   * rejects: a completion or lock extension that fails (lock lost, Redis
   * down) is logged, and BullMQ's stalled check then recovers the job.
   *
   * @returns true when the slot was released here (`HandoffLane.releaseSlot`).
   */
  private async runHandedOff(handed: HandedOffJob): Promise<boolean> {
    const worker = this.worker;
    const completer = this.completer;
    if (worker === undefined || completer === undefined) return false;
    let job: BusJob | undefined;
    const bullJob = (): BusJob => (job ??= Job.fromJSON<unknown, void, string>(worker, rawJobOf(handed), handed.id));
    const lockMs = this.lockDurationMs();
    const extend = async (): Promise<boolean> => {
      try {
        if ((await bullJob().extendLock(handed.token, lockMs)) !== 0) return true;
        this.logger.warn({ jobId: handed.id }, 'bus job lost its lock; another worker may run it');
      } catch (error) {
        this.logger.warn({ jobId: handed.id, error: describeError(error) }, 'bus job lock could not be extended');
      }
      return false;
    };
    // An entry that waited in the lane (its lock runs from the hand-off) is run only if it still holds its
    // lock: after a long outage of this replica's blocking connection the stalled check may have moved it on.
    if (Date.now() - handed.timestamp > lockMs / 2 && !(await extend())) return false;
    const renew = setInterval(() => void extend(), lockMs / 2);
    const opts = parseJson(handed.opts);
    try {
      const processed = await this.execute(handedOffInput(handed, opts), false);
      clearInterval(renew);
      const reply =
        processed.reply !== undefined && Date.now() < processed.reply.deadline ? processed.reply : undefined;
      if (processed.failure === undefined && removesOnComplete(opts)) {
        try {
          await completer.complete(worker.toKey(handed.id), handed.id, handed.token, reply, this.lane?.releaseSlot());
        } catch (error) {
          this.logger.warn({ jobId: handed.id, error: describeError(error) }, 'bus job could not be completed');
        }
        return true;
      }
      if (reply !== undefined) await this.publish(reply, handed.id);
      if (processed.failure !== undefined) await bullJob().moveToFailed(processed.failure, handed.token, false);
      else await bullJob().moveToCompleted(undefined, handed.token, false);
    } catch (error) {
      this.logger.warn({ jobId: handed.id, error: describeError(error) }, 'bus job could not be completed');
    } finally {
      clearInterval(renew);
    }
    return false;
  }

  /**
   * Runs one job through its handler. With `publishNow` the reply is
   * published before this resolves (BullMQ's path); without, it is returned
   * for the caller to send with the completion. Never rejects (a run begun
   * on `active` is awaited only later, and a rejection nobody awaits yet would
   * be an unhandled one): a failure for BullMQ comes back as `failure`.
   */
  private async execute(job: JobInput, publishNow: boolean): Promise<Processed> {
    try {
      const processed = processedOf(
        await processBusJob(this.options.catalog, this.options.handlers, job, this.logger),
        job.jobId,
      );
      if (!publishNow || processed.reply === undefined) return processed;
      if (Date.now() < processed.reply.deadline) await this.publish(processed.reply, job.jobId);
      return processed.failure === undefined ? {} : { failure: processed.failure };
    } catch (error) {
      return { failure: error instanceof Error ? error : new Error(String(error)) };
    }
  }

  /**
   * Publishes a reply and waits for Redis to take it, so BullMQ's completion
   * script is sent only afterwards: Redis writes pub/sub messages after the
   * commands of its current loop, and a completion script read together with
   * the PUBLISH would delay the caller's reply by its run time. A failure is
   * logged, not thrown (the caller then answers itself at its deadline), and
   * while Redis is down the wait ends at the deadline: the reply is useless after it.
   */
  private async publish(reply: ReadyReply, jobId: string): Promise<void> {
    const connection = this.connection;
    if (connection === undefined) return;
    const published = connection.publish(reply.channel, reply.message).then(
      () => undefined,
      (error: unknown) => this.logger.warn({ jobId, error: describeError(error) }, 'bus reply could not be published'),
    );
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, Math.max(0, reply.deadline - Date.now()));
    });
    try {
      await Promise.race([published, expired]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * What to do after a job's handler ran: the reply to send (if any, while its
 * deadline has not passed) and the failure to give BullMQ (if any).
 */
function processedOf(outcome: JobOutcome, jobId: string): Processed {
  switch (outcome.kind) {
    case 'drop':
      return {};
    case 'retry':
      return { failure: outcome.error };
    case 'reply': {
      const reply = {
        channel: outcome.replyTo,
        message: encodeReplyMessage(jobId, outcome.reply),
        deadline: outcome.deadline,
      };
      if (!outcome.failJob) return { reply };
      const reason = outcome.reply.ok ? 'failed' : `${outcome.reply.error.code}: ${outcome.reply.error.message}`;
      return { reply, failure: new UnrecoverableError(reason) };
    }
  }
}

/** The processor's input of a job BullMQ fetched. */
function inputOf(job: BusJob): JobInput {
  return {
    data: job.data,
    jobId: job.id ?? '',
    attemptsMade: job.attemptsMade,
    maxAttempts: job.opts.attempts ?? 1,
    stalledCount: job.stalledCounter,
  };
}

/** The processor's input of a handed-off job (always its first attempt); unparsable JSON becomes `undefined`. */
function handedOffInput(handed: HandedOffJob, opts: unknown): JobInput {
  return { data: parseJson(handed.data), jobId: handed.id, attemptsMade: 0, maxAttempts: attemptsOf(opts) };
}

/** Whether a job's options remove it once completed (`removeOnComplete: true`, as `jobOptionsFor` sets). */
function removesOnComplete(opts: unknown): boolean {
  return typeof opts === 'object' && opts !== null && 'removeOnComplete' in opts && opts.removeOnComplete === true;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function attemptsOf(opts: unknown): number {
  if (typeof opts !== 'object' || opts === null || !('attempts' in opts)) return 1;
  return typeof opts.attempts === 'number' && opts.attempts >= 1 ? opts.attempts : 1;
}
