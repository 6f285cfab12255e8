import { DaguError } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { mutationOutcomeOf } from '../actions/mutation.actions';
import { principalOf } from '../http/principal';
import type { RestRoutes } from '../http/rest-router';

/** A request id as the gateway gives or accepts them (http/request-id.ts). */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * `GET /api/v1/mutations/{requestId}`: what became of a change answered
 * `resource_unavailable` with `details.outcome: "unknown"` (dagu-model §10), asked by that answer's `details.requestId` (REST or MCP alike).
 * 200 `{requestId, outcome: "applied" | "not_applied", changes: [{service, result?}]}`;
 * 503 while a service cannot be asked. Only the caller's own changes are found.
 */
export function mutationRoutes(bus: BusClient): RestRoutes {
  return (routes) => {
    routes.get(
      '/mutations/:requestId',
      {
        action: 'mutations.outcome',
        summary: 'What became of a change whose answer was "outcome unknown", by its request id',
        tag: 'mutations',
      },
      async (req, res) => {
        const requestId = String(req.params.requestId);
        if (!REQUEST_ID.test(requestId))
          throw new DaguError('invalid_request', 'requestId: 1–128 characters of A-Z a-z 0-9 . _ : -', {
            field: 'requestId',
          });
        res.json(await mutationOutcomeOf(bus, principalOf(res), requestId));
      },
    );
  };
}
