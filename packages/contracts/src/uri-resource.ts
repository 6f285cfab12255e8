import { z } from 'zod';
import type { DagsQuery, ForeachItemsQuery, RunLogsQuery, RunsQuery, StepLogQuery, WikiQuery } from './read-query';

/**
 * The parsed form of a `dagu://` resource URI (spec 020 "Resource URI Model",
 * families table). `kind` is the `dagu_read` target the URI resolves to in URI
 * mode (spec 021 "Addressing modes"), so a child run is `run` with `subRunId`
 * and a foreach body-step log is `step_log` with `item` and `bodyStepName`.
 *
 * All string fields hold *decoded* values (`stepName: 'a/b'`, never `a%2Fb`).
 * Optional keys are absent rather than `undefined` in parsed values, and
 * `query` is present only when the URI has at least one parameter.
 */

/** Every resource kind, in spec 021 order. */
export const DaguResourceKindSchema = z.enum([
  'references',
  'reference',
  'dags',
  'dag_spec',
  'runs',
  'run',
  'run_logs',
  'step_log',
  'foreach_items',
  'foreach_item',
  'wiki',
  'wiki_page',
]);
export type DaguResourceKind = z.infer<typeof DaguResourceKindSchema>;

/** The URI hosts, one per resource family (spec 020). */
export const DaguUriHostSchema = z.enum(['reference', 'dags', 'runs', 'wiki']);
export type DaguUriHost = z.infer<typeof DaguUriHostSchema>;

/** A root DAG run, or a child run addressed under it by `subRunId`. */
export interface RunAddress {
  name: string;
  dagRunId: string;
  subRunId?: string;
}

/** A step inside a (root or child) run. */
export interface StepAddress extends RunAddress {
  stepName: string;
}

/** `dagu://reference`: the reference collection. */
export interface ReferencesResource {
  kind: 'references';
}
/** `dagu://reference/{topic}`: one reference topic (Markdown). */
export interface ReferenceResource {
  kind: 'reference';
  topic: string;
}
/** `dagu://dags[?query]`: the DAG collection. */
export interface DagsResource {
  kind: 'dags';
  query?: DagsQuery;
}
/** `dagu://dags/{name}/spec`: a DAG's YAML spec. */
export interface DagSpecResource {
  kind: 'dag_spec';
  name: string;
}
/** `dagu://runs[?query]`: the run collection. */
export interface RunsResource {
  kind: 'runs';
  query?: RunsQuery;
}
/** `dagu://runs/{name}/{dagRunId}[/sub/{subRunId}]`: run details. */
export interface RunResource extends RunAddress {
  kind: 'run';
}
/** `dagu://runs/{name}/{dagRunId}/logs[?query]`: a root run's logs (no child form in spec 020). */
export interface RunLogsResource {
  kind: 'run_logs';
  name: string;
  dagRunId: string;
  query?: RunLogsQuery;
}
/** A foreach body step: both `item` and `bodyStepName`, or neither. */
export type ForeachBodyStep = { item: string; bodyStepName: string } | { item?: undefined; bodyStepName?: undefined };
/**
 * `…/steps/{stepName}/logs[?query]`, or the foreach body-step log
 * `…/steps/{stepName}/foreach/{item}/steps/{bodyStepName}/logs[?query]`,
 * under a root run or its `/sub/{subRunId}` child.
 */
export type StepLogResource = StepAddress & { kind: 'step_log'; query?: StepLogQuery } & ForeachBodyStep;
/** `…/steps/{stepName}/foreach[?query]`: the items of a foreach step. */
export interface ForeachItemsResource extends StepAddress {
  kind: 'foreach_items';
  query?: ForeachItemsQuery;
}
/** `…/steps/{stepName}/foreach/{item}`: one foreach item. */
export interface ForeachItemResource extends StepAddress {
  kind: 'foreach_item';
  item: string;
}
/** `dagu://wiki[?query]` or `dagu://wiki/{workspace}[?query]`: the wiki collection. */
export interface WikiResource {
  kind: 'wiki';
  workspace?: string;
  query?: WikiQuery;
}
/** `dagu://wiki/{workspace}/{path}`: one wiki page; the whole path is one encoded segment. */
export interface WikiPageResource {
  kind: 'wiki_page';
  workspace: string;
  path: string;
}

/** Any `dagu://` resource, discriminated by `kind`. */
export type DaguResource =
  | ReferencesResource
  | ReferenceResource
  | DagsResource
  | DagSpecResource
  | RunsResource
  | RunResource
  | RunLogsResource
  | StepLogResource
  | ForeachItemsResource
  | ForeachItemResource
  | WikiResource
  | WikiPageResource;

/** The resource variant of one kind, e.g. `DaguResourceOf<'step_log'>`. */
export type DaguResourceOf<K extends DaguResourceKind> = Extract<DaguResource, { kind: K }>;
