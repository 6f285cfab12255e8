import { z } from 'zod';
import { formatDaguUri } from './uri-format';
import type { DaguResource, DaguResourceKind } from './uri-resource';

/** The MIME types of `dagu://` resources (spec 020 families table). */
export const DaguMimeTypeSchema = z.enum(['application/json', 'text/markdown', 'application/yaml']);
export type DaguMimeType = z.infer<typeof DaguMimeTypeSchema>;

/**
 * The required fields of an MCP `resource_link` content item (spec 021
 * "Output": `uri`, `name`, `mimeType`; the MCP content `type` is added by the
 * gateway).
 */
export const ResourceLinkSchema = z.object({
  uri: z.string().min(1),
  name: z.string().min(1),
  mimeType: DaguMimeTypeSchema,
});
export type ResourceLink = z.infer<typeof ResourceLinkSchema>;

/**
 * The MIME type of a resource kind (spec 020 families table): reference topics
 * and wiki pages are `text/markdown`, DAG specs `application/yaml`, every
 * other kind (collections, runs, logs, foreach) `application/json`.
 */
export function mimeTypeFor(kind: DaguResourceKind): DaguMimeType {
  switch (kind) {
    case 'reference':
    case 'wiki_page':
      return 'text/markdown';
    case 'dag_spec':
      return 'application/yaml';
    default:
      return 'application/json';
  }
}

/** `sub_` for a resource addressed under a child run, else `''`. */
function childPrefix(resource: { subRunId?: string }): string {
  return resource.subRunId === undefined ? '' : 'sub_';
}

/**
 * The resource-link `name` of a resource (spec 021 resource-link table), e.g.
 * `dag_run` / `sub_dag_run`, `dag_run_step_log` / `sub_dag_run_step_log`,
 * `dag_run_foreach_step_log` / `sub_dag_run_foreach_step_log`.
 */
export function resourceLinkNameFor(resource: DaguResource): string {
  switch (resource.kind) {
    case 'references':
      return 'dagu_references';
    case 'reference':
      return 'dagu_reference';
    case 'dags':
      return 'dags';
    case 'dag_spec':
      return 'dag_spec';
    case 'runs':
      return 'dag_runs';
    case 'run':
      return `${childPrefix(resource)}dag_run`;
    case 'run_logs':
      return 'dag_run_logs';
    case 'step_log':
      return `${childPrefix(resource)}dag_run_${resource.item === undefined ? '' : 'foreach_'}step_log`;
    case 'foreach_items':
      return `${childPrefix(resource)}dag_run_foreach_items`;
    case 'foreach_item':
      return `${childPrefix(resource)}dag_run_foreach_item`;
    case 'wiki':
      return 'wiki';
    case 'wiki_page':
      return 'wiki_page';
  }
}

/**
 * The resource-link content item for a read result (spec 021 "Output":
 * `content[1]` of a result with `uri`).
 *
 * Shape: `{uri, name, mimeType}`, e.g. for `{kind: 'dag_spec', name: 'nightly'}`
 * → `{uri: 'dagu://dags/nightly/spec', name: 'dag_spec', mimeType: 'application/yaml'}`.
 *
 * @param resource The resource read.
 * @param opts.uri The URI to link instead of `formatDaguUri(resource)`: the
 *   tool passes the URI it returns (e.g. with the supplied query text
 *   appended, or the validated URI-mode input) so the link and `uri` agree.
 */
export function resourceLinkFor(resource: DaguResource, opts: { uri?: string } = {}): ResourceLink {
  return {
    uri: opts.uri ?? formatDaguUri(resource),
    name: resourceLinkNameFor(resource),
    mimeType: mimeTypeFor(resource.kind),
  };
}
