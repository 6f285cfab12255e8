import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, mimeTypeFor } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { ReferenceTopic } from '../reference/reference-topics';
import type { McpHandlers, ToolHandler } from './mcp-server';
import { listResources, listResourceTemplates } from './resource-catalog';
import { notAvailableYet, referenceBackend, referencesBackend, type ReadBackends } from './tools/read/read-backends';
import { parseReadInput } from './tools/read/read-input';
import { createReadTool } from './tools/read/read-tool';
import { createDagReadBackends } from './tools/read/dag-read-backends';
import { createChangeTool } from './tools/change/change-tool';
import { toolError } from './tools/tool-result';

/** What the gateway's MCP handlers are built from. */
export interface GatewayHandlerDeps {
  readonly bus: BusClient;
  readonly topics: ReadonlyMap<string, ReferenceTopic>;
  readonly logger: Logger;
}

/** The read backends: reference topics are the gateway's own; the rest go to the services. */
export function createReadBackends(deps: GatewayHandlerDeps): ReadBackends {
  return {
    references: referencesBackend(deps.topics),
    reference: referenceBackend(deps.topics),
    ...createDagReadBackends(deps.bus),
    wiki: notAvailableYet('wiki'),
    wiki_page: notAvailableYet('wiki_page'),
    wiki_search: notAvailableYet('wiki_search'),
    runs: notAvailableYet('runs'),
    run: notAvailableYet('run'),
    run_logs: notAvailableYet('run_logs'),
    step_log: notAvailableYet('step_log'),
    foreach_items: notAvailableYet('foreach_items'),
    foreach_item: notAvailableYet('foreach_item'),
  };
}

/** A tool whose service does not implement it yet: `resource_unavailable`, saying so. */
function unavailableTool(name: string): ToolHandler {
  return async () => toolError({ code: 'resource_unavailable', message: `${name} is not available in this server yet.` });
}

/**
 * Wires the MCP surface: the three tools, the resource lists and
 * `resources/read` (which serves the same backends as `dagu_read`).
 */
export function createGatewayHandlers(deps: GatewayHandlerDeps): McpHandlers {
  const backends = createReadBackends(deps);
  return {
    tools: {
      dagu_read: createReadTool(backends),
      dagu_change: createChangeTool(deps.bus),
      dagu_execute: unavailableTool('dagu_execute'),
    },
    listResources: () => listResources(deps.topics),
    listResourceTemplates,
    readResource: async (uri, ctx): Promise<ReadResourceResult> => {
      const request = parseReadInput({ uri }, {});
      if (request.resource === undefined) throw new DaguError('invalid_resource_uri', 'Resource URI is malformed.', { field: 'uri' });
      const data = await backends[request.target](request, ctx.principal);
      const mimeType = mimeTypeFor(request.resource.kind);
      return { contents: [{ uri, mimeType, text: contentText(request.target, data) }] };
    },
  };
}

/** The resource body: Markdown, YAML or page text for the text families (020), JSON for the rest. */
function contentText(target: string, data: Record<string, unknown>): string {
  const textKey = target === 'reference' ? 'text' : target === 'dag_spec' ? 'spec' : target === 'wiki_page' ? 'content' : undefined;
  const text = textKey === undefined ? undefined : data[textKey];
  return typeof text === 'string' ? text : JSON.stringify(data);
}
