import { Redis } from 'ioredis';
import { createLogger, createPool, migrate } from '@dagu-mcp/runtime';
import { DaguError } from '@dagu-mcp/contracts';
import { loadGatewayConfig } from '../config';
import { GATEWAY_MIGRATIONS } from '../db/migrations';
import { hashPassword } from '../auth/password';
import { UserRepository } from '../auth/user.repository';
import { loginChangedChannel } from '../auth/login-sessions';

/**
 * `npm run admin:reset-password`: sets the password of `ADMIN_USERNAME`
 * (default `admin`) to `ADMIN_PASSWORD` (or `ADMIN_PASSWORD_FILE`) in the
 * gateway's schema, creating the admin when it is missing. For the one who
 * lost the password printed at first start. Exit code 2 on bad config.
 */
async function main(): Promise<void> {
  const config = loadGatewayConfig();
  if (config.ADMIN_PASSWORD === undefined) {
    process.stderr.write('Set ADMIN_PASSWORD (or ADMIN_PASSWORD_FILE) to the new password, at least 8 characters.\n');
    process.exit(2);
  }
  const logger = createLogger({ name: 'reset-admin-password', level: 'warn' });
  const pool = createPool({
    url: config.DATABASE_URL,
    schema: config.DB_SCHEMA,
    preparedStatements: config.DB_PREPARED_STATEMENTS,
    logger,
  });
  try {
    await migrate(pool, config.DB_SCHEMA, GATEWAY_MIGRATIONS, logger);
    const users = new UserRepository(pool);
    const passwordHash = await hashPassword(config.ADMIN_PASSWORD);
    const found = await users.findByUsername(config.ADMIN_USERNAME);
    if (found !== undefined) {
      // The new password bumps the token version: the admin's older login tokens end.
      await users.update(found.user.id, { passwordHash, role: 'admin' });
      await announceUserChanged(config.REDIS_URL, config.BUS_PREFIX, found.user.id);
    } else {
      await users.create({ username: config.ADMIN_USERNAME, role: 'admin', passwordHash }).catch((err: unknown) => {
        if (!(err instanceof DaguError)) throw err;
      });
    }
    process.stdout.write(`Password of "${config.ADMIN_USERNAME}" set (schema ${config.DB_SCHEMA}).\n`);
  } finally {
    await pool.end();
  }
}

/**
 * Tells running gateways to read the user again at once. Best effort: when
 * Redis cannot be reached, the gateways still drop the old tokens within
 * `LOGIN_STATE_CACHE_MS` (5 s).
 */
async function announceUserChanged(redisUrl: string, prefix: string, userId: string): Promise<void> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.publish(loginChangedChannel(prefix), `user:${userId}`);
  } catch {
    process.stderr.write('Gateways were not told over Redis; old login tokens end within 5 s anyway.\n');
  } finally {
    redis.disconnect();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`reset-admin-password: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
