import { api, seg } from '../api';
import { errorBox, h, replace } from '../dom';
import type { RunLogs, StepLog } from '../model';

/** How many lines of a log the panel shows (the tail); older lines stay on the server. */
const TAIL = 1000;

/**
 * The log panel of the run page: a step's stdout and stderr, or the scheduler log, the last
 * {@link TAIL} lines. With "Follow" on (the default) it reloads on each `refresh()` while the
 * run is active and keeps the view scrolled to the end.
 */
export function logPanel(
  name: string,
  id: string,
  active: () => boolean,
): { el: HTMLElement; show(step: string | undefined): void; refresh(): void; dispose(): void } {
  let step: string | undefined;
  const title = h('h2', { id: 'log-title' }, 'Logs');
  const follow = h('input', { type: 'checkbox', id: 'log-follow', checked: true });
  const scheduler = h('button', { type: 'button', class: 'link', onclick: () => show(undefined) }, 'Scheduler log');
  const stdout = h('pre', { class: 'log', tabindex: 0, 'aria-label': 'stdout' });
  const stderr = h('pre', { class: 'log stderr', tabindex: 0, 'aria-label': 'stderr' });
  const body = h('div', { class: 'log-body' });
  let loading = false;

  const fill = (pre: HTMLElement, text: string): void => {
    const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
    pre.textContent = text === '' ? '(empty)' : text;
    if (follow.checked && atEnd) pre.scrollTop = pre.scrollHeight;
  };
  const load = async (): Promise<void> => {
    if (loading) return;
    loading = true;
    try {
      if (step === undefined) {
        const logs = await api<RunLogs>(`/dag-runs/${seg(name)}/${seg(id)}/logs?tail=${TAIL}`);
        const content = logs.schedulerLog.content ?? (logs.schedulerLog.lines ?? []).join('\n');
        replace(body, h('h3', {}, 'scheduler'), stdout);
        fill(stdout, content);
      } else {
        const log = await api<StepLog>(`/dag-runs/${seg(name)}/${seg(id)}/steps/${seg(step)}/log?tail=${TAIL}`);
        replace(body, h('h3', {}, 'stdout'), stdout, h('h3', {}, 'stderr'), stderr);
        fill(stdout, log.stdoutContent);
        fill(stderr, log.stderrContent);
      }
    } catch (err) {
      replace(body, errorBox(err));
    } finally {
      loading = false;
    }
  };
  const show = (next: string | undefined): void => {
    step = next;
    title.textContent = next === undefined ? 'Scheduler log' : `Log of ${next}`;
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
    refresh: () => {
      if (follow.checked && active()) void load();
    },
    dispose: () => undefined,
  };
}
