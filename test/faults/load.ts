/**
 * The fault suite's load: SDK clients over Streamable HTTP and plain REST
 * calls in a loop, each with its own deadline, every answer sorted into
 * what issue 18 allows under a fault (correct, or `resource_unavailable` /
 * outcome unknown) and what it does not (a wrong answer, a hung caller).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { connectClient } from '../e2e/stack';

/** How one call ended. */
export type OutcomeKind =
  /** The right answer. */
  | 'ok'
  /** `resource_unavailable` (any surface): the caller knows to retry; a mutation's fate is unknown. */
  | 'unavailable'
  /** The connection dropped (the gateway serving a JSON answer died): the fate is unknown, the caller is told at once. */
  | 'disconnected'
  /** An answer that is neither right nor `resource_unavailable` (e.g. `internal_error`, -32603, HTTP 500). */
  | 'wrong'
  /** No answer by the caller's deadline. */
  | 'hung';

/** One call's record. */
export interface Outcome {
  readonly op: string;
  readonly kind: OutcomeKind;
  readonly ms: number;
  /** For `wrong`: what came back. */
  readonly detail?: string;
  /** The DAG or DAG-run a mutation named (`apply`: the DAG name; `start`: the DAG-run id). */
  readonly target?: string;
  /** For `unavailable`: `details.dependency`, when given. */
  readonly dependency?: string;
  /** For `unavailable`: `details.outcome` (`unknown`, `applied`, `not_applied`), when given (dagu-model §10). */
  readonly outcome?: string;
  /** For `unavailable`: `details.requestId`, the id `GET /api/v1/mutations/{requestId}` resolves an unknown outcome by. */
  readonly requestId?: string;
}

/** The caller deadline of every call, ms (the gateway's bus deadline is 10 s; a wait ends by 50 s). */
export const CALL_DEADLINE_MS = 30_000;

/** The code and details of a 020 error object found in a tool result, an McpError's data or a REST body. */
function errorObjectOf(value: unknown): { code?: unknown; details?: Record<string, unknown> } | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  return value;
}

function unavailable(op: string, ms: number, object: ReturnType<typeof errorObjectOf>, target?: string): Outcome {
  const { dependency, outcome, requestId } = object?.details ?? {};
  return {
    op,
    kind: 'unavailable',
    ms,
    ...(typeof dependency === 'string' ? { dependency } : {}),
    ...(typeof outcome === 'string' ? { outcome } : {}),
    ...(typeof requestId === 'string' ? { requestId } : {}),
    ...(target !== undefined ? { target } : {}),
  };
}

/**
 * Runs `call` with the caller deadline and sorts its answer. `check` decides
 * whether a successful tool result is the right one.
 */
export async function callTool(
  client: Client,
  op: string,
  name: string,
  args: Record<string, unknown>,
  check: (result: CallToolResult) => boolean,
  target?: string,
): Promise<Outcome> {
  const started = Date.now();
  const ms = (): number => Date.now() - started;
  try {
    const result = await client.request(
      { method: 'tools/call', params: { name, arguments: args } },
      CallToolResultSchema,
      { timeout: CALL_DEADLINE_MS },
    );
    const object = errorObjectOf(result.structuredContent);
    if (result.isError === true && object?.code === 'resource_unavailable')
      return unavailable(op, ms(), object, target);
    if (result.isError !== true && check(result))
      return { op, kind: 'ok', ms: ms(), ...(target !== undefined ? { target } : {}) };
    return { op, kind: 'wrong', ms: ms(), detail: JSON.stringify(result.structuredContent ?? result).slice(0, 300) };
  } catch (err) {
    return thrownOutcome(op, err, ms(), target);
  }
}

