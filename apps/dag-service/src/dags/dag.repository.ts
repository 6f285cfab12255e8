import { z } from 'zod';
import { formatDaguUri } from '@dagu-mcp/contracts';
import type { MutationAuthor, MutationEntry, Pool } from '@dagu-mcp/runtime';
import { mutate, withStorageErrors } from '../db/storage-errors';
import { containsPattern, SqlConditions } from '../db/sql-filters';
import {
  parseRecordRow,
  parseSummaryRow,
  RECORD_COLUMNS,
  SUMMARY_COLUMNS,
  type DagRecord,
  type DagSummaryRecord,
  type DagWrite,
} from './dag.records';

/**
 * Data access for table `dags` (db/migrations.ts). Every method maps
 * PostgreSQL outages to `resource_unavailable` (db/pg-errors.ts); none
 * computes anything a reply needs beyond the stored facts.
 */

/** Filters of the DAG collection (spec 021 `dags` query `name`, `labels`). */
export interface DagFilters {
  /** Case-insensitive substring of the DAG name. */
  nameContains?: string | undefined;
  /** Every one of these labels (exact strings, e.g. `team=data`); empty = no filter. */
  labels: readonly string[];
}

/** A `dag_search` page request as the store sees it. */
export interface DagSearchQuery {
  /** Case-insensitive substring of the spec text. */
  search: string;
  /** Only DAGs whose workspace label equals it; `undefined` = every DAG. */
  workspace: string | undefined;
  /** Keyset position: only names after this one (code-unit order). */
  after: string | undefined;
  /** Page size, at least 1. */
  limit: number;
}

/** What `upsert` did. */
export interface UpsertOutcome {
  /** True when the row was inserted, false when an existing one was updated. */
  created: boolean;
  /** The version now stored: 1 on create, +1 on each update. */
  version: number;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * An apply commits only while at least this many ms remain before its
 * deadline, leaving time for the COMMIT itself and for the reply to reach
 * the caller over the bus; otherwise a commit landing just before the
 * deadline could reach the caller after it was told "unavailable".
 */
export const COMMIT_MARGIN_MS = 50;

const UpsertRowSchema = z.object({
  created: z.boolean(),
  version: z.number().int(),
  created_at: z.date(),
  updated_at: z.date(),
});
const NameRowSchema = z.object({ name: z.string() });
const CountRowSchema = z.object({ total: z.number().int() });
const SearchRowSchema = z.object({ name: z.string(), spec: z.string() });
const ScheduleRowSchema = z.object({ schedule: z.array(z.string()) });

/**
 * Insert-or-update in one statement: concurrent applies of one name serialize
 * on the row (or on the unique index while it is being inserted), the last
 * to commit wins, and each apply adds one to `version`. `suspended` and
 * `created_at` survive updates. `xmax = 0` holds exactly for a freshly
 * inserted row version, which tells create from update.
 */
const UPSERT_SQL = `
INSERT INTO dags AS d (name, spec, normalized, labels, workspace, schedule, description)
VALUES ($1, $2, $3::jsonb, $4::text[], $5, $6::text[], $7)
ON CONFLICT (name) DO UPDATE SET
  spec = EXCLUDED.spec,
  normalized = EXCLUDED.normalized,
  labels = EXCLUDED.labels,
  workspace = EXCLUDED.workspace,
  schedule = EXCLUDED.schedule,
  description = EXCLUDED.description,
  version = d.version + 1,
  updated_at = clock_timestamp()
RETURNING (xmax = 0) AS created, version, created_at, updated_at`;

function conditionsOf(filters: DagFilters): SqlConditions {
  const where = new SqlConditions();
  if (filters.nameContains !== undefined) where.add((p) => `name ILIKE ${p}`, containsPattern(filters.nameContains));
  if (filters.labels.length > 0) where.add((p) => `labels @> ${p}::text[]`, [...filters.labels]);
  return where;
}

const GET_BY_NAME_SQL = `SELECT ${RECORD_COLUMNS} FROM dags WHERE name = $1`;

/** The DAG store of dag-service, over the service's own schema (the pool's search path). */
export class DagRepository {
  constructor(private readonly pool: Pool) {}

  /** The stored DAG named exactly `name`, or `undefined`. */
  get(name: string): Promise<DagRecord | undefined> {
    return withStorageErrors(async () => {
      // A named (prepared) statement: the hottest read of the service is parsed and planned once per connection.
      const result = await this.pool.query({ name: 'dag_get_by_name', text: GET_BY_NAME_SQL, values: [name] });
      const row: unknown = result.rows[0];
      return row === undefined ? undefined : parseRecordRow(row);
    });
  }

