import { randomUUID } from 'node:crypto';
import {
  DaguError,
  MUTATION_OUTCOME_OP,
  MutationOutcomeReplySchema,
  SERVICE_NAMES,
  type BusReply,
  type BusRequest,
  type OpCatalog,
  type OpReply,
  type OpRequest,
  type Principal,
  type ServiceName,
  type TraceContext,
} from '@dagu-mcp/contracts';
import { Queue, type JobsOptions } from 'bullmq';
import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { z } from 'zod';
import { type Redis } from 'ioredis';
import {
  busUnavailableError,
  clientClosedError,
  deadlineExceededError,
  internalError,
  invalidInputError,
} from './bus-errors';
import { bindLogger, describeError, SILENT_LOGGER, type BusLogger } from './bus-logger';
import {
  attemptsOf,
  decodeReplyMessage,
  DEFAULT_BUS_PREFIX,
  DEFAULT_TIMEOUT_MS,
  jobOptionsFor,
  queueNameOf,
  replyChannelOf,
  resolveTimeoutMs,
} from './bus-protocol';
import { JobInserter, type InsertedAs } from './handoff';
import { PendingCalls } from './pending-calls';
import { currentIdempotencyKey, currentRequestId } from './request-scope';
import { resolvedOutcome, shouldResolveOutcome } from './mutation-outcome';
import { closeRedisConnection, neverReachedRedis, openRedisConnection, waitUntilReady } from './redis-connection';

/** Deadline of the `mutation.outcome` question asked after a mutation's deadline passed, ms. */
const OUTCOME_TIMEOUT_MS = 3000;
/** Wait before asking it, ms: a COMMIT issued right before the deadline has landed by then. */
const OUTCOME_GRACE_MS = 250;

/** Instrumentation scope of the bus spans (the same as `@dagu-mcp/runtime`'s). */
const TRACER_NAME = 'dagu-mcp';

/** The W3C trace context of the active OpenTelemetry context (`{}` without a propagator or span). */
export function activeTraceContext(): TraceContext {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return {
    ...(carrier.traceparent !== undefined ? { traceparent: carrier.traceparent } : {}),
    ...(carrier.tracestate !== undefined ? { tracestate: carrier.tracestate } : {}),
  };
}

/** Options of {@link BusClient}. */
export interface BusClientOptions {
  /** `redis://host:port[/db]` of the bus. */
  redisUrl: string;
  /** BullMQ key prefix; default `dagu`. Tests use a random one. */
  prefix?: string;
  /** Deadline of a call whose op sets none, in ms; default 10000. */
  defaultTimeoutMs?: number;
  /** pino-like logger; default silent. */
  logger?: BusLogger;
  /**
   * Whether jobs are inserted with the hand-off insert script (handoff/,
   * straight to an idle worker slot when there is one); default true. With
   * false every job is added with BullMQ's own `Queue.add`, so this client
   * writes none of BullMQ's keys itself (`BUS_HANDOFF=false`).
   */
  handoff?: boolean;
  /**
   * Whether a mutation call that went unanswered (deadline passed, or its
   * replica stopped) is resolved by asking the service `mutation.outcome`
   * before the caller is answered (the gateway: true; see
   * {@link BusClient.call}); default false: the bare deadline error.
   */
  resolveMutationOutcomes?: boolean;
}

/** Per-call options. */
export interface CallOptions {
  /** The authenticated caller; travels in the request, never a secret. */
  principal: Principal;
  /** This call's deadline in ms from now; default the op's `timeoutMs`, else the client's. */
  timeoutMs?: number;
  /**
   * W3C trace context to propagate; default the active OpenTelemetry context
   * (the span of this call when tracing is set up, else `{}`).
   */
  traceContext?: TraceContext;
  /** The id of the request this call serves, for the service's logs; default the current one (request-scope.ts). */
  requestId?: string;
  /** The caller's idempotency key, sent with mutations only; default the current request's (request-scope.ts). */
  idempotencyKey?: string;
}

/**
 * The gateway side of the bus: sends typed requests to a service's queue and
 * awaits the reply on its own pub/sub channel (see bus-protocol.ts).
 *
 * Connections: one for commands (no offline queue: while Redis is down a call
 * fails at once) and one subscriber; both reconnect by themselves and the
 * reply channel is re-subscribed on every reconnect. Jobs are inserted with
 * the lean script of handoff/job-insert.ts (same BullMQ job as `Queue.add`,
 * less work on the critical path), or with `Queue.add` itself when
 * `handoff` is false; the BullMQ `Queue` objects are kept for their keys and
 * their queue metadata.
 */
