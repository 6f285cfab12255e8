import { BusClient } from '@dagu-mcp/bus';
import { dagOps, DaguError, type Principal } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import type { StoredSpecReader } from './sub-dag-spec';

/**
 * Reads stored DAGs for `dag.run` of a stored DAG: run-service calls
 * dag-service's `dag.spec` op over the bus (the same path the gateway uses),
 * as the run-service system principal. A missing DAG reads as `undefined`;
 * any other failure (dag-service down, timeout) rejects and fails the step.
 */

/** run-service acting on its own behalf (child runs of stored DAGs). */
export const RUN_SERVICE_PRINCIPAL: Principal = Object.freeze({
  id: 'system:run-service',
  subject: 'run-service',
  role: 'operator',
  credentialType: 'none',
});

/** A started bus client reading stored specs, and how to close it. */
export interface StoredSpecSource {
  read: StoredSpecReader;
  close(): Promise<void>;
}

/** Creates the reader; the bus client connects in the background (a read waits for it). */
export function createStoredSpecSource(options: { redisUrl: string; prefix: string; logger: Logger }): StoredSpecSource {
  const client = new BusClient({ redisUrl: options.redisUrl, prefix: options.prefix, defaultTimeoutMs: 10_000 });
  const started = client.start();
  started.catch((error: unknown) => options.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'dag-service bus client did not start'));
  return {
    async read(name) {
      await started;
      try {
        const reply = await client.call('dag', dagOps, 'dag.spec', { name }, { principal: RUN_SERVICE_PRINCIPAL });
        return reply.spec;
      } catch (error) {
        if (error instanceof DaguError && error.code === 'resource_not_found') return undefined;
        throw error;
      }
    },
    close: () => client.close(),
  };
}