/** A thrown SDK failure as an {@link Outcome}. */
export function thrownOutcome(op: string, err: unknown, ms: number, target?: string): Outcome {
  if (err instanceof McpError) {
    if (err.code === -32001 && /timed out/i.test(err.message)) return { op, kind: 'hung', ms, detail: err.message };
    const object = errorObjectOf(err.data);
    if (object?.code === 'resource_unavailable') return unavailable(op, ms, object, target);
    return { op, kind: 'wrong', ms, detail: `${err.code} ${err.message} ${JSON.stringify(err.data)}`.slice(0, 300) };
  }
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : '';
  const text = err instanceof Error ? `${err.message} ${cause}` : String(err);
  if (
    /fetch failed|ECONNRESET|ECONNREFUSED|socket hang up|other side closed|terminated|SSE stream disconnected/i.test(
      text,
    )
  )
    return { op, kind: 'disconnected', ms, detail: text.slice(0, 200), ...(target !== undefined ? { target } : {}) };
  return { op, kind: 'wrong', ms, detail: text.slice(0, 300) };
}

/** A REST GET/PUT/POST with the caller deadline, sorted like a tool call (503 needs `Retry-After`). */
export async function callRest(
  baseUrl: string,
  op: string,
  path: string,
  init: { method?: string; body?: unknown },
  okStatus: (status: number) => boolean,
  target?: string,
): Promise<Outcome> {
  const started = Date.now();
  const ms = (): number => Date.now() - started;
  try {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method: init.method ?? 'GET',
      headers: { 'content-type': 'application/json' },
      signal: AbortSignal.timeout(CALL_DEADLINE_MS),
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return { op, kind: 'wrong', ms: ms(), detail: `${res.status} non-JSON ${text.slice(0, 100)}` };
    }
    const object = errorObjectOf(body);
    if (res.status === 503 && object?.code === 'resource_unavailable' && res.headers.get('retry-after') !== null)
      return unavailable(op, ms(), object, target);
    if (okStatus(res.status)) return { op, kind: 'ok', ms: ms(), ...(target !== undefined ? { target } : {}) };
    return { op, kind: 'wrong', ms: ms(), detail: `${res.status} ${text.slice(0, 300)}` };
  } catch (err) {
    if (err instanceof DOMException && err.name === 'TimeoutError') return { op, kind: 'hung', ms: ms() };
    return thrownOutcome(op, err, ms(), target);
  }
}

/** One kind of call the load makes: given a fresh sequence number, makes one call. */
export type LoadOp = (client: Client, seq: number) => Promise<Outcome>;

/** A running load; {@link Load.stop} ends it and returns every outcome. */
export interface Load {
  readonly outcomes: Outcome[];
  stop(): Promise<Outcome[]>;
}

/**
 * Starts `workers` loops, each with its own SDK client on `mcpUrl`, calling
 * the `ops` in turn with `pauseMs` between calls, until stopped. A worker
 * whose session was lost (HTTP 404, after a gateway restart on an empty
 * Redis) connects a new client.
 */
export async function startLoad(mcpUrl: string, ops: readonly LoadOp[], workers = 3, pauseMs = 50): Promise<Load> {
  const outcomes: Outcome[] = [];
  let running = true;
  let seq = 0;
  const clients = await Promise.all(Array.from({ length: workers }, () => connectClient(mcpUrl)));
  const loops = clients.map(async (client, w) => {
    for (let i = w; running; i++) {
      const op = ops[i % ops.length];
      if (op === undefined) return;
      outcomes.push(await op(client, seq++));
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(loops);
      await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
      return outcomes;
    },
  };
}

/** Counts of each outcome kind, and the first few `wrong` and `hung` details (for failure messages). */
export function summarize(outcomes: readonly Outcome[]): Record<OutcomeKind, number> & { samples: string[] } {
  const counts = { ok: 0, unavailable: 0, disconnected: 0, wrong: 0, hung: 0 };
  for (const o of outcomes) counts[o.kind]++;
  const samples = outcomes
    .filter((o) => o.kind === 'wrong' || o.kind === 'hung')
    .slice(0, 5)
    .map((o) => `${o.op} ${o.kind} ${o.ms}ms ${o.detail ?? ''}`);
  return { ...counts, samples };
}
