import { z } from 'zod';

/**
 * dag-service op payloads and replies (issue: DAG validation and storage).
 * Both the gateway and dag-service validate with these schemas.
 */

/** A DAG name per dagu-model §2 (the service re-checks; the gateway checks first). */
const DagName = z.string().min(1).max(40);

/** The normalized DAG model of `@dagu-mcp/dag-spec`, carried as plain JSON. */
export const NormalizedDagJsonSchema = z.record(z.string(), z.unknown());

/** `dag.validate` / `dag.upsert` request: the DAG name and its YAML text exactly as given (022). */
export const DagChangeRequestSchema = z.strictObject({ name: DagName, spec: z.string().min(1) });
export type DagChangeRequest = z.infer<typeof DagChangeRequestSchema>;

/**
 * Validation outcome (022 `valid`, `errors`, `dag`). `dag` only when valid.
 * `warnings` (an added field, 022 allows them): references of a valid DAG
 * that will not resolve at run time, shaped like the errors.
 * `stored` (an invalid validation only) says whether a DAG of that name exists,
 * so an invalid preview links a stored spec only when there is one.
 */
export const DagValidationSchema = z.object({
  valid: z.boolean(),
  errors: z.array(z.string()),
  /**
   * Where each error points in the YAML (an added field): `index` into `errors`,
   * 1-based `line` and `column`; errors that name no place have no entry. Invalid only.
   */
  errorLocations: z
    .array(z.object({ index: z.number().int().min(0), line: z.number().int().min(1), column: z.number().int().min(1) }))
    .optional(),
  warnings: z.array(z.string()).optional(),
  dag: NormalizedDagJsonSchema.optional(),
  stored: z.boolean().optional(),
});
export type DagValidation = z.infer<typeof DagValidationSchema>;

/** `dag.upsert` reply: validation plus what was written. `created`/`updated` only when `applied`. */
export const DagUpsertReplySchema = DagValidationSchema.extend({
  applied: z.boolean(),
  created: z.boolean().optional(),
  updated: z.boolean().optional(),
  version: z.number().int().positive().optional(),
});
export type DagUpsertReply = z.infer<typeof DagUpsertReplySchema>;

/** `dag.list` request: the `dags` query of 021 with defaults applied by the service (page 1, perPage 50, sort name asc). */
export const DagListRequestSchema = z.strictObject({
  page: z.number().int().min(1).optional(),
  perPage: z.number().int().min(1).max(200).optional(),
  name: z.string().min(1).optional(),
  labels: z.array(z.string().min(1)).optional(),
  sort: z.enum(['name', 'nextRun']).optional(),
  order: z.enum(['asc', 'desc']).optional(),
});
export type DagListRequest = z.infer<typeof DagListRequestSchema>;

/** One DAG in a collection (021 DAG collection model: `name`, `uri`, `suspended` + extras). */
export const DagSummarySchema = z.object({
  name: z.string(),
  uri: z.string(),
  suspended: z.boolean(),
  description: z.string().optional(),
  labels: z.array(z.string()),
  schedule: z.array(z.string()),
  /** Next scheduled start, RFC 3339 ms UTC; absent when the DAG has no schedule. */
  nextRun: z.string().optional(),
  updatedAt: z.string(),
});
export type DagSummary = z.infer<typeof DagSummarySchema>;

export const PaginationSchema = z.object({
  page: z.number().int(),
  perPage: z.number().int(),
  total: z.number().int(),
  totalPages: z.number().int(),
});
export type Pagination = z.infer<typeof PaginationSchema>;

export const DagListReplySchema = z.object({ items: z.array(DagSummarySchema), pagination: PaginationSchema });
export type DagListReply = z.infer<typeof DagListReplySchema>;

/**
 * `dag.listIfChanged` request: a `dag.list` query and, optionally, the tag of
 * the page the caller already holds (the gateway keeps rendered
 * `dags` pages and asks only whether its copy is still the page).
 */
export const DagListIfChangedRequestSchema = DagListRequestSchema.extend({
  ifNoneMatch: z.string().min(1).max(128).optional(),
});
export type DagListIfChangedRequest = z.infer<typeof DagListIfChangedRequestSchema>;

/**
 * `dag.listIfChanged` reply: the page's tag (a hash of its content, equal on
 * every replica for the same page) and the page, which is absent when the
 * request's `ifNoneMatch` is that tag (the caller's copy is current).
 */
