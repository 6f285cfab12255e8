import type { Logger } from '../logging/logger';

/**
 * Calls `stop` once on SIGTERM or SIGINT, then exits 0 (or 1 if `stop`
 * failed or took longer than `graceMs`, default 25 s — below Kubernetes'
 * default 30 s termination grace period).
 */
export function onShutdown(stop: () => Promise<void>, logger: Logger, graceMs = 25_000): void {
  let stopping = false;
  const handler = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      logger.error({ graceMs }, 'graceful shutdown timed out');
      process.exit(1);
    }, graceMs);
    timer.unref();
    stop().then(
      () => process.exit(0),
      (err: unknown) => {
        logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', handler);
  process.on('SIGINT', handler);
}
