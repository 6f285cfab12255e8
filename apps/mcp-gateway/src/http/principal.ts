import type { Response } from 'express';
import { DaguError, PrincipalSchema, type Principal } from '@dagu-mcp/contracts';

/**
 * The authenticated caller of a REST or MCP request, as `authenticate()` left
 * it in `res.locals.principal`.
 *
 * @throws DaguError `unauthenticated` when the request was not authenticated
 */
export function principalOf(res: Response): Principal {
  const parsed = PrincipalSchema.safeParse(res.locals.principal);
  if (!parsed.success) throw new DaguError('unauthenticated', 'Authentication is required.');
  return parsed.data;
}
