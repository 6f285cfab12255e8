import { duration, h } from '../dom';
import type { RunStep } from '../model';
import { statusColour } from '../status';

/**
 * The run's timeline: one bar per step that started, placed by its start and end on the
 * run's time axis (a running step reaches "now"). Widths are percentages, so it fits any
 * window; the bar's title and text give the exact duration.
 */
export function timeline(steps: readonly RunStep[]): HTMLElement {
  const started = steps.filter((s) => s.startedAt !== undefined);
  if (started.length === 0) return h('p', { class: 'muted' }, 'No step has started yet.');
  const t = (iso: string | undefined): number => (iso === undefined ? Date.now() : new Date(iso).getTime());
  const from = Math.min(...started.map((s) => t(s.startedAt)));
  const to = Math.max(from + 1, ...started.map((s) => t(s.finishedAt)));
  const span = to - from;
  return h(
    'div',
    { class: 'timeline', role: 'list', 'aria-label': 'Timeline' },
    ...started.map((s) => {
      const left = ((t(s.startedAt) - from) / span) * 100;
      const width = Math.max(0.5, ((t(s.finishedAt) - t(s.startedAt)) / span) * 100);
      const bar = h('div', { class: 'bar', title: `${s.name}: ${duration(s.startedAt, s.finishedAt)}` });
      bar.style.left = `${left.toFixed(2)}%`;
      bar.style.width = `${Math.min(width, 100 - left).toFixed(2)}%`;
      bar.style.background = statusColour(s.statusLabel).fill;
      return h(
        'div',
        { class: 'tl-row', role: 'listitem' },
        h('span', { class: 'tl-name' }, s.name),
        h('div', { class: 'tl-track' }, bar),
        h('span', { class: 'tl-dur small' }, duration(s.startedAt, s.finishedAt)),
      );
    }),
  );
}
