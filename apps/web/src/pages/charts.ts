import { api, seg } from '../api';
import { h, svg } from '../dom';
import type { RunSummary } from '../model';
import { href, type PageView } from '../router';
import { statusColour } from '../status';

const W = 320;
const H = 90;

/** A small line chart of run durations (s) over time, one point per finished run, oldest left. */
function durationChart(runs: readonly RunSummary[]): SVGElement {
  const points = runs
    .filter((r) => r.startedAt && r.finishedAt)
    .map((r) => ({
      t: new Date(r.startedAt ?? '').getTime(),
      s: (new Date(r.finishedAt ?? '').getTime() - new Date(r.startedAt ?? '').getTime()) / 1000,
      label: r.statusLabel,
    }))
    .sort((a, b) => a.t - b.t);
  const root = svg('svg', {
    viewBox: `0 0 ${W} ${H}`,
    class: 'chart',
    role: 'img',
    'aria-label': `Duration of ${points.length} runs`,
  });
  if (points.length === 0) return root;
  const t0 = points[0]?.t ?? 0;
  const t1 = Math.max(t0 + 1, points[points.length - 1]?.t ?? 0);
  const max = Math.max(0.001, ...points.map((p) => p.s));
  const x = (t: number): number => 6 + ((t - t0) / (t1 - t0)) * (W - 12);
  const y = (s: number): number => H - 14 - (s / max) * (H - 24);
  root.appendChild(
    svg('path', {
      class: 'line',
      d: points.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.t).toFixed(1)},${y(p.s).toFixed(1)}`).join(' '),
    }),
  );
  for (const p of points)
    root.appendChild(
      svg(
        'circle',
        { cx: x(p.t).toFixed(1), cy: y(p.s).toFixed(1), r: 3, fill: statusColour(p.label).fill },
        svg('title', {}, `${p.s.toFixed(1)} s`),
      ),
    );
  root.appendChild(svg('text', { x: 4, y: 10, class: 'axis' }, `max ${max.toFixed(1)} s`));
  return root;
}

/**
 * Charts: per DAG, run duration over time and success rate, from the latest 500
 * runs; the queue depth now (runs queued and running). Read-only, any role.
 */
export async function chartsPage(): Promise<PageView> {
  const page = await api<{ items: RunSummary[] }>('/dag-runs?limit=500');
  const byDag = new Map<string, RunSummary[]>();
  for (const run of page.items) byDag.set(run.name, [...(byDag.get(run.name) ?? []), run]);
  const queued = page.items.filter((r) => r.status === 5).length;
  const running = page.items.filter((r) => r.status === 1).length;
  const cards = [...byDag.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, runs]) => {
      const finished = runs.filter((r) => [2, 3, 4, 6, 8].includes(r.status));
      const ok = finished.filter((r) => r.status === 4).length;
      const rate = finished.length === 0 ? '—' : `${Math.round((ok / finished.length) * 100)} %`;
      return h(
        'li',
        { class: 'card' },
        h('h2', { class: 'small-h' }, h('a', { href: href(`/dags/${seg(name)}`) }, name)),
        h('div', { class: 'small' }, `Success rate ${rate} (${ok} of ${finished.length} finished)`),
        durationChart(runs),
      );
    });
  return {
    el: h(
      'section',
      {},
      h('h1', {}, 'Charts'),
      h(
        'div',
        { class: 'facts' },
        h('span', {}, h('strong', {}, 'Queue depth '), String(queued)),
        h('span', {}, h('strong', {}, 'Running '), String(running)),
        h('span', { class: 'muted small' }, `from the latest ${page.items.length} runs`),
      ),
      cards.length === 0 ? h('p', { class: 'muted' }, 'No runs yet.') : h('ul', { class: 'cards' }, ...cards),
    ),
  };
}
