import { TASKS_EXTENSION } from './task-store';
import type { ServerCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { SERVER_CAPABILITIES, SERVER_INSTRUCTIONS } from './mcp-server';
import { ALL_PROTOCOL_VERSIONS } from './transport/modern-protocol';

/** `$schema` of the server card (SEP-2127's draft; docs/mcp-transport.md "Server card"). */
export const SERVER_CARD_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json';
/** `$schema` of the MCP Registry's `server.json` (the 2025-12-11 release). */
export const SERVER_JSON_SCHEMA = 'https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json';

/** What a deployment says about itself in both documents. */
export interface ServerIdentity {
  /** Registry name, `<reverse-DNS namespace>/<server>` (`SERVER_REGISTRY_NAME`). */
  readonly name: string;
  /** The gateway's version (its package version). */
  readonly version: string;
  /** The MCP endpoint's absolute URL (`<PUBLIC_URL>/mcp`, or the request's origin plus `BASE_PATH`). */
  readonly mcpUrl: string;
}

const TITLE = 'Dagu MCP';
/** At most 100 characters: the registry's bound on `description`. */
const DESCRIPTION = 'Author, run and watch Dagu DAG workflows; read their runs, logs and wiki pages.';

/**
 * The `server.json` an operator publishes to the MCP Registry for this deployment: identity
 * and one `streamable-http` remote, built from the same constants as `initialize` and
 * `server/discover` so that they cannot drift.
 *
 * @returns `{$schema, name, title, description, version, remotes: [{type, url}]}`
 */
export function serverJson(identity: ServerIdentity): Record<string, unknown> {
  return {
    $schema: SERVER_JSON_SCHEMA,
    name: identity.name,
    title: TITLE,
    description: DESCRIPTION,
    version: identity.version,
    remotes: [{ type: 'streamable-http', url: identity.mcpUrl }],
  };
}

/**
 * The server card (SEP-2127, proposed): the `server.json` identity plus what a client would
 * otherwise learn by connecting — the protocol versions served on the remote, the server's
 * capabilities and instructions — served without authentication for discovery.
 *
 * @returns the card; `capabilities` equal `server/discover`'s for a client declaring no extensions
 *   (the tasks extension included: it is served to 2026-07-28 clients, mcp-revisions §4)
 */
export function serverCard(identity: ServerIdentity): Record<string, unknown> {
  const capabilities: ServerCapabilities = {
    ...SERVER_CAPABILITIES,
    extensions: { ...SERVER_CAPABILITIES.extensions, [TASKS_EXTENSION]: {} },
  };
  return {
    ...serverJson(identity),
    $schema: SERVER_CARD_SCHEMA,
    remotes: [{ type: 'streamable-http', url: identity.mcpUrl, supportedProtocolVersions: [...ALL_PROTOCOL_VERSIONS] }],
    capabilities,
    instructions: SERVER_INSTRUCTIONS,
  };
}
