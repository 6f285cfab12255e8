import { randomBytes } from 'node:crypto';
import type { RequestHandler } from 'express';
import { Redis } from 'ioredis';
import { DaguError } from '@dagu-mcp/contracts';
import type { Logger, Pool, ReadRouter, Registry, SecretBox } from '@dagu-mcp/runtime';
import type { GatewayConfig } from '../config';
import { AuditLog } from '../audit/audit-log';
import { authenticate } from '../http/auth.middleware';
import type { RestRoutes } from '../http/rest-router';
import { apiKeyRoutes } from '../routes/api-keys.routes';
import { auditRoutes } from '../routes/audit.routes';
import { authRoutes } from '../routes/auth.routes';
import { userRoutes } from '../routes/users.routes';
import { sessionRoutes } from '../routes/session.routes';
import { signInPages } from '../http/pages/signin.page';
import type { Router } from 'express';
import { BrowserSessions } from '../auth/browser-sessions';
import { ApiKeyRepository } from '../auth/api-key.repository';
import { ApiKeyVerifier } from '../auth/api-key-cache';
import { AGENT_KEY_PREFIX_LENGTH, AgentKeyRepository, type AgentKeyRecord } from '../auth/agent-key.repository';
import { BindingAuthority } from '../auth/binding-authority';
import { Authenticator } from '../auth/authenticator';
import { FailureLimiter } from '../auth/failure-limiter';
import { LoginTokens } from '../auth/login-token';
import { LoginSessions } from '../auth/login-sessions';
import { hashPassword } from '../auth/password';
import { UserRepository } from '../auth/user.repository';
import { setupOAuth } from './oauth-setup';
import type { ResourceDirectory } from '../oauth/resource-directory';
import type { AgentEndpointOAuth } from '../agents/agent-endpoint';

/** Everything authentication adds to the gateway. */
export interface AuthSetup {
  readonly audit: AuditLog;
  readonly authenticateMcp: ReturnType<typeof authenticate>;
  readonly authenticateRest: ReturnType<typeof authenticate>;
  readonly routes: RestRoutes[];
  /** The built-in OAuth authorization server, when on. */
  readonly oauth?: {
    readonly router: RequestHandler;
    readonly scopeGuard: RequestHandler;
    /** What a published agent's endpoint needs to take OAuth access tokens for its own URL. */
    readonly endpoint: AgentEndpointOAuth;
    /** Which resources OAuth serves: the agent endpoints attach their lookup once started. */
    readonly resources: ResourceDirectory;
  };
  /**
   * The server-rendered sign-in pages (builtin mode only; docs/security.md "Browser
   * sessions"), mounted by the app at the root and under `BASE_PATH`.
   */
  readonly pages: Router | undefined;
  /** Browser sessions (builtin mode only): the OAuth authorize page and the console sign in through them. */
  readonly browserSessions: BrowserSessions | undefined;
  /** Published agents' keys, verified like API keys, revoked on every replica at once. */
  readonly agentKeys: { readonly repository: AgentKeyRepository; readonly verifier: ApiKeyVerifier<AgentKeyRecord> };
  /** The current role of an agent binding's author. */
  readonly authority: BindingAuthority;
  close(): Promise<void>;
}

/**
 * Builds authentication per `AUTH_MODE` (020 §Authentication, issue "Authentication,
 * API-key surfaces, roles, audit"): repositories, the cached API-key verifier
 * with cross-replica revocation, login tokens, the shared failure limiter, the
 * audit log, and the auth/users/API-key/audit REST routes. Bootstraps the
 * first admin in builtin mode. `secrets` encrypts what it keeps in PostgreSQL;
 * `registry` receives the audit buffer's metrics (audit/audit-log.ts); `reads` (the replica
 * router, `DATABASE_READ_URL`) serves the audit listing.
 */
