import {
  DaguError,
  defineOps,
  MUTATION_OUTCOME_DEFINITION,
  MUTATION_OUTCOME_OP,
  SERVICE_NAMES,
  type Principal,
  type ServiceName,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';

/**
 * Resolving a change whose answer was `resource_unavailable` with
 * `details.outcome: "unknown"` (dagu-model §10): the caller asks
 * later, by that answer's `details.requestId`, and every service answers
 * `mutation.outcome` from its mutation record, written by the change's own
 * transaction (docs/decisions.md "Attribution and mutation outcomes").
 */

/** The outcome op seen as a catalog of its own (the host adds it to every service; it is in no typed catalog). */
const outcomeOps = defineOps({ [MUTATION_OUTCOME_OP]: MUTATION_OUTCOME_DEFINITION });

/** What became of a request's changes. */
export interface MutationOutcome {
  /** The request asked about. */
  readonly requestId: string;
  /** `applied`: at least one service committed a change of it; `not_applied`: none did, and none will. */
  readonly outcome: 'applied' | 'not_applied';
  /** The services that committed a change of it, each with the reply it recorded (when it did). */
  readonly changes: ReadonlyArray<{ readonly service: ServiceName; readonly result?: unknown }>;
}

/**
 * Whether the caller's request `requestId` changed anything, asked of every
 * service at once. Only the caller's own changes are found (the services match
 * the principal), so no role beyond signing in is needed. `not_applied` is
 * final once the request's bus deadline has passed (`BUS_TIMEOUT_MS`, or the
 * op's own): a service never commits after it, and every `outcome: "unknown"`
 * answer of the bus client is given after it.
 *
 * @param requestId - `details.requestId` of the answer (1–200 characters).
 * @returns `{requestId, outcome, changes}` ({@link MutationOutcome})
 * @throws DaguError `resource_unavailable` with `details.outcome: "unknown"` and the
 *   service (and `dependency`) when a service cannot be asked now: ask again shortly
 */
export async function mutationOutcomeOf(
  bus: BusClient,
  principal: Principal,
  requestId: string,
): Promise<MutationOutcome> {
  const asked = await Promise.all(
    SERVICE_NAMES.map(async (service) => {
      try {
        const reply = await bus.call(service, outcomeOps, MUTATION_OUTCOME_OP, { requestId }, { principal });
        return { service, reply };
      } catch (error) {
        return { service, error };
      }
    }),
  );
  const changes: Array<{ service: ServiceName; result?: unknown }> = [];
  for (const answer of asked) {
    if ('error' in answer) {
      const details = answer.error instanceof DaguError ? (answer.error.details ?? {}) : {};
      const dependency = typeof details.dependency === 'string' ? { dependency: details.dependency } : {};
      throw new DaguError(
        'resource_unavailable',
        `Whether request ${requestId} changed anything cannot be told now: ${answer.service}-service did not answer; ask again shortly.`,
        { details: { outcome: 'unknown', service: `${answer.service}-service`, ...dependency } },
      );
    }
    if (answer.reply.applied) {
      changes.push({
        service: answer.service,
        ...(answer.reply.result !== undefined ? { result: answer.reply.result } : {}),
      });
    }
  }
  return { requestId, outcome: changes.length > 0 ? 'applied' : 'not_applied', changes };
}
