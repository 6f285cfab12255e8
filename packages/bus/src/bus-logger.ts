/**
 * The logging surface the bus needs: a pino-compatible subset, so an app passes
 * its pino child logger as is and tests pass nothing (a silent logger).
 * Messages are constant strings; ids travel in the fields object (CONTRIBUTING §9).
 */
export interface BusLogger {
  debug(fields: Record<string, unknown>, message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  /** pino's `child`: when present, used to bind per-module or per-job fields. */
  child?(bindings: Record<string, unknown>): BusLogger;
}

function ignore(): void {
  // silent by design
}

/** A logger that drops everything: the default when no logger is given. */
export const SILENT_LOGGER: BusLogger = Object.freeze({
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
});

/**
 * A logger whose every line carries `bindings`: pino's `child` when the logger
 * has one, else a small wrapper that merges the fields (line fields win).
 */
export function bindLogger(logger: BusLogger, bindings: Record<string, unknown>): BusLogger {
  if (logger === SILENT_LOGGER) return logger;
  if (typeof logger.child === 'function') return logger.child(bindings);
  return {
    debug: (fields, message) => logger.debug({ ...bindings, ...fields }, message),
    info: (fields, message) => logger.info({ ...bindings, ...fields }, message),
    warn: (fields, message) => logger.warn({ ...bindings, ...fields }, message),
    error: (fields, message) => logger.error({ ...bindings, ...fields }, message),
  };
}

/** The log-safe view of an unknown thrown value: name, message and stack, never the raw object. */
export function describeError(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    return { name: error.name, message: error.message, stack: error.stack };
  }
  return { message: String(error) };
}
