import { createLogger, onShutdown, setupTracing } from '@dagu-mcp/runtime';
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
  let config;
  try {
    config = loadServiceConfig(defaults);
  } catch (err) {
    process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  }
  const logger = createLogger({ name, level: config.LOG_LEVEL, pretty: config.LOG_PRETTY });
  // Before anything else starts, so every span of the process has the provider.
  const tracing = setupTracing({ serviceName: config.OTEL_SERVICE_NAME ?? name, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, logger });
  startService(def, config, logger).then(
    (running) =>
      onShutdown(async () => {
        await running.stop();
        await tracing.shutdown();
      }, logger),
    (err: unknown) => {
      logger.fatal({ err }, 'start failed');
      process.exit(1);
    },
  );
}
