import { SYSTEM_PRINCIPAL, DaguError, OP_CATALOGS, SERVICE_NAMES, QUEUE_NAMES } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { ServiceProbes } from './rest-router';

/**
 * Pings dag-service, run-service and wiki-service over the bus, in parallel,
 * each with `timeoutMs` (default 2 s), as the gateway itself (no caller
 * identity goes into these jobs).
 */
export function createServiceProber(bus: BusClient, timeoutMs = 2000): () => Promise<ServiceProbes> {
  return async () => {
    const entries = await Promise.all(
      SERVICE_NAMES.map(async (service) => {
        const started = performance.now();
        try {
          const reply = await bus.call(
            service,
            OP_CATALOGS[service],
            'ping',
            {},
            { principal: SYSTEM_PRINCIPAL, timeoutMs },
          );
          return [
            QUEUE_NAMES[service],
            { ok: true, replica: reply.replica, latencyMs: round(performance.now() - started) },
          ] as const;
        } catch (err) {
          return [
            QUEUE_NAMES[service],
            { ok: false, error: err instanceof DaguError ? err.code : 'internal_error' },
          ] as const;
        }
      }),
    );
    const probes: ServiceProbes = {};
    for (const [queue, probe] of entries) probes[queue] = probe;
    return probes;
  };
}

function round(ms: number): number {
  return Math.round(ms * 100) / 100;
}
