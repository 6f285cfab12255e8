import { DAG_MOVES_QUEUE, dagOps, type DagOps } from '@dagu-mcp/contracts';
import type { HandlerMap } from '@dagu-mcp/bus';
import {
  createPingHandler,
  DagChangeChannel,
  onReads,
  DagSpecCache,
  type ServiceDefinition,
  type ServiceDeps,
} from '@dagu-mcp/service-kit';
import type { DagConfig } from './config/dag-config';
import { DagCatalog, type DagChangeHooks } from './dags/dag.catalog';
import { DagListCache } from './dags/dag-list-cache';
import { DagRepository } from './dags/dag.repository';
import { NextRunCalculator } from './dags/next-run';
import type { Pool } from '@dagu-mcp/runtime';
import { SpecParsers } from './dags/spec-parsers';
import { DAG_MIGRATIONS } from './db/migrations';
import { createDagGetHandler } from './handlers/dag-get.handler';
import { createDagListHandler, createDagListIfChangedHandler } from './handlers/dag-list.handler';
import { createDagSearchHandler } from './handlers/dag-search.handler';
import { createDagSpecHandler } from './handlers/dag-spec.handler';
import { createDagUpsertHandler } from './handlers/dag-upsert.handler';
import { createDagValidateHandler } from './handlers/dag-validate.handler';
import { createDagDeleteHandler } from './handlers/dag-delete.handler';
import { createDagSuspendHandler } from './handlers/dag-suspend.handler';
import { createDagSchedulesHandler } from './handlers/dag-schedules.handler';
import { createDagRenameHandler } from './handlers/dag-rename.handler';

/**
 * Builds the handler of every op of `dagOps` over one pool (the service's
 * schema is the pool's search path). Exported for tests that run the
 * handlers without the service host.
 *
 * @param changes - the `dag.spec` cache and change announcer; default none (every read goes to PostgreSQL).
 * @param parsers - where specs are validated (dags/spec-parsers.ts); default its defaults.
 */
export function createDagHandlers(
  deps: Pick<ServiceDeps, 'pool' | 'replica' | 'reads'>,
  changes: DagChangeHooks = {},
  parsers: SpecParsers = new SpecParsers(),
): HandlerMap<DagOps> {
  const nextRuns = new NextRunCalculator();
  const catalog = new DagCatalog(new DagRepository(deps.pool), nextRuns, undefined, changes, parsers);
  // The replica's catalog has no caches: a cached page is filled from the primary only, since it
  // outlives the lag bound and must hold every change announced before it was read.
  let replicaCatalog: DagCatalog | undefined;
  const catalogOn = (db: Pool): DagCatalog =>
    db === deps.pool
      ? catalog
      : (replicaCatalog ??= new DagCatalog(new DagRepository(db), nextRuns, undefined, {}, parsers));
  const lists = changes.listCache === undefined ? deps.reads : undefined;
  return {
    ping: createPingHandler('dag-service', deps.replica),
    'dag.validate': createDagValidateHandler(catalog),
    'dag.upsert': createDagUpsertHandler(catalog),
    'dag.list': onReads(lists, deps.pool, (db) => createDagListHandler(catalogOn(db))),
    'dag.listIfChanged': onReads(lists, deps.pool, (db) => createDagListIfChangedHandler(catalogOn(db))),
    'dag.get': createDagGetHandler(catalog),
    'dag.spec': createDagSpecHandler(catalog),
    'dag.search': onReads(deps.reads, deps.pool, (db) => createDagSearchHandler(catalogOn(db))),
    'dag.delete': createDagDeleteHandler(catalog),
    'dag.setSuspended': createDagSuspendHandler(catalog),
    'dag.rename': createDagRenameHandler(catalog, deps.pool),
    'dag.schedules': createDagSchedulesHandler(deps.pool),
  };
}

/** What dag-service is built from besides the shared service deps. */
export interface DagServiceOptions {
  /** dag-service settings (`config/dag-config.ts`). */
  readonly dagConfig: DagConfig;
}

/**
 * dag-service: DAG definitions — validation, storage, list, search, spec.
 * With `DAG_SPEC_CACHE_MS` > 0 each replica caches `dag.spec` replies and
 * `dag.list` pages sorted by name (dags/dag-list-cache.ts) and subscribes to `<BUS_PREFIX>:dag:changed`; with 0 it caches nothing but
 * still announces its changes, so replicas that do cache stay correct (e.g.
 * during a rolling change of the setting). `onStop` closes both Redis
 * connections after the worker stopped taking jobs.
 */
export function createDagService(options: DagServiceOptions): ServiceDefinition<DagOps> {
  let channel: DagChangeChannel | undefined;
  const parsers = new SpecParsers(options.dagConfig.specParse);
  return {
    service: 'dag',
    catalog: dagOps,
    migrations: DAG_MIGRATIONS,
    // A rename's run history and a DAG's own profile live in run-service: the outbox rows carry the change there.
    outboxRoutes: { 'dag.renamed': DAG_MOVES_QUEUE, 'dag.deleted': DAG_MOVES_QUEUE },
    createHandlers: (deps) => {
      const ttlMs = options.dagConfig.specCacheMs;
      const specCache = ttlMs > 0 ? new DagSpecCache({ ttlMs }) : undefined;
      const logger = deps.logger.child({ module: 'dag-changes' });
      channel = new DagChangeChannel({
        redisUrl: deps.config.REDIS_URL,
        prefix: deps.config.BUS_PREFIX,
        replica: deps.replica,
        cache: specCache,
        logger,
      });
      const announcer = channel;
      const listCache = specCache !== undefined ? new DagListCache(specCache, ttlMs) : undefined;
      return createDagHandlers(
        deps,
        { specCache, listCache, announceChange: (name) => announcer.publish(name) },
        parsers,
      );
    },
    onStop: async () => {
      await channel?.close();
      await parsers.close();
    },
  };
}
