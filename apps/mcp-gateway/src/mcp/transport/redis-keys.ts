/**
 * Names of every Redis key and channel of the MCP transport, under the bus
 * prefix (`BUS_PREFIX`, default `dagu`). The session id sits in a hash tag
 * (`{…}`) so that all keys of one session share a cluster slot and one Lua
 * script may touch them together.
 *
 * | Key / channel | Type | Holds | Lifetime |
 * | --- | --- | --- | --- |
 * | `<p>:mcp:{sid}:session` | hash | the session record (see session-store.ts) | idle TTL, refreshed on use |
 * | `<p>:mcp:{sid}:subs` | set | subscribed resource URIs | idle TTL, with the record |
 * | `<p>:mcp:{sid}:events` | stream | server→client messages of the standalone (GET) stream | retention window |
 * | `<p>:mcp:{sid}:cursor` | string | last standalone entry handed to a GET stream | retention window |
 * | `<p>:mcp:{sid}:req:<stream>` | stream | messages of one POST answered as SSE | retention window |
 * | `<p>:mcp:{sid}:req:<stream>:owner` | hash | who serves that POST: `replica`, JSON-RPC `id`, `method`, `requestId` (log id), `dagRunId`, `settled` | retention window |
 * | `<p>:mcp:replica:<id>:alive` | string | a replica's liveness lease | `MCP_REPLICA_LEASE_MS`, renewed every third |
 * | `<p>:mcp:{sid}:reqs` | set | the POST stream ids of the session (for cleanup) | idle TTL |
 * | `<p>:mcp:subscribers:<uri>` | set | session ids subscribed to a URI | idle TTL of its newest session (refreshed with each session's); members of ended ones pruned on read |
 * | `<p>:mcp:principal:<id>:sessions` | sorted set | the sessions a principal opened (score: ms opened) | idle TTL from the newest; ended ones pruned at the bound |
 * | `<p>:mcp:control` | channel | broadcasts: cancel a request, end a session | — |
 * | `<p>:mcp:replica:<id>` | channel | messages for one gateway replica (client responses, extension relay) | — |
 * | `<p>:mcp:{sid}:wake:<stream>` | channel | "new entry in this stream" | — |
 */
export class McpKeys {
  constructor(readonly prefix: string) {}

  session(sid: string): string {
    return `${this.base(sid)}:session`;
  }

  subscriptions(sid: string): string {
    return `${this.base(sid)}:subs`;
  }

  /** The Redis stream of `stream` (`s` = the standalone GET stream, else a POST stream id). */
  events(sid: string, stream: string): string {
    return stream === STANDALONE_STREAM ? `${this.base(sid)}:events` : `${this.base(sid)}:req:${stream}`;
  }

  /** Who serves POST stream `stream` of `sid` (orphan-check.ts). */
  owner(sid: string, stream: string): string {
    return `${this.base(sid)}:req:${stream}:owner`;
  }

  /** The liveness lease of a gateway replica (replica-hub.ts). */
  alive(replicaId: string): string {
    return `${this.prefix}:mcp:replica:${replicaId}:alive`;
  }

  cursor(sid: string): string {
    return `${this.base(sid)}:cursor`;
  }

  requestStreams(sid: string): string {
    return `${this.base(sid)}:reqs`;
  }

  /** The sessions principal `principalId` opened (for `MCP_SESSIONS_PER_PRINCIPAL_MAX`). */
  principalSessions(principalId: string): string {
    return `${this.prefix}:mcp:principal:${principalId}:sessions`;
  }

  subscribers(uri: string): string {
    return `${this.prefix}:mcp:subscribers:${uri}`;
  }

  control(): string {
    return `${this.prefix}:mcp:control`;
  }

  replica(replicaId: string): string {
    return `${this.prefix}:mcp:replica:${replicaId}`;
  }

  wake(sid: string, stream: string): string {
    return `${this.base(sid)}:wake:${stream}`;
  }

  private base(sid: string): string {
    return `${this.prefix}:mcp:{${sid}}`;
  }
}

/** The stream tag of a session's standalone (GET) stream. */
export const STANDALONE_STREAM = 's';
