import { api, seg } from '../api';
import { duration, errorBox, h, replace, when } from '../dom';
import { drawGraphInto, type DrawnGraph } from '../graph';
import { listenToRuns, type StepEvent } from '../live';
import {
  ACTIVE_STATUSES,
  actorText,
  roleAtLeast,
  type DagDetail,
  type Role,
  type RunDetail,
  type RunStep,
} from '../model';
import { href, navigate, type PageView } from '../router';
import { badge } from '../status';
import { checkpointForm } from './checkpoint-form';
import { foreachPanel } from './foreach-panel';
import { logPanel } from './log-panel';
import { timeline } from './timeline';

/** The REST path of a run (`sub`: a child run, addressed under its root `name`/`id`). */
export function runPath(name: string, id: string, sub?: string): string {
  return `/dag-runs/${seg(name)}/${seg(id)}${sub !== undefined ? `/sub/${seg(sub)}` : ''}`;
}

/** The console path of a run's page (`sub`: a child run under its root). */
export function runPagePath(name: string, id: string, sub?: string): string {
  return `/runs/${seg(name)}/${seg(id)}${sub !== undefined ? `/sub/${seg(sub)}` : ''}`;
}

/** Pretty JSON for params and outputs (as text; nothing is interpreted). */
function json(value: unknown): HTMLElement {
  return h('pre', { class: 'json' }, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
}

/** True for a value worth a section: not absent, not an empty string, list or object. */
function present(value: unknown): boolean {
  if (value === undefined || value === null || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  return typeof value !== 'object' || Object.keys(value).length > 0;
}

/** A child run's detail adds where it sits (dagu-model §5). */
type ChildDetail = RunDetail & {
  rootRun?: { name: string; dagRunId: string };
  parentRun?: { name: string; dagRunId: string };
};

/** A run step as the page keeps it: the detail's fields, `foreachUri` on foreach steps. */
type Step = RunStep & { foreachUri?: string };

/** How often the log of a running selected step is reloaded while "Follow" is on, ms (logs have no events). */
const LOG_FOLLOW_MS = 2000;

/**
 * The run page: status, `startedBy`, params and outputs; the step graph
 * coloured by status; a timeline; each step's stdout/stderr and the scheduler log (followed
 * while the run is active); sub-run drill-down (`sub`: this page shows child run `sub` under
 * its root `name`/`id`, with a way back) and foreach drill-down (items with their status, an
 * item's body steps and their logs); stop and retry for operators; the waiting checkpoints.
 *
 * Ready (docs/decisions.md "Run page: ready"): the facts, steps table, timeline and the
 * selected log are drawn from one run read; the graph's layout runs in a worker and is drawn
 * when it comes back. Live: step rows, graph and timeline change in place on the run's step
 * events; a run event (its status changed) reads the run once. Nothing polls the run.
 */
export async function runPage(name: string, id: string, role: Role, sub?: string): Promise<PageView> {
  const path = runPath(name, id, sub);
  // Listen before the first read, so that no step event falls between the read and the stream:
  // events that come before the page is drawn are kept and applied on top of the read.
  const early: StepEvent[] = [];
  let runChangedEarly = false;
  let live: { run(): void; step(event: StepEvent): void } | undefined;
  const stopEvents = listenToRuns(
    { dagRunId: sub ?? id },
    () => (live !== undefined ? live.run() : (runChangedEarly = true)),
    () => (live !== undefined ? live.run() : (runChangedEarly = true)),
    (event) => (live !== undefined ? live.step(event) : early.push(event)),
  );
  // A root run's DAG is read beside the run; a child run's DAG name is known from its read.
  const rootDag = sub === undefined ? api<DagDetail>(`/dags/${seg(name)}`).catch(() => undefined) : undefined;
  let first: ChildDetail;
  try {
    first = await api<ChildDetail>(path);
  } catch (err) {
    stopEvents();
    throw err;
  }
  performance.mark('dagu:run-read');
  const dag = await (rootDag ?? api<DagDetail>(`/dags/${seg(first.name)}`).catch(() => undefined));
  let run: ChildDetail = first;
  const depends = new Map((dag?.dag.steps ?? []).map((s) => [s.name, s.depends]));
  const head = h('div', { class: 'run-head' });
  const graphBox = h('div', { class: 'graph-box', tabindex: 0, 'aria-label': 'Step graph (scrolls)' });
  const timeBox = h('div', { class: 'timeline-box' });
  const stepsBody = h('tbody');
  const rows = new Map<string, HTMLElement>();
  const checkpoints = h('div', { class: 'checkpoints' });
  const drill = h('div', { class: 'drill' });
  const details = h('div', { class: 'details' });
  const logs = logPanel(path, sub === undefined, () => ACTIVE_STATUSES.has(run.status));
  let left = false;
  let selected = (run.steps.find((s) => s.status === 2) ?? (sub !== undefined ? run.steps[0] : undefined))?.name;
  let foreach: { step: string; el: HTMLElement; refresh(): void } | undefined;

  const stepOf = (stepName: string | undefined): Step | undefined => run.steps.find((s) => s.name === stepName);
  const markSelected = (): void => {
    for (const [stepName, row] of rows) row.toggleAttribute('aria-selected', stepName === selected);
  };
  /** The drill-down of the selected step: its sub-runs (links) and its foreach items. */
  const renderDrill = (): void => {
    const step = stepOf(selected);
    if (step === undefined) {
      foreach = undefined;
      replace(drill);
      return;
    }
    const subs = step.subRuns ?? [];
    const parts: HTMLElement[] = [];
    if (subs.length > 0)
      parts.push(
        h(
          'section',
          { class: 'subruns', 'aria-label': `Sub-runs of ${step.name}` },
          h('h3', {}, `Sub-runs of ${step.name}`),
          h(
            'ul',
            { class: 'plain' },
            ...subs.map((child) =>
              h(
                'li',
                {},
                h(
                  'a',
                  { href: href(runPagePath(name, id, child.dagRunId)) },
                  `${child.dagName ?? 'sub-run'} · ${child.dagRunId}`,
                ),
              ),
            ),
          ),
        ),
      );
    if (step.foreachUri !== undefined) {
      if (foreach?.step !== step.name)
        foreach = {
          step: step.name,
          ...foreachPanel(path, step.name, (item, body, label) => logs.showItem(step.name, item, body, label)),
        };
      parts.push(foreach.el);
    } else foreach = undefined;
    replace(drill, ...parts);
  };
  const select = (stepName: string): void => {
    selected = stepName;
    logs.show(stepName);
    markSelected();
    renderDrill();
  };
  const actions = (): HTMLElement => {
    const box = h('div', { class: 'actions' });
    if (!roleAtLeast(role, 'operator') || sub !== undefined) return box;
    const message = h('span', { class: 'muted small', role: 'status' });
    const act = async (actionPath: string, body: unknown): Promise<void> => {
      try {
        const ref = await api<{ dagName: string; dagRunId: string }>(actionPath, { method: 'POST', body });
        message.textContent = 'Done.';
        if (ref.dagRunId !== id) navigate(runPagePath(ref.dagName, ref.dagRunId));
        else await refresh();
      } catch (err) {
        replace(message, errorBox(err));
      }
    };
    if (ACTIVE_STATUSES.has(run.status))
      box.append(h('button', { type: 'button', class: 'danger', onclick: () => void act(`${path}/stop`, {}) }, 'Stop'));
    else box.append(h('button', { type: 'button', onclick: () => void act(`${path}/retry`, {}) }, 'Retry'));
    box.append(message);
    return box;
  };
  const stepRow = (step: Step): HTMLElement => {
    const row = h(
      'tr',
      { 'data-step': step.name, 'data-status': step.statusLabel },
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
              `${step.decision.outcome} by ${actorText(step.decision.by)} ${when(step.decision.at)}`,
            )
          : null,
        (step.subRuns ?? []).length > 0
          ? h(
              'a',
              { href: href(runPagePath(name, id, step.subRuns?.[0]?.dagRunId)), class: 'small' },
              (step.subRuns ?? []).length === 1 ? 'open sub-run' : `${(step.subRuns ?? []).length} sub-runs`,
            )
          : null,
        step.foreachUri !== undefined
          ? h('button', { type: 'button', class: 'link small', onclick: () => select(step.name) }, 'items')
          : null,
      ),
    );
    rows.set(step.name, row);
    return row;
  };
  // The layout is computed once per shape, off the page's thread; later changes only recolour.
  let graph: DrawnGraph | undefined;
  let graphShape = '';
  const statuses = (): Map<string, string> => new Map(run.steps.map((s) => [s.name, s.statusLabel]));
  const drawRunGraph = (): void => {
    const shape = run.steps.map((s) => s.name).join('\n');
    if (shape === graphShape) {
      graph?.recolour(statuses());
      return;
    }
    graphShape = shape;
    graph = undefined;
    void drawGraphInto(
      graphBox,
      run.steps.map((s) => ({ name: s.name, depends: depends.get(s.name) ?? [], status: s.statusLabel })),
      select,
      () => !left && graphShape === shape,
    ).then((drawn) => {
      // Marks for bench/console-run-page.mjs (what took the time): read, rendered, graph drawn.
      performance.mark('dagu:graph-drawn');
      graph = drawn;
      graph?.recolour(statuses());
    });
  };
  const renderHead = (): void => {
    const back =
      sub === undefined
        ? null
        : h(
            'nav',
            { class: 'crumbs', 'aria-label': 'Run hierarchy' },
            h('a', { href: href(runPagePath(name, id)) }, `↑ root run ${name} · ${id}`),
            run.parentRun !== undefined && run.parentRun.dagRunId !== id
              ? h(
                  'a',
                  { href: href(runPagePath(name, id, run.parentRun.dagRunId)) },
                  `↑ parent ${run.parentRun.name} · ${run.parentRun.dagRunId}`,
                )
              : null,
          );
    replace(
      head,
      back,
      h(
        'h1',
        {},
        // A local sub-DAG has no page of its own (it lives in its parent's YAML).
        dag !== undefined ? h('a', { href: href(`/dags/${seg(run.name)}`) }, run.name) : run.name,
        ' ',
        h('span', { class: 'muted' }, sub === undefined ? '/ run' : '/ sub-run'),
      ),
      h(
        'div',
        { class: 'facts' },
        badge(run.statusLabel),
        h('span', {}, h('strong', {}, 'Run '), h('code', {}, run.dagRunId)),
        h('span', {}, h('strong', {}, 'Started '), when(run.startedAt)),
        h('span', {}, h('strong', {}, 'Duration '), duration(run.startedAt, run.finishedAt)),
        run.startedBy ? h('span', {}, h('strong', {}, 'Started by '), actorText(run.startedBy)) : null,
      ),
      actions(),
    );
  };
  const renderSteps = (): void => {
    replace(timeBox, timeline(run.steps));
    rows.clear();
    replace(stepsBody, ...run.steps.map(stepRow));
    markSelected();
    drawRunGraph();
  };
  const render = (): void => {
    renderHead();
    renderSteps();
    replace(
      checkpoints,
      ...(sub === undefined
        ? run.steps.filter((s) => s.status === 7 && s.answer).map((s) => checkpointForm(run, s, dag, role, refresh))
        : []),
    );
    replace(
      details,
      present(run.params) ? h('div', {}, h('h2', {}, 'Params'), json(run.params)) : null,
      present(run.outputs) ? h('div', {}, h('h2', {}, 'Outputs'), json(run.outputs)) : null,
      run.error ? h('div', {}, h('h2', {}, 'Error'), h('pre', { class: 'json' }, run.error)) : null,
    );
    renderDrill();
  };
  const refresh = async (): Promise<void> => {
    if (left) return;
    try {
      const wasActive = ACTIVE_STATUSES.has(run.status);
      run = await api<ChildDetail>(path);
      render();
      logs.refresh(wasActive);
      foreach?.refresh();
    } catch {
      // keep what is shown; the next event tries again
    }
  };

  // Step events: patch the step and redraw its row, node and the timeline once per frame.
  const changed = new Set<string>();
  let frame = 0;
  const flushSteps = (): void => {
    frame = 0;
    for (const stepName of changed) {
      const step = stepOf(stepName);
      const old = rows.get(stepName);
      if (step === undefined || old === undefined) continue;
      old.replaceWith(stepRow(step));
    }
    changed.clear();
    markSelected();
    replace(timeBox, timeline(run.steps));
    graph?.recolour(statuses());
  };
  const onStep = (event: StepEvent): void => {
    const step = stepOf(event.step);
    if (step === undefined) return;
    step.status = event.status;
    step.statusLabel = event.statusLabel;
    if (event.startedAt !== undefined) step.startedAt = event.startedAt;
    else delete step.startedAt;
    if (event.finishedAt !== undefined) step.finishedAt = event.finishedAt;
    else delete step.finishedAt;
    if (event.error !== undefined) step.error = event.error;
    else delete step.error;
    changed.add(event.step);
    if (frame === 0) frame = window.requestAnimationFrame(flushSteps);
    // A dag.run or foreach step's children are in the run read, not in its step event: read
    // the run once a moment after it starts (its child run or items exist by then) and once
    // when it ends, while it shows none yet.
    const kind = dag?.dag.steps?.find((s) => s.name === event.step)?.kind;
    const lacking =
      (kind === 'sub_dag' && (step.subRuns ?? []).length === 0) ||
      (kind === 'foreach' && step.foreachUri === undefined);
    if (lacking && event.status !== 0) window.setTimeout(() => void refresh(), event.status === 1 ? 1000 : 0);
    const shown = logs.target();
    if (shown.kind === 'scheduler' || ('step' in shown && shown.step === event.step)) logs.refresh();
    if (foreach?.step === event.step) foreach.refresh();
  };

  // The log is read while the page is drawn (both are part of "ready").
  logs.show(selected);
  render();
  performance.mark('dagu:run-rendered');
  live = { run: () => void refresh(), step: onStep };
  for (const event of early.splice(0)) onStep(event);
  if (runChangedEarly) void refresh();
  // A running step's output grows without events: its log (never the run) is reloaded while shown.
  const follow = window.setInterval(() => {
    const shown = logs.target();
    const step = 'step' in shown ? stepOf(shown.step) : undefined;
    if (step !== undefined && (step.status === 1 || step.status === 9)) logs.refresh();
    // Foreach items have no events of their own: an open item list is reloaded while its step runs.
    if (foreach !== undefined && stepOf(foreach.step)?.status === 1) foreach.refresh();
  }, LOG_FOLLOW_MS);
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
        h('caption', { class: 'sr-only' }, 'Steps of the run'),
        h(
          'thead',
          {},
          h('tr', {}, ...['Step', 'Status', 'Started', 'Duration', 'Notes'].map((t) => h('th', { scope: 'col' }, t))),
        ),
        stepsBody,
      ),
    ),
    drill,
    logs.el,
    details,
  );
  return {
    el,
    dispose: () => {
      left = true;
      stopEvents();
      window.clearInterval(follow);
      if (frame !== 0) window.cancelAnimationFrame(frame);
      logs.dispose();
    },
  };
}
