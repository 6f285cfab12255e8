import { createServer, type Server as HttpServer } from 'node:http';
import type { Response } from 'express';
import { Redis } from 'ioredis';
import { BusClient, isRedisStartWait, pingRedis, type BusClientOptions, type CallOptions } from '@dagu-mcp/bus';
import type { OpCatalog, OpReply, OpRequest, ServiceName } from '@dagu-mcp/contracts';
import {
  createAppMetrics,
  createPool,
  endpointOf,
  isPgStartWait,
  waitForDependency,
  migrate,
  migrateWithAdmin,
  openSecretBox,
  ReadRouter,
  runProcessMain,
  runTeardown,
  startOpsServer,
  type Logger,
  type Pool,
} from '@dagu-mcp/runtime';
import { createBusCallMetrics, type BusCallMetrics } from './metrics/bus-call-metrics';
import { AuditTrailConsumer } from './audit/audit-trail-consumer';
import { instrumentRequestListener } from './metrics/http-metrics';
import { createApp } from './app';
import { isLoopback, loadGatewayConfig, webDistDir, type GatewayConfig } from './config';
import { GATEWAY_MIGRATIONS } from './db/migrations';
import { startMcpSessions } from './mcp/mcp-setup';
import { originRulesFor } from './mcp/transport/http-guards';
import { createGatewayHandlers } from './mcp/gateway-handlers';
import { RunEventHub } from './mcp/run-events';
import { TaskStore } from './mcp/task-store';
import { createTaskMethods } from './mcp/task-methods';
import { TaskCallRunner } from './mcp/task-calls';
import { notifiesSubscribers, RunSubscriptionRelay, subscribedUrisOf } from './mcp/run-subscriptions';
import { loadReferenceTopics } from './reference/reference-topics';
import { loadRunInspectorHtml } from '@dagu-mcp/run-inspector';
import { setupExtensions } from './mcp/extensions/extension-setup';
import { extensionRoutes } from './routes/extensions.routes';
import { GATEWAY_VERSION } from './version';
import { createServiceProber } from './http/service-probes';
import { setupAuth } from './wiring/auth-setup';
import { healthRoutes } from './routes/health.routes';
import { dagRoutes } from './routes/dags.routes';
import { runRoutes } from './routes/runs.routes';
import { checkpointRoutes } from './routes/checkpoints.routes';
import { wikiRoutes } from './routes/wiki.routes';
import { profileRoutes } from './routes/profiles.routes';
import { mutationRoutes } from './routes/mutations.routes';
import { agentRoutes } from './routes/agents.routes';
import { agentUsageRoutes } from './routes/agent-usage.routes';
import { restOperationRoutes } from './routes/rest-operations.routes';
import { UsageRecorder } from './usage/usage-recorder';
import { startAgentEndpoints } from './wiring/agent-setup';
import { eventRoutes } from './routes/events.routes';
import { loadWebConsole } from './http/web-console';
import { serverTimeouts } from './http/server-timeouts';

