/**
 * Failures that are not domain errors (a bug, an unexpected throw) reach the
 * client as `internal_error` with a message that reveals nothing and
 * `details.requestId` (dagu-model §10), and are logged once, with their stack
 * and that request id, by the one boundary that knows the id: the request
 * runner (request-runner.ts). The code that turns them into error
 * objects (tool results, resource errors) keeps the cause here for it.
 */

/** Where a marked tool result or error object keeps its cause; a symbol, so it is never serialised. */
const CAUSE = Symbol('dagu-mcp.unexpectedCause');

/**
 * Marks `target` (a tool result, a service error object) as standing for the
 * unexpected failure `cause`, for the boundary to log.
 *
 * @returns `target` itself.
 */
export function markUnexpected<T extends object>(target: T, cause: unknown): T {
  Object.defineProperty(target, CAUSE, { value: cause, enumerable: false, configurable: true });
  return target;
}

/** The cause {@link markUnexpected} put on `value`, or `undefined` when it is not marked. */
export function unexpectedCauseOf(value: unknown): { cause: unknown } | undefined {
  if (typeof value !== 'object' || value === null || !Object.hasOwn(value, CAUSE)) return undefined;
  return { cause: Object.getOwnPropertyDescriptor(value, CAUSE)?.value };
}

/**
 * Thrown by a non-tool method (`resources/read`, …) for an unexpected
 * failure: the boundary logs `failure` and answers a JSON-RPC `internal_error`
 * whose `data` also carries `data` (`resourceUri`, `operation`).
 */
export class UnexpectedFailure extends Error {
  constructor(
    readonly failure: unknown,
    readonly data: Readonly<Record<string, unknown>> = {},
  ) {
    super('Internal error.');
    this.name = 'UnexpectedFailure';
  }
}
