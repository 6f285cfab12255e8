import type { z } from 'zod';
import type { PingReplySchema } from '@dagu-mcp/contracts';

/**
 * The `ping` op every service answers: who answered and when. Used by the
 * gateway's readiness and by the bus round-trip tests.
 */
export function createPingHandler(service: string, replica: string) {
  return async function ping(): Promise<z.input<typeof PingReplySchema>> {
    return { service, replica, at: new Date().toISOString() };
  };
}
