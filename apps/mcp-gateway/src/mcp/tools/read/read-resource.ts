import type { DaguResource } from '@dagu-mcp/contracts';
import type { ReadFields, ReadTarget } from './read-targets';

/**
 * The `dagu://` resource a target-mode read addresses (without its query),
 * or undefined for targets with no resource URI (`dag`, `dag_search`,
 * `wiki_search`). Required fields were checked before this is called.
 */
export function buildResource(target: ReadTarget, f: ReadFields): DaguResource | undefined {
  const name = f.name ?? '';
  const dagRunId = f.dagRunId ?? '';
  const stepName = f.stepName ?? '';
  const sub = f.subRunId === undefined ? {} : { subRunId: f.subRunId };
  switch (target) {
    case 'references':
      return { kind: 'references' };
    case 'reference':
      return { kind: 'reference', topic: name };
    case 'dags':
      return { kind: 'dags' };
    case 'dag_spec':
      return { kind: 'dag_spec', name };
    case 'runs':
      return { kind: 'runs' };
    case 'run':
      return { kind: 'run', name, dagRunId, ...sub };
    case 'run_logs':
      return { kind: 'run_logs', name, dagRunId };
    case 'step_log':
      return f.item !== undefined && f.bodyStepName !== undefined
        ? { kind: 'step_log', name, dagRunId, ...sub, stepName, item: f.item, bodyStepName: f.bodyStepName }
        : { kind: 'step_log', name, dagRunId, ...sub, stepName };
    case 'foreach_items':
      return { kind: 'foreach_items', name, dagRunId, ...sub, stepName };
    case 'foreach_item':
      return { kind: 'foreach_item', name, dagRunId, ...sub, stepName, item: f.item ?? '' };
    case 'wiki':
      return f.workspace === undefined || f.workspace === 'all'
        ? { kind: 'wiki' }
        : { kind: 'wiki', workspace: f.workspace };
    case 'wiki_page':
      return { kind: 'wiki_page', workspace: f.workspace ?? '', path: f.path ?? '' };
    case 'dag':
    case 'dag_profile':
    case 'dag_search':
    case 'wiki_search':
    case 'workbook':
      return undefined;
  }
}
