import type { IncomingMessage } from 'node:http';
import { TextDecoder } from 'node:util';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { JsonSyntaxError, parseStrict, type JsonParseThreads } from './json-parse-threads';

/** Options of {@link jsonBody}. */
export interface JsonBodyOptions {
  /** Largest body read, bytes (`BODY_LIMIT_BYTES`); past it: 413, `type: 'entity.too.large'`. */
  readonly limitBytes: number;
  /** Bodies of this many bytes or more are parsed on `threads` (`BODY_PARSE_THREAD_MIN_BYTES`). */
  readonly threadMinBytes: number;
  readonly threads: JsonParseThreads;
  /** Which requests are read (body-parser's `type`); default every request with a body. */
  readonly type?: string | string[] | ((req: IncomingMessage) => boolean);
}

/** An error shaped as body-parser's, so the REST and MCP error handlers answer it as before. */
function bodyError(status: number, type: string, message: string): Error {
  return Object.assign(new Error(message), { status, statusCode: status, expose: true, type });
}

/** The charset a JSON body is read with: the Content-Type's, else UTF-8 (RFC 8259 §8.1). */
function charsetOf(req: Request): string {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(req.headers['content-type'] ?? '');
  return (match?.[1] ?? 'utf-8').toLowerCase();
}

/**
 * `express.json()` with large bodies parsed off the event loop: reads the
 * body with body-parser (limit, `Content-Encoding`, `Content-Length` checks and its errors
 * unchanged), then parses it in place when it is small and on a {@link JsonParseThreads}
 * thread from `threadMinBytes` on, so one client sending megabyte bodies back to back does
 * not hold every other request on the replica. Same answers as `express.json()` (strict
 * mode): `req.body` is the parsed value, `{}` for an empty body, left `undefined` without
 * a body; a charset other than UTF-* is 415 `charset.unsupported`; text that is not a JSON
 * object or array is 400 `entity.parse.failed`.
 */
export function jsonBody(options: JsonBodyOptions): RequestHandler {
  const readRaw = express.raw({ limit: options.limitBytes, type: options.type ?? (() => true) });
  return function jsonBody(req: Request, res: Response, next: NextFunction): void {
    readRaw(req, res, (err?: unknown) => {
      if (err !== undefined) return next(err);
      const raw: unknown = req.body;
      if (!Buffer.isBuffer(raw)) return next();
      parsed(raw, charsetOf(req), options).then(
        (value) => {
          req.body = value;
          next();
        },
        (failure: unknown) => {
          req.body = undefined;
          next(failure);
        },
      );
    });
  };
}

async function parsed(raw: Buffer, charset: string, options: JsonBodyOptions): Promise<unknown> {
  let decoder: TextDecoder;
  try {
    if (!charset.startsWith('utf-')) throw new RangeError(charset);
    decoder = new TextDecoder(charset);
  } catch {
    throw bodyError(415, 'charset.unsupported', `unsupported charset "${charset}"`);
  }
  if (raw.length === 0) return {};
  try {
    if (raw.length >= options.threadMinBytes) return await options.threads.parse(raw, charset);
    return parseStrict(decoder.decode(raw));
  } catch (err) {
    if (err instanceof JsonSyntaxError || err instanceof SyntaxError)
      throw bodyError(400, 'entity.parse.failed', err.message);
    throw err;
  }
}
