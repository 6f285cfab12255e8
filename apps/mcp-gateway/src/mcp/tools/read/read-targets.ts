/** Every read target `dagu_read` resolves to (021 §Target contracts). */
export const READ_TARGETS = [
  'references',
  'reference',
  'dags',
  'dag',
  'dag_spec',
  'dag_search',
  'dag_profile',
  'wiki',
  'wiki_page',
  'wiki_search',
  'runs',
  'run',
  'run_logs',
  'step_log',
  'foreach_items',
  'foreach_item',
  'workbook',
] as const;
export type ReadTarget = (typeof READ_TARGETS)[number];

/** Deprecated aliases: accepted, not advertised, reported as the resolved target (dagu-model §10). */
export const READ_TARGET_ALIASES: Readonly<Record<string, ReadTarget>> = {
  docs: 'wiki',
  doc: 'wiki_page',
  doc_search: 'wiki_search',
};

/** Target-mode fields in the order of 021's input table (the order errors are reported in). */
export const TARGET_MODE_FIELDS = [
  'target',
  'name',
  'dagRunId',
  'subRunId',
  'stepName',
  'item',
  'bodyStepName',
  'query',
  'workspace',
  'path',
  'password',
  'search',
  'prefix',
  'cursor',
  'limit',
] as const;
export type TargetModeField = (typeof TARGET_MODE_FIELDS)[number];

/** Every field `dagu_read` accepts. */
export const READ_FIELDS: ReadonlySet<string> = new Set<string>([...TARGET_MODE_FIELDS, 'uri']);

interface TargetRule {
  readonly required: readonly TargetModeField[];
  readonly optional: readonly TargetModeField[];
}

/** Required and optional fields per target (021 §Input and §Target contracts); everything else is forbidden. */
export const TARGET_RULES: Readonly<Record<ReadTarget, TargetRule>> = {
  references: { required: [], optional: [] },
  reference: { required: [], optional: ['name'] },
  dags: { required: [], optional: ['query'] },
  dag: { required: ['name'], optional: [] },
  dag_spec: { required: ['name'], optional: [] },
  dag_search: { required: ['search'], optional: ['workspace', 'cursor', 'limit'] },
  dag_profile: { required: ['name'], optional: [] },
  wiki: { required: [], optional: ['workspace', 'query', 'prefix'] },
  wiki_page: { required: ['workspace', 'path'], optional: [] },
  wiki_search: { required: ['search'], optional: ['workspace', 'prefix', 'cursor', 'limit'] },
  runs: { required: [], optional: ['query'] },
  run: { required: ['name', 'dagRunId'], optional: ['subRunId'] },
  run_logs: { required: ['name', 'dagRunId'], optional: ['query'] },
  step_log: { required: ['name', 'dagRunId', 'stepName'], optional: ['subRunId', 'query', 'item', 'bodyStepName'] },
  foreach_items: { required: ['name', 'dagRunId', 'stepName'], optional: ['subRunId', 'query'] },
  foreach_item: { required: ['name', 'dagRunId', 'stepName', 'item'], optional: ['subRunId'] },
  workbook: { required: ['path'], optional: ['password'] },
};

/** Targets whose `name` is a DAG name (validated per dagu-model §2). */
export const DAG_NAMED_TARGETS: ReadonlySet<ReadTarget> = new Set<ReadTarget>([
  'dag',
  'dag_spec',
  'dag_profile',
  'run',
  'run_logs',
  'step_log',
  'foreach_items',
  'foreach_item',
]);

/** Type guard for a supported, case-sensitive target literal. */
export function isReadTarget(value: string): value is ReadTarget {
  return (READ_TARGETS as readonly string[]).includes(value);
}

/** Effective (trimmed, non-empty) target-mode values. */
export type ReadFields = Partial<Record<Exclude<TargetModeField, 'limit'>, string>> & { limit?: number };
