import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request being served (the gateway's HTTP request id, the one its logs
 * carry, and the caller's idempotency key if it sent one), kept for the
 * async work it starts: every bus call made inside {@link runWithRequestId}
 * carries the id in its envelope (`requestId`), and every mutation call the
 * key (`idempotencyKey`). The service's log lines about the
 * job name the id, so one id ties the gateway's and the services' lines of
 * a failure together (dagu-model §10, `details.requestId`).
 */
interface RequestScope {
  readonly requestId?: string | undefined;
  readonly idempotencyKey?: string | undefined;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** Runs `fn` with `requestId` (and the caller's `idempotencyKey`, if any) as the current request. */
export function runWithRequestId<T>(requestId: string, fn: () => T, idempotencyKey?: string): T {
  return scope.run({ requestId, idempotencyKey }, fn);
}

/**
 * Runs `fn` with `idempotencyKey` as the current request's key (none when
 * `undefined`), keeping the current request id.
 */
export function runWithIdempotencyKey<T>(idempotencyKey: string | undefined, fn: () => T): T {
  return scope.run({ requestId: scope.getStore()?.requestId, idempotencyKey }, fn);
}

/** The current request id, or `undefined` outside {@link runWithRequestId}. */
export function currentRequestId(): string | undefined {
  return scope.getStore()?.requestId;
}

/** The current request's idempotency key, or `undefined`. */
export function currentIdempotencyKey(): string | undefined {
  return scope.getStore()?.idempotencyKey;
}
