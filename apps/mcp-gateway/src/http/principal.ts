import type { Response } from 'express';
import { DaguError, PrincipalSchema, type Principal } from '@dagu-mcp/contracts';
import type { BrowserSession } from '../auth/browser-sessions';

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

/** Sessions by response: typed, and gone with the response (Express types `res.locals` as `any`). */
const sessions = new WeakMap<Response, BrowserSession>();

/** Records the browser session `authenticate()` signed the request in with. */
export function setBrowserSession(res: Response, session: BrowserSession): void {
  sessions.set(res, session);
}

/**
 * The browser session `authenticate()` signed the request in with, or undefined when
 * another credential (or none) was used.
 */
export function browserSessionOf(res: Response): BrowserSession | undefined {
  return sessions.get(res);
}
