import { BusClient, busUnavailableError } from '@dagu-mcp/bus';
import { dagOps, DaguError, type Principal } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import { DagChangeChannel, DagSpecCache } from '@dagu-mcp/service-kit';

/**
 * Stored DAG YAML as run-service reads it: from dag-service's `dag.spec` op
 * over the bus (spec 021 `dag_spec`, the same reply the gateway gets), kept in
 * a {@link DagSpecCache} that dag-service's change announcements
 * (`<BUS_PREFIX>:dag:changed`) keep exact. Used for a start by DAG name (the
 * gateway no longer reads the spec first: one bus round trip fewer per start) and for the stored child of a `dag.run` step (dagu-model §3).
 * docs/decisions.md "DAG spec cache" has why a start made right after a
 * change through dag-service never sees the old YAML.
 */

/**
 * run-service acting on its own behalf (reading stored DAGs for starts by name
 * and child runs): `viewer`, since it only reads; whoever started the run was
 * checked for starting it.
 */
export const RUN_SERVICE_PRINCIPAL: Principal = Object.freeze({
  id: 'system:run-service',
  subject: 'run-service',
  role: 'viewer',
  credentialType: 'none',
});

/** Reads stored DAGs; built once per replica in `run-service.ts`. */
export interface StoredDagSpecs {
  /**
   * The stored YAML of DAG `name`, from the cache or dag-service.
   * @param timeoutMs longest wait for dag-service, ms (default 10,000).
   * @throws DaguError `resource_not_found` (no such DAG; dag-service's
   *   message and `details.didYouMean`), `resource_unavailable` (Redis down:
   *   `details.dependency: "redis"`; dag-service silent for `timeoutMs`:
   *   `details.service: "dag-service"`, `outcome: "not_applied"`).
   */
  spec(name: string, timeoutMs?: number): Promise<string>;
  /** As {@link StoredDagSpecs.spec}, but a missing DAG reads as `undefined` (a `dag.run` child's look-up). */
  read(name: string): Promise<string | undefined>;
  /** Closes the bus client and the change subscription. */
  close(): Promise<void>;
}

/** Options of {@link createStoredDagSpecs}. */
export interface StoredDagSpecsOptions {
  readonly redisUrl: string;
  /** The bus key prefix (`BUS_PREFIX`). */
  readonly prefix: string;
  /** This replica's id: names the change subscription's connection. */
  readonly replica: string;
  /** How long a copy may be reused (`DAG_SPEC_CACHE_MS`), ms; 0: every read goes to dag-service. */
  readonly cacheMs: number;
  readonly logger: Logger;
}

/**
 * dag-service's silence as this service's own answer: `resource_unavailable` naming dag-service,
 * with `details.outcome: "not_applied"` (nothing was started) and without the bus's
 * `details.timeoutMs`, which would make the caller ask whether the start took effect. Other
 * errors pass unchanged.
 */
function unansweredRead(error: unknown, name: string): unknown {
  if (!(error instanceof DaguError) || error.code !== 'resource_unavailable') return error;
  const timeoutMs = error.details?.timeoutMs;
  if (typeof timeoutMs !== 'number') return error;
  return new DaguError(
    'resource_unavailable',
    `dag-service did not answer within ${timeoutMs} ms, so the YAML of DAG ${name} could not be read; nothing was started.`,
    { details: { service: 'dag-service', outcome: 'not_applied' } },
  );
}

/** Default wait for dag-service, ms. */
const READ_TIMEOUT_MS = 10_000;

/** Creates the reader; its bus client and subscription connect in the background (a read waits for the client). */
export function createStoredDagSpecs(options: StoredDagSpecsOptions): StoredDagSpecs {
  const client = new BusClient({
    redisUrl: options.redisUrl,
    prefix: options.prefix,
    defaultTimeoutMs: READ_TIMEOUT_MS,
  });
  const started = client.start();
  started.catch((error: unknown) =>
    options.logger.warn(
      { err: error instanceof Error ? error.message : String(error) },
      'dag-service bus client did not start',
    ),
  );
  const cache = new DagSpecCache({ ttlMs: options.cacheMs });
  // Listens only: run-service never changes a DAG. Without a TTL there is nothing to keep exact.
  const channel =
    options.cacheMs > 0
      ? new DagChangeChannel({
          redisUrl: options.redisUrl,
          prefix: options.prefix,
          replica: options.replica,
          cache,
          publishes: false,
          logger: options.logger.child({ module: 'dag-changes' }),
        })
      : undefined;

  async function spec(name: string, timeoutMs = READ_TIMEOUT_MS): Promise<string> {
    const cached = cache.get(name);
    if (cached !== undefined) return cached.spec;
    // Read before the call: a change announced while it is in flight keeps its reply out of the cache.
    const epoch = cache.epoch();
    await started.catch(() => {
      throw busUnavailableError();
    });
    try {
      const options = { principal: RUN_SERVICE_PRINCIPAL, timeoutMs };
      const reply = await client.call('dag', dagOps, 'dag.spec', { name }, options);
      cache.store(name, reply, epoch);
      return reply.spec;
    } catch (error) {
      throw unansweredRead(error, name);
    }
  }

  return {
    spec,
    async read(name) {
      try {
        return await spec(name);
      } catch (error) {
        if (error instanceof DaguError && error.code === 'resource_not_found') return undefined;
        throw error;
      }
    },
    async close() {
      await Promise.all([client.close(), channel?.close()]);
    },
  };
}