  /** Every stored DAG name, in code-unit order (the did-you-mean candidates). */
  listNames(): Promise<string[]> {
    return withStorageErrors(async () => {
      const result = await this.pool.query('SELECT name FROM dags ORDER BY name');
      return result.rows.map((row: unknown) => NameRowSchema.parse(row).name);
    });
  }

  /**
   * Creates or updates the DAG `write.name` atomically, committing only
   * before `deadline` (docs/architecture.md "Request flow": a caller told "failed"
   * never finds the change applied later). The statement itself is cut at
   * the deadline (`statement_timeout`), e.g. while it waits for another
   * writer's row lock.
   *
   * @param deadline - epoch ms; the commit must happen {@link COMMIT_MARGIN_MS} before it.
   * @param author - who asks: the change's `dag.upserted` row is recorded in
   *   the same transaction (mutation record and audit outbox); omitted only by
   *   tests of the store itself.
   * @throws DaguError `resource_unavailable` when the deadline (less the
   *   margin) passes before the commit (nothing is written) or PostgreSQL is
   *   unavailable.
   */
  async upsert(write: DagWrite, deadline: number, author?: MutationAuthor): Promise<UpsertOutcome> {
    const values = [
      write.name,
      write.spec,
      JSON.stringify(write.normalized),
      write.labels,
      write.workspace ?? null,
      write.schedule,
      write.description ?? null,
    ];
    const row = await mutate(this.pool, { deadline: deadline - COMMIT_MARGIN_MS, author }, async (client, record) => {
      const upserted = UpsertRowSchema.parse((await client.query(UPSERT_SQL, values)).rows[0]);
      await record({
        action: 'dag.upserted',
        target: dagTarget(write.name),
        details: { version: upserted.version, created: upserted.created },
      });
      return upserted;
    });
    return { created: row.created, version: row.version, createdAt: row.created_at, updatedAt: row.updated_at };
  }

  /**
   * Deletes `name` (committed only before `deadline` less the margin).
   * @returns false when no such DAG exists
   * @throws DaguError `resource_unavailable` as {@link DagRepository.upsert}
   */
  delete(name: string, deadline: number, author?: MutationAuthor): Promise<boolean> {
    const entry = { action: 'dag.deleted', target: dagTarget(name) };
    return this.mutateOne('DELETE FROM dags WHERE name = $1', [name], deadline, author && { author, entry });
  }

  /**
   * Sets the suspended flag of `name` (committed only before `deadline` less the margin).
   * @returns false when no such DAG exists
   */
  setSuspended(name: string, suspended: boolean, deadline: number, author?: MutationAuthor): Promise<boolean> {
    const entry = { action: suspended ? 'dag.suspended' : 'dag.resumed', target: dagTarget(name) };
    return this.mutateOne(
      'UPDATE dags SET suspended = $2, updated_at = clock_timestamp() WHERE name = $1',
      [name, suspended],
      deadline,
      author && { author, entry },
    );
  }

  /** One statement on one DAG; with `record`, its mutation row when it changed a row, in the same transaction. */
  private async mutateOne(
    sql: string,
    values: unknown[],
    deadline: number,
    record: { author: MutationAuthor; entry: MutationEntry } | undefined,
  ): Promise<boolean> {
    const fence = { deadline: deadline - COMMIT_MARGIN_MS, author: record?.author };
    const result = await mutate(this.pool, fence, async (client, recordChange) => {
      const changed = await client.query(sql, values);
      if (record !== undefined && (changed.rowCount ?? 0) > 0) await recordChange(record.entry);
      return changed;
    });
    return (result.rowCount ?? 0) > 0;
  }

  /** How many DAGs pass `filters`. */
  count(filters: DagFilters): Promise<number> {
    const where = conditionsOf(filters);
    return withStorageErrors(async () => {
      const result = await this.pool.query(`SELECT count(*)::int AS total FROM dags ${where.clause()}`, where.values);
      return CountRowSchema.parse(result.rows[0]).total;
    });
  }

