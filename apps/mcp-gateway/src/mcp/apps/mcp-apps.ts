import type { ReadResourceResult, Resource, ServerCapabilities, Tool } from '@modelcontextprotocol/sdk/types.js';
import { MCP_APP_MIME_TYPE, RUN_INSPECTOR_URI, UI_EXTENSION_ID } from '@dagu-mcp/run-inspector';

/**
 * The MCP Apps extension (`io.modelcontextprotocol/ui`) on the gateway's side:
 * which sessions get it, the `ui://dagu/run-inspector` resource and the tool metadata
 * that points a host at it. A session whose client did not declare the extension in
 * `initialize` sees the gateway exactly as before (no capability, no resource in the
 * list, no `_meta.ui` on tools); the resource is still readable by URI, like any other.
 */

/** The tool whose definition carries `_meta.ui.resourceUri` (not `dagu_read`: a host would render it for every read). */
export const INSPECTED_TOOL = 'dagu_execute';

/**
 * True when the client declared the UI extension (`capabilities.extensions["io.modelcontextprotocol/ui"]`,
 * MCP Apps §Capability negotiation); its `mimeTypes`, when given, must include the MCP App type.
 */
export function declaresUiExtension(clientCapabilities: Record<string, unknown> | undefined): boolean {
  const extensions = clientCapabilities?.extensions;
  if (typeof extensions !== 'object' || extensions === null) return false;
  const ui: unknown = Object.getOwnPropertyDescriptor(extensions, UI_EXTENSION_ID)?.value;
  if (typeof ui !== 'object' || ui === null) return false;
  const mimeTypes: unknown = Object.getOwnPropertyDescriptor(ui, 'mimeTypes')?.value;
  return !Array.isArray(mimeTypes) || mimeTypes.includes(MCP_APP_MIME_TYPE);
}

/** `capabilities` plus the extension's entry, for a client that declared it. */
export function withUiExtension(capabilities: ServerCapabilities): ServerCapabilities {
  return { ...capabilities, extensions: { ...capabilities.extensions, [UI_EXTENSION_ID]: {} } };
}

/** The tool list a UI-capable session sees: `dagu_execute` carries `_meta.ui.resourceUri` (MCP Apps §Tool metadata). */
export function withInspectorMeta(tools: readonly Tool[]): Tool[] {
  return tools.map((tool) =>
    tool.name === INSPECTED_TOOL ? { ...tool, _meta: { ...tool._meta, ui: { resourceUri: RUN_INSPECTOR_URI } } } : tool,
  );
}

/** The inspector's `resources/list` entry (listed for UI-capable sessions). */
export const RUN_INSPECTOR_RESOURCE: Resource = {
  uri: RUN_INSPECTOR_URI,
  name: 'run_inspector',
  title: 'Run inspector',
  description:
    'MCP App: a DAG-run started or controlled by dagu_execute — status, steps, step logs, stop and retry — rendered by the host.',
  mimeType: MCP_APP_MIME_TYPE,
};

/**
 * The `resources/read` result of the inspector: the one self-contained HTML document
 * (no external scripts, styles or fetches, so `_meta.ui.csp` asks for no domains).
 */
export function runInspectorContents(html: string): ReadResourceResult {
  return {
    contents: [
      {
        uri: RUN_INSPECTOR_URI,
        mimeType: MCP_APP_MIME_TYPE,
        text: html,
        _meta: { ui: { prefersBorder: true, csp: { connectDomains: [], resourceDomains: [] } } },
      },
    ],
  };
}
