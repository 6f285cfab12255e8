import { createLogger, type Logger } from '../logging/logger';
import { onShutdown } from '../shutdown/shutdown';
import { setupTracing } from '../tracing/tracing';

/** The settings every app's config has that its process `main` needs. */
export interface ProcessConfig {
  readonly LOG_LEVEL: string;
  readonly LOG_PRETTY: boolean;
  readonly OTEL_SERVICE_NAME?: string | undefined;
  readonly OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
}

/**
 * The whole `main` of an app process (gateway and services alike): parse the
 * config (a bad one stops the start with the reason on stderr, exit code 2),
 * create the logger, set up tracing before anything else starts, start, and
 * on SIGTERM/SIGINT stop gracefully and flush traces (exit code 1 when the
 * start fails).
 *
 * @param name         the app name, e.g. `mcp-gateway` (logger `app`, default trace service name)
 * @param loadConfig   parses the environment; throws `ConfigError` on bad settings
 * @param start        starts the app; resolves to something that can `stop()`
 */
export function runProcessMain<C extends ProcessConfig>(
  name: string,
  loadConfig: () => C,
  start: (config: C, logger: Logger) => Promise<{ stop(): Promise<void> }>,
): void {
  let config: C;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`${name}: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  }
  const logger = createLogger({ name, level: config.LOG_LEVEL, pretty: config.LOG_PRETTY });
  const tracing = setupTracing({
    serviceName: config.OTEL_SERVICE_NAME ?? name,
    otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    logger,
  });
  start(config, logger).then(
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
