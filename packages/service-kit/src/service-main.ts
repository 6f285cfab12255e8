import { runProcessMain } from '@dagu-mcp/runtime';
import type { OpCatalog } from '@dagu-mcp/contracts';
import { loadServiceConfig } from './service-config';
import { startService, type ServiceDefinition } from './service-host';

/**
 * The whole `main` of a service process: parse config (a bad one stops the
 * start with the reason on stderr), start, and stop gracefully on SIGTERM.
 *
 * @param defaults the service's default schema and ops port
 */
export function runServiceMain<C extends OpCatalog>(
  name: string,
  def: ServiceDefinition<C>,
  defaults: { schema: string; opsPort: number },
): void {
  runProcessMain(
    name,
    () => loadServiceConfig(defaults),
    (config, logger) => startService(def, config, logger),
  );
}
