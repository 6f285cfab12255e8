import type { Principal } from '@dagu-mcp/contracts';
import { z } from 'zod';

/**
 * Who started a run or decided a checkpoint (dagu-model §5 `startedBy`
 * `{kind: user|api_key|agent|schedule|parent, name}`; the step's
 * `decision.by` has the same shape). docs/decisions.md "Attribution and
 * mutation outcomes" says which principal becomes which kind.
 */
export const ActorSchema = z.object({
  kind: z.enum(['user', 'api_key', 'agent', 'schedule', 'parent']),
  name: z.string(),
});
export type Actor = z.output<typeof ActorSchema>;

/** The principal id of run-service's scheduler (schedule/scheduled-start.ts). */
const SCHEDULER_ID = 'scheduler';

/**
 * The actor of a principal: the scheduler is `schedule`; an API key is
 * `api_key`; an OAuth access token (an MCP client acting on a user's grant)
 * and a published agent's key (issue 24) are `agent`; a login token, Basic or `AUTH_MODE=none` is `user`. `name` is
 * the principal's display subject (never a secret).
 */
export function actorOf(principal: Principal): Actor {
  if (principal.id === SCHEDULER_ID) return { kind: 'schedule', name: principal.subject };
  switch (principal.credentialType) {
    case 'api_key':
      return { kind: 'api_key', name: principal.subject };
    case 'oauth':
    case 'agent_key': // a published agent (issue 24): its subject is `agent:<workspace>/<slug>`
      return { kind: 'agent', name: principal.subject };
    default:
      return { kind: 'user', name: principal.subject };
  }
}

/** The actor of a sub-run: its parent run (`<dag>/<dagRunId>`). */
export function parentActor(parent: { dagName: string; dagRunId: string }): Actor {
  return { kind: 'parent', name: `${parent.dagName}/${parent.dagRunId}` };
}
