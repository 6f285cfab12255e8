import type { RequestHandler } from 'express';
import { readableErrorDescription } from '../oauth/error-description';

/**
 * Makes every `error_description` the OAuth endpoints send one readable sentence (oauth/error-description.ts): in JSON error bodies (token, register, revoke, introspect,
 * authorize before the redirect URI is known) and in error redirects of the authorize step.
 * The MCP SDK's handlers write the description themselves, so it is rewritten on the way out.
 */
export function readableOAuthErrors(): RequestHandler {
  return function readableOAuthErrors(_req, res, next) {
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      if (typeof body === 'object' && body !== null && 'error_description' in body) {
        const description: unknown = body.error_description;
        if (typeof description === 'string')
          return json({ ...body, error_description: readableErrorDescription(description) });
      }
      return json(body);
    };
    const setHeader = res.setHeader.bind(res);
    res.setHeader = (name: string, value: number | string | readonly string[]) => {
      if (name.toLowerCase() === 'location' && typeof value === 'string' && URL.canParse(value)) {
        const url = new URL(value);
        const description = url.searchParams.get('error_description');
        if (description !== null) {
          url.searchParams.set('error_description', readableErrorDescription(description));
          return setHeader(name, url.href);
        }
      }
      return setHeader(name, value);
    };
    next();
  };
}
