import Handlebars from 'handlebars';
import type { Response } from 'express';

/**
 * Server-rendered pages of the gateway (sign-in; the OAuth consent and authorizations
 * pages reuse this): Handlebars templates, which escape every `{{value}}`, inside one
 * layout with one local stylesheet. No script runs: the pages work without JavaScript.
 */

/** The Content-Security-Policy of a page: its own stylesheet, its own forms, no scripts, no framing. */
export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/**
 * {@link PAGE_CSP} with `formTarget` added to `form-action`: a page whose form's answer
 * redirects off the origin (CSP applies `form-action` to those redirects) names that one
 * target, never more. Undefined: {@link PAGE_CSP}.
 */
export function pageCspWithFormTarget(formTarget: string | undefined): string {
  return formTarget === undefined
    ? PAGE_CSP
    : PAGE_CSP.replace("form-action 'self'", `form-action 'self' ${formTarget}`);
}

const layout = Handlebars.compile(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>{{title}} · dagu-mcp</title>
<link rel="stylesheet" href="{{basePath}}/assets/pages.css">
</head>
<body>
<main class="card">
<p class="brand">dagu-mcp</p>
{{{body}}}
</main>
</body>
</html>
`);

/** A compiled page body template; `{{x}}` escapes, `{{{x}}}` does not (use only for our own HTML). */
export type PageTemplate = Handlebars.TemplateDelegate;

/** Compiles a page body template once, at module load. */
export function pageTemplate(source: string): PageTemplate {
  return Handlebars.compile(source, { strict: false });
}

/**
 * Renders `template` with `context` inside the layout and sends it.
 *
 * @param options.status HTTP status, default 200
 * @param options.csp Content-Security-Policy, default {@link PAGE_CSP} (the consent page
 *   widens `form-action`, whose redirect leaves the origin)
 */
export function renderPage(
  res: Response,
  template: PageTemplate,
  context: { title: string; basePath: string } & Record<string, unknown>,
  options: { status?: number; csp?: string } = {},
): void {
  const body = template(context);
  res
    .status(options.status ?? 200)
    .setHeader('Content-Security-Policy', options.csp ?? PAGE_CSP)
    .setHeader('Cache-Control', 'no-store')
    .setHeader('Referrer-Policy', 'no-referrer')
    .type('html')
    .send(layout({ title: context.title, basePath: context.basePath, body }));
}
