import type { Principal } from '@dagu-mcp/contracts';
import type { ClientCapabilities, LoggingLevel } from '@modelcontextprotocol/sdk/types.js';
import type { ModernProtocolVersion } from './modern-protocol';
import type { ProtocolVersion } from './protocol';

/**
 * One MCP session as every gateway replica sees it (docs/architecture.md "Sessions
 * and scale"). Stored as the hash `<p>:mcp:{id}:session` with fields `v`
 * (protocol version), `p` (principal id), `ci` (client info JSON), `cc`
 * (client capabilities JSON), `ll` (log level, once set) and `at` (created,
 * epoch ms). Never holds a credential.
 */
export interface SessionRecord {
  readonly id: string;
  /** A session's negotiated revision; a stateless request's transient record carries its 2026-07-28 revision. */
  readonly protocolVersion: ProtocolVersion | ModernProtocolVersion;
  /** The principal the session is bound to; another principal presenting the id gets 404. */
  readonly principalId: string;
  readonly clientInfo: unknown;
  readonly clientCapabilities: ClientCapabilities;
  /** Set by `logging/setLevel`; absent means every level is sent. */
  readonly logLevel: LoggingLevel | undefined;
  readonly createdAt: number;
}

/**
 * Whom a session is bound to (`SessionRecord.principalId`): the principal's id, and for a
 * person signed in to a published agent with OAuth also the person, so
 * two people using one agent neither share a session nor each other's session bound.
 */
export function sessionOwnerOf(principal: Principal): string {
  return principal.onBehalfOf === undefined ? principal.id : `${principal.id}#user:${principal.onBehalfOf.id}`;
}
