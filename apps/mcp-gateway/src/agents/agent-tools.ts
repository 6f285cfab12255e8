import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import {
  DaguError,
  requiredRoleOf,
  SYSTEM_PRINCIPAL,
  type AgentWithTools,
  type Principal,
  type Role,
  type StoredBinding,
} from '@dagu-mcp/contracts';
import type { BusClient } from '@dagu-mcp/bus';
import { getDag } from '../actions/dag-reads.actions';
import { TOOL_DEFINITIONS } from '../mcp/tools/tool-definitions';
import { asAuthor, type AgentTool, type AgentToolDeps } from './agent-tool-base';
import { asServiceError, toolError } from '../mcp/tools/tool-result';
import { createDagTool } from './dag-tool';
import { extensionTool } from './extension-tool';
import { createRestOperationTool } from './rest-operation-tool';
import { checkChange, checkExecute, checkRead, describeRestrictions, type DagLabelsOf } from './restrictions';

/** The labels of a DAG read as the calling agent; undefined for an unknown DAG. */
function labelsReader(bus: BusClient, principal: Principal): DagLabelsOf {
  return async (name) => {
    try {
      return (await getDag(bus, principal, { name })).labels;
    } catch (err) {
      if (err instanceof DaguError && err.code === 'resource_not_found') return undefined;
      throw err;
    }
  };
}

const CHECKS = { dagu_read: checkRead, dagu_change: checkChange, dagu_execute: checkExecute } as const;

/** A narrowed Dagu tool: the tool's own definition renamed, its description stating the restrictions. */
function daguTool(binding: Extract<StoredBinding, { kind: 'dagu_tool' }>, deps: AgentToolDeps): AgentTool | undefined {
  const base = TOOL_DEFINITIONS.find((t) => t.name === binding.tool);
  const handler = deps.daguTools[binding.tool];
  if (base === undefined || handler === undefined) return undefined;
  const check = CHECKS[binding.tool];
  const definition: Tool = {
    ...base,
    name: binding.toolName,
    title: binding.title ?? base.title,
    description: (binding.description ?? base.description ?? '') + describeRestrictions(binding.restrictions),
    annotations: { ...base.annotations, title: binding.title ?? base.annotations?.title ?? base.title },
  };
  const call = asAuthor(binding, deps, async (args, ctx) => {
    const refusal = await check(args, binding.restrictions, labelsReader(deps.bus, ctx.principal));
    if (refusal !== undefined) return toolError(refusal.toServiceError());
    return handler(args, ctx);
  });
  return { definition, call, minRole: daguToolMinRole(binding) };
}

/**
 * The lowest role a narrowed Dagu tool can succeed with: reading is the
 * viewer's; `dagu_change` previews are too unless the binding allows only apply; every
 * `dagu_execute` action needs at least what starting a run needs.
 */
function daguToolMinRole(binding: Extract<StoredBinding, { kind: 'dagu_tool' }>): Role {
  if (binding.tool === 'dagu_read') return requiredRoleOf('dag.list');
  if (binding.tool === 'dagu_execute') return requiredRoleOf('run.start');
  const modes = binding.restrictions.changeModes;
  return modes === undefined || modes.includes('preview')
    ? requiredRoleOf('dag.validate')
    : requiredRoleOf('dag.upsert');
}

/**
 * The tools of an agent's catalog, by tool name: narrowed
 * Dagu tools, DAGs as tools, published REST operations and
 * extension tools. A DAG binding whose DAG does not exist
 * (or cannot be read now), a REST binding without a published version, or an
 * extension tool not served now, is left out of the list until a refresh
 * finds it.
 */
export async function buildAgentTools(agent: AgentWithTools, deps: AgentToolDeps): Promise<Map<string, AgentTool>> {
  const tools = new Map<string, AgentTool>();
  for (const binding of agent.tools) {
    if (binding.kind === 'dagu_tool') {
      const tool = daguTool(binding, deps);
      if (tool !== undefined) tools.set(binding.toolName, tool);
      continue;
    }
    if (binding.kind === 'extension_tool') {
      const tool = await extensionTool(binding, deps);
      if (tool !== undefined) tools.set(binding.toolName, tool);
      continue;
    }
    if (binding.kind === 'rest_operation') {
      const tool = await createRestOperationTool(binding, agent.workspace, deps);
      if (tool !== undefined) tools.set(binding.toolName, tool);
      continue;
    }
    try {
      const detail = await getDag(deps.bus, SYSTEM_PRINCIPAL, { name: binding.dag });
      tools.set(binding.toolName, createDagTool(binding, detail, deps));
    } catch (err) {
      const code = asServiceError(err).code;
      deps.logger.warn({ agent: agent.slug, dag: binding.dag, code }, 'agent DAG tool left out of the catalog');
    }
  }
  return tools;
}
