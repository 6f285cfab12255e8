import { z } from 'zod';
import { parseConfig } from '@dagu-mcp/runtime';

/**
 * Settings of dag-service beyond the shared service settings (service-kit),
 * parsed once at start (CONTRIBUTING §8). Every variable is optional.
 *
 * | Variable | Meaning | Unit | Default |
 * | --- | --- | --- | --- |
 * | `DAG_SPEC_CACHE_MS` | how long a replica may serve a `dag_spec` read or a `dags` page (sorted by name) from its own cache; changes made through dag-service reach every replica's cache before the change is answered, so this bounds only what no replica was told of (direct SQL writes to `dags`, an announcement lost while Redis was down); `0` turns the cache off | ms | `5000` |
 */
export function dagConfigSchema() {
  return z.object({
    DAG_SPEC_CACHE_MS: z.coerce.number().int().min(0).default(5000),
  });
}

/** The dag-service settings in the shape the service uses (units in the names). */
export interface DagConfig {
  /** TTL of the `dag.spec` cache (service-kit dag-changes/dag-spec-cache.ts); 0 = no cache. */
  readonly specCacheMs: number;
}

/**
 * Parses the dag-service settings from `source` (default `process.env`).
 *
 * @throws ConfigError naming every bad variable, e.g. `DAG_SPEC_CACHE_MS: …`
 */
export function loadDagConfig(source: NodeJS.ProcessEnv = process.env): DagConfig {
  const raw = parseConfig(dagConfigSchema(), source);
  return { specCacheMs: raw.DAG_SPEC_CACHE_MS };
}
