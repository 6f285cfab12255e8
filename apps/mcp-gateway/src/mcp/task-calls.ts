import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '@dagu-mcp/contracts';
import type { Logger } from '@dagu-mcp/runtime';
import type { McpCallContext } from './transport/dispatcher';
import { INTERNAL_ERROR, JsonRpcError } from './transport/protocol';
import { sessionOwnerOf } from './transport/session-record';
import { createdTaskResult, type TaskRecord, type TaskStore } from './task-store';

/**
 * Any task-capable tool run as a task (tasks extension v2, mcp-revisions §4;
 * "any tool may be task-capable"): a tool whose definition declares
 * `execution.taskSupport` `optional` or `required` — today the extensions'
 * tools (the conformance fixture's) — is, for a client that declared the
 * extension, called in the background on the replica that got the request;
 * the caller gets `{resultType: "task", …}` at once. What the call answers
 * goes to the task record in Redis, so every replica reports it:
 *
 * - a tool result → `completed` with it as `result` (a tool error too: `isError`);
 * - `input_required` (the tool's MRTR round) → `input_required` with its
 *   `inputRequests`; `tasks/update` collects the responses and, once every
 *   request has one, the tool is called again with `inputResponses` and its
 *   `requestState` (the stateless revision's retry, mcp-revisions §2);
 * - a JSON-RPC error (the call could not be carried out) → `failed` with it.
 *
 * A tool that declares {@link ASKS_BEFORE_TASK_META} asks first: its round without
 * `inputResponses` is an ordinary call (MRTR), the retry becomes the task.
 *
 * `dagu_execute` does not come here: its task is the DAG-run (task-methods.ts).
 * Limitation (*ours*): a replica that dies mid-call leaves its call task `working`
 * until its TTL; a run-bound task has no such gap.
 */

/** One `tools/call` as relayed: name, arguments, and the retry fields of a later round. */
export interface TaskCallParams {
  readonly name: string;
  readonly arguments?: unknown;
  readonly inputResponses?: Record<string, unknown>;
  readonly requestState?: string;
}

/** Calls a tool as the dispatcher would (extension relay included); throws JSON-RPC errors. */
export type ToolInvoker = (
  params: TaskCallParams,
  ctx: McpCallContext,
  clientCapabilities: Record<string, unknown>,
) => Promise<CallToolResult>;

/** A tool definition's `execution.taskSupport` (`forbidden` when absent or unknown). */
export function taskSupportOf(definition: unknown): 'forbidden' | 'optional' | 'required' {
  if (!isRecord(definition) || !isRecord(definition.execution)) return 'forbidden';
  const support = definition.execution.taskSupport;
  return support === 'optional' || support === 'required' ? support : 'forbidden';
}

/** The tool-definition `_meta` key by which a tool asks its input before its task exists (*ours*). */
export const ASKS_BEFORE_TASK_META = 'io.dagu/asksBeforeTask';

/**
 * True when a task-capable tool asks for its input in-band before it runs as a task
 * (`_meta["io.dagu/asksBeforeTask"]: true`, the MRTR → tasks composition of SEP-2663): its
 * first round (a call without `inputResponses`) is relayed as an ordinary call, so its
 * `input_required` goes back as MRTR; the retry with the responses becomes the task.
 */
export function asksBeforeTask(definition: unknown): boolean {
  return isRecord(definition) && isRecord(definition._meta) && definition._meta[ASKS_BEFORE_TASK_META] === true;
}

/** Runs task-capable tool calls in the background and records their outcome (see the module comment). */
export class TaskCallRunner {
  private invoke: ToolInvoker | undefined;

  private readonly running = new Map<string, AbortController>();

  constructor(
    private readonly store: TaskStore,
    private readonly logger: Logger,
  ) {}

  /** Sets how tools are called (the dispatcher's tools/call path); until then nothing runs as a task. */
  attach(invoke: ToolInvoker): void {
    this.invoke = invoke;
  }

  /** True once {@link attach} was called. */
  get ready(): boolean {
    return this.invoke !== undefined;
  }

  /**
   * Creates the task (durably: a `tasks/get` on any replica finds it once this
   * resolves), starts the call in the background and resolves with the
   * `CreateTaskResult` (`{resultType: "task", taskId, status: "working", …}`).
   */
  async start(
    params: TaskCallParams,
    ctx: McpCallContext,
    clientCapabilities: Record<string, unknown>,
  ): Promise<CallToolResult> {
    const record = await this.store.create({
      ownerId: sessionOwnerOf(ctx.principal),
      toolName: params.name,
      call: {
        name: params.name,
        ...(params.arguments !== undefined ? { arguments: params.arguments } : {}),
        clientCapabilities,
      },
    });
    // A retry round that escalates to a task (asksBeforeTask) carries its responses and state on.
    this.launch(
      record,
      {
        name: params.name,
        arguments: params.arguments,
        ...(params.inputResponses !== undefined ? { inputResponses: params.inputResponses } : {}),
        ...(params.requestState !== undefined ? { requestState: params.requestState } : {}),
      },
      ctx.principal,
    );
    return { content: [], ...createdTaskResult(record) };
  }

  /** Calls the tool of call task `record` again with the responses collected (in the background). */
  resume(
    record: TaskRecord,
    inputResponses: Record<string, unknown>,
    requestState: string | undefined,
    principal: Principal,
  ): void {
    const call = record.call;
    if (call === undefined) return;
    this.launch(
      record,
      {
        name: call.name,
        arguments: call.arguments,
        inputResponses,
        ...(requestState !== undefined ? { requestState } : {}),
      },
      principal,
    );
  }

  /** Aborts the call of task `taskId` when it runs on this replica (`tasks/cancel`). */
  abort(taskId: string): void {
    this.running.get(taskId)?.abort();
  }

  /** Aborts every call running here (shutdown). */
  close(): void {
    for (const controller of this.running.values()) controller.abort();
  }

  private launch(record: TaskRecord, params: TaskCallParams, principal: Principal): void {
    const invoke = this.invoke;
    if (invoke === undefined) return;
    const controller = new AbortController();
    this.running.set(record.taskId, controller);
    const ctx: McpCallContext = {
      principal,
      signal: controller.signal,
      sessionId: undefined,
      progressToken: undefined,
      notify: async () => undefined,
    };
    void (async () => {
      try {
        const result = await invoke(params, ctx, record.call?.clientCapabilities ?? {});
        if (controller.signal.aborted) return;
        if (result.resultType === 'input_required' && isRecord(result.inputRequests)) {
          await this.store.update(record, {
            pending: {
              inputRequests: result.inputRequests,
              ...(typeof result.requestState === 'string' ? { requestState: result.requestState } : {}),
              responses: {},
            },
          });
          return;
        }
        const { resultType: _type, ...complete } = result;
        await this.store.finish(record, { status: 'completed', at: Date.now(), result: complete });
      } catch (err) {
        const error =
          err instanceof JsonRpcError || err instanceof McpError
            ? { code: err.code, message: err.message }
            : { code: INTERNAL_ERROR, message: 'Internal error.' };
        if (!(err instanceof JsonRpcError || err instanceof McpError))
          this.logger.warn({ err, taskId: record.taskId, tool: params.name }, 'task call failed unexpectedly');
        await this.store.finish(record, { status: 'failed', at: Date.now(), error }).catch(() => undefined);
      } finally {
        if (this.running.get(record.taskId) === controller) this.running.delete(record.taskId);
      }
    })();
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