/** A started gateway; `stop()` drains it (CONTRIBUTING §13). */
export interface RunningGateway {
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * Starts the gateway: migrations of its own schema, the bus client, the MCP
 * session manager and the HTTP server on `HOST:PORT`. PostgreSQL and Redis are
 * waited for first (`DEPENDENCY_WAIT_MS`, retried with backoff).
 *
 * @throws when PostgreSQL or Redis do not answer within `DEPENDENCY_WAIT_MS`, or a migration fails
 */
export async function startGateway(config: GatewayConfig, logger: Logger): Promise<RunningGateway> {
  // Secrets at rest (docs/security.md): no key outside loopback stops the start here, before anything is written.
  const secrets = openSecretBox({ keyRing: config.DAGU_ENCRYPTION_KEY, loopback: isLoopback(config.HOST) });
  if (secrets.devKeyFile !== undefined) {
    logger.warn(
      { keyFile: secrets.devKeyFile },
      'DAGU_ENCRYPTION_KEY unset: using a generated development key (allowed on a loopback stack only)',
    );
  }
  const pool = createPool({
    url: config.DATABASE_URL,
    schema: config.DB_SCHEMA,
    preparedStatements: config.DB_PREPARED_STATEMENTS,
    logger,
  });
  // The audit listing's replica; no caller marks: the trail is written off the request path.
  const reads =
    config.DATABASE_READ_URL === undefined
      ? undefined
      : new ReadRouter({
          primary: pool,
          replica: createPool({
            url: config.DATABASE_READ_URL,
            schema: config.DB_SCHEMA,
            max: 4,
            preparedStatements: config.DB_PREPARED_STATEMENTS,
            connectTimeoutMs: 1000,
            logger: logger.child({ db: 'replica' }),
          }),
          maxLagMs: config.DB_READ_MAX_LAG_MS,
          checkMs: config.DB_READ_CHECK_MS,
          logger,
        });
  // PostgreSQL and Redis may come up after the gateway (docs/decisions.md "A start waits for PostgreSQL and Redis"): waited for with backoff, the public port still closed.
  let migrated = false;
  await waitForDependency({
    dependency: 'PostgreSQL',
    target: endpointOf(config.DATABASE_ADMIN_URL ?? config.DATABASE_URL, 5432),
    attempt: () => migrateGateway(config, pool, logger),
    isUnavailable: isPgStartWait,
    waitMs: config.DEPENDENCY_WAIT_MS,
    logger,
  });
  migrated = true;
  await waitForDependency({
    dependency: 'Redis',
    target: endpointOf(config.REDIS_URL, 6379),
    attempt: () => pingRedis(config.REDIS_URL),
    isUnavailable: isRedisStartWait,
    waitMs: config.DEPENDENCY_WAIT_MS,
    logger,
  });

  const metrics = createAppMetrics({ app: 'mcp-gateway' });
  const busOptions = {
    redisUrl: config.REDIS_URL,
    prefix: config.BUS_PREFIX,
    defaultTimeoutMs: config.BUS_TIMEOUT_MS,
    handoff: config.BUS_HANDOFF,
    // A mutation that went unanswered is resolved from the service's record before the caller hears.
    resolveMutationOutcomes: true,
    logger,
  };
  const bus = new MeteredBusClient(busOptions, createBusCallMetrics(metrics.registry));
  await bus.start();
  const runEvents = new RunEventHub({ redisUrl: config.REDIS_URL, prefix: config.BUS_PREFIX, logger });
  await runEvents.start();
  // The tasks extension (mcp-revisions §4): task records in Redis, task state from the run and its events.
  const taskRedis = new Redis(config.REDIS_URL, {
    connectionName: `${config.BUS_PREFIX}:gateway:tasks`,
    maxRetriesPerRequest: 2,
  });
  taskRedis.on('error', (error: Error) => logger.debug({ error: error.message }, 'tasks connection error'));
  const taskStore = new TaskStore(taskRedis, config.BUS_PREFIX);
  const taskCalls = new TaskCallRunner(taskStore, logger);
  const tasks = createTaskMethods({ bus, store: taskStore, events: runEvents, calls: taskCalls });

  const auth = await setupAuth(config, pool, logger, secrets.box, metrics.registry, reads);
  const auditTrail = new AuditTrailConsumer({ redisUrl: config.REDIS_URL, prefix: config.BUS_PREFIX, pool, logger });
  const topics = loadReferenceTopics();
  const handlers = createGatewayHandlers({
    bus,
    topics,
    logger,
    runEvents,
    audit: (event) => auth.audit.record(event),
    stateSeal: {
      seal: (plaintext, purpose) => secrets.box.encrypt(plaintext, purpose),
      open: (sealed, purpose) => secrets.box.decrypt(sealed, purpose),
    },
    runInspectorHtml: loadRunInspectorHtml(),
    tasks: taskStore,
  });
  const extensions = setupExtensions(config, pool, logger);
  const sessions = await startMcpSessions(config, {
    handlers,
    bus,
    topics,
    logger,
    version: GATEWAY_VERSION,
    served: extensions.served,
    tasks: tasks.methods,
    taskCalls,
  });
  // Usage of agent endpoints: counted at once, written in batches off the call path.
  const usage = new UsageRecorder({
    pool,
    registry: metrics.registry,
    logger,
    retentionDays: config.AGENT_USAGE_RETENTION_DAYS,
  });
  usage.start();
  const agents = await startAgentEndpoints(config, {
    bus,
    handlers,
    topics,
    logger,
    version: GATEWAY_VERSION,
    keys: auth.agentKeys.verifier,
    currentRoleOf: (id) => auth.authority.currentRoleOf(id),
    audit: (event) => auth.audit.record(event),
    ...(auth.oauth !== undefined ? { oauth: auth.oauth.endpoint } : {}),
    served: extensions.served,
    usage,
  });
  // OAuth serves an agent's URL only while an agent that takes OAuth sign-in is published there.
  auth.oauth?.resources.attachAgents(async (workspace, slug) => {
    const catalog = await agents.catalogs.resolve(workspace, slug);
    if (catalog === undefined) return undefined;
    const { agent } = catalog;
    return {
      workspace: agent.workspace,
      slug: agent.slug,
      title: agent.title,
      signIn: agent.signIn,
      tools: catalog.definitions.map((t) => ({ name: t.name, title: t.title })),
    };
  });
  const subscriptions = new RunSubscriptionRelay({
    events: runEvents,
    anySubscribed: (uris) => sessions.anySubscribed(uris),
    claim: (key, ttlMs) => sessions.claimOnce(key, ttlMs),
    notify: (uri) => sessions.resourceUpdated(uri),
    logger,
  });
  subscriptions.start();
  // Stateless-era subscriptions/listen streams: every replica relays every run event to its own listeners.
  const stopListenRelay = runEvents.listenAll((event) => {
    if (notifiesSubscribers(event.status)) for (const uri of subscribedUrisOf(event)) sessions.listenersUpdated(uri);
  });
  const eventStreams = new Set<Response>();
  const webDir = webDistDir(config);
  const web = loadWebConsole(webDir, config.BASE_PATH);
  if (web === undefined) logger.warn({ dir: webDir }, 'web console not built: / answers the HTML index');
  const app = createApp({
    logger,
    sessions,
    basePath: config.BASE_PATH,
    bodyLimitBytes: config.BODY_LIMIT_BYTES,
    bodyParseThreadMinBytes: config.BODY_PARSE_THREAD_MIN_BYTES,
    version: GATEWAY_VERSION,
    registryName: config.SERVER_REGISTRY_NAME,
    ...(config.PUBLIC_URL !== undefined ? { publicUrl: config.PUBLIC_URL.replace(/\/+$/, '') } : {}),
    trustProxy: config.TRUST_PROXY,
    mcpOrigins: originRulesFor(config),
    agents: { gate: agents.gate, sessions: agents.sessions },
    authenticateMcp: auth.authenticateMcp,
    authenticateRest: auth.authenticateRest,
    ...(auth.oauth !== undefined ? { oauth: auth.oauth } : {}),
    ...(auth.pages !== undefined ? { pages: [auth.pages] } : {}),
    audit: (event) => auth.audit.record(event),
    restRoutes: [
      healthRoutes({ version: GATEWAY_VERSION, probeServices: createServiceProber(bus) }),
      ...auth.routes,
      dagRoutes(bus),
      runRoutes(bus),
      checkpointRoutes(bus),
      wikiRoutes({ bus, maxPageBytes: config.WIKI_PAGE_MAX_BYTES }),
      profileRoutes(bus),
      mutationRoutes(bus),
      agentRoutes({
        bus,
        keys: auth.agentKeys.repository,
        verifier: auth.agentKeys.verifier,
        audit: auth.audit,
        announce: (workspace, slug) => agents.catalogs.announce(workspace, slug),
        basePath: config.BASE_PATH,
        ...(config.PUBLIC_URL !== undefined ? { publicUrl: config.PUBLIC_URL.replace(/\/+$/, '') } : {}),
      }),
      extensionRoutes({ ...extensions, audit: auth.audit }),
      agentUsageRoutes({ bus, pool, flush: () => usage.flush() }),
      restOperationRoutes({ bus, announce: (workspace, slug) => agents.catalogs.announce(workspace, slug) }),
      eventRoutes({ events: runEvents, keepAliveMs: config.EVENTS_KEEPALIVE_MS, open: eventStreams }),
    ],
    ...(web !== undefined ? { web } : {}),
    readiness: {
      redis: () => bus.isReady(),
      postgres: async () => (await pool.query('SELECT 1')).rowCount === 1,
      migrations: () => migrated,
    },
  });

  const server: HttpServer = await new Promise((resolve) => {
    const s = createServer(
      serverTimeouts(config.HTTP_HEADERS_TIMEOUT_MS, config.HTTP_REQUEST_TIMEOUT_MS),
      instrumentRequestListener(metrics.registry, app),
    ).listen(config.PORT, config.HOST, () => resolve(s));
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.PORT;
  logger.info({ url: `http://${config.HOST}:${port}${config.BASE_PATH}/mcp` }, 'gateway listening');
  // Prometheus /metrics on its own port, never on the public one (docs/architecture.md "Deployment").
  const metricsServer = await startOpsServer({
    port: config.METRICS_PORT,
    host: config.METRICS_HOST,
    metrics: () => metrics.render(),
  });
  logger.info({ url: `http://${config.METRICS_HOST}:${config.METRICS_PORT}/metrics` }, 'gateway metrics listening');

  return {
    port,
    async stop() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        sessions.closeStreams(); // open SSE streams would keep server.close() waiting
        agents.sessions.closeStreams();
        for (const stream of eventStreams) stream.end();
      });
      // Every resource gets its close attempt even when one fails; the first failure is thrown at the end.
      await runTeardown(
        [
          ['listen relay', stopListenRelay],
          ['run subscriptions', () => subscriptions.stop()],
          ['MCP sessions', () => sessions.closeAll()],
          ['agent endpoints', () => agents.close()],
          ['extensions', () => extensions.close()],
          ['usage recorder', () => usage.stop()],
          ['audit trail', () => auditTrail.close()],
          ['authentication', () => auth.close()],
          ['run events', () => runEvents.close()],
          [
            'tasks',
            async () => {
              tasks.close();
              taskCalls.close();
              await taskRedis.quit();
            },
          ],
          ['bus', () => bus.close()],
          ['read replica', () => reads?.close()],
          ['PostgreSQL pool', () => pool.end()],
          ['metrics server', () => new Promise<void>((resolve) => metricsServer.close(() => resolve()))],
        ],
        (step, err) => logger.error({ err, step }, 'gateway teardown step failed'),
      );
      logger.info('gateway stopped');
    },
  };
}

