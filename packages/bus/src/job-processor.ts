import {
  BusRequestSchema,
  DaguError,
  isTransientCode,
  type BusReply,
  type OpCatalog,
  type OpDefinition,
} from '@dagu-mcp/contracts';
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { internalError, invalidInputError, outcomeUnknownError, unknownOpError } from './bus-errors';
import { bindLogger, describeError, type BusLogger } from './bus-logger';
import { createHandlerContext, type HandlerContext, type HandlerMap } from './handler-context';
import { payloadHashOf } from './payload-hash';

/**
 * What to do with one job, decided without touching Redis (so it is unit-tested
 * alone and benchmarked as the Redis-free baseline):
 * - `reply`: publish `reply` on `replyTo` unless `deadline` passed meanwhile;
 *   `failJob` moves the job to BullMQ's failed set afterwards (unexpected
 *   errors and transient errors out of attempts), else it completes.
 * - `retry`: a transient failure of a non-mutation with attempts and time
 *   left; rethrow so BullMQ tries again (no reply yet). A mutation is never
 *   retried (CONTRIBUTING §6): its transient failure is answered at once.
 * - `drop`: past its deadline (the caller was answered already) or malformed
 *   beyond replying; no handler runs, no reply is sent.
 */
export type JobOutcome =
  | { kind: 'reply'; replyTo: string; deadline: number; reply: BusReply; failJob: boolean }
  | { kind: 'retry'; error: DaguError }
  | { kind: 'drop'; reason: 'deadline_passed' | 'malformed_request' };

/** The job facts the processor needs: BullMQ's data, id and attempt counters. */
export interface JobInput {
  data: unknown;
  jobId: string;
  /** Attempts already made and failed before this one (BullMQ `attemptsMade`). */
  attemptsMade: number;
  /** Attempts allowed in total (BullMQ `opts.attempts`, default 1). */
  maxAttempts: number;
  /**
   * How many times BullMQ's stalled check found this job's worker gone and
   * put the job back to run again (BullMQ `stalledCounter`); default 0.
   */
  stalledCount?: number;
}

/**
 * A handler seen through a runtime op name. Declared as a method so that every
 * typed `OpHandler` is assignable to it (method parameters are bivariant); this
 * is sound here because the payload is parsed with the same op's request
 * schema right before the call.
 */
type UntypedHandler = { handle(payload: unknown, ctx: HandlerContext): Promise<unknown> }['handle'];

function lookupOp(catalog: OpCatalog, op: string): OpDefinition | undefined {
  return Object.hasOwn(catalog, op) ? catalog[op] : undefined;
}

function lookupHandler(handlers: Readonly<Record<string, UntypedHandler>>, op: string): UntypedHandler | undefined {
  return Object.hasOwn(handlers, op) ? handlers[op] : undefined;
}

function replyToOf(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null || !('replyTo' in data)) return undefined;
  return typeof data.replyTo === 'string' && data.replyTo.length > 0 ? data.replyTo : undefined;
}

function failed(error: DaguError): BusReply {
  return { ok: false, error: error.toServiceError() };
}

/**
 * Runs one bus job through its handler and decides the {@link JobOutcome}.
 * Never throws: every failure becomes an outcome. Order: parse the envelope,
 * drop it past its deadline, find the op, validate the payload
 * (`invalid_tool_input` with the zod path as `field`), run the handler,
 * validate its reply (`internal_error` when it does not match).
 */
