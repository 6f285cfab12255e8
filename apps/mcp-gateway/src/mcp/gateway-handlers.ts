import type { ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { DaguError, mimeTypeFor } from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import type { Logger } from '@dagu-mcp/runtime';
import type { ReferenceTopic } from '../reference/reference-topics';
import type { AuditEvent } from '../audit/audit-log';
import type { McpHandlers } from './mcp-types';
import { listResources, listResourceTemplates } from './resource-catalog';
import { referenceBackend, referencesBackend, type ReadBackends } from './tools/read/read-backends';
import { parseReadInput } from './tools/read/read-input';
import { createReadTool } from './tools/read/read-tool';
import { createDagReadBackends } from './tools/read/dag-read-backends';
import { createWikiReadBackends } from './tools/read/wiki-read-backends';
import { createChangeTool } from './tools/change/change-tool';
import { createRunReadBackends, withLatestRun } from './tools/read/run-read-backends';
import { createWorkbookReadBackend } from './tools/read/workbook-read-backend';
import { createExecuteTool } from './tools/execute/execute-tool';
import type { StateSeal } from './tools/execute/execute-mrtr';
import type { RunEventSource } from './run-events';
import type { TaskStore } from './task-store';
import { RUN_INSPECTOR_URI } from '@dagu-mcp/run-inspector';
import { runInspectorContents } from './apps/mcp-apps';

/** What the gateway's MCP handlers are built from. */
export interface GatewayHandlerDeps {
  readonly bus: BusClient;
  readonly topics: ReadonlyMap<string, ReferenceTopic>;
  readonly logger: Logger;
  /** Run status changes for `dagu_execute` waits; without it a wait re-reads on a timer. */
  readonly runEvents?: RunEventSource;
  readonly audit: (event: AuditEvent) => void;
  /** Seals the state of multi-round-trip requests (2026-07-28); the gateway's secret box. */
  readonly stateSeal?: StateSeal;
  /** The run inspector MCP App's HTML, served as `ui://dagu/run-inspector`; without it that URI is not found. */
  readonly runInspectorHtml?: string;
  /** Task records (tasks extension, mcp-revisions §4): `dagu_execute` answers tasks to clients that declared it. */
  readonly tasks?: TaskStore;
}

/** The read backends: reference topics are the gateway's own; the rest go to the services. */
export function createReadBackends(deps: GatewayHandlerDeps): ReadBackends {
  const dagBackends = createDagReadBackends(deps.bus);
  return {
    references: referencesBackend(deps.topics),
    reference: referenceBackend(deps.topics),
    ...dagBackends,
    dag: withLatestRun(dagBackends.dag, deps.bus),
    ...createWikiReadBackends(deps.bus),
    ...createRunReadBackends(deps.bus),
    workbook: createWorkbookReadBackend(deps.bus),
  };
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
      dagu_execute: createExecuteTool({
        bus: deps.bus,
        ...(deps.runEvents !== undefined ? { events: deps.runEvents } : {}),
        ...(deps.stateSeal !== undefined ? { stateSeal: deps.stateSeal } : {}),
        ...(deps.tasks !== undefined ? { tasks: deps.tasks } : {}),
      }),
    },
    audit: deps.audit,
    listResources: () => listResources(deps.topics),
    listResourceTemplates,
    readResource: async (uri, ctx): Promise<ReadResourceResult> => {
      if (uri === RUN_INSPECTOR_URI) {
        if (deps.runInspectorHtml === undefined)
          throw new DaguError('resource_not_found', 'The run inspector app is not served here.', { field: 'uri' });
        return runInspectorContents(deps.runInspectorHtml);
      }
      const request = parseReadInput({ uri }, {});
      if (request.resource === undefined)
        throw new DaguError('invalid_resource_uri', 'Resource URI is malformed.', { field: 'uri' });
      const data = await backends[request.target](request, ctx.principal);
      const mimeType = mimeTypeFor(request.resource.kind);
      return { contents: [{ uri, mimeType, text: contentText(request.target, data) }] };
    },
  };
}

/** The resource body: Markdown, YAML or page text for the text families (020), JSON for the rest. */
function contentText(target: string, data: Record<string, unknown>): string {
  const textKey =
    target === 'reference' ? 'text' : target === 'dag_spec' ? 'spec' : target === 'wiki_page' ? 'content' : undefined;
  const text = textKey === undefined ? undefined : data[textKey];
  return typeof text === 'string' ? text : JSON.stringify(data);
}
