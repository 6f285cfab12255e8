import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The id of the request being served (the gateway's HTTP request id, the one
 * its logs carry), kept for the async work it starts: every bus call made
 * inside {@link runWithRequestId} carries it in its envelope (`requestId`),
 * and the service's log lines about that job name it, so one id ties the
 * gateway's and the services' lines of a failure together (dagu-model §10,
 * `details.requestId`).
 */
const scope = new AsyncLocalStorage<string>();

/** Runs `fn` with `requestId` as the current request id. */
export function runWithRequestId<T>(requestId: string, fn: () => T): T {
  return scope.run(requestId, fn);
}

/** The current request id, or `undefined` outside {@link runWithRequestId}. */
export function currentRequestId(): string | undefined {
  return scope.getStore();
}
