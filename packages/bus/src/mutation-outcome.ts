import { DaguError, type BusReply, type MutationOutcomeReply } from '@dagu-mcp/contracts';

/**
 * True for a failed mutation call whose fate is open: no reply by the
 * deadline (`resource_unavailable` with `details.timeoutMs`), or a service
 * that says its replica stopped mid-way (`details.outcome: "unknown"`).
 * A call that never left (Redis down) or a service's own answer is not.
 */
export function shouldResolveOutcome(error: { code: string; details?: Record<string, unknown> | undefined }): boolean {
  if (error.code !== 'resource_unavailable') return false;
  const details = error.details ?? {};
  return details.outcome === 'unknown' || typeof details.timeoutMs === 'number';
}

/**
 * The truthful reply for a mutation whose call went unanswered, from the
 * owning service's answer to `mutation.outcome` (`undefined`: it could not be
 * asked). dagu-model §10: `details.outcome: "unknown"` only when the fate
 * truly cannot be told.
 *
 * @returns `{ok: true, data}` with the recorded reply when applied and
 *   recorded; else `{ok: false}` with `resource_unavailable` and
 *   `details.outcome` `applied` (reply lost), `not_applied` or `unknown`.
 */
export function resolvedOutcome(op: string, original: DaguError, outcome: MutationOutcomeReply | undefined): BusReply {
  const details = { ...(original.details ?? {}) };
  if (outcome === undefined) {
    return failure(`${original.message} Whether ${op} took effect is unknown.`, { ...details, outcome: 'unknown' });
  }
  if (!outcome.applied) {
    return failure(`${original.message} ${op} was not applied; it is safe to send again.`, {
      ...details,
      outcome: 'not_applied',
    });
  }
  if (outcome.result !== undefined) return { ok: true, data: outcome.result };
  return failure(`${op} was applied, but its reply was lost; read the resource to see its state.`, {
    ...details,
    outcome: 'applied',
  });
}

function failure(message: string, details: Record<string, unknown>): BusReply {
  return { ok: false, error: new DaguError('resource_unavailable', message, { details }).toServiceError() };
}
