import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';
import { runUris } from '../actions/run-control.actions';

/**
 * The tasks extension's record of one task (`io.modelcontextprotocol/tasks` v2,
 * mcp-revisions §4), kept in Redis so that every gateway replica answers
 * `tasks/get`, `tasks/update` and `tasks/cancel` and a replica's death loses
 * nothing. The record says who owns the task and which DAG-run it is; the
 * task's status is derived from the run (run-service, PostgreSQL) except for
 * what only the task knows: that it was cancelled through `tasks/cancel`, and
 * the final answer once seen (so later polls read Redis only).
 *
 * | Key | Type | Holds | Lifetime |
 * | --- | --- | --- | --- |
 * | `<p>:mcp:task:<taskId>` | string | the JSON {@link TaskRecord} (without `final`) | the task's `ttlMs` from creation |
 * | `<p>:mcp:task:<taskId>:final` | string | the JSON {@link TaskFinal}, written once (`NX`) | the record's remaining TTL |
 */

/** The extension's id, in client and server capabilities (mcp-revisions §4). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
/** How long a task stays readable, ms (*ours*: a day; long runs are the point). */
export const TASK_TTL_MS = 86_400_000;
/** The poll interval hint sent with every task, ms (*ours*). */
export const TASK_POLL_INTERVAL_MS = 1_000;

/** Task statuses (mcp-revisions §4). */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

const FinalSchema = z.object({
  status: z.enum(['completed', 'failed', 'cancelled']),
  /** Epoch ms of the change. */
  at: z.number(),
  /** The completed task's CallToolResult. */
  result: z.record(z.string(), z.unknown()).optional(),
  /** The failed task's JSON-RPC error. */
  error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional(),
  statusMessage: z.string().optional(),
});

const TaskRecordSchema = z.object({
  v: z.literal(1),
  taskId: z.string(),
  /** `sessionOwnerOf(principal)`: the principal (and, for an agent, the person behind it) that created the task. */
  ownerId: z.string(),
  /** The agent endpoint's key suffix the task was created on; absent on `/mcp`. */
  endpoint: z.string().optional(),
  toolName: z.string(),
  /** The run the task is bound to (`dagu_execute`); absent for a tool call run as a task (`call`). */
  run: z
    .object({
      dagName: z.string(),
      dagRunId: z.string(),
      action: z.enum(['start', 'enqueue', 'retry']),
      /** 036's target type (`run`, `dag`, `inline_spec`). */
      targetType: z.enum(['run', 'dag', 'inline_spec']),
      /** A retry's attempt before the retry: reads of that attempt do not count. */
      priorAttemptId: z.string().optional(),
    })
    .optional(),
  /** Any other task-capable tool's call (task-calls.ts): what to call again once input came. */
  call: z
    .object({
      name: z.string(),
      arguments: z.unknown().optional(),
      /** The client capabilities of the creating request, relayed with every round. */
      clientCapabilities: z.record(z.string(), z.unknown()),
    })
    .optional(),
  /** A call task waiting for input: the tool's requests, its state, and the responses given so far. */
  pending: z
    .object({
      inputRequests: z.record(z.string(), z.unknown()),
      requestState: z.string().optional(),
      responses: z.record(z.string(), z.unknown()),
    })
    .optional(),
  /** Epoch ms. */
  createdAt: z.number(),
  ttlMs: z.number().int(),
  pollIntervalMs: z.number().int(),
  /** What became of the last `tasks/update` (a refusal, a decline), told while the run waits at {@link noteStep}. */
  statusMessage: z.string().optional(),
  /** The checkpoint step `statusMessage` is about (run-bound tasks). */
  noteStep: z.string().optional(),
  /** Set once the task reached a terminal status (its own key); never changes after. */
  final: FinalSchema.optional(),
});

/** One task as stored. */
export type TaskRecord = z.infer<typeof TaskRecordSchema>;
/** What a terminal task keeps. */
export type TaskFinal = z.infer<typeof FinalSchema>;

/** What creating a task takes: who owns it and which run it follows. */
export type NewTask = Pick<TaskRecord, 'ownerId' | 'toolName' | 'run' | 'call'> & { readonly endpoint?: string };

/**
 * The task records in Redis under `<prefix>:mcp:task:`. No method throws for a
 * missing record: reads answer `undefined`; Redis errors propagate (the
 * caller's outage mapping makes them `resource_unavailable`).
 */
