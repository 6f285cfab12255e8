import { api, seg } from '../api';
import { h, replace, when } from '../dom';
import { drawGraphInto } from '../graph';
import { listenToRuns } from '../live';
import { roleAtLeast, type DagDetail, type Role, type RunSummary } from '../model';
import type { PageView } from '../router';
import { runTable } from './run-table';
import { startForm } from './start-form';
import { yamlEditor } from './yaml-editor';

/**
 * A DAG's page: its facts, the graph of its steps, its YAML (an editor for
 * developers), its run history (live), and the start form for operators and up — a viewer
 * gets no start button at all.
 */
export async function dagPage(name: string, role: Role): Promise<PageView> {
  const [dag, spec] = await Promise.all([
    api<DagDetail>(`/dags/${seg(name)}`),
    api<{ spec: string }>(`/dags/${seg(name)}/spec`),
  ]);
  const history = h('div', {});
  const loadRuns = async (): Promise<void> => {
    const page = await api<{ items: RunSummary[] }>(`/dag-runs?name=${seg(name)}&limit=25`);
    replace(
      history,
      runTable(
        page.items.filter((r) => r.name === name),
        false,
      ),
    );
  };
  await loadRuns();
  const stop = listenToRuns(
    { name },
    () => void loadRuns(),
    () => void loadRuns(),
  );
  const steps = dag.dag.steps ?? [];
  const graphBox = h('div', { class: 'graph-box', tabindex: 0, 'aria-label': 'Step graph (scrolls)' });
  let left = false;
  void drawGraphInto(graphBox, steps, undefined, () => !left);
  const el = h(
    'section',
    { class: 'dag-page' },
    h('h1', {}, dag.name, dag.suspended ? h('span', { class: 'tag' }, 'suspended') : null),
    dag.description ? h('p', {}, dag.description) : null,
    h(
      'div',
      { class: 'facts' },
      h(
        'span',
        {},
        h('strong', {}, 'Schedule '),
        dag.schedule.length > 0 ? h('code', {}, dag.schedule.join(', ')) : '—',
      ),
      h('span', {}, h('strong', {}, 'Next run '), when(dag.nextRun)),
      h('span', {}, h('strong', {}, 'Version '), String(dag.version)),
      ...dag.labels.map((l) => h('span', { class: 'chip' }, l)),
    ),
    roleAtLeast(role, 'operator') ? startForm(dag) : null,
    h('h2', {}, 'Graph'),
    graphBox,
    h('h2', {}, 'Runs'),
    history,
    h('h2', {}, 'YAML'),
    yamlEditor(name, spec.spec, roleAtLeast(role, 'developer'), () => undefined),
  );
  return {
    el,
    dispose: () => {
      left = true;
      stop();
    },
  };
}