/** Migrates the gateway's schema once, through `DATABASE_ADMIN_URL` when set (docs/security.md). */
async function migrateGateway(config: GatewayConfig, pool: Pool, logger: Logger): Promise<void> {
  if (config.DATABASE_ADMIN_URL === undefined) await migrate(pool, config.DB_SCHEMA, GATEWAY_MIGRATIONS, logger);
  else
    await migrateWithAdmin({
      adminUrl: config.DATABASE_ADMIN_URL,
      databaseUrl: config.DATABASE_URL,
      schema: config.DB_SCHEMA,
      migrations: GATEWAY_MIGRATIONS,
      logger,
    });
}

/** The bus client whose calls are timed into `dagu_bus_call_duration_seconds` by service, op and outcome. */
class MeteredBusClient extends BusClient {
  constructor(
    options: BusClientOptions,
    private readonly timer: BusCallMetrics,
  ) {
    super(options);
  }

  override call<C extends OpCatalog, K extends keyof C & string>(
    service: ServiceName,
    catalog: C,
    op: K,
    payload: OpRequest<C, K>,
    options: CallOptions,
  ): Promise<OpReply<C, K>> {
    return this.timer.time(service, op, () => super.call(service, catalog, op, payload, options));
  }
}

function main(): void {
  runProcessMain('mcp-gateway', () => loadGatewayConfig(), startGateway);
}

if (require.main === module) main();
