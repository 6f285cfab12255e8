import { z } from 'zod';
import { DaguError } from '@dagu-mcp/contracts';

/**
 * Validates a REST body or query against `schema`.
 * @throws DaguError `invalid_request` naming the first bad field (`body` for the body as a whole)
 */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue?.path.map(String).join('.') || 'body';
  throw new DaguError('invalid_request', `${field}: ${issue?.message ?? 'invalid'}`, { field });
}
