import { createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { sendConsolePage, type WebConsole } from './web-console';

/**
 * `GET /` (and `GET <BASE_PATH>/`): what a person or a script finds at the gateway's root
 * (issue "The first hour", item 3; docs/decisions.md "The gateway's root"). A browser gets a
 * small page naming the endpoints and the docs; `Accept: application/json` gets the same as a
 * JSON index. When the web console is built (`WEB_DIST_DIR`) a browser gets the
 * console instead of the small page; the JSON index stays.
 */

/** The JSON index at the root: where the MCP endpoint, the REST API and its OpenAPI document are. */
export interface RootIndex {
  readonly name: 'dagu-mcp';
  readonly version: string;
  readonly mcp: string;
  readonly restApi: string;
  readonly openApi: string;
  readonly health: string;
  readonly docs: Record<string, string>;
}

/** The docs a newcomer needs, by topic; paths in the repository (the README's "First hour"). */
const DOCS: Record<string, string> = {
  readme: 'README.md',
  restApi: 'docs/rest-api.md',
  transport: 'docs/mcp-transport.md',
  deployment: 'docs/deployment.md',
  security: 'docs/security.md',
  reference: 'dagu://reference (dagu_read target=reference)',
};

/** The root index for a gateway mounted at `basePath` ('' or e.g. `/dagu`). */
export function rootIndex(basePath: string, version: string): RootIndex {
  return {
    name: 'dagu-mcp',
    version,
    mcp: `${basePath}/mcp`,
    restApi: `${basePath}/api/v1`,
    openApi: `${basePath}/api/v1/openapi.json`,
    health: '/healthz',
    docs: DOCS,
  };
}

const STYLE =
  'body{font:16px/1.5 system-ui,sans-serif;max-width:42rem;margin:3rem auto;padding:0 1rem;color:#1b1f24}' +
  'code{background:#f2f4f7;padding:.1rem .3rem;border-radius:4px}h1{font-size:1.6rem}li{margin:.3rem 0}';
/** The page's one inline style, allowed by its hash: the page keeps the strict CSP of every answer. */
const STYLE_HASH = `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function rootPage(index: RootIndex): string {
  const code = (text: string) => `<code>${escapeHtml(text)}</code>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>dagu-mcp</title><style>${STYLE}</style></head>
<body><main>
<h1>dagu-mcp ${escapeHtml(index.version)}</h1>
<p>A Dagu-compatible workflow platform whose front door is the Model Context Protocol.</p>
<ul>
<li>MCP endpoint (Streamable HTTP): ${code(index.mcp)}: add this URL to your MCP client with an API key.</li>
<li>REST API: ${code(index.restApi)}, described by ${code(index.openApi)}.</li>
<li>Health: ${code(index.health)}.</li>
</ul>
<p>Start with the README's "First hour" section; the reference topics are readable over MCP
(${code('dagu_read')} with ${code('{"target":"reference"}')}).</p>
</main></body></html>
`;
}

/**
 * The `GET /` handler: the JSON {@link RootIndex} for `Accept: application/json`; otherwise the
 * web console when `web` is given, else the small HTML index.
 */
export function rootHandler(basePath: string, version: string, web?: WebConsole) {
  const index = rootIndex(basePath, version);
  const page = rootPage(index);
  return function root(req: Request, res: Response): void {
    if (req.accepts(['text/html', 'application/json']) === 'application/json') {
      res.json(index);
      return;
    }
    if (web !== undefined) return sendConsolePage(res, web);
    res.setHeader('Content-Security-Policy', `default-src 'none'; style-src ${STYLE_HASH}; frame-ancestors 'none'`);
    res.type('text/html; charset=utf-8').send(page);
  };
}