export class TaskStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly options: { readonly ttlMs?: number; readonly pollIntervalMs?: number } = {},
  ) {}

  /** Creates a task (a fresh UUID id) bound to `task.run`; resolves with the record written. */
  async create(task: NewTask): Promise<TaskRecord> {
    const record: TaskRecord = {
      v: 1,
      taskId: randomUUID(),
      ownerId: task.ownerId,
      ...(task.endpoint !== undefined ? { endpoint: task.endpoint } : {}),
      toolName: task.toolName,
      ...(task.run !== undefined ? { run: task.run } : {}),
      ...(task.call !== undefined ? { call: task.call } : {}),
      createdAt: Date.now(),
      ttlMs: this.options.ttlMs ?? TASK_TTL_MS,
      pollIntervalMs: this.options.pollIntervalMs ?? TASK_POLL_INTERVAL_MS,
    };
    await this.redis.set(this.key(record.taskId), JSON.stringify(record), 'PX', record.ttlMs);
    return record;
  }

  /**
   * The task `taskId` when `ownerId` owns it (on `endpoint`); `undefined` for an
   * unknown, expired, malformed or foreign one — the caller cannot tell which.
   */
  async get(taskId: string, ownerId: string, endpoint?: string): Promise<TaskRecord | undefined> {
    if (taskId.length === 0 || taskId.length > 200) return undefined;
    const [raw, finalRaw] = await this.redis.mget(this.key(taskId), this.finalKey(taskId));
    if (raw === null || raw === undefined) return undefined;
    let parsed: TaskRecord;
    try {
      parsed = TaskRecordSchema.parse(JSON.parse(raw));
    } catch {
      return undefined;
    }
    if (parsed.ownerId !== ownerId || parsed.endpoint !== endpoint) return undefined;
    const final = parseFinal(finalRaw ?? null);
    return final === undefined ? parsed : { ...parsed, final };
  }

  /**
   * Stores `final` for the task (with the record's remaining TTL) unless it
   * already has one; resolves with the final state in force (the earlier one
   * wins, so a terminal status never changes, mcp-revisions §4).
   */
  async finish(record: TaskRecord, final: TaskFinal): Promise<TaskFinal> {
    const left = await this.redis.pttl(this.key(record.taskId));
    if (left <= 0) return final;
    const finalKey = this.finalKey(record.taskId);
    await this.redis.set(finalKey, JSON.stringify(final), 'PX', left, 'NX');
    return parseFinal(await this.redis.get(finalKey)) ?? final;
  }

  /** Sets or clears the task's status message about checkpoint step `noteStep` (TTL kept); a missing task is left alone. */
  async note(record: TaskRecord, statusMessage: string | undefined, noteStep?: string): Promise<void> {
    if (record.statusMessage === statusMessage && record.noteStep === noteStep) return;
    await this.update(record, { statusMessage, noteStep });
  }

  /**
   * Writes `record` with `patch` applied (an `undefined` value removes the field), its TTL
   * kept; a missing task is left alone. Resolves with the record as written.
   */
  async update(
    record: TaskRecord,
    patch: Partial<Pick<TaskRecord, 'statusMessage' | 'noteStep' | 'pending'>>,
  ): Promise<TaskRecord> {
    const { final: _final, ...rest } = record;
    const next: Record<string, unknown> = { ...rest, ...patch };
    for (const [key, value] of Object.entries(next)) if (value === undefined) delete next[key];
    await this.redis.set(this.key(record.taskId), JSON.stringify(next), 'KEEPTTL', 'XX');
    return TaskRecordSchema.parse(next);
  }

  private key(taskId: string): string {
    return `${this.prefix}:mcp:task:${taskId}`;
  }

  private finalKey(taskId: string): string {
    return `${this.prefix}:mcp:task:${taskId}:final`;
  }
}

function parseFinal(raw: string | null): TaskFinal | undefined {
  if (raw === null) return undefined;
  try {
    return FinalSchema.parse(JSON.parse(raw));
  } catch {
    return undefined;
  }
}

/** The ISO-8601 form of an epoch ms (task timestamps). */
export function isoOf(epochMs: number): string {
  return new Date(epochMs).toISOString();
}

/**
 * The task part every task answer carries (mcp-revisions §4 `Task`):
 * `{taskId, status, statusMessage?, createdAt, lastUpdatedAt, ttlMs,
 * pollIntervalMs}`, timestamps ISO-8601, durations integer ms.
 *
 * @param lastUpdatedAt epoch ms of the last status change known; default the creation
 */
export function taskOf(
  record: TaskRecord,
  status: TaskStatus,
  lastUpdatedAt?: number,
  statusMessage?: string,
): Record<string, unknown> {
  return {
    taskId: record.taskId,
    status,
    ...(statusMessage !== undefined ? { statusMessage } : {}),
    createdAt: isoOf(record.createdAt),
    lastUpdatedAt: isoOf(Math.max(record.createdAt, lastUpdatedAt ?? record.createdAt)),
    ttlMs: record.ttlMs,
    pollIntervalMs: record.pollIntervalMs,
  };
}

/**
 * The `tools/call` answer that creates a task: `{resultType: "task", …task}` with status
 * `working` and a status message naming the run's URI (mcp-revisions §4).
 */
export function createdTaskResult(record: TaskRecord): Record<string, unknown> {
  return { resultType: 'task', ...taskOf(record, 'working', undefined, runMessage(record, 'started')) };
}

/** `The run <dagu://runs/…> is <label>.`: the status message of a working task. */
export function runMessage(record: TaskRecord, label: string): string {
  return record.run === undefined
    ? `The call of ${record.toolName} is ${label}.`
    : `The run ${runUris(record.run).runUri} is ${label}.`;
}
