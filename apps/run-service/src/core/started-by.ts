import { OnBehalfOfSchema, type Principal } from '@dagu-mcp/contracts';
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
  /** The person a published agent acted for (additive to dagu-model §5). */
  onBehalfOf: OnBehalfOfSchema.optional(),
});
export type Actor = z.output<typeof ActorSchema>;

/** The principal id of run-service's scheduler (schedule/scheduled-start.ts). */
const SCHEDULER_ID = 'scheduler';

/** The id prefix of a published agent's principal (`agent:<id>`, gateway agents/agent-tool-base.ts). */
const AGENT_ID_PREFIX = 'agent:';

/**
 * The actor of a principal: the scheduler is `schedule`; a published agent
 * (its key, or a person signed in to it with OAuth) is `agent` named
 * `<workspace>/<slug>`, with `onBehalfOf` the person when there is one; an API key is `api_key`; an OAuth access token on `/mcp` (an MCP
 * client acting on a user's grant) is `agent` named by the user; a login token,
 * Basic or `AUTH_MODE=none` is `user`. `name` is never a secret.
 */
export function actorOf(principal: Principal): Actor {
  if (principal.id === SCHEDULER_ID) return { kind: 'schedule', name: principal.subject };
  if (principal.id.startsWith(AGENT_ID_PREFIX)) {
    const name = principal.subject.startsWith(AGENT_ID_PREFIX)
      ? principal.subject.slice(AGENT_ID_PREFIX.length)
      : principal.subject;
    return principal.onBehalfOf === undefined
      ? { kind: 'agent', name }
      : { kind: 'agent', name, onBehalfOf: principal.onBehalfOf };
  }
  switch (principal.credentialType) {
    case 'api_key':
      return { kind: 'api_key', name: principal.subject };
    case 'oauth':
      return { kind: 'agent', name: principal.subject };
    default:
      return { kind: 'user', name: principal.subject };
  }
}

/** The actor of a sub-run: its parent run (`<dag>/<dagRunId>`). */
export function parentActor(parent: { dagName: string; dagRunId: string }): Actor {
  return { kind: 'parent', name: `${parent.dagName}/${parent.dagRunId}` };
}
