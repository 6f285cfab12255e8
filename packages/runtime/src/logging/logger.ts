import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * Paths pino removes from every log line (CONTRIBUTING §9): credentials never
 * reach logs, whatever object a caller passes.
 */
export const REDACT_PATHS = [
  'authorization',
  'password',
  'token',
  'apiKey',
  'cookie',
  'secret',
  '*.authorization',
  '*.password',
  '*.token',
  '*.apiKey',
  '*.cookie',
  '*.secret',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers.authorization',
  'headers.cookie',
];

/**
 * Creates the app's root logger.
 * @param opts.name   app name, e.g. `mcp-gateway` (becomes the `app` field)
 * @param opts.level  pino level (default `info`)
 * @param opts.pretty human-readable lines (pino-pretty, one line per event) instead of JSON;
 *                    `LOG_PRETTY=auto` (the default) turns it on when stdout is a terminal.
 */
export function createLogger(opts: { name: string; level?: string; pretty?: boolean }): Logger {
  return pino({
    level: opts.level ?? 'info',
    base: { app: opts.name },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    ...(opts.pretty
      ? {
          transport: {
            target: 'pino-pretty',
            options: {
              // Colours only for a terminal (run-stack.js sets FORCE_COLOR when its own stdout is one).
              colorize: process.stdout.isTTY === true || process.env.FORCE_COLOR === '1',
              singleLine: true,
              translateTime: 'SYS:HH:MM:ss.l',
              ignore: 'pid,hostname',
            },
          },
        }
      : {}),
  });
}
