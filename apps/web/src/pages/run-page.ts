import { api, seg } from '../api';
import { duration, errorBox, h, replace, when } from '../dom';
import { drawGraph, type DrawnGraph } from '../graph';
import { listenToRuns } from '../live';
import { ACTIVE_STATUSES, roleAtLeast, type DagDetail, type Role, type RunDetail, type RunStep } from '../model';
import { href, navigate, type PageView } from '../router';
import { badge } from '../status';
import { checkpointForm } from './checkpoint-form';
import { logPanel } from './log-panel';
import { timeline } from './timeline';

/** The REST path of a run. */
export function runPath(name: string, id: string): string {
  return `/dag-runs/${seg(name)}/${seg(id)}`;
}

/** Pretty JSON for params and outputs (as text; nothing is interpreted). */
function json(value: unknown): HTMLElement {
  return h('pre', { class: 'json' }, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

/**
 * The run page (issue 26 "Runs"): status, `startedBy`, params and outputs; the step graph
 * coloured by status; a timeline; each step's stdout/stderr and the scheduler log (followed
 * while the run is active); sub-run drill-down; stop and retry for operators; the waiting
 * checkpoints with their forms. Updates from run events, and every 2 s while active (step
 * states have no events of their own).
 */
export async function runPage(name: string, id: string, role: Role, _sub?: string): Promise<PageView> {
  const [first, dag] = await Promise.all([
    api<RunDetail>(runPath(name, id)),
    api<DagDetail>(`/dags/${seg(name)}`).catch(() => undefined),
  ]);
  let run = first;
  const depends = new Map((dag?.dag.steps ?? []).map((s) => [s.name, s.depends]));
  const head = h('div', { class: 'run-head' });
  const graphBox = h('div', { class: 'graph-box', tabindex: 0, 'aria-label': 'Step graph (scrolls)' });
  const timeBox = h('div', { class: 'timeline-box' });
  const stepsBody = h('tbody');
  const checkpoints = h('div', { class: 'checkpoints' });
  const details = h('div', { class: 'details' });
  const logs = logPanel(name, id, () => ACTIVE_STATUSES.has(run.status));
  let selected = run.steps.find((s) => s.status === 2)?.name;

  const markSelected = (): void => {
    for (const row of stepsBody.querySelectorAll('tr'))
      row.toggleAttribute('aria-selected', row.getAttribute('data-step') === selected);
  };
  const select = (step: string): void => {
    selected = step;
    logs.show(step);
    markSelected();
  };
  const actions = (): HTMLElement => {
    const box = h('div', { class: 'actions' });
    if (!roleAtLeast(role, 'operator')) return box;
    const message = h('span', { class: 'muted small', role: 'status' });
    const act = async (path: string, body: unknown): Promise<void> => {
      try {
        const ref = await api<{ dagName: string; dagRunId: string }>(path, { method: 'POST', body });
        message.textContent = 'Done.';
        if (ref.dagRunId !== id) navigate(`/runs/${seg(ref.dagName)}/${seg(ref.dagRunId)}`);
        else await refresh();
      } catch (err) {
        replace(message, errorBox(err));
      }
    };
    if (ACTIVE_STATUSES.has(run.status))
      box.append(
        h(
          'button',
          { type: 'button', class: 'danger', onclick: () => void act(`${runPath(name, id)}/stop`, {}) },
          'Stop',
        ),
      );
    else
      box.append(h('button', { type: 'button', onclick: () => void act(`${runPath(name, id)}/retry`, {}) }, 'Retry'));
    box.append(message);
    return box;
  };
  const stepRow = (step: RunStep): HTMLElement =>
    h(
      'tr',
      { 'data-step': step.name },
      h(
        'td',
        { 'data-label': 'Step' },
        h('button', { type: 'button', class: 'link', onclick: () => select(step.name) }, step.name),
      ),
      h('td', { 'data-label': 'Status' }, badge(step.statusLabel)),
      h('td', { 'data-label': 'Started' }, when(step.startedAt)),
      h('td', { 'data-label': 'Duration' }, duration(step.startedAt, step.finishedAt)),
      h(
        'td',
        { 'data-label': 'Notes' },
        step.error ? h('div', { class: 'step-error' }, step.error) : null,
        step.decision
          ? h(
              'div',
              { class: 'small' },
              `${step.decision.outcome} by ${step.decision.by.name} (${step.decision.by.kind}) ${when(step.decision.at)}`,
            )
          : null,
        ...(step.subRuns ?? []).map((sub) =>
          h(
            'a',
            { href: href(`/runs/${seg(sub.name ?? name)}/${seg(sub.dagRunId)}`), class: 'small' },
            `sub-run ${sub.dagRunId}`,
          ),
        ),
      ),
    );
  // The layout is computed once, after the first paint (it is the costly part of a big run's
  // page); later renders only recolour the nodes.
  let graph: DrawnGraph | undefined;
  let graphShape = '';
  const drawRunGraph = (): void => {
    const shape = run.steps.map((s) => s.name).join('\n');
    if (graph !== undefined && shape === graphShape) {
      graph.recolour(new Map(run.steps.map((s) => [s.name, s.statusLabel])));
      return;
    }
    graphShape = shape;
    replace(graphBox, h('p', { class: 'muted small' }, 'Laying out the graph…'));
    window.requestAnimationFrame(() =>
      window.setTimeout(() => {
        graph = drawGraph(
          run.steps.map((s) => ({ name: s.name, depends: depends.get(s.name) ?? [], status: s.statusLabel })),
          select,
        );
        replace(graphBox, graph.el);
        graph.recolour(new Map(run.steps.map((s) => [s.name, s.statusLabel])));
      }, 0),
    );
  };
  const render = (): void => {
    replace(
      head,
      h('h1', {}, h('a', { href: href(`/dags/${seg(name)}`) }, name), ' ', h('span', { class: 'muted' }, '/ run')),
      h(
        'div',
        { class: 'facts' },
        badge(run.statusLabel),
        h('span', {}, h('strong', {}, 'Run '), h('code', {}, run.dagRunId)),
        h('span', {}, h('strong', {}, 'Started '), when(run.startedAt)),
        h('span', {}, h('strong', {}, 'Duration '), duration(run.startedAt, run.finishedAt)),
        run.startedBy
          ? h('span', {}, h('strong', {}, 'Started by '), `${run.startedBy.name} (${run.startedBy.kind})`)
          : null,
      ),
      actions(),
    );
    drawRunGraph();
    replace(timeBox, timeline(run.steps));
    replace(stepsBody, ...run.steps.map(stepRow));
    replace(
      checkpoints,
      ...run.steps.filter((s) => s.status === 7 && s.answer).map((s) => checkpointForm(run, s, dag, role, refresh)),
    );
    replace(
      details,
      run.params !== undefined ? h('div', {}, h('h2', {}, 'Params'), json(run.params)) : null,
      run.outputs !== undefined ? h('div', {}, h('h2', {}, 'Outputs'), json(run.outputs)) : null,
      run.error ? h('div', {}, h('h2', {}, 'Error'), h('pre', { class: 'json' }, run.error)) : null,
    );
    markSelected();
  };
  const refresh = async (): Promise<void> => {
    try {
      run = await api<RunDetail>(runPath(name, id));
      render();
      logs.refresh();
    } catch {
      // keep what is shown; the next event or tick tries again
    }
  };
  render();
  logs.show(selected);
  const stopEvents = listenToRuns(
    { dagRunId: id },
    () => void refresh(),
    () => void refresh(),
  );
  const tick = window.setInterval(() => {
    if (ACTIVE_STATUSES.has(run.status)) void refresh();
  }, 2000);
  const el = h(
    'section',
    { class: 'run-page' },
    head,
    checkpoints,
    h('h2', {}, 'Graph'),
    graphBox,
    h('h2', {}, 'Timeline'),
    timeBox,
    h('h2', {}, 'Steps'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'list steps' },
        h(
          'thead',
          {},
          h('tr', {}, ...['Step', 'Status', 'Started', 'Duration', 'Notes'].map((t) => h('th', { scope: 'col' }, t))),
        ),
        stepsBody,
      ),
    ),
    logs.el,
    details,
  );
  return {
    el,
    dispose: () => {
      stopEvents();
      window.clearInterval(tick);
      logs.dispose();
    },
  };
}
