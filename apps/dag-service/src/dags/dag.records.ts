import { z } from 'zod';

/**
 * The stored shapes of a DAG (table `dags`, see db/migrations.ts) as the
 * repository hands them out. Rows coming back from pg are parsed with these
 * schemas rather than cast, so a schema drift fails loudly (as an
 * `internal_error`) instead of leaking a wrong shape into a reply.
 */

/** Columns of a DAG collection entry (021 DAG collection model): no spec, no model. */
export const SUMMARY_COLUMNS = 'name, suspended, description, labels, schedule, updated_at';

/** Every column of a stored DAG. */
export const RECORD_COLUMNS = `${SUMMARY_COLUMNS}, spec, normalized, workspace, version, created_at`;

const SummaryRowSchema = z.object({
  name: z.string(),
  suspended: z.boolean(),
  description: z.string().nullable(),
  labels: z.array(z.string()),
  schedule: z.array(z.string()),
  updated_at: z.date(),
});

const RecordRowSchema = SummaryRowSchema.extend({
  spec: z.string(),
  normalized: z.record(z.string(), z.unknown()),
  workspace: z.string().nullable(),
  version: z.number().int().positive(),
  created_at: z.date(),
});

/** What a DAG collection entry is built from. */
export interface DagSummaryRecord {
  name: string;
  suspended: boolean;
  /** `undefined` when the DAG has no description. */
  description: string | undefined;
  labels: string[];
  /** Cron expressions, as stored (optional `CRON_TZ=<zone> ` prefix). */
  schedule: string[];
  updatedAt: Date;
}

/** A stored DAG, every column. */
export interface DagRecord extends DagSummaryRecord {
  /** The YAML exactly as applied. */
  spec: string;
  /** The normalized root DAG model (dag-spec `NormalizedDag`) at write time, as JSON. */
  normalized: Record<string, unknown>;
  /** From the `workspace=<name>` label (dagu-model §10); `undefined` when none. */
  workspace: string | undefined;
  version: number;
  createdAt: Date;
}

/** The facts written by `dag.upsert`, derived from a valid spec by `dag-validation.ts`. */
export interface DagWrite {
  name: string;
  spec: string;
  normalized: Record<string, unknown>;
  labels: string[];
  workspace: string | undefined;
  schedule: string[];
  description: string | undefined;
}

/**
 * Parses a row selected with {@link SUMMARY_COLUMNS}.
 *
 * @throws ZodError when the row does not have the stored shape (a bug or a schema drift).
 */
export function parseSummaryRow(row: unknown): DagSummaryRecord {
  return summaryOf(SummaryRowSchema.parse(row));
}

function summaryOf(parsed: z.output<typeof SummaryRowSchema>): DagSummaryRecord {
  return {
    name: parsed.name,
    suspended: parsed.suspended,
    description: parsed.description ?? undefined,
    labels: parsed.labels,
    schedule: parsed.schedule,
    updatedAt: parsed.updated_at,
  };
}

/**
 * Parses a row selected with {@link RECORD_COLUMNS}.
 *
 * @throws ZodError when the row does not have the stored shape.
 */
export function parseRecordRow(row: unknown): DagRecord {
  const parsed = RecordRowSchema.parse(row);
  return {
    ...summaryOf(parsed),
    spec: parsed.spec,
    normalized: parsed.normalized,
    workspace: parsed.workspace ?? undefined,
    version: parsed.version,
    createdAt: parsed.created_at,
  };
}