export async function processBusJob<C extends OpCatalog>(
  catalog: C,
  handlers: HandlerMap<C>,
  job: JobInput,
  logger: BusLogger,
): Promise<JobOutcome> {
  const envelope = BusRequestSchema.safeParse(job.data);
  if (!envelope.success) {
    const replyTo = replyToOf(job.data);
    logger.error({ jobId: job.jobId, replyTo }, 'bus job has a malformed request envelope');
    if (replyTo === undefined) return { kind: 'drop', reason: 'malformed_request' };
    // No trustworthy deadline: answer right away (the 1 s only lets the publish go out).
    return { kind: 'reply', replyTo, deadline: Date.now() + 1000, reply: failed(internalError()), failJob: true };
  }
  const request = envelope.data;
  const { op, replyTo, deadline } = request;
  const lateByMs = Date.now() - deadline;
  if (lateByMs >= 0) {
    logger.info({ jobId: job.jobId, op, lateByMs }, 'bus job dropped past its deadline');
    return { kind: 'drop', reason: 'deadline_passed' };
  }
  const definition = lookupOp(catalog, op);
  const handler = lookupHandler(handlers, op);
  if (definition === undefined || handler === undefined) {
    logger.error({ jobId: job.jobId, op }, 'bus job names an unknown op');
    return { kind: 'reply', replyTo, deadline, reply: failed(unknownOpError(op)), failJob: true };
  }
  if (definition.mutation && (job.stalledCount ?? 0) > 0) {
    // The replica that took this mutation died while running it (BullMQ's stalled check put it back): it may
    // have been applied. Not run again (no automatic retry of a mutation); the caller learns its fate is unknown.
    logger.warn(
      { jobId: job.jobId, op, stalledCount: job.stalledCount },
      'bus mutation not run again after its replica stopped',
    );
    return { kind: 'reply', replyTo, deadline, reply: failed(outcomeUnknownError(op)), failJob: true };
  }
  const payload = definition.request.safeParse(request.payload);
  if (!payload.success) {
    return {
      kind: 'reply',
      replyTo,
      deadline,
      reply: failed(invalidInputError(op, payload.error, request.payload)),
      failJob: false,
    };
  }
  const jobLogger = bindLogger(logger, {
    op,
    jobId: job.jobId,
    ...(request.requestId !== undefined ? { requestId: request.requestId } : {}),
  });
  const keyed = definition.mutation ? request.idempotencyKey : undefined;
  const { context: handlerContext, dispose } = createHandlerContext({
    principal: request.principal,
    requestId: request.requestId,
    idempotencyKey: keyed,
    payloadHash: keyed === undefined ? undefined : payloadHashOf(op, payload.data),
    deadline,
    op,
    jobId: job.jobId,
    traceContext: request.traceContext,
    logger: jobLogger,
  });
  // The handler runs in a CONSUMER span, child of the caller's (bus request `traceContext`).
  const parent = propagation.extract(ROOT_CONTEXT, request.traceContext);
  const span = trace.getTracer('dagu-mcp').startSpan(
    `handle ${op}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: { 'messaging.system': 'bullmq', 'messaging.message.id': job.jobId, 'rpc.method': op },
    },
    parent,
  );
  let result: unknown;
  try {
    result = await context.with(trace.setSpan(parent, span), () => handler(payload.data, handlerContext));
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    return outcomeOfThrow(error, job, definition.mutation, replyTo, deadline, jobLogger);
  } finally {
    span.end();
    dispose();
  }
  const reply = definition.reply.safeParse(result);
  if (!reply.success) {
    jobLogger.error({ issues: reply.error.issues }, 'bus handler returned a reply that fails its schema');
    return { kind: 'reply', replyTo, deadline, reply: failed(internalError()), failJob: true };
  }
  // The raw result travels: the caller parses it with the same schema, once.
  return { kind: 'reply', replyTo, deadline, reply: { ok: true, data: result }, failJob: false };
}

function outcomeOfThrow(
  error: unknown,
  job: JobInput,
  mutation: boolean,
  replyTo: string,
  deadline: number,
  logger: BusLogger,
): JobOutcome {
  if (error instanceof DaguError) {
    const transient = isTransientCode(error.code);
    if (transient && !mutation && job.attemptsMade + 1 < job.maxAttempts && Date.now() < deadline) {
      logger.warn({ code: error.code, attemptsMade: job.attemptsMade + 1 }, 'bus handler failed transiently; retrying');
      return { kind: 'retry', error };
    }
    return { kind: 'reply', replyTo, deadline, reply: failed(error), failJob: transient };
  }
  logger.error({ error: describeError(error) }, 'bus handler threw an unexpected error');
  return { kind: 'reply', replyTo, deadline, reply: failed(internalError()), failJob: true };
}
