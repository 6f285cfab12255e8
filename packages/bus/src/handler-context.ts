import { type OpCatalog, type Principal, type TraceContext } from '@dagu-mcp/contracts';
import { type z } from 'zod';
import { deadlinePassedError } from './bus-errors';
import { type BusLogger } from './bus-logger';

/**
 * What a handler gets besides its payload (docs/architecture.md "Request flow").
 * - `deadline`: epoch ms after which the caller has been told "unavailable".
 * - `signal`: aborted at the deadline (reason: a `resource_unavailable` DaguError);
 *   pass it to I/O that can be cancelled.
 * - `remainingMs()`: ms left before the deadline, never negative.
 * - `assertBeforeDeadline()`: throws a `resource_unavailable` DaguError once the
 *   deadline has passed; a mutation calls it right before it commits, so a
 *   caller that was told "failed" never finds the change applied later.
 * - `logger`: bound to `{service, op, jobId}`.
 * - `requestId`: the gateway request the job serves (bus envelope), if any.
 * - `idempotencyKey` / `payloadHash`: the caller's idempotency key of a
 *   mutation and the SHA-256 of its canonical payload (set only with a key).
 */
export interface HandlerContext {
  readonly principal: Principal;
  readonly requestId?: string | undefined;
  readonly idempotencyKey?: string | undefined;
  readonly payloadHash?: string | undefined;
  readonly deadline: number;
  readonly op: string;
  readonly jobId: string;
  readonly traceContext: TraceContext;
  readonly signal: AbortSignal;
  remainingMs(): number;
  assertBeforeDeadline(): void;
  readonly logger: BusLogger;
}

/**
 * The handler of op `K` of catalog `C`: receives the parsed payload (the
 * request schema's output) and returns the reply data (the reply schema's
 * input; the caller parses it). Throw a `DaguError` for an answer with a code.
 */
export type OpHandler<C extends OpCatalog, K extends keyof C> = (
  payload: z.output<C[K]['request']>,
  ctx: HandlerContext,
) => Promise<z.input<C[K]['reply']>>;

/** One handler per op of the catalog: a missing handler fails to compile (CONTRIBUTING §5). */
export type HandlerMap<C extends OpCatalog> = { readonly [K in keyof C]: OpHandler<C, K> };

/** The fields a context is built from: the parsed request envelope and the job. */
export interface HandlerContextInput {
  principal: Principal;
  requestId?: string | undefined;
  idempotencyKey?: string | undefined;
  payloadHash?: string | undefined;
  deadline: number;
  op: string;
  jobId: string;
  traceContext: TraceContext;
  logger: BusLogger;
}

/**
 * Builds a handler's context. The abort signal and its deadline timer are
 * created only when a handler first reads `signal` (most never do, and an
 * AbortController per job is measurable on the fast path).
 *
 * @returns the context and `dispose`, which the caller must call once the
 *   handler settled (it clears the timer, if any).
 */
export function createHandlerContext(input: HandlerContextInput): { context: HandlerContext; dispose: () => void } {
  const { deadline } = input;
  const remainingMs = (): number => Math.max(0, deadline - Date.now());
  let controller: AbortController | undefined;
  let timer: NodeJS.Timeout | undefined;
  let disposed = false;
  const signal = (): AbortSignal => {
    if (controller === undefined) {
      controller = new AbortController();
      const left = remainingMs();
      if (left === 0) controller.abort(deadlinePassedError());
      else if (!disposed) {
        const armed = controller;
        timer = setTimeout(() => armed.abort(deadlinePassedError()), left);
      }
    }
    return controller.signal;
  };
  const context: HandlerContext = {
    principal: input.principal,
    requestId: input.requestId,
    idempotencyKey: input.idempotencyKey,
    payloadHash: input.payloadHash,
    deadline,
    op: input.op,
    jobId: input.jobId,
    traceContext: input.traceContext,
    get signal() {
      return signal();
    },
    remainingMs,
    assertBeforeDeadline: () => {
      if (Date.now() >= deadline) throw deadlinePassedError();
    },
    logger: input.logger,
  };
  return {
    context,
    dispose: () => {
      disposed = true;
      if (timer !== undefined) clearTimeout(timer);
    },
  };
}
