import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';

/**
 * Validates a REST body or query against `schema`.
 * @throws DaguError `invalid_request` naming the first bad field (`body` for the body as a whole);
 *   a required field that is absent reads "<field>: required"
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const input = value ?? {};
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.map(String).join('.') || 'body';
  // A field that is simply absent says so ("spec: required"), not zod's "expected string, received undefined".
  const missing = issue?.code === 'invalid_type' && issue.path.length > 0 && valueAt(input, issue.path) === undefined;
  throw new DaguError('invalid_request', `${field}: ${missing ? 'required' : (issue?.message ?? 'invalid')}`, {
    field,
  });
}

/** The value at a zod issue path inside `root`, or `undefined` when any step is missing. */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let node: unknown = root;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = Reflect.get(node, key);
  }
  return node;
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
