import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import express, { Router, type NextFunction, type Request, type Response } from 'express';

/**
 * The web console: the single-page app `apps/web` builds to static files, served
 * from `WEB_DIST_DIR` at `/` and under `BASE_PATH` (docs/decisions.md "The web
 * console"). The gateway never imports the app: it reads `index.html` once and serves the
 * hashed files under `console/` as they are.
 */

/** Path prefixes (after `BASE_PATH`) the console's fallback never answers: their 404s stay JSON. */
export const RESERVED_PREFIXES: readonly string[] = [
  '/api',
  '/mcp',
  '/oauth',
  '/.well-known',
  '/healthz',
  '/readyz',
  '/signin',
  '/signout',
  '/assets',
  '/console',
];

/**
 * The console page's own Content-Security-Policy: scripts, styles, images and fetches from
 * the gateway itself only (no inline script, no inline style element), never framed. Every
 * other answer keeps `default-src 'none'` (browser-rules.ts).
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/** The built console: its `index.html` (asset paths already under `BASE_PATH`) and where its files are. */
export interface WebConsole {
  readonly html: string;
  readonly assetsDir: string;
}

/**
 * Loads the built console from `distDir`, or `undefined` when it has not been built there
 * (the gateway then answers `/` with its small HTML index).
 *
 * The build refers to its files as `/console/…`; under a `BASE_PATH` they are rewritten to
 * `<BASE_PATH>/console/…`, and the page learns its base from `<meta name="dagu-base">`.
 */
export function loadWebConsole(distDir: string, basePath: string): WebConsole | undefined {
  const index = join(distDir, 'index.html');
  if (!existsSync(index)) return undefined;
  const html = readFileSync(index, 'utf8')
    .replace(/(src|href)="\/console\//g, `$1="${basePath}/console/`)
    .replace('<head>', `<head><meta name="dagu-base" content="${basePath}">`);
  return { html, assetsDir: join(distDir, 'console') };
}

/** True when `path` (already without `BASE_PATH`) may be answered by the console's page. */
export function isConsolePath(path: string): boolean {
  return !RESERVED_PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
}

/** Sends the console's page with its own CSP; `no-cache` so a new build is picked up at once. */
export function sendConsolePage(res: Response, web: WebConsole): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('Cache-Control', 'no-cache');
  res.type('text/html; charset=utf-8').send(web.html);
}

/**
 * The console's router, mounted once at the root: its hashed files under `/console/` and
 * `<BASE_PATH>/console/` (cached for a year: their names change with their content) and, for
 * a GET that asks for HTML by name on any path outside {@link RESERVED_PREFIXES} (checked with
 * and without `BASE_PATH`), the page itself (the single-page app's fallback). Everything else
 * falls through to the JSON 404.
 */
export function webConsoleRouter(web: WebConsole, basePath: string): Router {
  const router = Router();
  const files = express.static(web.assetsDir, { immutable: true, maxAge: '365d', index: false, fallthrough: true });
  router.use('/console', files);
  if (basePath !== '') router.use(`${basePath}/console`, files);
  router.get(/.*/, function consoleFallback(req: Request, res: Response, next: NextFunction): void {
    const path = basePath !== '' && req.path.startsWith(`${basePath}/`) ? req.path.slice(basePath.length) : req.path;
    if (!isConsolePath(path)) return next();
    // Only a navigation (a browser asks for text/html by name); fetch's `*/*` keeps the JSON 404.
    if (!(req.headers.accept ?? '').includes('text/html')) return next();
    sendConsolePage(res, web);
  });
  return router;
}
