/**
 * The run inspector MCP App (the MCP Apps extension `io.modelcontextprotocol/ui`,
 * spec 2026-01-26 §UI resources): constants the gateway advertises and the loader of the
 * one self-contained HTML file `npm run build` writes to `dist/run-inspector.html`.
 *
 * The browser side lives in `app/` and is bundled by `scripts/build-app.mjs`; this entry
 * point is Node-only and never imports the ext-apps SDK (an ES module, v2 SDK peers), so
 * the gateway stays on SDK 1.x.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export {
  describeRun,
  errorOfToolResult,
  isRunFinished,
  runOfToolResult,
  stepLogOf,
  type RunView,
  type StepView,
} from './run-model';

/** The resource URI of the inspector (`ui://` scheme, MCP Apps §UI resources). */
export const RUN_INSPECTOR_URI = 'ui://dagu/run-inspector';
/** The MIME type MCP Apps gives an app's HTML (ext-apps `RESOURCE_MIME_TYPE`). */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** The extension's id in `capabilities.extensions` (ext-apps `EXTENSION_ID`). */
export const UI_EXTENSION_ID = 'io.modelcontextprotocol/ui';

/** Where the build writes the bundled app (beside `src/` and `dist/`, so both resolve it). */
export function runInspectorHtmlPath(): string {
  return join(__dirname, '..', 'dist', 'run-inspector.html');
}

/**
 * Reads the bundled app once (the gateway calls it at start).
 *
 * @param path default {@link runInspectorHtmlPath}
 * @returns the HTML document, every script and style inlined
 * @throws Error naming the missing file and `npm run build` when the package was not built
 */
export function loadRunInspectorHtml(path = runInspectorHtmlPath()): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`The run inspector app is not built (${path}); run \`npm run build\`.`, { cause: err });
  }
}
