import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { DaguError, fieldOfIssue, issueMessage } from '@dagu-mcp/contracts';

/**
 * Validates a REST body or query against `schema`.
 * @throws DaguError `invalid_request` naming the first bad field (`body` for the body as a whole);
 *   a required field that is absent reads "<field>: required" whatever its type (an enum's too)
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const input = value ?? {};
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue === undefined ? 'body' : (fieldOfIssue(issue) ?? 'body');
  // A field that is simply absent says so ("role: required"), not zod's "Invalid option: expected one of …".
  const message = issue === undefined ? 'invalid' : issueMessage(issue, input);
  throw new DaguError('invalid_request', `${field}: ${message}`, { field });
}

/** Runs a body parser middleware as a promise (it rejects with body-parser's error, e.g. too large → 413). */
export function runParser(parser: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    parser(req, res, (err?: unknown) =>
      err === undefined || err === null
        ? resolve()
        : reject(err instanceof Error ? err : new Error('body parser failed', { cause: err })),
    );
  });
}
