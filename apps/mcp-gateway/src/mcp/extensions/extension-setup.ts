import { Redis } from 'ioredis';
import type { Logger, Pool } from '@dagu-mcp/runtime';
import type { GatewayConfig } from '../../config';
import { ExtensionDirectory } from './extension-directory';
import { ExtensionSettingsStore, ServedExtensions } from './extension-settings';

/** The gateway's extension registry: the admin switches, what is served, and who announces. */
export interface Extensions {
  readonly store: ExtensionSettingsStore;
  /** What `/mcp` and the agents' endpoints serve (one cache for both). */
  readonly served: ServedExtensions;
  readonly directory: ExtensionDirectory;
  readonly staticNames: readonly string[];
  readonly fixtureNames: readonly string[];
  close(): void;
}

/**
 * Builds the extension registry: switches in the gateway's `settings` table, the
 * configured `MCP_EXTENSIONS` and `MCP_TEST_FIXTURE_EXTENSIONS`, and a small Redis connection
 * of its own for listing the announcing services (`GET /api/v1/extensions`).
 */
export function setupExtensions(config: GatewayConfig, pool: Pool, logger: Logger): Extensions {
  const redis = new Redis(config.REDIS_URL, { maxRetriesPerRequest: 2, connectionName: 'gateway-extensions' });
  redis.on('error', (err: Error) => logger.debug({ err: err.message }, 'extensions redis error'));
  const store = new ExtensionSettingsStore(pool);
  return {
    store,
    served: new ServedExtensions({
      staticNames: config.MCP_EXTENSIONS,
      fixtureNames: config.MCP_TEST_FIXTURE_EXTENSIONS,
      store,
    }),
    directory: new ExtensionDirectory(redis, config.BUS_PREFIX),
    staticNames: config.MCP_EXTENSIONS,
    fixtureNames: config.MCP_TEST_FIXTURE_EXTENSIONS,
    close: () => redis.disconnect(),
  };
}
