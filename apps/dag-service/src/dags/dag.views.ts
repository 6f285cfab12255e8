import { formatDaguUri, type DagDetail, type DagSpecReply, type DagSummary } from '@dagu-mcp/contracts';
import type { DagRecord, DagSummaryRecord } from './dag.records';

/**
 * Stored DAGs → the reply models of the contracts (spec 021 DAG collection,
 * DAG detail and DAG spec models). Timestamps are RFC 3339 with
 * milliseconds, UTC (dagu-model §1); optional fields are absent, never
 * `undefined`.
 */

/** The YAML media type of a DAG spec (spec 021 `dag_spec`, resource link of `dagu://dags/{name}/spec`). */
export const DAG_SPEC_MIME_TYPE = 'application/yaml';

/** The canonical `dagu://dags/{name}/spec` URI of a DAG (spec 020 escaping). */
export function dagSpecUri(name: string): string {
  return formatDaguUri({ kind: 'dag_spec', name });
}

/** `{description?, nextRun?}` with only the keys that have a value. */
function optionalFacts(
  description: string | undefined,
  nextRun: Date | undefined,
): {
  description?: string;
  nextRun?: string;
} {
  return {
    ...(description !== undefined ? { description } : {}),
    ...(nextRun !== undefined ? { nextRun: nextRun.toISOString() } : {}),
  };
}

/**
 * One entry of the DAG collection (021: `name`, `uri`, `suspended`, plus
 * `description`, `labels`, `schedule`, `nextRun`, `updatedAt`).
 *
 * @param nextRun - the DAG's next scheduled start (see next-run.ts), if any.
 */
export function toDagSummary(record: DagSummaryRecord, nextRun: Date | undefined): DagSummary {
  return {
    name: record.name,
    uri: dagSpecUri(record.name),
    suspended: record.suspended,
    ...optionalFacts(record.description, nextRun),
    labels: record.labels,
    schedule: record.schedule,
    updatedAt: record.updatedAt.toISOString(),
  };
}

/**
 * The DAG detail model (021 `dag`: `name`, `specUri`, `suspended`, plus the
 * stored facts and the normalized model as `dag`). `latestRun` is the
 * gateway's to add, from run-service.
 */
export function toDagDetail(record: DagRecord, nextRun: Date | undefined): DagDetail {
  return {
    name: record.name,
    specUri: dagSpecUri(record.name),
    suspended: record.suspended,
    ...optionalFacts(record.description, nextRun),
    labels: record.labels,
    schedule: record.schedule,
    version: record.version,
    createdAt: record.createdAt.toISOString(),
    updatedAt: record.updatedAt.toISOString(),
    dag: record.normalized,
  };
}

/**
 * The DAG spec model (021 `dag_spec`): the YAML exactly as stored and its
 * current validation errors.
 *
 * @param errors - what validating the stored YAML today reports (normally
 *   none; a rule added since the DAG was written can add some).
 */
export function toDagSpecReply(record: DagRecord, errors: string[]): DagSpecReply {
  return { name: record.name, mimeType: DAG_SPEC_MIME_TYPE, spec: record.spec, errors };
}
