import { DaguResourceKindSchema } from './uri-resource';
import { mimeTypeFor, resourceLinkFor, ResourceLinkSchema } from './uri-links';
import { parseDaguUri } from './uri';

const R = 'dagu://runs/n/r';

/** Spec 021 resource-link table: URI → [name, mimeType]. */
const table: Array<[string, string, string]> = [
  ['dagu://reference', 'dagu_references', 'application/json'],
  ['dagu://reference/authoring', 'dagu_reference', 'text/markdown'],
  ['dagu://dags', 'dags', 'application/json'],
  ['dagu://dags/n/spec', 'dag_spec', 'application/yaml'],
  ['dagu://runs', 'dag_runs', 'application/json'],
  [R, 'dag_run', 'application/json'],
  [`${R}/logs`, 'dag_run_logs', 'application/json'],
  [`${R}/steps/s/logs`, 'dag_run_step_log', 'application/json'],
  [`${R}/sub/c`, 'sub_dag_run', 'application/json'],
  [`${R}/sub/c/steps/s/logs`, 'sub_dag_run_step_log', 'application/json'],
  [`${R}/steps/s/foreach`, 'dag_run_foreach_items', 'application/json'],
  [`${R}/steps/s/foreach/1`, 'dag_run_foreach_item', 'application/json'],
  [`${R}/steps/s/foreach/1/steps/b/logs`, 'dag_run_foreach_step_log', 'application/json'],
  [`${R}/sub/c/steps/s/foreach`, 'sub_dag_run_foreach_items', 'application/json'],
  [`${R}/sub/c/steps/s/foreach/1`, 'sub_dag_run_foreach_item', 'application/json'],
  [`${R}/sub/c/steps/s/foreach/1/steps/b/logs`, 'sub_dag_run_foreach_step_log', 'application/json'],
  ['dagu://wiki', 'wiki', 'application/json'],
  ['dagu://wiki/ops', 'wiki', 'application/json'],
  ['dagu://wiki/ops/a%2Fb', 'wiki_page', 'text/markdown'],
];

describe('resourceLinkFor (spec 021 resource-link table)', () => {
  it.each(table)('%s → %s, %s', (uri, name, mimeType) => {
    const link = resourceLinkFor(parseDaguUri(uri));
    expect(link).toStrictEqual({ uri, name, mimeType });
    expect(ResourceLinkSchema.safeParse(link).success).toBe(true);
  });

  it('links the URI the tool returns when given one', () => {
    const resource = parseDaguUri(`${R}/logs`);
    expect(resourceLinkFor(resource, { uri: `${R}/logs?tail=100` })).toStrictEqual({
      uri: `${R}/logs?tail=100`,
      name: 'dag_run_logs',
      mimeType: 'application/json',
    });
  });

  it('keeps the query in the formatted URI', () => {
    expect(resourceLinkFor(parseDaguUri('dagu://runs?limit=5')).uri).toBe('dagu://runs?limit=5');
  });
});

describe('mimeTypeFor (spec 020 families table)', () => {
  it.each(DaguResourceKindSchema.options)('%s', (kind) => {
    const expected =
      kind === 'reference' || kind === 'wiki_page'
        ? 'text/markdown'
        : kind === 'dag_spec'
          ? 'application/yaml'
          : 'application/json';
    expect(mimeTypeFor(kind)).toBe(expected);
  });
});
