import type { Resource, ResourceTemplate } from '@modelcontextprotocol/sdk/types.js';
import type { ReferenceTopic } from '../reference/reference-topics';

const JSON_MIME = 'application/json';

/**
 * `resources/list`: the collection resources of spec 020 and every reference
 * topic. Singular DAGs, runs and pages are reached through the templates.
 */
export function listResources(topics: ReadonlyMap<string, ReferenceTopic>): Resource[] {
  return [
    {
      uri: 'dagu://reference',
      name: 'dagu_references',
      title: 'Reference topics',
      description: 'Built-in MCP reference topics.',
      mimeType: JSON_MIME,
    },
    ...[...topics.values()].map((t) => ({
      uri: t.uri,
      name: t.name,
      title: t.title,
      description: t.description,
      mimeType: t.mimeType,
    })),
    {
      uri: 'dagu://dags',
      name: 'dags',
      title: 'DAGs',
      description: 'DAG summaries visible to the caller.',
      mimeType: JSON_MIME,
    },
    {
      uri: 'dagu://runs',
      name: 'dag_runs',
      title: 'DAG-runs',
      description: 'DAG-run summaries visible to the caller.',
      mimeType: JSON_MIME,
    },
    {
      uri: 'dagu://wiki',
      name: 'wiki',
      title: 'Wiki',
      description: 'Wiki pages of every workspace.',
      mimeType: JSON_MIME,
    },
  ];
}

/** `resources/templates/list`: every parameterised family of spec 020 with its MIME type. */
export function listResourceTemplates(): ResourceTemplate[] {
  const t = (uriTemplate: string, name: string, title: string, mimeType = JSON_MIME): ResourceTemplate => ({
    uriTemplate,
    name,
    title,
    mimeType,
  });
  const run = 'dagu://runs/{name}/{dagRunId}';
  const sub = `${run}/sub/{subRunId}`;
  return [
    t('dagu://reference/{topic}', 'dagu_reference', 'Reference topic', 'text/markdown'),
    t('dagu://dags/{name}/spec', 'dag_spec', 'DAG spec (YAML)', 'application/yaml'),
    t(run, 'dag_run', 'DAG-run details'),
    t(`${run}/logs`, 'dag_run_logs', 'DAG-run logs'),
    t(`${run}/steps/{stepName}/logs`, 'dag_run_step_log', 'Step log'),
    t(sub, 'sub_dag_run', 'Child DAG-run details'),
    t(`${sub}/steps/{stepName}/logs`, 'sub_dag_run_step_log', 'Child step log'),
    t(`${run}/steps/{stepName}/foreach`, 'dag_run_foreach_items', 'Foreach items'),
    t(`${run}/steps/{stepName}/foreach/{item}`, 'dag_run_foreach_item', 'Foreach item'),
    t(
      `${run}/steps/{stepName}/foreach/{item}/steps/{bodyStepName}/logs`,
      'dag_run_foreach_step_log',
      'Foreach body step log',
    ),
    t(`${sub}/steps/{stepName}/foreach`, 'sub_dag_run_foreach_items', 'Child foreach items'),
    t(`${sub}/steps/{stepName}/foreach/{item}`, 'sub_dag_run_foreach_item', 'Child foreach item'),
    t(
      `${sub}/steps/{stepName}/foreach/{item}/steps/{bodyStepName}/logs`,
      'sub_dag_run_foreach_step_log',
      'Child foreach body step log',
    ),
    t('dagu://wiki/{workspace}', 'wiki', 'Wiki workspace'),
    t('dagu://wiki/{workspace}/{path}', 'wiki_page', 'Wiki page', 'text/markdown'),
  ];
}