export async function setupAuth(
  config: GatewayConfig,
  pool: Pool,
  logger: Logger,
  secrets: SecretBox,
  registry?: Registry,
  reads?: ReadRouter,
): Promise<AuthSetup> {
  const redisOptions = { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true };
  const redis = new Redis(config.REDIS_URL, { ...redisOptions, connectionName: 'gateway-auth' });
  const subscriber = new Redis(config.REDIS_URL, {
    maxRetriesPerRequest: null,
    lazyConnect: true,
    connectionName: 'gateway-auth-sub',
  });
  redis.on('error', (err: Error) => logger.debug({ err: err.message }, 'auth redis error'));
  subscriber.on('error', (err: Error) => logger.debug({ err: err.message }, 'auth redis subscriber error'));
  await Promise.all([redis.connect(), subscriber.connect()]);

  const users = new UserRepository(pool);
  const keys = new ApiKeyRepository(pool);
  const audit = new AuditLog({
    pool,
    logger,
    unauthenticated: {
      perMinute: config.AUDIT_UNAUTHENTICATED_PER_MINUTE,
      retentionDays: config.AUDIT_UNAUTHENTICATED_RETENTION_DAYS,
    },
    buffer: { maxEvents: config.AUDIT_BUFFER_MAX_EVENTS },
    registry,
  });
  const verifier = new ApiKeyVerifier({
    repository: keys,
    publisher: redis,
    subscriber,
    channel: `${config.BUS_PREFIX}:apikeys:revoked`,
    logger,
  });
  await verifier.start();
  const agentKeyRepository = new AgentKeyRepository(pool);
  const agentKeyVerifier = new ApiKeyVerifier<AgentKeyRecord>({
    repository: agentKeyRepository,
    prefixLength: AGENT_KEY_PREFIX_LENGTH,
    publisher: redis,
    subscriber,
    channel: `${config.BUS_PREFIX}:agentkeys:revoked`,
    logger,
  });
  await agentKeyVerifier.start();
  const tokens = await LoginTokens.create({
    secret: config.TOKEN_SECRET,
    ttlSeconds: config.TOKEN_TTL_SECONDS,
    pool,
    box: secrets,
  });
  const sessions = new LoginSessions({
    tokens,
    repository: users,
    publisher: redis,
    subscriber,
    prefix: config.BUS_PREFIX,
    logger,
  });
  await sessions.start();
  const limiter = new FailureLimiter({
    redis,
    prefix: config.BUS_PREFIX,
    perUser: config.LOGIN_MAX_FAILURES_PER_USER,
    perAddress: config.LOGIN_MAX_FAILURES_PER_ADDRESS,
    windowSeconds: config.LOGIN_FAILURE_WINDOW_SECONDS,
  });
  const basic =
    config.BASIC_USERNAME !== undefined && config.BASIC_PASSWORD !== undefined
      ? { username: config.BASIC_USERNAME, password: config.BASIC_PASSWORD }
      : undefined;
  const browserSessions =
    config.AUTH_MODE === 'builtin'
      ? new BrowserSessions({
          redis,
          prefix: config.BUS_PREFIX,
          users,
          logins: sessions,
          limiter,
          ttlMs: config.BROWSER_SESSION_TTL_MS,
        })
      : undefined;
  const oauth = setupOAuth({ config, pool, redis, box: secrets, users, logger, browserSessions });
  const authenticator = new Authenticator({
    mode: config.AUTH_MODE,
    users,
    apiKeys: verifier,
    sessions,
    limiter,
    ...(basic ? { basic } : {}),
    ...(oauth !== undefined ? { oauth: oauth.server.verifier } : {}),
  });
  if (config.AUTH_MODE === 'builtin') await bootstrapAdmin(users, config, logger);

  return {
    audit,
    authenticateMcp: authenticate({
      authenticator,
      surface: 'mcp',
      audit,
      ...(oauth !== undefined ? { oauth: oauth.mcp } : {}),
    }),
    authenticateRest: authenticate({
      authenticator,
      surface: 'rest_api',
      audit,
      ...(browserSessions !== undefined ? { browserSessions } : {}),
    }),
    browserSessions,
    pages:
      browserSessions === undefined
        ? undefined
        : signInPages({
            sessions: browserSessions,
            audit,
            basePath: config.BASE_PATH,
            ttlMs: config.BROWSER_SESSION_TTL_MS,
            logger,
            // A pending authorization's redirect to the client follows the sign-in form's post.
            ...(oauth !== undefined ? { formTargetOf: oauth.signInFormTarget } : {}),
          }),
    routes: [
      sessionRoutes(),
      authRoutes({ mode: config.AUTH_MODE, users, tokens, sessions, limiter, audit }),
      userRoutes({ users, sessions, audit }),
      apiKeyRoutes({ keys, verifier, audit }),
      auditRoutes({ pool, reads }),
    ],
    ...(oauth !== undefined
      ? {
          oauth: {
            router: oauth.router,
            scopeGuard: oauth.scopeGuard,
            resources: oauth.server.resources,
            endpoint: {
              resourceOf: (req) => oauth.mcp.resourceOf(req),
              challenge: (req) => oauth.mcp.challenge(req),
              isAccessToken: (token) => oauth.server.verifier.isAccessToken(token),
              verifyAccess: (token, resource) => oauth.server.verifier.verifyAccess(token, resource),
            },
          },
        }
      : {}),
    agentKeys: { repository: agentKeyRepository, verifier: agentKeyVerifier },
    authority: new BindingAuthority({ mode: config.AUTH_MODE, users, pool }),
    async close() {
      await audit.close();
      redis.disconnect();
      subscriber.disconnect();
    },
  };
}

/**
 * Creates the first admin when there are no users: `ADMIN_USERNAME` with
 * `ADMIN_PASSWORD`, or a generated password printed once to stdout. Safe
 * with several replicas starting at once (the username is unique; only the
 * replica whose insert wins prints).
 */
async function bootstrapAdmin(users: UserRepository, config: GatewayConfig, logger: Logger): Promise<void> {
  if ((await users.count()) > 0) return;
  const generated = config.ADMIN_PASSWORD === undefined;
  const password = config.ADMIN_PASSWORD ?? randomBytes(18).toString('base64url');
  try {
    await users.create({ username: config.ADMIN_USERNAME, role: 'admin', passwordHash: await hashPassword(password) });
  } catch (err) {
    if (err instanceof DaguError && err.code === 'conflict') return;
    throw err;
  }
  logger.info({ username: config.ADMIN_USERNAME }, 'first admin created');
  if (generated) {
    // Printed once, outside the structured logs, so log shipping never keeps it.
    process.stdout.write(
      `\nFirst admin created: username "${config.ADMIN_USERNAME}", password "${password}" (shown only now).\n\n`,
    );
  }
}
