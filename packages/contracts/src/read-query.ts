import { z } from 'zod';
import { isValidWikiPathPrefix } from './uri-names';

/**
 * The read-query table of spec 021 "Query handling": which `dagu_read`
 * targets (and the matching `dagu://` collection and log URIs) take a query,
 * and the value contract of every parameter.
 *
 * Each target has a strict zod schema of the *parsed* query, so the gateway
 * can hand a typed query to a service and the service can re-validate it off
 * the bus. The string form is parsed by `parseReadQuery` and written by
 * `formatReadQuery` (`read-query-parse.ts`, `read-query-format.ts`).
 */

/** Targets that accept a query (spec 021 `query` field; spec 020 collection and log families). */
export const QueryTargetSchema = z.enum(['dags', 'runs', 'wiki', 'run_logs', 'step_log', 'foreach_items']);
export type QueryTarget = z.infer<typeof QueryTargetSchema>;

/** True when `target` accepts a query string. */
export function isQueryTarget(target: string): target is QueryTarget {
  return QueryTargetSchema.safeParse(target).success;
}

/** An integer in `[min, max]` (or `>= min`); the error text is the value contract. */
function intFrom(min: number, max?: number) {
  const error =
    max === undefined ? `an integer greater than or equal to ${min}` : `an integer from ${min} through ${max}`;
  const base = z.number({ error }).int({ error }).min(min, { error });
  return max === undefined ? base : base.max(max, { error });
}

/** One of `values`; the error text lists them. */
function oneOf<const T extends readonly [string, ...string[]]>(values: T) {
  return z.enum(values, { error: `one of ${values.join(', ')}` });
}

const nonEmpty = z.string({ error: 'a non-empty string' }).min(1, { error: 'a non-empty string' });
const labels = z
  .array(z.string().trim().min(1), { error: 'comma-separated non-empty label strings' })
  .min(1, { error: 'comma-separated non-empty label strings' });
const order = oneOf(['asc', 'desc']);
const unixSeconds = intFrom(0);

/** `dags` query: `page` ≥ 1, `perPage` 1–200, `name`, `labels`, `sort` (`name`|`nextRun`), `order`. */
export const DagsQuerySchema = z.strictObject({
  page: intFrom(1).optional(),
  perPage: intFrom(1, 200).optional(),
  name: nonEmpty.optional(),
  labels: labels.optional(),
  sort: oneOf(['name', 'nextRun']).optional(),
  order: order.optional(),
});
export type DagsQuery = z.infer<typeof DagsQuerySchema>;

/**
 * `runs` query: `name`, `dagRunId` (`latest` allowed), `status` (repeatable,
 * DAG-run status 0–8, dagu-model §1), `fromDate`/`toDate` (Unix seconds),
 * `limit` 1–500, `cursor` (opaque), `labels`.
 */
export const RunsQuerySchema = z.strictObject({
  name: nonEmpty.optional(),
  dagRunId: nonEmpty.optional(),
  status: z
    .array(intFrom(0, 8), { error: 'an integer from 0 through 8' })
    .min(1, { error: 'an integer from 0 through 8' })
    .optional(),
  fromDate: unixSeconds.optional(),
  toDate: unixSeconds.optional(),
  limit: intFrom(1, 500).optional(),
  cursor: nonEmpty.optional(),
  labels: labels.optional(),
});
export type RunsQuery = z.infer<typeof RunsQuerySchema>;

/** `wiki` query: `page` ≥ 1, `perPage` 1–200, `flat` (boolean), `sort` (`name`|`type`|`mtime`), `order`, `prefix`. */
export const WikiQuerySchema = z.strictObject({
  page: intFrom(1).optional(),
  perPage: intFrom(1, 200).optional(),
  flat: z.boolean({ error: 'one of true, false' }).optional(),
  sort: oneOf(['name', 'type', 'mtime']).optional(),
  order: order.optional(),
  prefix: z
    .string({ error: 'a valid wiki page path prefix' })
    .refine(isValidWikiPathPrefix, { error: 'a valid wiki page path prefix' })
    .optional(),
});
export type WikiQuery = z.infer<typeof WikiQuerySchema>;

