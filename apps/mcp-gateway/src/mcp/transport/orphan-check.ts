import type { EventLog, StreamOwner } from './event-log';
import { errorResponse, resultResponse, type OutgoingMessage } from './protocol';
import type { ReplicaHub } from './replica-hub';

/**
 * Orphaned requests: a POST answered as SSE lives on the
 * replica that received it. When that replica dies, the client resumes the
 * stream with `Last-Event-ID` on another replica, which would otherwise relay
 * keep-alives until the stream expires. The resuming replica checks the
 * owner's liveness lease (replica-hub.ts) whenever the stream is idle; once
 * the lease has lapsed and stays lapsed for half a lease more (so a lease
 * that merely missed a renewal while Redis reconnected is not taken for a
 * death), it answers the request itself, once over all replicas
 * (`EventLog.settleOrphan`):
 *
 * - `tools/call`: an `isError` result `resource_unavailable` with
 *   `details: {outcome: "unknown", requestId, dagRunId?}` (dagu-model §10);
 * - any other method: a JSON-RPC error -32005 whose `data` is that object.
 *
 * "Outcome unknown" because the owner may have applied a mutation before it
 * died; `dagRunId` (when the request had started a run) tells the caller
 * where to look.
 */
export interface OrphanCheck {
  /** Call when the resumed stream is idle: true once this replica settled the request. */
  check(): Promise<boolean>;
}

/** The message of an orphaned request's answer. */
export const ORPHANED_MESSAGE =
  'The gateway replica serving this request stopped before answering; whether it took effect is unknown.';

/** An {@link OrphanCheck} for POST stream `stream` of session `sid`. */
export function createOrphanCheck(deps: {
  readonly events: EventLog;
  readonly hub: ReplicaHub;
  readonly sid: string;
  readonly stream: string;
  readonly now?: () => number;
}): OrphanCheck {
  const now = deps.now ?? Date.now;
  let lapsedSince: number | undefined;
  return {
    async check() {
      const owner = await deps.events.owner(deps.sid, deps.stream);
      if (owner === undefined || (await deps.hub.isAlive(owner.replica))) {
        lapsedSince = undefined;
        return false;
      }
      lapsedSince ??= now();
      if (now() - lapsedSince < deps.hub.leaseMs / 2) return false;
      return deps.events.settleOrphan(deps.sid, deps.stream, orphanedAnswer(owner));
    },
  };
}

/** The answer of an orphaned request (see the module comment). */
export function orphanedAnswer(owner: StreamOwner): OutgoingMessage {
  const details = {
    outcome: 'unknown',
    requestId: owner.requestId,
    ...(owner.dagRunId !== undefined ? { dagRunId: owner.dagRunId } : {}),
  };
  const object = { code: 'resource_unavailable', message: ORPHANED_MESSAGE, details };
  if (owner.method === 'tools/call')
    return resultResponse(owner.id, {
      isError: true,
      content: [{ type: 'text', text: ORPHANED_MESSAGE }],
      structuredContent: object,
    });
  return errorResponse(owner.id, RESOURCE_UNAVAILABLE, ORPHANED_MESSAGE, object);
}

/** JSON-RPC code of `resource_unavailable` (mcp-errors.ts). */
const RESOURCE_UNAVAILABLE = -32005;
