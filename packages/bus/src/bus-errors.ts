import { DaguError, isMissingFieldIssue, QUEUE_NAMES, type ServiceName } from '@dagu-mcp/contracts';
import { type z } from 'zod';

/**
 * The errors the bus itself raises, in one place so the gateway and the tests
 * see the same codes and messages (docs/architecture.md "Request flow": a request past
 * its deadline is answered `resource_unavailable`).
 */

/** `resource_unavailable` with `details.dependency: "redis"` (dagu-model §10): Redis is not connected, so nothing was sent. */
export function busUnavailableError(): DaguError {
  return new DaguError('resource_unavailable', 'The request bus (Redis) is unavailable.', {
    details: { dependency: 'redis' },
  });
}

/** `resource_unavailable`: the service did not answer before the deadline. */
export function deadlineExceededError(service: ServiceName, timeoutMs: number): DaguError {
  return new DaguError('resource_unavailable', `${QUEUE_NAMES[service]} did not answer within ${timeoutMs} ms.`, {
    details: { service: QUEUE_NAMES[service], timeoutMs },
  });
}

/** `resource_unavailable`: thrown inside a handler once the request's deadline has passed. */
export function deadlinePassedError(): DaguError {
  return new DaguError('resource_unavailable', 'The request deadline passed before the work was done.');
}

/** `resource_unavailable`: the client was closed while the call was pending. */
export function clientClosedError(): DaguError {
  return new DaguError('resource_unavailable', 'The request bus client was closed.');
}

/**
 * `resource_unavailable` with `details.outcome: "unknown"` (dagu-model §10):
 * a mutation whose replica stopped while running it, so it may or may not
 * have been applied; it is not run again.
 */
export function outcomeUnknownError(op: string): DaguError {
  return new DaguError(
    'resource_unavailable',
    `The service stopped while running ${op}; whether it took effect is unknown.`,
    {
      details: { outcome: 'unknown' },
    },
  );
}

/**
 * `internal_error` for a job whose op the service does not know, with
 * `details.unknownOp`: a caller newer than the service (during a rolling
 * upgrade) can tell it from a failure and fall back to an older op
 * ({@link isUnknownOpError}).
 */
export function unknownOpError(op: string): DaguError {
  return new DaguError('internal_error', `The service does not know the operation "${op}".`, {
    details: { unknownOp: op },
  });
}

/** Whether `error` (as a bus call rejects) says the service does not know op `op` ({@link unknownOpError}). */
export function isUnknownOpError(error: unknown, op: string): boolean {
  return error instanceof DaguError && error.code === 'internal_error' && error.details?.unknownOp === op;
}

/** `internal_error` with the generic message: the cause is logged, never sent. */
export function internalError(): DaguError {
  return new DaguError('internal_error', 'Internal error.');
}

/**
 * The dotted path of the first zod issue (`items.0.name`), or `undefined` for
 * an issue on the whole value.
 */
export function fieldOfZodError(error: z.ZodError): string | undefined {
  const issue = error.issues[0];
  if (issue === undefined || issue.path.length === 0) return undefined;
  return issue.path.map((part) => (typeof part === 'symbol' ? part.toString() : String(part))).join('.');
}

/**
 * `invalid_tool_input` for a payload that failed its op's request schema, with
 * the field of the first issue and every issue's path and message in `details`. Given the
 * payload (`input`), an absent field reads "<field> is required" (docs/decisions.md "Messages a newcomer meets").
 */
export function invalidInputError(op: string, error: z.ZodError, input?: unknown): DaguError {
  const first = error.issues[0];
  const field = fieldOfZodError(error);
  const message =
    first === undefined
      ? `Invalid input for ${op}.`
      : isMissingFieldIssue(first, input)
        ? `Invalid input for ${op}: ${field ?? 'input'} is required`
        : `Invalid input for ${op}: ${first.message}`;
  return new DaguError('invalid_tool_input', message, {
    ...(field !== undefined ? { field } : {}),
    details: {
      issues: error.issues.map((issue) => ({
        path: issue.path.map((part) => (typeof part === 'symbol' ? part.toString() : part)),
        message: issue.message,
      })),
    },
  });
}