/** `run_logs` query: `tail` 1–10000 (scheduler log lines). */
export const RunLogsQuerySchema = z.strictObject({
  tail: intFrom(1, 10000).optional(),
});
export type RunLogsQuery = z.infer<typeof RunLogsQuerySchema>;

/** Step-log stream selector. */
export const LogStreamSchema = oneOf(['stdout', 'stderr']);
export type LogStream = z.infer<typeof LogStreamSchema>;

/**
 * `step_log` query: `tail`/`head` 1–10000, `offset` ≥ 1 (1-based line),
 * `limit` 1–10000, `stream`. At most one of `tail`, `head`, `offset`; `limit`
 * only alone (reads from line 1) or with `offset` (spec 021, dagu-model §6).
 */
export const StepLogQuerySchema = z
  .strictObject({
    tail: intFrom(1, 10000).optional(),
    head: intFrom(1, 10000).optional(),
    offset: intFrom(1).optional(),
    limit: intFrom(1, 10000).optional(),
    stream: LogStreamSchema.optional(),
  })
  .refine((q) => [q.tail, q.head, q.offset].filter((v) => v !== undefined).length <= 1, {
    error: 'At most one of the query parameters tail, head and offset may be supplied.',
  })
  .refine((q) => q.limit === undefined || (q.tail === undefined && q.head === undefined), {
    error: 'The query parameter limit may be combined only with offset.',
  });
export type StepLogQuery = z.infer<typeof StepLogQuerySchema>;

/** Foreach item status buckets (dagu-model §1). */
export const ForeachItemStatusSchema = oneOf(['not_started', 'running', 'succeeded', 'failed', 'aborted']);
export type ForeachItemStatus = z.infer<typeof ForeachItemStatusSchema>;

/** `foreach_items` query: `parent` (a body step's `foreachParent`), `status`, `page` ≥ 1, `perPage` 1–500. */
export const ForeachItemsQuerySchema = z.strictObject({
  parent: nonEmpty.optional(),
  status: ForeachItemStatusSchema.optional(),
  page: intFrom(1).optional(),
  perPage: intFrom(1, 500).optional(),
});
export type ForeachItemsQuery = z.infer<typeof ForeachItemsQuerySchema>;

/** The parsed query type of each query target. */
export interface ReadQueryMap {
  dags: DagsQuery;
  runs: RunsQuery;
  wiki: WikiQuery;
  run_logs: RunLogsQuery;
  step_log: StepLogQuery;
  foreach_items: ForeachItemsQuery;
}
export type ReadQuery<T extends QueryTarget = QueryTarget> = ReadQueryMap[T];

/** How a parameter's string value becomes a typed value before schema validation. */
export type ParamCoercion = 'text' | 'int' | 'bool' | 'labels' | 'repeated-int';

interface QueryTableEntry<K extends QueryTarget> {
  schema: z.ZodType<ReadQueryMap[K]>;
  /** Parameter names in canonical (spec table) order, with their coercion. */
  params: Readonly<Record<keyof ReadQueryMap[K] & string, ParamCoercion>>;
}

/** The spec 021 query table, one entry per target. Only `runs.status` is repeatable. */
export const READ_QUERY_TABLE: { readonly [K in QueryTarget]: QueryTableEntry<K> } = {
  dags: {
    schema: DagsQuerySchema,
    params: { page: 'int', perPage: 'int', name: 'text', labels: 'labels', sort: 'text', order: 'text' },
  },
  runs: {
    schema: RunsQuerySchema,
    params: {
      name: 'text',
      dagRunId: 'text',
      status: 'repeated-int',
      fromDate: 'int',
      toDate: 'int',
      limit: 'int',
      cursor: 'text',
      labels: 'labels',
    },
  },
  wiki: {
    schema: WikiQuerySchema,
    params: { page: 'int', perPage: 'int', flat: 'bool', sort: 'text', order: 'text', prefix: 'text' },
  },
  run_logs: { schema: RunLogsQuerySchema, params: { tail: 'int' } },
  step_log: {
    schema: StepLogQuerySchema,
    params: { tail: 'int', head: 'int', offset: 'int', limit: 'int', stream: 'text' },
  },
  foreach_items: {
    schema: ForeachItemsQuerySchema,
    params: { parent: 'text', status: 'text', page: 'int', perPage: 'int' },
  },
};
