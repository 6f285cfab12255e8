import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { requiredRoleOf, type DagDetail, type StoredBinding } from '@dagu-mcp/contracts';
import { asServiceError, toolError, toolSuccess } from '../mcp/tools/tool-result';
import { asAuthor, type AgentTool, type AgentToolDeps } from './agent-tool-base';
import { dagToolInputSchema, dagToolParams, paramsOf } from './dag-tool-schema';

/** How long a DAG tool waits for its run by default, s (a binding's `waitSeconds` overrides, 1–300). */
export const DAG_TOOL_WAIT_SECONDS = 60;

/** `{<stepId>: {NAME: value}}` of a run detail's steps that published outputs (the step's id, else its name). */
function outputsOf(run: unknown): Record<string, Record<string, unknown>> {
  const outputs: Record<string, Record<string, unknown>> = {};
  if (typeof run !== 'object' || run === null || !('steps' in run) || !Array.isArray(run.steps)) return outputs;
  for (const step of run.steps as unknown[]) {
    if (typeof step !== 'object' || step === null) continue;
    const record: Record<string, unknown> = { ...step };
    const key = typeof record.id === 'string' ? record.id : typeof record.name === 'string' ? record.name : undefined;
    const values = record.outputs;
    if (key !== undefined && typeof values === 'object' && values !== null && !Array.isArray(values))
      outputs[key] = { ...values };
  }
  return outputs;
}

/**
 * The DAG-tool answer from `dagu_execute`'s waited start:
 * `{dagRunId, status, statusLabel, outputs, runUri}`, plus `completed`
 * (false while the run goes on past the bound), `waiting` (true at a human
 * task or approval, with the text saying what it needs) and
 * `checkpointQuestion` (why asking the person in the client did not decide
 * it). Errors and `input_required` results (the person asked, 2026-07-28)
 * pass through as they are.
 */
export function dagToolResult(executed: CallToolResult): CallToolResult {
  if (executed.isError === true) return executed;
  // A 2026-07-28 client is asked about the run's checkpoint (MRTR): the question goes out as dagu_execute built it.
  if ('resultType' in executed && executed.resultType === 'input_required') return executed;
  const s: Record<string, unknown> = { ...(executed.structuredContent ?? {}) };
  const run = s.run;
  // dagu_execute carries the run only when it finished or stopped at a human task or approval.
  const waiting = s.completed !== true && run !== undefined;
  const structured: Record<string, unknown> = {
    dagRunId: s.dagRunId,
    status: s.status,
    statusLabel: s.statusLabel,
    outputs: outputsOf(run),
    runUri: s.runUri,
    completed: s.completed === true,
    ...(waiting ? { waiting: true } : {}),
    // Why asking the person in the client did not decide the checkpoint.
    ...(s.checkpointQuestion !== undefined ? { checkpointQuestion: s.checkpointQuestion } : {}),
  };
  const first = executed.content[0];
  const text = first?.type === 'text' ? first.text : `Run ${String(s.dagRunId)}: ${String(s.statusLabel)}.`;
  const links = executed.content.flatMap((c) =>
    c.type === 'resource_link' ? [{ uri: c.uri, name: c.name, mimeType: c.mimeType ?? 'application/json' }] : [],
  );
  return toolSuccess(text, structured, links);
}

/**
 * A DAG as a tool: the input schema comes from the DAG's
 * declared params; a call checks the arguments, starts the DAG as the agent
 * (with its binding author's current role, operator needed to start), waits
 * up to the binding's `waitSeconds` with `notifications/progress` when the
 * client sent a progress token, and answers with {@link dagToolResult}.
 * The wait is `dagu_execute`'s own, so a run that stops at a human task or
 * approval asks the person in the client exactly as `/mcp` does (elicitation in the session revisions, `input_required` in 2026-07-28),
 * decided as the agent with its binding author's role at that moment.
 */
export function createDagTool(
  binding: Extract<StoredBinding, { kind: 'dag' }>,
  detail: DagDetail,
  deps: AgentToolDeps,
): AgentTool {
  const params = paramsOf(detail.dag);
  const title = binding.title ?? `Run the ${detail.name} DAG`;
  const definition: Tool = {
    name: binding.toolName,
    title,
    description:
      binding.description ??
      `${detail.description ?? `Runs the ${detail.name} DAG.`} Starts a run with the given params and waits for its outputs.`,
    inputSchema: dagToolInputSchema(params),
    annotations: { title, readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  };
  const execute = deps.daguTools.dagu_execute;
  const call = asAuthor(binding, deps, async (args, ctx) => {
    let runParams: Record<string, string>;
    try {
      runParams = dagToolParams(args, params);
    } catch (err) {
      return toolError(asServiceError(err), { dagName: detail.name });
    }
    if (execute === undefined) throw new Error('dagu_execute handler missing');
    const executed = await execute(
      {
        action: 'start',
        name: binding.dag,
        ...(Object.keys(runParams).length > 0 ? { params: runParams } : {}),
        wait: true,
        waitTimeoutSeconds: binding.waitSeconds ?? DAG_TOOL_WAIT_SECONDS,
      },
      ctx,
    );
    return dagToolResult(executed);
  });
  // Starting a run by name is the operator's (dagu-model §9): a person below it does not see the tool.
  return { definition, call, minRole: requiredRoleOf('run.start') };
}
