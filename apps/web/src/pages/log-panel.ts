import { api, seg } from '../api';
import { errorBox, h, replace } from '../dom';
import type { RunLogs, StepLog } from '../model';

/** How many lines of a log the panel shows (the tail); older lines stay on the server. */
const TAIL = 1000;

/** What the panel shows: the scheduler log, a step's log, or a foreach body step's log for one item. */
export type LogTarget =
  | { kind: 'scheduler' }
  | { kind: 'step'; step: string }
  | { kind: 'item'; step: string; item: string; body: string; label: string };

/** The log panel's handle: its element, what to show, and a reload (when following). */
export interface LogPanel {
  el: HTMLElement;
  /** Shows a step's log (`undefined`: the scheduler log, where the run has one). */
  show(step: string | undefined): void;
  /** Shows a foreach body step's log for one item (`label`: how the item is named, its key). */
  showItem(step: string, item: string, body: string, label?: string): void;
  /** What is shown now. */
  target(): LogTarget;
  /** Reloads what is shown when "Follow" is on and the run is active (`ended`: it just ended; read the last lines). */
  refresh(ended?: boolean): void;
  dispose(): void;
}

/**
 * The log panel of the run page: a step's stdout and stderr, a foreach item's body step, or
 * the scheduler log, the last {@link TAIL} lines. `runPath` is the run's REST path (a child
 * run's is `…/sub/{id}`; child runs have no scheduler log of their own here). With "Follow"
 * on (the default) `refresh()` reloads while the run is active and keeps the view at the end.
 */
export function logPanel(runPath: string, hasSchedulerLog: boolean, active: () => boolean): LogPanel {
  let target: LogTarget = hasSchedulerLog ? { kind: 'scheduler' } : { kind: 'step', step: '' };
  const title = h('h2', { id: 'log-title' }, 'Logs');
  const follow = h('input', { type: 'checkbox', id: 'log-follow', checked: true });
  const scheduler = hasSchedulerLog
    ? h('button', { type: 'button', class: 'link', onclick: () => show(undefined) }, 'Scheduler log')
    : null;
  const stdout = h('pre', { class: 'log', tabindex: 0, 'aria-label': 'stdout' });
  const stderr = h('pre', { class: 'log stderr', tabindex: 0, 'aria-label': 'stderr' });
  const body = h('div', { class: 'log-body', 'aria-live': 'off' });
  let loading = false;
  let again = false;

  const fill = (pre: HTMLElement, text: string): void => {
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
    pre.textContent = text === '' ? '(empty)' : text;
    if (follow.checked && atEnd) pre.scrollTop = pre.scrollHeight;
  };
  const load = async (): Promise<void> => {
    if (loading) {
      again = true;
      return;
    }
    loading = true;
    const shown = target;
    try {
      if (shown.kind === 'scheduler') {
        const logs = await api<RunLogs>(`${runPath}/logs?tail=${TAIL}`);
        if (shown !== target) return;
        const content = logs.schedulerLog.content ?? (logs.schedulerLog.lines ?? []).join('\n');
        replace(body, h('h3', {}, 'scheduler'), stdout);
        fill(stdout, content);
      } else if (shown.step !== '') {
        const path =
          shown.kind === 'step'
            ? `${runPath}/steps/${seg(shown.step)}/log?tail=${TAIL}`
            : `${runPath}/steps/${seg(shown.step)}/items/${seg(shown.item)}/steps/${seg(shown.body)}/log?tail=${TAIL}`;
        const log = await api<StepLog>(path);
        if (shown !== target) return;
        replace(body, h('h3', {}, 'stdout'), stdout, h('h3', {}, 'stderr'), stderr);
        fill(stdout, log.stdoutContent);
        fill(stderr, log.stderrContent);
      }
    } catch (err) {
      if (shown === target) replace(body, errorBox(err));
    } finally {
      loading = false;
      if (again) {
        again = false;
        void load();
      }
    }
  };
  const retitle = (): void => {
    title.textContent =
      target.kind === 'scheduler'
        ? 'Scheduler log'
        : target.kind === 'step'
          ? target.step === ''
            ? 'Logs'
            : `Log of ${target.step}`
          : `Log of ${target.body} (${target.step}, item ${target.label})`;
  };
  const show = (next: string | undefined): void => {
    target = next === undefined && hasSchedulerLog ? { kind: 'scheduler' } : { kind: 'step', step: next ?? '' };
    retitle();
    void load();
  };
  const el = h(
    'section',
    { class: 'log-panel', 'aria-labelledby': 'log-title' },
    h('div', { class: 'log-head' }, title, h('label', { class: 'inline' }, follow, ' Follow'), scheduler),
    body,
  );
  return {
    el,
    show,
    showItem: (step, item, bodyStep, label = item) => {
      target = { kind: 'item', step, item, body: bodyStep, label };
      retitle();
      void load();
    },
    target: () => target,
    refresh: (ended = false) => {
      if (follow.checked && (ended || active())) void load();
    },
    dispose: () => undefined,
  };
}
