import { z } from 'zod';
import { parseConfig } from '@dagu-mcp/runtime';

/**
 * Settings of dag-service beyond the shared service settings (service-kit),
 * parsed once at start (CONTRIBUTING §8). Every variable is optional.
 *
 * | Variable | Meaning | Unit | Default |
 * | --- | --- | --- | --- |
 * | `DAG_PARSE_WORKER_MIN_BYTES` | specs at least this long (UTF-16 code units, about bytes) are validated in a worker thread, smaller ones on the service's thread (docs/decisions.md "Authors' text off the request thread") | characters | `65536` |
 * | `DAG_PARSE_BUDGET_MS` | most time a worker may spend validating one spec; past it the thread is ended and the spec is `valid: false` | ms | `10000` |
 * | `DAG_PARSE_MEMORY_MB` | heap cap of each validating worker thread | MB | `256` |
 * | `DAG_PARSE_THREADS` | most specs validated in worker threads at once | threads | `1` |
 * | `DAG_SPEC_CACHE_MS` | how long a replica may serve a `dag_spec` read or a `dags` page (sorted by name) from its own cache; changes made through dag-service reach every replica's cache before the change is answered, so this bounds only what no replica was told of (direct SQL writes to `dags`, an announcement lost while Redis was down); `0` turns the cache off | ms | `5000` |
 */
export function dagConfigSchema() {
  return z.object({
    DAG_SPEC_CACHE_MS: z.coerce.number().int().min(0).default(5000),
    DAG_PARSE_WORKER_MIN_BYTES: z.coerce.number().int().min(0).default(65_536),
    DAG_PARSE_BUDGET_MS: z.coerce.number().int().min(1).default(10_000),
    DAG_PARSE_MEMORY_MB: z.coerce.number().int().min(16).default(256),
    DAG_PARSE_THREADS: z.coerce.number().int().min(1).default(1),
  });
}

/** Where and within what a DAG spec is validated (docs/decisions.md "Authors' text off the request thread"). */
export interface SpecParseLimits {
  /** Specs of at least this many UTF-16 code units are validated in a worker thread; smaller ones in-thread. */
  readonly workerMinChars: number;
  /** Most time one validation in a worker may take, in ms; past it the thread is ended. */
  readonly budgetMs: number;
  /** Heap cap of each worker thread (`resourceLimits.maxOldGenerationSizeMb`), in MB. */
  readonly memoryMb: number;
  /** Most worker threads validating at once; later large specs wait for one. */
  readonly threads: number;
}

/** The dag-service settings in the shape the service uses (units in the names). */
export interface DagConfig {
  /** TTL of the `dag.spec` cache (service-kit dag-changes/dag-spec-cache.ts); 0 = no cache. */
  readonly specCacheMs: number;
  /** Where and within what specs are validated (dags/spec-parsers.ts). */
  readonly specParse: SpecParseLimits;
}

/**
 * Parses the dag-service settings from `source` (default `process.env`).
 *
 * @throws ConfigError naming every bad variable, e.g. `DAG_SPEC_CACHE_MS: …`
 */
export function loadDagConfig(source: NodeJS.ProcessEnv = process.env): DagConfig {
  const raw = parseConfig(dagConfigSchema(), source);
  return {
    specCacheMs: raw.DAG_SPEC_CACHE_MS,
    specParse: {
      workerMinChars: raw.DAG_PARSE_WORKER_MIN_BYTES,
      budgetMs: raw.DAG_PARSE_BUDGET_MS,
      memoryMb: raw.DAG_PARSE_MEMORY_MB,
      threads: raw.DAG_PARSE_THREADS,
    },
  };
}
