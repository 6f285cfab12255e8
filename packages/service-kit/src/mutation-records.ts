import { DaguError, type OpCatalog, type MutationOutcomeReply, type MutationOutcomeRequest } from '@dagu-mcp/contracts';
import type { HandlerContext } from '@dagu-mcp/bus';
import {
  findIdempotent,
  isReplyRecorded,
  mutationOutcomeOf,
  mutationOutcomeOfRequest,
  storeMutationResult,
  type Logger,
  type Pool,
} from '@dagu-mcp/runtime';

/** What {@link withMutationRecords} needs. */
export interface MutationRecordDeps {
  readonly pool: Pool;
  readonly logger: Logger;
  /** Test hook (`TEST_EXIT_AFTER_COMMIT_OP`): exit right after a job of this op committed, before replying. */
  readonly exitAfterCommitOp?: string | undefined;
  /** How the hook ends the process; default `process.exit(137)` (as a SIGKILL would). */
  readonly exit?: () => void;
}

/**
 * Wraps every mutation handler of `catalog` (docs/decisions.md "Attribution
 * and mutation outcomes"):
 * - with an idempotency key (`ctx.idempotencyKey`), a use of the same key by
 *   the same principal within 24 h answers at once: the original reply when
 *   the payload hash matches, `conflict` on `idempotencyKey` when it does not,
 *   `resource_unavailable` with `details.outcome: "applied"` when the change
 *   committed but its reply was never recorded;
 * - after the handler returns, its reply is stored on the job's mutation
 *   rows (awaited when keyed, else off the reply path), so the gateway can
 *   answer a caller whose deadline passed with the original result
 *   (`mutation.outcome`) — unless the handler's own statement already
 *   stored it with the change (`markReplyRecorded`).
 * The change's own row is written by the handler's transaction (`recordMutation`).
 */
export function withMutationRecords<C extends OpCatalog, H extends object>(
  catalog: C,
  handlers: H,
  deps: MutationRecordDeps,
): H {
  const wrapped = new Map<string, (payload: unknown, ctx: HandlerContext) => Promise<unknown>>();
  // A proxy, as instrumentHandlers does: the typed handler map stays typed without a cast.
  return new Proxy(handlers, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof property !== 'string' || typeof value !== 'function') return value;
      if (!Object.hasOwn(catalog, property) || catalog[property]?.mutation !== true) return value;
      let recorded = wrapped.get(property);
      if (recorded === undefined) {
        const op = property;
        const handler = (payload: unknown, ctx: HandlerContext): Promise<unknown> =>
          Promise.resolve(Reflect.apply(value, target, [payload, ctx]));
        recorded = (payload, ctx) => runRecorded(op, handler, payload, ctx, deps);
        wrapped.set(property, recorded);
      }
      return recorded;
    },
  });
}

async function runRecorded(
  op: string,
  handler: (payload: unknown, ctx: HandlerContext) => Promise<unknown>,
  payload: unknown,
  ctx: HandlerContext,
  deps: MutationRecordDeps,
): Promise<unknown> {
  if (ctx.idempotencyKey !== undefined) {
    const replay = await replayOf(deps.pool, ctx);
    if (replay !== undefined) return replay.result;
  }
  const result = await handler(payload, ctx);
  // The handler's own statement stored the reply with the change (mutationRecordInsert): nothing left to write.
  const store = isReplyRecorded(ctx) ? Promise.resolve(true) : storeMutationResult(deps.pool, ctx.jobId, result);
  const lost = (err: unknown): false => {
    deps.logger.warn({ err, jobId: ctx.jobId }, 'mutation reply could not be recorded');
    return false;
  };
  if (ctx.idempotencyKey === undefined && deps.exitAfterCommitOp !== op) {
    void store.catch(lost); // off the reply path
    return result;
  }
  const recorded = await store.catch(lost);
  if (recorded && deps.exitAfterCommitOp === op) {
    deps.logger.warn({ op, jobId: ctx.jobId }, 'test hook: exiting after COMMIT, before the reply');
    (deps.exit ?? (() => process.exit(137)))();
  }
  return result;
}

async function replayOf(pool: Pool, ctx: HandlerContext): Promise<{ result: unknown } | undefined> {
  const key = ctx.idempotencyKey;
  if (key === undefined) return undefined;
  const prior = await findIdempotent(pool, ctx.principal.id, key);
  if (prior === undefined) return undefined;
  if (prior.payloadHash !== (ctx.payloadHash ?? null)) {
    throw new DaguError(
      'conflict',
      'This idempotency key was already used with another request payload; use a new key for a new request.',
      { field: 'idempotencyKey' },
    );
  }
  if (prior.result !== undefined) return { result: prior.result };
  throw new DaguError(
    'resource_unavailable',
    'The request with this idempotency key was applied, but its reply was lost; read the resource to see its state.',
    { details: { outcome: 'applied', ...(prior.requestId !== null ? { originalRequestId: prior.requestId } : {}) } },
  );
}

/**
 * The `mutation.outcome` handler: whether bus job `jobId` of the caller
 * committed, and its recorded reply (the gateway asks after a mutation's
 * deadline passed, docs/decisions.md "Attribution and mutation outcomes");
 * or, by `requestId`, whether the caller's gateway request committed a change
 * here (a client resolving an `outcome: "unknown"` answer).
 */
export function createMutationOutcomeHandler(pool: Pool) {
  return async function mutationOutcome(
    payload: MutationOutcomeRequest,
    ctx: HandlerContext,
  ): Promise<MutationOutcomeReply> {
    if ('requestId' in payload) return mutationOutcomeOfRequest(pool, payload.requestId, ctx.principal.id);
    return mutationOutcomeOf(pool, payload.jobId, ctx.principal.id);
  };
}
