import { isAgentDelegate, lowerRole, type AgentSignIn, type OnBehalfOf, type Role } from '@dagu-mcp/contracts';
import { scopeCeiling } from '../oauth/scopes';

/** A person signed in with OAuth, as the token verifier sees them now. */
export interface SignedInPerson {
  /** The user's id (no `user:` prefix). */
  readonly userId: string;
  readonly username: string;
  /** Their role now (a demotion takes effect on the next call). */
  readonly role: Role;
}

/** Whether a person may use an agent, and if so the highest role their calls act with. */
export type PersonAuthority =
  | { readonly allowed: true; readonly ceiling: Role; readonly onBehalfOf: OnBehalfOf }
  | { readonly allowed: false; readonly reason: string };

/**
 * The authority of a person signed in to an agent with OAuth, before the
 * catalog and the binding authors' roles narrow it further (agent-tool-base.ts `asAuthor`):
 * - `keys`: refused (the agent takes agent keys only);
 * - `own_role`: their own current role, capped by the token's scopes;
 * - `delegated`: refused unless {@link isDelegate}; else the scopes' ceiling, under which the
 *   binding authors' roles apply as they do for an agent key (`isAgentDelegate`).
 *
 * @param scopes the token's scopes (already capped by the person's role for `own_role` grants)
 */
export function personAuthority(
  signIn: AgentSignIn,
  person: SignedInPerson,
  scopes: readonly string[],
): PersonAuthority {
  const onBehalfOf: OnBehalfOf = { kind: 'user', id: person.userId, name: person.username };
  switch (signIn.mode) {
    case 'keys':
      return { allowed: false, reason: 'This agent takes agent keys only; OAuth sign-in is off for it.' };
    case 'own_role':
      return { allowed: true, ceiling: lowerRole(person.role, scopeCeiling(scopes)), onBehalfOf };
    case 'delegated':
      return isAgentDelegate(signIn, person)
        ? { allowed: true, ceiling: scopeCeiling(scopes), onBehalfOf }
        : {
            allowed: false,
            reason: `This agent is delegated to named people and roles; ${person.username} (${person.role}) is not one of them.`,
          };
  }
}