  /**
   * One page of summaries passing `filters`, ordered by name.
   *
   * The page's names are found first and only its rows are read: the
   * skipped rows are then walked in the primary-key index alone (an
   * index-only scan once vacuumed) instead of fetched from the heap — page
   * 100 of 200 over 10,000 DAGs drops from about 2.0 ms to 1.1 ms.
   *
   * @param order - `asc` or `desc` (code-unit order of names).
   * @param limit - rows at most; `offset` - rows skipped first.
   */
  listByName(filters: DagFilters, order: 'asc' | 'desc', limit: number, offset: number): Promise<DagSummaryRecord[]> {
    const where = conditionsOf(filters);
    const direction = order === 'desc' ? 'DESC' : 'ASC';
    const page = `SELECT name FROM dags ${where.clause()} ORDER BY name ${direction} LIMIT ${where.bind(limit)} OFFSET ${where.bind(offset)}`;
    const sql = `SELECT ${SUMMARY_COLUMNS} FROM dags JOIN (${page}) AS page USING (name) ORDER BY name ${direction}`;
    return withStorageErrors(async () => (await this.pool.query(sql, where.values)).rows.map(parseSummaryRow));
  }

  /**
   * The distinct schedules of the DAGs passing `filters` that can run on a
   * schedule (not suspended, at least one expression): the input of
   * {@link DagRepository.listByNextRun}. Usually far fewer than the DAGs.
   */
  distinctSchedules(filters: DagFilters): Promise<string[][]> {
    const where = conditionsOf(filters);
    where.addConstant('NOT suspended AND cardinality(schedule) > 0');
    const sql = `SELECT DISTINCT schedule FROM dags ${where.clause()}`;
    return withStorageErrors(async () =>
      (await this.pool.query(sql, where.values)).rows.map((row: unknown) => ScheduleRowSchema.parse(row).schedule),
    );
  }

  /**
   * One page of summaries passing `filters`, ordered by next run (computed
   * by the caller per distinct schedule), then by name; DAGs whose schedule
   * has no entry in `nextRuns` (no schedule, suspended, or a schedule
   * written since the caller read them) come last, by name. Ordering and
   * paging happen in SQL, so only the page's rows travel. The CTE is
   * MATERIALIZED so the JSON is unpacked once, not once per joined row.
   *
   * @param nextRuns - `{schedule, nextRun}` per distinct schedule.
   * @param order - `asc`: earliest first; `desc`: latest first (names descending on ties).
   */
  listByNextRun(
    filters: DagFilters,
    nextRuns: readonly { schedule: readonly string[]; nextRun: Date }[],
    order: 'asc' | 'desc',
    limit: number,
    offset: number,
  ): Promise<DagSummaryRecord[]> {
    const where = conditionsOf(filters);
    const runs = where.bind(
      JSON.stringify(nextRuns.map((entry) => ({ s: entry.schedule, t: entry.nextRun.toISOString() }))),
    );
    const direction = order === 'desc' ? 'DESC' : 'ASC';
    const columns = SUMMARY_COLUMNS.split(', ')
      .map((column) => `d.${column}`)
      .join(', ');
    const sql = `
WITH next_runs AS MATERIALIZED (
  SELECT ARRAY(SELECT jsonb_array_elements_text(e -> 's')) AS schedule, (e ->> 't')::timestamptz AS next_run
  FROM jsonb_array_elements(${runs}::jsonb) AS e
)
SELECT ${columns}
FROM dags d LEFT JOIN next_runs n ON n.schedule = d.schedule AND NOT d.suspended
${where.clause()}
ORDER BY n.next_run ${direction} NULLS LAST, d.name ${direction}
LIMIT ${where.bind(limit)} OFFSET ${where.bind(offset)}`;
    return withStorageErrors(async () => (await this.pool.query(sql, where.values)).rows.map(parseSummaryRow));
  }

  /**
   * One page of DAGs whose spec contains `query.search` (case-insensitive,
   * pg_trgm-indexed `ILIKE`), ordered by name, after `query.after`.
   *
   * @returns up to `query.limit` DAGs (name and spec) and whether more match.
   */
  search(query: DagSearchQuery): Promise<{ hits: { name: string; spec: string }[]; hasMore: boolean }> {
    const where = new SqlConditions();
    where.add((p) => `spec ILIKE ${p}`, containsPattern(query.search));
    if (query.workspace !== undefined) where.add((p) => `workspace = ${p}`, query.workspace);
    if (query.after !== undefined) where.add((p) => `name > ${p}`, query.after);
    const sql = `SELECT name, spec FROM dags ${where.clause()} ORDER BY name LIMIT ${where.bind(query.limit + 1)}`;
    return withStorageErrors(async () => {
      const rows = (await this.pool.query(sql, where.values)).rows.map((row: unknown) => SearchRowSchema.parse(row));
      return { hits: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    });
  }
}

/** The audit target of a DAG: its spec URI (`dagu://dags/{name}/spec`). */
function dagTarget(name: string): string {
  return formatDaguUri({ kind: 'dag_spec', name });
}
