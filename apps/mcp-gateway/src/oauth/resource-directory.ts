import type { AgentSignIn } from '@dagu-mcp/contracts';
import type { OAuthAddresses } from './addresses';

/** A published agent as the authorization server shows it on the consent page. */
export interface AgentResource {
  readonly workspace: string;
  readonly slug: string;
  readonly title: string;
  readonly signIn: AgentSignIn;
  /** The tools of its catalog: name and title. */
  readonly tools: readonly { readonly name: string; readonly title?: string | undefined }[];
}

/** What a resource is for OAuth: the gateway's own `/mcp`, or a published agent taking OAuth sign-in. */
export type DescribedResource = { readonly kind: 'mcp' } | { readonly kind: 'agent'; readonly agent: AgentResource };

/** Looks a published agent up by address; undefined when none is published there. */
export type AgentLookup = (workspace: string, slug: string) => Promise<AgentResource | undefined>;

const AGENT_PATH = /^\/mcp\/v1\/([^/]+)\/([^/]+)$/;

/**
 * Which OAuth resources are served now: `/mcp` always; an agent's
 * URL only while an agent is published there with a sign-in policy other than `keys`. The
 * agent endpoints attach their lookup once they start (they start after the OAuth server);
 * before that, and on a gateway without agent endpoints, no agent resource is served.
 */
export class ResourceDirectory {
  private agents: AgentLookup | undefined;

  constructor(private readonly addresses: OAuthAddresses) {}

  /** Attaches the published agents' lookup (agents/agent-catalog-cache.ts, through the wiring). */
  attachAgents(lookup: AgentLookup): void {
    this.agents = lookup;
  }

  /**
   * What `resource` (an absolute URL) is, or undefined when OAuth serves no such resource now:
   * not one of this server's MCP resources, no agent published there, or an agent on `keys`.
   */
  async describe(resource: string): Promise<DescribedResource | undefined> {
    if (!this.addresses.isResource(resource)) return undefined;
    if (resource === this.addresses.mcpResource) return { kind: 'mcp' };
    const match = AGENT_PATH.exec(resource.slice(this.addresses.issuer.length));
    if (match === null || this.agents === undefined) return undefined;
    const agent = await this.agents(match[1] ?? '', match[2] ?? '');
    return agent === undefined || agent.signIn.mode === 'keys' ? undefined : { kind: 'agent', agent };
  }
}

/**
 * What a remembered consent and a token are bound to for a resource: `/mcp` by its
 * URL; an agent by its URL and its sign-in policy's mode (`<url>#own_role`), so a manager
 * switching the policy (say `own_role` → `delegated`, which changes whose authority a person
 * acts with) asks everyone to consent again and ends the tokens issued before.
 */
export function consentKeyOf(resource: string, described: DescribedResource): string {
  return described.kind === 'agent' ? `${resource}#${described.agent.signIn.mode}` : resource;
}