export const DagListIfChangedReplySchema = z.object({ etag: z.string(), page: DagListReplySchema.optional() });
export type DagListIfChangedReply = z.infer<typeof DagListIfChangedReplySchema>;

/** `dag.get` / `dag.spec` request. */
export const DagNameRequestSchema = z.strictObject({ name: DagName });

/**
 * `dag.get` reply: the DAG detail model (021): `name`, `specUri`, `suspended`
 * plus the stored facts. `latestRun` is added by the gateway from run-service.
 * Unknown DAG → `resource_not_found` with `details.didYouMean` (036 algorithm).
 */
export const DagDetailSchema = z.object({
  name: z.string(),
  specUri: z.string(),
  suspended: z.boolean(),
  description: z.string().optional(),
  labels: z.array(z.string()),
  schedule: z.array(z.string()),
  nextRun: z.string().optional(),
  version: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
  dag: NormalizedDagJsonSchema,
});
export type DagDetail = z.infer<typeof DagDetailSchema>;

/** `dag.spec` reply: the DAG spec model (021): YAML exactly as stored, and its current validation errors. */
export const DagSpecReplySchema = z.object({
  name: z.string(),
  mimeType: z.literal('application/yaml'),
  spec: z.string(),
  errors: z.array(z.string()),
});
export type DagSpecReply = z.infer<typeof DagSpecReplySchema>;

/** `dag.search` request (021 `dag_search`; `workspace` per dagu-model §10: the `workspace=<name>` label, `all` = no filter). */
export const DagSearchRequestSchema = z.strictObject({
  search: z.string().min(1),
  workspace: z.string().min(1).optional(),
  cursor: z.string().min(1).optional(),
  limit: z.number().int().min(1).max(50).optional(),
});
export type DagSearchRequest = z.infer<typeof DagSearchRequestSchema>;

/** A line-level snippet: 1-based line number and the line's text. */
export const SearchMatchSchema = z.object({ line: z.number().int().min(1), text: z.string() });

export const DagSearchReplySchema = z.object({
  results: z.array(
    z.object({ name: z.string(), uri: z.string(), matches: z.array(SearchMatchSchema), hasMoreMatches: z.boolean() }),
  ),
  hasMore: z.boolean(),
  nextCursor: z.string().optional(),
});
export type DagSearchReply = z.infer<typeof DagSearchReplySchema>;

/** `dag.delete` reply. Unknown DAG → `resource_not_found`. Runs of the DAG stay readable. */
export const DagDeleteReplySchema = z.object({ name: z.string(), deleted: z.literal(true) });

/**
 * `dag.rename` request (Dagu spec 022b `rename_dag`): the DAG `name` becomes
 * `newName`. Unknown `name` → `resource_not_found`; a stored `newName` → `conflict`.
 */
export const DagRenameRequestSchema = z.strictObject({ name: DagName, newName: DagName });
export type DagRenameRequest = z.infer<typeof DagRenameRequestSchema>;

/** `dag.rename` reply: the new `name` and the `previousName`. */
export const DagRenameReplySchema = z.object({ name: z.string(), previousName: z.string(), renamed: z.literal(true) });
export type DagRenameReply = z.infer<typeof DagRenameReplySchema>;

/** The `details` of a `dag.renamed` mutation row: what run-service moves (022b `rename_dag`). */
export const DagRenamedDetailsSchema = z.object({ from: DagName, to: DagName });

/** `dag.setSuspended` request: a suspended DAG keeps its definition but is not scheduled. */
export const DagSuspendRequestSchema = z.strictObject({ name: DagName, suspended: z.boolean() });

/**
 * `dag.schedules` request (run-service's scheduler, dagu-model §3 `schedule`):
 * the DAGs that have a schedule, all of them or the ones in `names`; with
 * `withSpec` each entry carries the stored YAML.
 */
export const DagSchedulesRequestSchema = z.strictObject({
  names: z.array(DagName).min(1).max(200).optional(),
  withSpec: z.boolean().optional(),
});

/**
 * `dag.schedules` reply: every DAG with at least one schedule expression
 * (suspended ones too, flagged), by name. `version` grows with each apply.
 */
export const DagSchedulesReplySchema = z.object({
  schedules: z.array(
    z.object({
      name: z.string(),
      schedule: z.array(z.string()),
      suspended: z.boolean(),
      version: z.number().int(),
      spec: z.string().optional(),
    }),
  ),
});
export type DagSchedulesReply = z.infer<typeof DagSchedulesReplySchema>;
