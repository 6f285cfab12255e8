import { isAgentDelegate, type Role } from '@dagu-mcp/contracts';
import type { DescribedResource } from '../oauth/resource-directory';
import type { OAuthServer } from '../oauth/oauth-server';
import { capScopes, SCOPE_DESCRIPTIONS, type OAuthScope } from '../oauth/scopes';

/** What the consent page offers a person for one resource. */
export interface ConsentOffer {
  readonly resource: DescribedResource;
  /** The scopes the person may grant: asked for, and allowed by their role (or by the delegation). */
  readonly scopes: OAuthScope[];
  /** Asked for but beyond the person's role. */
  readonly dropped: OAuthScope[];
  /** The authority the client will have, in the page's words. */
  readonly authority: string;
}

/**
 * The offer for `resource` to a person:
 * - `/mcp`, or an `own_role` agent: the asked scopes their role allows; the client acts with
 *   their role capped by the granted scopes (and, for the agent, by its tools);
 * - a `delegated` agent naming them: every asked scope; the agent's tools act with the roles
 *   of the people who configured them, capped by the granted scopes;
 * - a `delegated` agent not naming them: `{refused}` with the reason for the page.
 *
 * @returns undefined when OAuth serves no such resource now (unknown, unpublished, or `keys`)
 */
export async function consentOffer(
  server: Pick<OAuthServer, 'resources'>,
  resource: string,
  asked: readonly OAuthScope[],
  person: { username: string; role: Role },
): Promise<ConsentOffer | { refused: string } | undefined> {
  const described = await server.resources.describe(resource);
  if (described === undefined) return undefined;
  if (described.kind === 'agent' && described.agent.signIn.mode === 'delegated') {
    const { agent } = described;
    if (!isAgentDelegate(agent.signIn, person)) {
      return {
        refused: `The agent ${agent.workspace}/${agent.slug} is delegated to named people and roles, and ${person.username} (${person.role}) is not one of them. Ask whoever manages the agent to add you.`,
      };
    }
    return {
      resource: described,
      scopes: [...asked],
      dropped: [],
      authority: `the agent's own authority: its tools act with the roles of the people who configured them (not your ${person.role} role), limited to the scopes you grant`,
    };
  }
  const scopes = capScopes(asked, person.role);
  return {
    resource: described,
    scopes,
    dropped: asked.filter((s) => !scopes.includes(s)),
    authority:
      described.kind === 'agent'
        ? `your own role (${person.role}), limited to the scopes you grant and to this agent's tools`
        : `your own role (${person.role}), limited to the scopes you grant`,
  };
}

/** The consent page's view of an offer: what it names and the scope checkboxes. */
export function offerView(offer: ConsentOffer): Record<string, unknown> {
  const { resource } = offer;
  return {
    isAgent: resource.kind === 'agent',
    agentName: resource.kind === 'agent' ? `${resource.agent.workspace}/${resource.agent.slug}` : undefined,
    agentTitle: resource.kind === 'agent' ? resource.agent.title : undefined,
    agentTools:
      resource.kind === 'agent' ? resource.agent.tools.map((t) => ({ name: t.name, title: t.title ?? '' })) : [],
    authority: offer.authority,
    scopes: offer.scopes.map((s) => ({ name: s, description: SCOPE_DESCRIPTIONS[s] })),
    dropped: offer.dropped.map((s) => ({ name: s, description: SCOPE_DESCRIPTIONS[s] })),
  };
}
