import type { Pool } from '@dagu-mcp/runtime';

/** One `tools/call` on an agent endpoint, as recorded. */
export interface ToolCallRecord {
  readonly at: Date;
  readonly agentId: string;
  readonly workspace: string;
  readonly agentSlug: string;
  readonly tool: string;
  /** The binding kind (`dagu_tool`, `dag`, `rest_operation`, …). */
  readonly kind: string;
  readonly durationMs: number;
  readonly isError: boolean;
  /** The error's code (`invalid_tool_input`, `resource_unavailable`, …), null on success. */
  readonly errorCode: string | null;
  /** The person the agent acted for, when one signed in with OAuth. */
  readonly onBehalfOf?: { readonly kind: string; readonly id: string; readonly name: string } | undefined;
}

/** Per-tool figures over a window: what `GET …/agents/{agent}/usage` answers. */
export interface ToolUsage {
  readonly tool: string;
  readonly calls: number;
  readonly errors: number;
  readonly p50Ms: number | null;
  readonly p95Ms: number | null;
  readonly p99Ms: number | null;
}

/**
 * Inserts recorded calls in one statement (arrays unnested: one round trip per batch).
 * Writes nothing for an empty batch.
 */
export async function insertToolCalls(pool: Pool, records: readonly ToolCallRecord[]): Promise<void> {
  if (records.length === 0) return;
  await pool.query(
    `INSERT INTO agent_tool_calls (at, agent_id, workspace, agent_slug, tool, kind, duration_ms, is_error, error_code,
                                   on_behalf_of)
     SELECT * FROM unnest($1::timestamptz[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
                          $7::int[], $8::boolean[], $9::text[], $10::jsonb[])`,
    [
      records.map((r) => r.at.toISOString()),
      records.map((r) => r.agentId),
      records.map((r) => r.workspace),
      records.map((r) => r.agentSlug),
      records.map((r) => r.tool),
      records.map((r) => r.kind),
      records.map((r) => Math.max(0, Math.round(r.durationMs))),
      records.map((r) => r.isError),
      records.map((r) => r.errorCode),
      records.map((r) => (r.onBehalfOf === undefined ? null : JSON.stringify(r.onBehalfOf))),
    ],
  );
}

/**
 * Calls, errors and latency percentiles (ms, continuous: `percentile_cont`) per tool of one
 * agent in `[from, to)`, by tool name. Tools without calls in the window are not in the answer.
 */
export async function queryToolUsage(pool: Pool, agentId: string, from: Date, to: Date): Promise<ToolUsage[]> {
  const { rows } = await pool.query<{
    tool: string;
    calls: number;
    errors: number;
    p50: number | null;
    p95: number | null;
    p99: number | null;
  }>(
    `SELECT tool, count(*)::int AS calls, (count(*) FILTER (WHERE is_error))::int AS errors,
            percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS p50,
            percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95,
            percentile_cont(0.99) WITHIN GROUP (ORDER BY duration_ms) AS p99
       FROM agent_tool_calls WHERE agent_id = $1 AND at >= $2 AND at < $3
      GROUP BY tool ORDER BY tool`,
    [agentId, from, to],
  );
  const ms = (v: number | null): number | null => (v === null ? null : Math.round(Number(v) * 10) / 10);
  return rows.map((r) => ({
    tool: r.tool,
    calls: r.calls,
    errors: r.errors,
    p50Ms: ms(r.p50),
    p95Ms: ms(r.p95),
    p99Ms: ms(r.p99),
  }));
}

/**
 * Deletes recorded calls older than `before`, at most `batch` rows per statement until none is
 * left (short statements: the table keeps taking inserts meanwhile). Resolves with the rows
 * deleted. Every replica may run it; two at once only delete the same rows once.
 */
export async function pruneToolCalls(pool: Pool, before: Date, batch = 10_000): Promise<number> {
  let total = 0;
  for (;;) {
    const { rowCount } = await pool.query(
      `DELETE FROM agent_tool_calls WHERE ctid IN (SELECT ctid FROM agent_tool_calls WHERE at < $1 LIMIT $2)`,
      [before.toISOString(), batch],
    );
    total += rowCount ?? 0;
    if ((rowCount ?? 0) < batch) return total;
  }
}