export class BusClient {
  /** This client's id; its replies arrive on `${prefix}:reply:${clientId}`. */
  readonly clientId: string = randomUUID();
  private readonly prefix: string;
  private readonly defaultTimeoutMs: number;
  private readonly logger: BusLogger;
  private readonly replyChannel: string;
  private readonly pending = new PendingCalls();
  private readonly queues = new Map<ServiceName, Queue>();
  private commands: Redis | undefined;
  private subscriber: Redis | undefined;
  private subscribed = false;
  private inserter: JobInserter | undefined;
  private readonly delivered: Record<InsertedAs, number> = { 'handed-off': 0, queued: 0 };
  private state: 'new' | 'starting' | 'started' | 'closed' = 'new';

  constructor(private readonly options: BusClientOptions) {
    this.prefix = options.prefix ?? DEFAULT_BUS_PREFIX;
    this.defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.logger = bindLogger(options.logger ?? SILENT_LOGGER, { module: 'bus-client', clientId: this.clientId });
    this.replyChannel = replyChannelOf(this.prefix, this.clientId);
  }

  /**
   * Connects, subscribes to the reply channel and opens the service queues.
   * Resolves once all are ready; while Redis is down it waits (connections
   * retry with capped backoff). Call once.
   *
   * @throws Error when called twice, or when `close()` ran meanwhile.
   */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new Error('BusClient.start() may be called once.');
    this.state = 'starting';
    const name = `${this.prefix}:bus-client:${this.clientId}`;
    const commands = openRedisConnection(this.options.redisUrl, 'commands', `${name}:commands`, this.logger);
    const subscriber = openRedisConnection(this.options.redisUrl, 'subscriber', `${name}:replies`, this.logger);
    this.commands = commands;
    this.subscriber = subscriber;
    if (this.options.handoff !== false) this.inserter = new JobInserter(commands, this.prefix);
    subscriber.on('message', (_channel: string, message: string) => this.onReply(message));
    subscriber.on('close', () => {
      this.subscribed = false;
    });
    subscriber.on('ready', () => void this.subscribe());
    await Promise.all([waitUntilReady(commands), waitUntilReady(subscriber)]);
    await this.subscribe();
    for (const service of SERVICE_NAMES) {
      const queue = new Queue(queueNameOf(service), { connection: commands, prefix: this.prefix });
      queue.on('error', (error: Error) => this.logger.warn({ service, error: error.message }, 'bus queue error'));
      this.queues.set(service, queue);
    }
    await Promise.all([...this.queues.values()].map((queue) => queue.waitUntilReady()));
    if (this.state !== 'starting') throw new Error('BusClient was closed while starting.');
    this.state = 'started';
  }

  /** True when started, both connections are up and the reply channel is subscribed. */
  isReady(): boolean {
    return (
      this.state === 'started' &&
      this.subscribed &&
      this.commands?.status === 'ready' &&
      this.subscriber?.status === 'ready'
    );
  }

  /**
   * Round trip to Redis, for readiness probes.
   *
   * @returns the round-trip time in ms.
   * @throws DaguError `resource_unavailable` when the bus is not ready or Redis does not answer.
   */
  async ping(): Promise<number> {
    const commands = this.commands;
    if (!this.isReady() || commands === undefined) throw busUnavailableError();
    const started = performance.now();
    try {
      await commands.ping();
    } catch {
      throw busUnavailableError();
    }
    return performance.now() - started;
  }

  /**
   * Calls op `op` of `service` and resolves with its reply data, validated by
   * the op's reply schema (docs/architecture.md "Request flow", steps 3–5).
   * A mutation sends the caller's idempotency key (`options.idempotencyKey`,
   * else the request scope's); with `resolveMutationOutcomes`, an unanswered
   * mutation is resolved from the service's record (mutation-outcome.ts):
   * the recorded reply, or `resource_unavailable` with `details.outcome`.
   * A mutation is answered "not sent" (`resource_unavailable`, `details.dependency:
   * "redis"`, no `outcome`) only when its job is known not to be in Redis
   * ({@link neverReachedRedis}); an insert whose answer was lost waits for the
   * reply or the deadline like a sent call (dagu-model §10).
   *
   * @param payload - validated against the op's request schema before sending.
   * @returns the reply schema's output.
   * @throws DaguError `invalid_tool_input` (payload fails its schema, nothing sent),
   *   `resource_unavailable` (Redis down: at once; no reply by the deadline:
   *   "dag-service did not answer within 10000 ms.", with `details.outcome` for a
   *   resolved mutation), `internal_error` (reply fails its schema), or the service's own error code.
   */
  async call<C extends OpCatalog, K extends keyof C & string>(
    service: ServiceName,
    catalog: C,
    op: K,
    payload: OpRequest<C, K>,
    options: CallOptions,
  ): Promise<OpReply<C, K>> {
    if (!Object.hasOwn(catalog, op)) throw new DaguError('internal_error', `The catalog has no operation "${op}".`);
    const definition: C[K] = catalog[op];
    const checked = z.safeParse(definition.request, payload);
    if (!checked.success) throw invalidInputError(op, checked.error, payload);
    const timeoutMs = resolveTimeoutMs(options.timeoutMs, definition.timeoutMs, this.defaultTimeoutMs);
    const span = trace.getTracer(TRACER_NAME).startSpan(`bus ${service}.${op}`, {
      kind: SpanKind.CLIENT,
      attributes: {
        'messaging.system': 'bullmq',
        'messaging.destination.name': queueNameOf(service),
        'rpc.method': op,
      },
    });
    let reply: BusReply;
    const jobId = randomUUID();
    const key = definition.mutation ? (options.idempotencyKey ?? currentIdempotencyKey()) : undefined;
    try {
      reply = await context.with(trace.setSpan(context.active(), span), () =>
        this.dispatch(
          service,
          op,
          payload,
          options,
          timeoutMs,
          attemptsOf(definition),
          jobId,
          key,
          definition.carriesSecret,
          definition.mutation,
        ),
      );
      if (!reply.ok && this.resolves(definition) && shouldResolveOutcome(reply.error)) {
        reply = await this.resolveOutcome(
          service,
          op,
          jobId,
          options,
          new DaguError(reply.error.code, reply.error.message, reply.error),
        );
      }
    } catch (error) {
      if (this.resolves(definition) && error instanceof DaguError && shouldResolveOutcome(error)) {
        reply = await this.resolveOutcome(service, op, jobId, options, error).catch((resolved: unknown) => {
          span.setStatus({ code: SpanStatusCode.ERROR, message: String(resolved) });
          span.end();
          throw resolved;
        });
      } else {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
        span.end();
        throw error;
      }
    }
    if (!reply.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: reply.error.code });
    span.end();
    if (!reply.ok) {
      const { code, message, field, details } = reply.error;
      throw new DaguError(code, message, {
        ...(field !== undefined ? { field } : {}),
        ...(details !== undefined ? { details } : {}),
      });
    }
    const replySchema: C[K]['reply'] = definition.reply;
    const data = z.safeParse(replySchema, reply.data);
    if (!data.success) {
      this.logger.error({ service, op, issues: data.error.issues }, 'bus reply fails its schema');
      throw internalError();
    }
    return data.data;
  }

  /**
   * Sends `payload` as is (no schema, one attempt) and resolves with the
   * service's reply, successful or not.
   *
   * @param options.timeoutMs - default the client's `defaultTimeoutMs`.
   * @throws DaguError `resource_unavailable` when Redis is down or no reply came by the deadline.
   */
  callRaw(service: ServiceName, op: string, payload: unknown, options: CallOptions): Promise<BusReply> {
    const timeoutMs = resolveTimeoutMs(options.timeoutMs, undefined, this.defaultTimeoutMs);
    return this.dispatch(service, op, payload, options, timeoutMs, 1, randomUUID(), undefined);
  }

  private resolves(definition: { mutation: boolean }): boolean {
    return definition.mutation && this.options.resolveMutationOutcomes === true;
  }

  /**
   * After mutation job `jobId` went unanswered (deadline passed, or its
   * replica stopped mid-way), asks the owning service whether it committed
   * (`mutation.outcome`, answered from the mutation record written by the
   * change's own transaction; docs/decisions.md "Attribution and mutation
   * outcomes") and turns the answer into a truthful reply: the recorded
   * result when applied, else an error saying "applied" (reply lost), "not
   * applied", or — only when the service cannot be asked — "unknown".
   */
  private async resolveOutcome(
    service: ServiceName,
    op: string,
    jobId: string,
    options: CallOptions,
    original: DaguError,
  ): Promise<BusReply> {
    // A COMMIT sent just before the deadline may land just after it: let it land before asking.
    await new Promise((resolve) => setTimeout(resolve, OUTCOME_GRACE_MS));
    const asked: BusReply = await this.dispatch(
      service,
      MUTATION_OUTCOME_OP,
      { jobId },
      options,
      OUTCOME_TIMEOUT_MS,
      1,
      randomUUID(),
      undefined,
    ).catch((error: unknown) => ({
      ok: false,
      error: (error instanceof DaguError ? error : busUnavailableError()).toServiceError(),
    }));
    const parsed = asked.ok ? MutationOutcomeReplySchema.safeParse(asked.data) : undefined;
    this.logger.info(
      { service, op, jobId, applied: parsed?.success === true ? parsed.data.applied : 'unknown' },
      'bus mutation outcome resolved after its deadline',
    );
    // When the question failed for an outage, the unknown answer names it (dagu-model §10 `details.dependency`).
    const dependency = asked.ok ? undefined : asked.error.details?.dependency;
    const cause =
      typeof dependency === 'string'
        ? new DaguError(original.code, original.message, { details: { ...(original.details ?? {}), dependency } })
        : original;
    return resolvedOutcome(op, cause, parsed?.success === true ? parsed.data : undefined);
  }

  /**
   * How this client's requests reached their services so far: `handed-off`
   * straight to an idle worker slot, or `queued` for BullMQ's Worker
   * (handoff/job-insert.ts). For tests and diagnostics.
   */
  deliveryCounts(): Readonly<Record<InsertedAs, number>> {
    return { ...this.delivered };
  }

  /**
   * Stops the client: rejects every pending call with `resource_unavailable`
   * and closes the connections. Idempotent.
   */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.pending.rejectAll(clientClosedError());
    await Promise.all([...this.queues.values()].map((queue) => queue.close().catch(() => undefined)));
    this.queues.clear();
    await Promise.all(
      [this.commands, this.subscriber].map((redis) => (redis ? closeRedisConnection(redis) : Promise.resolve())),
    );
  }

  private dispatch(
    service: ServiceName,
    op: string,
    payload: unknown,
    options: CallOptions,
    timeoutMs: number,
    attempts: number | undefined,
    jobId: string,
    idempotencyKey: string | undefined,
    carriesSecret?: boolean,
    mutation?: boolean,
  ): Promise<BusReply> {
    const queue = this.queues.get(service);
    // Fail fast: no offline queueing, no waiting for a reconnect.
    if (queue === undefined || !this.isReady()) return Promise.reject(busUnavailableError());
    const requestId = options.requestId ?? currentRequestId();
    const request: BusRequest = {
      op,
      payload,
      principal: options.principal,
      deadline: Date.now() + timeoutMs,
      traceContext: options.traceContext ?? activeTraceContext(),
      replyTo: this.replyChannel,
      ...(requestId !== undefined ? { requestId } : {}),
      ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
    };
    const reply = this.pending.register(jobId, timeoutMs, () => {
      if (carriesSecret === true) this.removeUntaken(queue, jobId);
      return deadlineExceededError(service, timeoutMs);
    });
    this.insert(queue, op, request, jobOptionsFor(jobId, attempts, carriesSecret)).then(
      (as) => {
        this.delivered[as] += 1;
      },
      (error: unknown) => {
        if (mutation !== true || neverReachedRedis(error)) {
          this.logger.warn({ service, op, jobId, error: describeError(error) }, 'bus request could not be sent');
          this.pending.reject(jobId, busUnavailableError());
          return;
        }
        // The insert was written but its answer lost (Redis went away mid-command): the job may be queued and
        // may run before its deadline. "Not sent" would be a lie, so the call waits for its reply or its
        // deadline like any sent call, and an unanswered one is resolved from the service's record.
        this.logger.warn(
          { service, op, jobId, error: describeError(error) },
          'bus mutation insert lost its answer; waiting for the reply or the deadline',
        );
      },
    );
    return reply;
  }

  /**
   * Removes a job whose payload carries a secret once its caller gave up on
   * it, so the secret does not wait in Redis for a replica (none may come).
   * A job a replica holds (locked) is not removed here: that replica removes
   * it when it ends, whether it completes or fails (`jobOptionsFor`).
   */
  private removeUntaken(queue: Queue, jobId: string): void {
    queue.remove(jobId).catch((error: unknown) => {
      this.logger.debug({ jobId, error: describeError(error) }, 'bus job in hand of a replica; it removes it');
    });
  }

  /** Adds the job with the hand-off insert script, or with `Queue.add` when hand-off is off. */
  private async insert(queue: Queue, op: string, request: BusRequest, opts: JobsOptions): Promise<InsertedAs> {
    if (this.inserter !== undefined) return this.inserter.insert(queue, op, request, opts);
    await queue.add(op, request, opts);
    return 'queued';
  }

  private async subscribe(): Promise<void> {
    const subscriber = this.subscriber;
    if (subscriber === undefined || this.state === 'closed') return;
    try {
      await subscriber.subscribe(this.replyChannel);
      this.subscribed = subscriber.status === 'ready';
    } catch (error) {
      this.logger.warn({ error: describeError(error) }, 'bus reply channel subscribe failed');
    }
  }

  private onReply(raw: string): void {
    const message = decodeReplyMessage(raw);
    if (message === undefined) {
      this.logger.warn({ channel: this.replyChannel }, 'bus reply message is malformed');
      return;
    }
    if (!this.pending.resolve(message.id, message.reply)) {
      this.logger.debug({ jobId: message.id }, 'bus reply arrived after its call settled');
    }
  }
}
